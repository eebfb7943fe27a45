"""Where a kernel file sits in its project (`inspector/compile/project.py`): folders without
`__init__.py` and no project marker, whose file imports relatively or names an ancestor folder,
are the file's package (a kernel copied out of a library keeps its imports)."""

from __future__ import annotations

from inspector.compile.api import inspect_kernel
from inspector.compile.project import locate

KERNEL = '''\
import torch
import triton
import triton.language as tl

{imports}


@triton.jit
def twice_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


def twice(x):
    out = torch.empty_like(x)
    twice_kernel[(triton.cdiv(x.numel(), BLOCK),)](x, out, x.numel(), BLOCK=BLOCK)
    return out
'''


def _tree(tmp_path, imports: str):
    ops = tmp_path / "copied" / "libx" / "ops"
    ops.mkdir(parents=True)
    (ops / "helpers.py").write_text("BLOCK = 512\n")
    path = ops / "twice.py"
    path.write_text(KERNEL.format(imports=imports))
    return path


def test_a_relative_import_makes_the_folder_a_package(tmp_path, sandbox):
    path = _tree(tmp_path, "from .helpers import BLOCK")
    loc = locate(str(path))
    assert (loc.name, loc.import_root) == ("ops.twice", str(tmp_path / "copied" / "libx"))
    rec = inspect_kernel(path, target="sm_90", sandbox=sandbox, use_cache=False)
    assert rec.error is None, rec.error and rec.error.short()
    assert {p.name: p.value for p in rec.parameters}["BLOCK"] == 512  # the wrapper's own, through the import


def test_an_absolute_import_naming_an_ancestor_folder_makes_it_the_package(tmp_path, sandbox):
    path = _tree(tmp_path, "from libx.ops.helpers import BLOCK")
    loc = locate(str(path))
    assert (loc.name, loc.import_root) == ("libx.ops.twice", str(tmp_path / "copied"))
    rec = inspect_kernel(path, target="sm_90", sandbox=sandbox, use_cache=False)
    assert rec.error is None, rec.error and rec.error.short()


def test_a_folder_named_like_an_installed_module_stays_a_folder(tmp_path):
    # `import triton` in a folder called triton must import Triton, not the folder
    folder = tmp_path / "triton" / "mine"
    folder.mkdir(parents=True)
    path = folder / "k.py"
    path.write_text("import triton\nfrom .h import X\n")
    assert locate(str(path)).name == "mine.k"
    plain = tmp_path / "plain.py"
    plain.write_text("import triton\n")
    assert locate(str(plain)).name == "plain"


def test_a_folder_without_init_under_a_package_with_one_is_part_of_the_package(tmp_path, sandbox):
    # lmdeploy's `lmdeploy/` (no __init__) > `pytorch/` (one) > `kernels/` (one) > `cuda/` (none):
    # the chain registers `cuda` before its parent package is imported
    path = _tree(tmp_path, "from libx.ops.helpers import BLOCK")
    (path.parent.parent / "__init__.py").write_text("")  # libx: a package; ops stays a folder
    rec = inspect_kernel(path, target="sm_90", sandbox=sandbox, use_cache=False)
    assert rec.error is None, rec.error and rec.error.short()
    assert {p.name: p.value for p in rec.parameters}["BLOCK"] == 512


def test_a_package_whose_init_refuses_to_import_here_still_opens_its_kernel(tmp_path, sandbox):
    # a package `__init__` that checks for its compiled extension (a version read from its installed
    # metadata gets a stand-in version instead: test_absent_modules): the kernel file needs none of
    # it, so the package's folders are used as plain packages, and the log says why
    path = _tree(tmp_path, "from .helpers import BLOCK")
    libx = path.parent.parent
    (libx / "__init__.py").write_text("import os\n\nraise RuntimeError('libx: build its C++ extension first')\n")
    (path.parent / "__init__.py").write_text("")
    rec = inspect_kernel(path, target="sm_90", sandbox=sandbox, use_cache=False)
    assert rec.error is None, rec.error and rec.error.short()
    assert {p.name: p.value for p in rec.parameters}["BLOCK"] == 512
    assert "the package `libx.ops` did not import here (RuntimeError at libx/__init__.py line 3" in rec.log


def test_a_package_importing_the_files_own_error_is_still_the_files_error(tmp_path, sandbox):
    path = _tree(tmp_path, "from .helpers import BLOCK\nraise ValueError('the file refuses')")
    (path.parent / "__init__.py").write_text("from . import twice\n")
    (path.parent.parent / "__init__.py").write_text("")
    rec = inspect_kernel(path, target="sm_90", sandbox=sandbox, use_cache=False)
    assert rec.error is not None and "the file refuses" in rec.error.message, rec.error


def test_a_chain_that_stops_below_the_top_continues_to_the_folder_the_file_imports(tmp_path, sandbox):
    # megatron-core's wheel: `megatron/` has no __init__.py (PEP 420), `megatron/core/` and below do;
    # conch's: `conch/__init__.py`, none in `conch/kernels/`, then `kernels/attention/__init__.py`
    for top_init, gap in ((False, "core"), (True, "kernels")):
        base = tmp_path / ("ns" if not top_init else "gap")
        top = base / "libz"
        ops = top / gap / "ops"
        ops.mkdir(parents=True)
        (ops / "__init__.py").write_text("")
        if top_init:
            (top / "__init__.py").write_text("")
        else:
            (top / gap / "__init__.py").write_text("")
        (top / "settings.py").write_text("BLOCK = 256\n")
        path = ops / "twice.py"
        path.write_text(KERNEL.format(imports="from libz.settings import BLOCK"))
        loc = locate(str(path))
        assert (loc.name, loc.import_root) == (f"libz.{gap}.ops.twice", str(base)), loc
        rec = inspect_kernel(path, target="sm_90", sandbox=sandbox, use_cache=False)
        assert rec.error is None, rec.error and rec.error.short()
        assert {p.name: p.value for p in rec.parameters}["BLOCK"] == 256


def test_root_continues_a_chain_that_stops_below_it(tmp_path):
    ops = tmp_path / "proj" / "pkg" / "inner" / "ops"
    ops.mkdir(parents=True)
    (ops / "__init__.py").write_text("")
    path = ops / "k.py"
    path.write_text(KERNEL.format(imports="BLOCK = 128"))
    assert locate(str(path)).name == "ops.k"
    loc = locate(str(path), root=str(tmp_path / "proj"))
    assert (loc.name, loc.import_root) == ("pkg.inner.ops.k", str(tmp_path / "proj"))


def test_a_sibling_modules_absolute_import_names_the_package_too(tmp_path, sandbox):
    # unsloth-zoo's patches: the file imports only `.common`, and `common` imports `unsloth_zoo.log`
    patches = tmp_path / "copied" / "libq" / "patches"
    patches.mkdir(parents=True)
    (tmp_path / "copied" / "libq" / "log.py").write_text("BLOCK = 256\n")
    (patches / "common.py").write_text("from libq.log import BLOCK\n")
    path = patches / "twice.py"
    path.write_text(KERNEL.format(imports="from .common import (\n    BLOCK,\n)"))
    loc = locate(str(path))
    assert (loc.name, loc.import_root) == ("libq.patches.twice", str(tmp_path / "copied"))
    rec = inspect_kernel(path, target="sm_90", sandbox=sandbox, use_cache=False)
    assert rec.error is None, rec.error and rec.error.short()
    assert {p.name: p.value for p in rec.parameters}["BLOCK"] == 256
