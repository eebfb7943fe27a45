"""An MCP server for coding agents: the command line's JSON, tool by tool.

    python -m inspector mcp          # serves on stdio (what an agent's MCP client launches)

Tools: `compile`, `explain`, `fix`, `fits`, `profile`, `diff`. Each takes the kernel as a `file`
path or as `source` text (an agent writing a kernel hands over its text; it is stored under this
server's own folder and compiled as a file of that name), the target and the call's options, and
returns exactly what `python -m inspector <command> ... --json` prints for them: each call runs that
command in a process of its own, so the answer is the command line's by construction, and the user
code inside it runs where the command line runs it, in the sandbox's worker (`inspector.isolation`),
never in this server. A command that prints no JSON (a usage error) answers
`{"error": its message, "exit_status": n}`.

Decisions: stdio only (an agent launches the server; nothing listens on a port); one process per
call (a cold command line start costs ~0.3 s beside a compile, and a crash or hang stays in it);
the `mcp` SDK 1.x (`FastMCP`) and 2.x (`MCPServer`) both work.
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

TOOL_TIMEOUT = 900  # a fix search or every GPU's compile can take minutes on a small machine
_SAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]")


# The tools that take one call of a kernel, and what each answers with.
CALL_TOOLS = {
    "compile": "Compile a kernel (GPU-free unless target is \"native\"): the whole record, as `inspector compile "
               "--json` prints it (stages, resources, occupancy, parameters, error).",
    "explain": "Ranked findings with evidence, each load and store's width and coalescing, shared-memory bank "
               "conflicts, layouts and the instruction mix (`inspector explain --json`).",
    "fix": "Candidate fixes per finding, each compiled and checked against the example's data: its diff, "
           "assumptions, the figures it reached and whether outputs match (`inspector fix --json`).",
}


def _server_class():
    try:
        from mcp.server import MCPServer  # mcp >= 2
    except ImportError:
        from mcp.server.fastmcp import FastMCP as MCPServer  # mcp 1.x
    return MCPServer


class Kernels:
    """Where `source` texts become files: one folder per server, one file per distinct text (so a
    repeat is a cache hit, and the file's name is the one the agent gave)."""

    def __init__(self, folder: Path | None = None) -> None:
        self._given = folder
        self._made: Path | None = None  # made on the first `source`, removed by close()

    @property
    def folder(self) -> Path:
        if self._given is not None:
            return self._given
        if self._made is None:
            self._made = Path(tempfile.mkdtemp(prefix="inspector-mcp-"))
        return self._made

    def close(self) -> None:
        """Remove the folder this object made (a given one is the caller's)."""
        if self._made is not None:
            shutil.rmtree(self._made, ignore_errors=True)
            self._made = None

    def path(self, file: str | None, source: str | None, name: str | None) -> str:
        if source is None:
            if not file:
                raise ValueError("give the kernel as `file` (a path) or `source` (its text)")
            return str(Path(file).expanduser().resolve())
        stem = _SAFE_NAME.sub("_", Path(name or "kernel.py").name) or "kernel.py"
        stem = stem if stem.endswith(".py") else stem + ".py"
        digest = hashlib.sha256(source.encode()).hexdigest()[:12]
        path = self.folder / digest / stem
        path.parent.mkdir(parents=True, exist_ok=True)
        if not path.exists():
            path.write_text(source)
        return str(path)


def call_args(target: str | None = None, kernel: str | None = None, num_warps: int | None = None,
              num_stages: int | None = None, args: dict[str, Any] | None = None,
              consts: dict[str, Any] | None = None, run: str | None = None) -> list[str]:
    """The command line's options for one call of a kernel (`inspector.cli.options`)."""
    out: list[str] = []
    if target:
        out += ["--target", target]
    if kernel:
        out += ["--kernel", kernel]
    if num_warps is not None:
        out += ["--num-warps", str(num_warps)]
    if num_stages is not None:
        out += ["--num-stages", str(num_stages)]
    for name, value in (args or {}).items():
        out += ["--arg", f"{name}={value}"]
    for name, value in (consts or {}).items():
        out += ["--const", f"{name}={value}"]
    if run:
        out += ["--run", run]
    return out


def run_cli(argv: list[str], timeout: float = TOOL_TIMEOUT) -> dict[str, Any]:
    """`python -m inspector ARGV` in a process of its own; its JSON, or why there is none."""
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    try:
        done = subprocess.run([sys.executable, "-m", "inspector", *argv], capture_output=True, text=True,
                              timeout=timeout, env=env, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return {"error": f"`inspector {argv[0]}` took more than {timeout:.0f} s and was stopped", "exit_status": None}
    try:
        return json.loads(done.stdout)
    except ValueError:
        message = (done.stderr or done.stdout).strip()[-4000:]
        return {"error": message or f"`inspector {argv[0]}` printed no JSON", "exit_status": done.returncode}


def build(kernels: Kernels | None = None):
    """The server, its tools registered (`serve` runs it)."""
    kernels = kernels or Kernels()
    server = _server_class()(
        "triton-kernel-inspector",
        instructions="Compile Triton kernels GPU-free for any NVIDIA or AMD target and read what the compiler "
                     "made of them: every IR stage, registers, spills, shared memory, occupancy, each load's "
                     "width and coalescing, ranked findings and compiled fixes. Give a kernel as `file` or "
                     "`source` (a file whose example() or module-level code launches it, or a bare @triton.jit "
                     "function with `args`/`consts`). Targets: sm_80, sm_90, sm_100, gfx942, ... or native.")

    def kernel_argv(command: str, file, source, name, target, kernel, num_warps, num_stages, args, consts,
                    run=None) -> list[str]:
        return [command, kernels.path(file, source, name),
                *call_args(target, kernel, num_warps, num_stages, args, consts, run), "--json"]

    def answer(build_argv) -> dict[str, Any]:
        try:
            argv = build_argv()
        except ValueError as e:
            return {"error": str(e), "exit_status": 2}
        return run_cli(argv)

    def call_tool(command: str):
        """A tool taking one call of a kernel, answering with `inspector COMMAND --json`."""
        def tool(file: str | None = None, source: str | None = None, name: str | None = None,
                 target: str = "sm_90", kernel: str | None = None, num_warps: int | None = None,
                 num_stages: int | None = None, args: dict[str, str] | None = None,
                 consts: dict[str, str] | None = None) -> dict[str, Any]:
            return answer(lambda: kernel_argv(command, file, source, name, target, kernel, num_warps, num_stages,
                                              args, consts))
        return tool

    for command, description in CALL_TOOLS.items():
        server.tool(name=command, description=description)(call_tool(command))

    @server.tool()
    def fits(file: str | None = None, source: str | None = None, name: str | None = None,
             kernel: str | None = None, args: dict[str, str] | None = None, consts: dict[str, str] | None = None,
             gpu: str | None = None) -> dict[str, Any]:
        """Will it run on every GPU: the kernel compiled for each catalogue GPU (NVIDIA and AMD) and
        autotune config, launchable or not and why, with the change that makes it fit (`inspector fits --json`)."""
        def argv():
            out = kernel_argv("fits", file, source, name, None, kernel, None, None, args, consts)
            return out + (["--gpu", gpu] if gpu else [])
        return answer(argv)

    @server.tool()
    def profile(file: str | None = None, source: str | None = None, name: str | None = None,
                kernel: str | None = None, args: dict[str, str] | None = None, consts: dict[str, str] | None = None,
                saved: str | None = None) -> dict[str, Any]:
        """Nsight Compute's per-line counters for the kernel's launch on this machine's NVIDIA GPU
        (`inspector profile --json`), or a saved profile (`saved`: a P.json path; no GPU needed)."""
        if saved:
            return run_cli(["profile", "show", str(Path(saved).expanduser()), "--json"])
        return answer(lambda: kernel_argv("profile", file, source, name, None, kernel, None, None, args, consts))

    @server.tool()
    def diff(vs: str, file: str | None = None, source: str | None = None, name: str | None = None,
             target: str = "sm_90", kernel: str | None = None, num_warps: int | None = None,
             num_stages: int | None = None, args: dict[str, str] | None = None,
             consts: dict[str, str] | None = None) -> dict[str, Any]:
        """Two compiles side by side: this call against the same with `vs` (command-line options such
        as "--num-warps 8" or "--target gfx942"): settings, resources, occupancy, each access's width
        and sectors, stage text (`inspector diff --json`)."""
        return answer(lambda: kernel_argv("diff", file, source, name, target, kernel, num_warps, num_stages,
                                          args, consts) + [f"--vs={vs}"])

    return server


def serve() -> int:
    """Run the server on stdio until the client closes it."""
    kernels = Kernels()
    try:
        server = build(kernels)
    except ImportError:
        print("error: the MCP server needs the `mcp` package: pip install mcp", file=sys.stderr)
        return 2
    # The agent's texts live only as long as the server: a client that stops it (SIGTERM) or closes
    # stdin leaves no folder behind.
    atexit.register(kernels.close)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        server.run("stdio")
    finally:
        kernels.close()
    return 0
