"""The compile pipeline: from a kernel file to an `Inspection` record.

`api.inspect_kernel` is the entry point. It hashes the request (`cache`), hands it to the
worker manager (`sandbox`, `zygote`, `jail`), whose jailed worker (`worker`) loads the file
(`kernel_file`, `project`, `stand_in_device`, `wrapper_calls`, `kernel_params`), compiles it
through Triton's `warmup` and returns an `Inspection` (`record`); `reproduce` writes the
standalone file of a recorded launch, `errors` turns exceptions into advice.
"""
