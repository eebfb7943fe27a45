"""A kernel file of a project whose other dependencies this machine lacks still opens: each missing
module (not one of the project's own) imports as a stand-in (`inspector/worker/absent_modules.py`),
and the record's log says which and where."""

from __future__ import annotations

import textwrap

from inspector.compile.api import inspect_kernel

INIT = '''\
import not_installed_pytrees as pt  # the package's __init__ needs it; the kernel does not
from not_installed_pytrees.registry import register_node


@register_node
class Node(pt.PyTreeBase):
    pass


if pt.__name__ and pt.version() < "1.0":
    raise ImportError("too old")
'''

UTIL = '''\
from not_installed_logging_lib import get_logger

logger = get_logger("pkg")
BLOCK = 256
'''

KERNEL = '''\
import torch
import triton
import triton.language as tl

from .util import BLOCK, logger


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


def scale(x):
    logger.info("scaling")
    out = torch.empty_like(x)
    scale_kernel[(triton.cdiv(x.numel(), BLOCK),)](x, out, x.numel(), BLOCK=BLOCK)
    return out


if __name__ == "__main__":
    scale(torch.randn(4096, device="cuda"))
'''


def _package(tmp_path, kernel: str = KERNEL):
    pkg = tmp_path / "proj" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(INIT)
    (pkg / "util.py").write_text(UTIL)
    (pkg / "scale.py").write_text(textwrap.dedent(kernel))
    return pkg / "scale.py"


def test_missing_modules_of_the_package_and_the_file_stand_in_and_the_kernel_compiles(tmp_path, sandbox):
    rec = inspect_kernel(_package(tmp_path), target="sm_90", sandbox=sandbox, use_cache=False)
    assert rec.error is None, rec.error and rec.error.short()
    assert rec.kernel == "scale_kernel" and "st.global" in rec.stages["ptx"]
    # launched by the file's own __main__, through the wrapper that uses the stand-in logger
    assert rec.call_origin == "file" and {p.name: p.value for p in rec.parameters}["BLOCK"] == 256
    assert "not_installed_pytrees (imported at __init__.py line 1)" in rec.log
    assert {(s["module"], s["file"], s["line"]) for s in rec.stood_in} == {
        ("not_installed_pytrees", "__init__.py", 1), ("not_installed_logging_lib", "util.py", 1)}
    assert "`not_installed_pytrees` (ModuleNotFoundError at __init__.py line 1)" in rec.stopped_note()
    assert "not_installed_logging_lib (imported at util.py line 1)" in rec.log


def test_a_missing_module_of_the_projects_own_is_still_an_error_naming_it(tmp_path, sandbox):
    # `pkg.helpers` is the project's own code, absent: a stand-in would hide a real mistake
    path = _package(tmp_path, KERNEL.replace("from .util import BLOCK, logger", "from .util import BLOCK, logger\n"
                                                                               "from pkg.helpers import twice"))
    rec = inspect_kernel(path, target="sm_90", sandbox=sandbox, use_cache=False)
    assert rec.error is not None and "pkg.helpers" in rec.error.message, rec.error


def test_a_stand_in_takes_a_union_annotation_and_an_enum_read_as_a_number(tmp_path, sandbox):
    # axolotl's `-> PartialState | None`, evaluated at import; transformer-engine's `int(tex.DType.kByte)`
    path = _package(tmp_path, KERNEL.replace("from .util import BLOCK, logger", "from .util import BLOCK, logger\n"
                                             "from not_installed_accel import PartialState, DType\n"
                                             "KBYTE = int(DType.kByte)\n\n\n"
                                             "def state() -> PartialState | None:\n    return None\n"))
    rec = inspect_kernel(path, target="sm_90", sandbox=sandbox, use_cache=False)
    assert rec.error is None, rec.error and rec.error.short()
    assert "not_installed_accel" in {s["module"] for s in rec.stood_in}


def test_triton_reexported_by_an_absent_module_is_the_real_one_and_stand_ins_make_distinct_bases(tmp_path, sandbox):
    # llmcompressor takes `triton` and `tl` from compressed-tensors (`from compressed_tensors.utils.triton
    # import tl, triton`), and subclasses two of its classes at once
    kernel = KERNEL.replace("import triton\nimport triton.language as tl\n",
                            "from not_installed_quant.utils.triton import tl, triton\n"
                            "from not_installed_quant import InternalModule, RegistryMixin\n\n\n"
                            "class Observer(InternalModule, RegistryMixin):\n    pass\n")
    rec = inspect_kernel(_package(tmp_path, kernel), target="sm_90", sandbox=sandbox, use_cache=False)
    assert rec.error is None, rec.error and rec.error.short()
    assert rec.kernel == "scale_kernel" and rec.call_origin in ("file", "scale"), rec.call_origin
    assert "not_installed_quant" in {s["module"].split(".")[0] for s in rec.stood_in}


def test_a_package_whose_init_failed_half_way_imports_again_whole(tmp_path, sandbox):
    # fairchem's `KeyError: 'fairchem.core'`: the package's `__init__` imported a namespace
    # subpackage and a subpackage, then stopped at a module this machine lacks; Python dropped the
    # package but kept the two, and the next attempt (with the stand-in) imported through the kept
    # subpackage, whose namespace sibling then asked for the missing parent
    pkg = tmp_path / "proj" / "pkg"
    (pkg / "ns").mkdir(parents=True)
    (pkg / "a" / "b").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from pkg.ns import helper\nfrom pkg import a\nimport not_installed_thing_xyz\n")
    (pkg / "ns" / "helper.py").write_text("X = 1\n")
    (pkg / "ns" / "thing.py").write_text("BLOCK = 128\n")
    (pkg / "a" / "__init__.py").write_text("")
    (pkg / "a" / "b" / "__init__.py").write_text("")
    (pkg / "a" / "b" / "k.py").write_text(HALF_IMPORTED_KERNEL)
    rec = inspect_kernel(pkg / "a" / "b" / "k.py", target="sm_90", sandbox=sandbox, use_cache=False)
    assert rec.error is None, rec.error and rec.error.short()
    assert rec.call_origin == "copy" and "not_installed_thing_xyz" in {s["module"] for s in rec.stood_in}


HALF_IMPORTED_KERNEL = '''import torch
import triton
import triton.language as tl

from pkg.ns.thing import BLOCK


@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def copy(x):
    out = torch.empty_like(x)
    copy_kernel[(triton.cdiv(x.numel(), BLOCK),)](x, out, x.numel(), BLOCK=BLOCK)
    return out
'''


def test_a_module_named_like_a_top_level_package_inside_a_package_does_not_hide_it(tmp_path, sandbox):
    # torchtitan's `distributed/spmd_types.py` beside a module that does `import spmd_types`, a
    # package this machine lacks: inside a package folder the name can only mean the top-level one
    path = _package(tmp_path, KERNEL.replace("from .util import BLOCK, logger", "from .util import BLOCK, logger\n"
                                             "from . import sibling"))
    (path.parent / "sibling.py").write_text("import not_installed_spmd_types as spmd\n")
    (path.parent / "not_installed_spmd_types.py").write_text("from not_installed_spmd_types import mesh\n")
    rec = inspect_kernel(path, target="sm_90", sandbox=sandbox, use_cache=False)
    assert rec.error is None, rec.error and rec.error.short()
    assert "not_installed_spmd_types" in {s["module"] for s in rec.stood_in}


def test_a_package_that_reads_its_own_installed_version_opens_from_its_source(tmp_path, sandbox):
    # nvidia-modelopt's `__version__ = importlib.metadata.version("nvidia-modelopt")`, with only
    # the source here: the version asked for is made up, newer than any check
    path = _package(tmp_path)
    init = path.parent / "__init__.py"
    init.write_text("from importlib.metadata import version as _version\n\n"
                    "__version__ = _version('not-installed-kernel-lib')\n"
                    "if tuple(int(p) for p in __version__.split('.')[:2]) < (0, 5):\n"
                    "    raise ImportError('too old')\n" + INIT)
    rec = inspect_kernel(path, target="sm_90", sandbox=sandbox, use_cache=False)
    assert rec.error is None, rec.error and rec.error.short()
    assert rec.kernel == "scale_kernel" and rec.call_origin == "file"
    assert "not-installed-kernel-lib (asked at __init__.py line 3)" in rec.log, rec.log
    # an installed distribution still answers with its own version
    init.write_text("from importlib.metadata import version\n\nassert version('torch') != '999.0.0'\n" + INIT)
    rec = inspect_kernel(path, target="sm_90", sandbox=sandbox, use_cache=False)
    assert rec.error is None, rec.error and rec.error.short()
    assert "distributions not installed" not in rec.log
