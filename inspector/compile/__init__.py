"""The caller's side of a compile: from a request to an `Inspection` record, in the caller's process.

`api.inspect(request)` (and `api.inspect_kernel`) reads the file once, keys the request
(`cache`), finds the project the file belongs to (`project`) and hands the request to the
worker manager (`inspector.isolation`), whose jailed worker runs `inspector.worker` and returns
the record.
"""
