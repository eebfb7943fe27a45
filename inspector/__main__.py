"""`python -m inspector ...`: the command line (see inspector.cli)."""

from inspector.cli.dispatch import run

if __name__ == "__main__":
    run()
