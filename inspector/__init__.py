"""Triton Kernel Inspector, the library. `inspector.capture(path)` records a run's kernels;
`inspector.show(kernel_or_file)` displays a kernel's inspection in a notebook cell, and in IPython
an `Inspection` (what `inspect_kernel` returns) displays itself the same way."""

import sys


def __getattr__(name: str):  # lazy: `import inspector` stays free of torch and Triton
    if name == "capture":
        import importlib

        return importlib.import_module(".capture", __name__)
    if name == "show":
        from inspector.ui.notebook import show

        return show
    raise AttributeError(f"module 'inspector' has no attribute {name!r}")


def _record_html(rec: object) -> str:
    from inspector.ui.notebook import Shown

    return Shown(rec)._repr_html_()  # type: ignore[arg-type]


def _display_records_in_ipython() -> None:
    """Register the record's rich display with a running IPython (the record itself imports no UI:
    IPython looks the type up by name, so nothing is imported until a record is displayed)."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None
    if shell is not None:
        shell.display_formatter.formatters["text/html"].for_type_by_name("inspector.record", "Inspection",
                                                                          _record_html)


_display_records_in_ipython()
