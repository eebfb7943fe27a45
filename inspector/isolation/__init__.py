"""Process isolation: where user code runs, and what it may reach. Used by compile, bench and versions.

- `exposure`: what a request may see (its project read-only; the inspector's home and cache never),
  the environment passed on, and the isolation this machine offers (bubblewrap, unshare, none).
- `jail`: the namespaces and the bubblewrap command lines.
- `sandbox`: `Sandbox`, one warm worker manager and the jailed child per request, with limits
  (time, memory, processes, output) and cancellation; `request_watch`: a request's processes
  seen from the server (members, memory, kill).
- `zygote`: the worker manager itself (imports torch and Triton once, forks per request or keeps
  a warm spare ready, runs the handler module the sandbox names: `inspector.worker.handler` by
  default); `request_processes`: what each of a request's processes does (C, G, W, afresh or as
  the spare).
- `progress`: the phase and line a worker announces, for the caller's progress display.
- `pool`, `pool_keys`, `pool_connection`, `pool_server`: a warm sandbox shared by a user's CLI
  calls and the app through a daemon (the client, which pool, the wire, the daemon).
- `sandboxes`: the default sandbox of this process (the pool's client, or a `Sandbox`).

Nothing here imports the compile pipeline: the worker's module is named, not imported.
"""
