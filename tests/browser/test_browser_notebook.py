"""`inspector.show` in a real notebook: a notebook executed headless by nbclient (a real IPython
kernel), exported by nbconvert, opened in Chromium: a file's kernel and a kernel defined in a cell
each display their panes linked (a click on a `tl.load` line lights its PTX rows) and the sector use
of their loads; a Helion kernel defined in a cell shows its generated Triton, linked to its lines."""

from __future__ import annotations

import os

import pytest
from paths import KERNELS, REPO

from inspector.testing.browser import wait_for

pytestmark = [pytest.mark.browser, pytest.mark.long]
nbformat = pytest.importorskip("nbformat", reason="installed by the test command (requirements-test.txt)")
nbclient = pytest.importorskip("nbclient", reason="installed by the test command (requirements-test.txt)")
nbconvert = pytest.importorskip("nbconvert", reason="installed by the test command (requirements-test.txt)")

CELL_KERNEL = '''import triton
import triton.language as tl
import inspector


@triton.jit
def strided_copy(src, dst, n, STRIDE: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(src + offs * STRIDE, mask=offs < n)
    tl.store(dst + offs, x, mask=offs < n)


inspector.show(strided_copy, target="sm_90", consts={"STRIDE": 8, "BLOCK": 1024}, args={"n": 4096})'''


# A Helion kernel defined in a cell (the fixture's row softmax, its __main__ block left out): its
# generated Triton is compiled
_HELION = (REPO / "tests" / "fixtures" / "helion" / "row_softmax.py").read_text()
HELION_CELL = _HELION[:_HELION.index('if __name__ == "__main__":')] + \
    'import inspector\ninspector.show(row_softmax, target="sm_90")'
HELION_LOAD = "        row = x[tile, :].to(torch.float32)"


def test_a_notebook_shows_linked_panes_and_sector_use(browser, tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("TRITON_INSPECTOR_HOME", str(tmp_path / "home"))
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(f'import inspector\ninspector.show({str(KERNELS / "add.py")!r}, target="sm_90", '
                                  'args={"n": 4095})'),
        nbformat.v4.new_code_cell(CELL_KERNEL),
        nbformat.v4.new_code_cell(HELION_CELL),
        # the record itself displays the same way (its rich display, registered by `import inspector`)
        nbformat.v4.new_code_cell("from inspector.compile.api import inspect_kernel\n"
                                  f"inspect_kernel({str(KERNELS / 'add.py')!r}, target='sm_90', args={{'n': '4095'}})"),
    ]
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
                            ).execute()
    for cell in nb.cells:
        assert not [o for o in cell.outputs if o.output_type == "error"], cell.outputs
        assert any("text/html" in o.get("data", {}) for o in cell.outputs), cell.outputs
    record_html = next(o["data"]["text/html"] for o in nb.cells[3].outputs if "text/html" in o.get("data", {}))
    assert "tki-panes" in record_html and "add_kernel" in record_html
    body, _ = nbconvert.HTMLExporter().from_notebook_node(nb)
    page_file = tmp_path / "executed.html"
    page_file.write_text(body)

    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        page.goto(page_file.as_uri())
        add_line = (KERNELS / "add.py").read_text().split("\n").index("    x = tl.load(x_ptr + offs, mask=mask)") + 1
        cell_line = CELL_KERNEL.split("\n").index("    x = tl.load(src + offs * STRIDE, mask=offs < n)") + 1
        for index, line, use in ((0, add_line, "25%"), (1, cell_line, "12%")):
            frame = page.frame_locator("iframe.tki-panes").nth(index)
            frame.locator("body[data-ready='1']").wait_for()
            frame.locator(f"#source-L{line}").click()
            lit = frame.locator(".pane[data-pane=ptx] .r.hit")
            wait_for(lambda: lit.count(), f"PTX rows lit by line {line}")
            assert all("ld.global" in lit.nth(i).inner_text() or "ld." not in lit.nth(i).inner_text()
                       for i in range(lit.count()))
            assert any("ld.global" in lit.nth(i).inner_text() for i in range(lit.count()))
            table = page.locator("table.tki-acc").nth(index)
            assert use in table.locator("tr", has_text=f"{line}").first.inner_text()
        # the Helion cell: its row's line lights the generated Triton's load and the PTX's loads
        helion_line = HELION_CELL.split("\n").index(HELION_LOAD) + 1
        frame = page.frame_locator("iframe.tki-panes").nth(2)
        frame.locator("body[data-ready='1']").wait_for()
        frame.locator(f"#source-L{helion_line}").click()
        generated = frame.locator(".pane[data-pane=triton] .r.hit")
        wait_for(lambda: generated.count(), f"generated Triton rows lit by Helion line {helion_line}")
        texts = [generated.nth(i).inner_text() for i in range(generated.count())]
        assert any("tl.load(x" in s for s in texts), texts
        ptx = frame.locator(".pane[data-pane=ptx] .r.hit")
        wait_for(lambda: ptx.count(), "PTX rows lit by the Helion line")
        assert any("ld.global" in ptx.nth(i).inner_text() for i in range(ptx.count()))
        assert "Triton" in page.locator("table.tki-acc").nth(2).inner_text()  # `12 (Triton 31)`
        page.screenshot(path=str(tmp_path / "notebook.png"), full_page=True)
    finally:
        page.close()
