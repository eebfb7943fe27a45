"""Triton Kernel Inspector, the library. `inspector.capture(path)` records a run's kernels."""


def __getattr__(name: str):  # lazy: `import inspector` stays free of torch and Triton
    if name == "capture":
        import importlib

        return importlib.import_module(".capture", __name__)
    raise AttributeError(f"module 'inspector' has no attribute {name!r}")
