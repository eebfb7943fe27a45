"""The jailed side of a compile: what runs inside the sandbox's worker process, never in the
caller's. `handler.handle(request)` is what the worker manager calls (`isolation.sandbox`); it
runs `inspection.inspect_file`, which loads the user's file (`kernel_file`, `kernel_params`,
`stand_in_device`, `wrapper_calls`, `wrapper_source`, `package_callers`, `helper_harness`),
compiles the launch it records through Triton's `warmup` and returns an `Inspection`;
`reproduce` writes the launch's standalone file, `passes` splits the pass dump, `errors` turns
exceptions into advice. The caller's side (the request, the cache, the project's layout) is
`inspector.compile`.
"""
