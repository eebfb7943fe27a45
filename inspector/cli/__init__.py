"""The command line: `python -m inspector COMMAND ...`, human output or --json.

- `dispatch`: the parser and `main` (exit status 0 on success, 1 when the kernel did not compile or
  would not launch, 2 on usage errors; diagnostics on stderr so stage text on stdout can be piped).
- `options`, `output`: what the compiling commands share: their options, and what they print.
- One module per command: `compile` (compile, targets), `explain`, `diff`, `occupancy`, `bench`,
  `capture`, `versions`, `guard`, `pool`. A command module that cannot load is listed with why.
"""

from .dispatch import main

__all__ = ["main"]
