"""Run a Python program under a capture: `python -m inspector.capture.run_program OUT [--time]
[--stand-in TARGET] -- (script.py | -m module | -c code) [args...]`. The command line's `capture`
starts this with the program's own interpreter; the capture is written when the program ends,
however it ends (an exception or sys.exit included; not os._exit).

`--stand-in TARGET` runs a program written for a GPU on a machine without one (the command
line's `compile --run`): with TRITON_INTERPRET=1 in its environment, the kernels run on the CPU
under Triton's interpreter, tensors asked for on `cuda` are made on the CPU with their data, and
torch answers as a machine with TARGET's GPU (inspector.worker.stand_in_device)."""

from __future__ import annotations

import contextlib
import os
import runpy
import sys

from . import capture


def _run(program: list[str]) -> None:
    if program[0] == "-m":
        sys.argv = [program[1], *program[2:]]
        runpy.run_module(program[1], run_name="__main__", alter_sys=True)
    elif program[0] == "-c":
        sys.argv = ["-c", *program[2:]]
        sys.path[0] = ""
        exec(compile(program[1], "<string>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})
    else:
        script = os.path.abspath(program[0])
        sys.argv = list(program)
        sys.path[0] = os.path.dirname(script)
        runpy.run_path(script, run_name="__main__")


def main(argv: list[str]) -> int:
    if "--" not in argv or argv.index("--") < 1 or argv.index("--") == len(argv) - 1:
        print(
            "usage: python -m inspector.capture.run_program OUT [--time] -- "
            "(script.py | -m module | -c code) ...",
            file=sys.stderr,
        )
        return 2
    split = argv.index("--")
    out, flags, program = argv[0], argv[1:split], argv[split + 1 :]
    status = 0
    stand_in = contextlib.nullcontext()
    if "--stand-in" in flags:
        from ..worker.stand_in_device import stand_in_device
        from ..hardware.targets import parse_target

        stand_in = stand_in_device(parse_target(flags[flags.index("--stand-in") + 1]), tensors="cpu")
    with stand_in, capture(out, time="--time" in flags, program=program):
        try:
            _run(program)
        except SystemExit as e:
            status = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            if not isinstance(e.code, int) and e.code is not None:
                print(e.code, file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
