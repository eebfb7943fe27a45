"""`python -m inspector ...`: the command line (see inspector.cli)."""

from inspector.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
