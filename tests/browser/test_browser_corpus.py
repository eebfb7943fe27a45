"""Real published kernels through the app, in a real headless Chromium: files of the corpus
(tests/fixtures/published/first_four_projects, as released: Liger-Kernel 0.8.2, FlagGems 4.2.0, torchao 0.18.0) opened by
module name or by path, compiled as part of their package, PTX shown; a kernel nothing launches
asks for its missing values in a small form (never command-line syntax), and compiles with them.

The server opens files only under $TRITON_INSPECTOR_OPEN_ROOTS (here the corpus' project folders)
and the installed packages; anything else is refused with a message saying so.
"""

from __future__ import annotations

import json
import os
from urllib.parse import parse_qs, urlparse

import pytest

from inspector.testing.browser import REPO, editor_text, local_page, wait_idle, workbench_frame
from browser_support import SHOTS, serve

pytestmark = [pytest.mark.browser, pytest.mark.long]
WAIT_MS = 240_000  # a cold compile of a package kernel on a loaded machine
CORPUS = REPO / "tests" / "fixtures" / "published" / "first_four_projects"
LIGER_SRC = CORPUS / "liger_kernel" / "src"
MANIFEST = {e["file"]: e for e in json.loads((CORPUS / "MANIFEST.json").read_text())}
# (how the user names it, the file) for package files whose imports need no GPU; both ways of naming.
OPENED = [
    ("liger_kernel.ops.rms_norm", "liger_kernel/src/liger_kernel/ops/rms_norm.py"),
    ("liger_kernel/ops/swiglu.py", "liger_kernel/src/liger_kernel/ops/swiglu.py"),
    (str(LIGER_SRC / "liger_kernel" / "ops" / "softmax.py"), "liger_kernel/src/liger_kernel/ops/softmax.py"),
    ("liger_kernel.ops.geglu", "liger_kernel/src/liger_kernel/ops/geglu.py"),
    ("flag_gems.ops.layernorm", "flag_gems/flag_gems/ops/layernorm.py"),  # behind FlagGems' own launch cache
    (str(CORPUS / "torchao" / "torchao" / "prototype" / "attention" / "quantization" / "triton_qkv_quantization.py"),
     "torchao/torchao/prototype/attention/quantization/triton_qkv_quantization.py"),
]
OPEN_ROOTS = os.pathsep.join(str(p) for p in (LIGER_SRC, CORPUS / "flag_gems", CORPUS / "torchao"))


@pytest.fixture(scope="module")
def server(browser, tmp_path_factory):
    yield from serve(tmp_path_factory, "browser-corpus", {"TRITON_INSPECTOR_OPEN_ROOTS": OPEN_ROOTS})


@pytest.fixture
def page(browser, server):
    yield from local_page(browser, 1000, WAIT_MS)


def open_kernel(page, spec: str) -> None:
    box = page.get_by_role("textbox", name="Open by path or module")
    box.fill(spec)
    box.press("Enter")


def ptx_rows(page) -> int:
    frame = workbench_frame(page, timeout_ms=WAIT_MS)
    return frame.locator(".pane[data-pane=ptx] .r", has_text="ld.global").count()


@pytest.mark.parametrize("spec,file", OPENED, ids=[f.rsplit("/", 1)[1] for _, f in OPENED])
def test_corpus_file_opened_by_module_or_path_compiles_in_its_package(page, server, spec, file):
    entry = MANIFEST[file]
    assert entry["imports_gpu_free"] and entry["form"] == "package"
    url, home = server
    page.goto(f"{url}/?kernel=add&target=sm_90")
    page.get_by_text("Compiled add.py for sm_90").first.wait_for()
    wait_idle(page)
    open_kernel(page, spec)
    name = file.rsplit("/", 1)[1]
    page.get_by_text(f"Compiled {name} for sm_90").first.wait_for()
    wait_idle(page)
    assert page.locator("[data-testid=stAlertContentError]").count() == 0
    assert ptx_rows(page) >= 1
    published = (CORPUS / file).read_text()
    assert editor_text(page) == published  # opened as published, unedited
    ws = home / "workspaces" / parse_qs(urlparse(page.url).query)["ws"][0]
    assert (ws / "files" / name).read_text() == published  # a copy of the user's own to edit
    assert (ws / "origins" / name).read_text() == str((CORPUS / file).resolve())
    page.get_by_text("compiled as that file, inside its package").first.wait_for()
    if name == "rms_norm.py":
        page.screenshot(path=str(SHOTS / "corpus-rms-norm.png"))


def test_bare_kernel_opens_with_made_up_values_offered_in_a_form(page, server):
    """utils.py defines element_mul_kernel and nothing launches it: it compiles with a made-up
    BLOCK_SIZE, which the page offers in a form (no --const); compiling with another value
    recompiles with it as the call's override, the user's text untouched."""
    url, _ = server
    page.goto(f"{url}/?kernel=add&target=sm_90")
    page.get_by_text("Compiled add.py for sm_90").first.wait_for()
    wait_idle(page)
    open_kernel(page, "liger_kernel.ops.utils")
    page.get_by_text("Compiled utils.py for sm_90").first.wait_for()
    form = page.locator("[data-testid=stForm]")
    form.wait_for()
    wait_idle(page)
    assert ptx_rows(page) >= 1  # opened with the made-up value
    main = page.locator("[data-testid=stMain]").inner_text()
    assert "--const" not in main and "made-up values for BLOCK_SIZE" in main.replace("`", "")
    field = form.get_by_label("BLOCK_SIZE (constexpr)")
    assert field.input_value()  # prefilled with the value it was compiled with
    field.fill("512")
    text_before = editor_text(page)
    form.get_by_role("button", name="Compile with these values").click()
    page.wait_for_function("() => location.href.includes('c.BLOCK_SIZE=512')")
    page.get_by_text("Compiled utils.py for sm_90").first.wait_for()
    wait_idle(page)
    assert ptx_rows(page) >= 1
    assert page.locator("[data-testid=stForm]").count() == 0  # nothing made up any more
    assert editor_text(page) == text_before  # the user's text is never touched
    page.screenshot(path=str(SHOTS / "missing-values-form.png"))


def test_a_path_outside_the_allowed_folders_is_refused(page, server):
    url, _ = server
    page.goto(f"{url}/?kernel=add&target=sm_90")
    page.get_by_text("Compiled add.py for sm_90").first.wait_for()
    wait_idle(page)
    open_kernel(page, str(REPO / "kernels" / "add.py"))
    err = page.locator("[data-testid=stAlertContentError]", has_text="outside the folders this server opens")
    err.wait_for()
    assert "TRITON_INSPECTOR_OPEN_ROOTS" in err.inner_text()
    open_kernel(page, "no_such_package.kernels.x")
    page.locator("[data-testid=stAlertContentError]", has_text="no module named 'no_such_package.kernels.x'").wait_for()
