"""Triton Kernel Inspector, the library. `inspector.capture(path)` records a run's kernels;
`inspector.show(kernel_or_file)` displays a kernel's inspection in a notebook cell."""


def __getattr__(name: str):  # lazy: `import inspector` stays free of torch and Triton
    if name == "capture":
        import importlib

        return importlib.import_module(".capture", __name__)
    if name == "show":
        from inspector.ui.notebook import show

        return show
    raise AttributeError(f"module 'inspector' has no attribute {name!r}")
