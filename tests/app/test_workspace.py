"""One workspace per user, every version kept: keys, copies of bundled kernels, history, restore,
two writers on one file, the cap, new kernels, uploads and renames. No Streamlit, no compiles."""

from __future__ import annotations

import threading

import pytest

from paths import KERNELS
from inspector.ui import workspace
from inspector.ui.workspace import Workspace, new_key, text_digest, valid_key


def bundled(stem: str = "add") -> str:
    return (KERNELS / f"{stem}.py").read_text()


def texts(ws: Workspace, kf) -> list[str]:
    """Every kept version's text, oldest first."""
    return [v.read() for v in reversed(ws.history(kf))]


def test_keys_are_128_random_bits_and_only_hex_names_a_folder(home):
    keys = {new_key() for _ in range(100)}
    assert len(keys) == 100 and all(valid_key(k) and len(k) == 32 for k in keys)
    for bad in ("", "../" + "0" * 29, "0" * 31, "0" * 33, "A" * 32, "g" * 32, "0" * 31 + "/", "0" * 31 + "\n",
                None, 123, "..", "%2e%2e"):
        assert not valid_key(bad), bad
        with pytest.raises(ValueError):
            Workspace(bad)
    ws = Workspace(next(iter(keys)))
    assert ws.root == home / "workspaces" / ws.key
    assert not ws.root.exists()  # made on the first save, not on a visit


def test_editing_a_bundled_kernel_makes_a_copy_and_revert_drops_it(home):
    ws = Workspace(new_key())
    kf = ws.find("add")
    text = bundled()
    assert ws.source_path(kf) == kf.bundled and not ws.is_edited(kf) and ws.history(kf) == []
    r = ws.save_source(kf, text + "# mine\n", base=text_digest(text))
    assert r.path == ws.root / "edits" / "add.py" and r.path.read_text().endswith("# mine\n")
    assert not r.conflict and r.version.number == 1
    assert ws.source_path(kf) == r.path and ws.is_edited(kf) and ws.read_source(kf).endswith("# mine\n")
    assert bundled() == text  # the bundled file is never written
    # Typing the bundled text back removes the copy (and is a version of its own).
    assert ws.save_source(kf, text).path == kf.bundled and not r.path.exists()
    ws.save_source(kf, "broken(")
    back = ws.revert(kf)
    assert back.path == kf.bundled and not r.path.exists() and ws.read_source(kf) == text
    assert texts(ws, kf) == [text + "# mine\n", text, "broken(", text]
    assert not list(ws.root.rglob("*.tmp"))  # atomic writes leave no temporaries


def test_unchanged_text_adds_no_version(home):
    ws = Workspace(new_key())
    kf = ws.find("add")
    assert ws.save_source(kf, bundled()).version is None  # the bundled text, unedited
    ws.save_source(kf, "x = 1\n")
    assert ws.save_source(kf, "x = 1\n").version is None
    assert [v.number for v in ws.history(kf)] == [1]


def test_two_workspaces_on_the_same_bundled_kernel_never_see_each_other(home):
    a, b = Workspace(new_key()), Workspace(new_key())
    ka, kb = a.find("add"), b.find("add")
    a.save_source(ka, "# a's text\n")
    b.save_source(kb, "# b's text\n")
    assert a.read_source(ka) == "# a's text\n" and b.read_source(kb) == "# b's text\n"
    assert Workspace(new_key()).read_source(ka) == bundled()  # a new user sees the bundled file
    assert bundled() == (KERNELS / "add.py").read_text()


def test_an_emptied_kernel_stays_in_its_own_workspace(home):
    a = Workspace(new_key())
    ka = a.find("add")
    a.save_source(ka, bundled() + "# edited\n")
    a.save_source(ka, "")
    assert a.read_source(ka) == "" and a.find("add") is not None  # still listed, still openable
    fresh = Workspace(new_key())
    assert fresh.find("add") is not None and fresh.read_source(fresh.find("add")) == bundled()
    assert [k.id for k in fresh.kernels()] == [k.id for k in workspace.bundled_kernels()]
    assert texts(a, ka)[-2:] == [bundled() + "# edited\n", ""]  # the text before the emptying is kept


def test_restore_writes_an_old_text_as_a_new_version(home):
    ws = Workspace(new_key())
    kf = ws.find("softmax")
    for i in range(3):
        ws.save_source(kf, f"# v{i}\n")
    first = ws.history(kf)[-1]
    assert first.number == 1 and first.read() == "# v0\n"
    r = ws.restore(kf, first)
    assert ws.read_source(kf) == "# v0\n" and r.version.number == 4
    assert texts(ws, kf) == ["# v0\n", "# v1\n", "# v2\n", "# v0\n"]
    other = ws.find("add")
    with pytest.raises(ValueError):
        ws.restore(other, first)  # a version of another file


def test_two_tabs_saving_the_same_file_both_keep_their_text(home):
    key = new_key()
    tab1, tab2 = Workspace(key), Workspace(key)  # one link opened twice
    kf = tab1.find("add")
    seen1 = seen2 = tab1.current_digest(kf)  # both loaded the bundled text
    r1 = tab1.save_source(kf, "# tab 1\n", base=seen1)
    assert not r1.conflict
    r2 = tab2.save_source(kf, "# tab 2\n", base=seen2)  # tab 2 has not seen tab 1's text
    assert r2.conflict and r2.replaced is not None and r2.replaced.read() == "# tab 1\n"
    assert tab1.read_source(kf) == "# tab 2\n"  # the latest write is the current text
    assert texts(tab1, kf) == ["# tab 1\n", "# tab 2\n"]  # ... and nothing is lost
    # Tab 1 types on (it last saw its own text): a conflict again, tab 2's text kept.
    r3 = tab1.save_source(kf, "# tab 1, more\n", base=text_digest("# tab 1\n"))
    assert r3.conflict and r3.replaced.read() == "# tab 2\n"
    assert texts(tab1, kf) == ["# tab 1\n", "# tab 2\n", "# tab 1, more\n"]


def test_a_file_written_outside_the_app_is_kept_before_it_is_replaced(home):
    ws = Workspace(new_key())
    kf = ws.find("add")
    ws.save_source(kf, "# one\n")
    ws.edit_path(kf).write_text("# written by hand\n")
    ws.save_source(kf, "# two\n")
    assert texts(ws, kf) == ["# one\n", "# written by hand\n", "# two\n"]


def test_concurrent_saves_lose_nothing(home):
    key = new_key()
    kf = Workspace(key).find("add")
    n_threads, n_saves = 8, 15
    errors: list[BaseException] = []

    def tab(t: int) -> None:
        ws = Workspace(key)
        try:
            for i in range(n_saves):
                ws.save_source(kf, f"# tab {t} save {i}\n")
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=tab, args=(t,)) for t in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    ws = Workspace(key)
    kept = texts(ws, kf)
    assert {f"# tab {t} save {i}\n" for t in range(n_threads) for i in range(n_saves)} <= set(kept)
    numbers = [v.number for v in ws.history(kf)]
    assert len(numbers) == len(set(numbers))
    assert ws.read_source(kf) == kept[-1]


def test_history_is_capped_oldest_first_keeping_each_files_newest(home):
    ws = Workspace(new_key(), history_limit=10_000)
    add, gelu = ws.find("add"), ws.find("gelu")
    ws.save_source(gelu, "g" * 3000)  # gelu's only version: old, but the newest of its file
    for i in range(10):
        ws.save_source(add, f"{i}" * 2000)
    assert ws.history_bytes() <= 10_000
    assert [v.read() for v in ws.history(gelu)] == ["g" * 3000]
    kept = texts(ws, add)
    assert kept[-1] == "9" * 2000 and ws.read_source(add) == "9" * 2000
    assert kept == [f"{i}" * 2000 for i in range(10 - len(kept), 10)]  # the oldest went first
    assert workspace.HISTORY_LIMIT_BYTES == 32 * 2**20


def test_new_kernel_is_a_file_of_its_own_with_a_template(home):
    ws = Workspace(new_key())
    first, second = ws.new_kernel(), ws.new_kernel()
    assert (first.id, second.id) == ("file:untitled-1.py", "file:untitled-2.py")
    assert first.title == "untitled-1.py" and not first.is_bundled and first.entry == "add_kernel"
    text = ws.read_source(first)
    assert text == workspace.NEW_KERNEL_TEMPLATE and "@triton.jit" in text and "def example(device)" in text
    assert "TITLE" not in text  # its title is its file name, not a bundled kernel's
    assert [v.read() for v in ws.history(first)] == [text]
    # A file already named untitled-3.py (an upload) is never overwritten.
    ws.add_upload("untitled-3.py", b"# mine\n")
    third = ws.new_kernel()
    assert third.id == "file:untitled-4.py" and ws.read_source(ws.find("file:untitled-3.py")) == "# mine\n"
    assert ws.find("file:untitled-1.py").bundled is None and bundled() == (KERNELS / "add.py").read_text()


def test_uploads_with_one_name_never_replace_each_other(home):
    ws = Workspace(new_key())
    a = ws.add_upload("kern.py", b'TITLE = "Mine"\nKERNEL = "k"\n')
    b = ws.add_upload("kern.py", b"# second\n")
    c = ws.add_upload("kern.py", b"# third\n")
    assert (a.id, b.id, c.id) == ("file:kern.py", "file:kern-2.py", "file:kern-3.py")
    assert [ws.read_source(k) for k in (a, b, c)] == ['TITLE = "Mine"\nKERNEL = "k"\n', "# second\n", "# third\n"]
    assert ws.find(a.id).title == "Mine (kern.py)" and a.entry == "k"
    # Another user's upload of the same name is in their own workspace.
    other = Workspace(new_key())
    assert other.add_upload("kern.py", b"# other\n").id == "file:kern.py"
    assert ws.read_source(a).startswith("TITLE")


def test_upload_names_are_made_safe(home):
    ws = Workspace(new_key())
    kf = ws.add_upload("../../etc/my kernel!.py", b"x = 1\n")
    assert kf.id == "file:my_kernel.py" and (ws.root / "files" / "my_kernel.py").exists()
    assert ws.find("file:../x.py") is None and ws.find("file:/etc/passwd") is None
    with pytest.raises(ValueError):
        ws.file_kernel("../escape.py")
    with pytest.raises(ValueError):
        ws.add_upload("big.py", b"x" * (workspace.MAX_UPLOAD_BYTES + 1))


def test_rename_moves_the_file_and_its_history(home):
    ws = Workspace(new_key())
    kf = ws.new_kernel()
    ws.save_source(kf, "# edited\n")
    renamed = ws.rename(kf, "my scale")
    assert renamed.id == "file:my_scale.py" and ws.find(kf.id) is None
    assert ws.read_source(renamed) == "# edited\n" and len(ws.history(renamed)) == 2
    other = ws.new_kernel()
    with pytest.raises(ValueError):
        ws.rename(other, "my_scale.py")  # taken
    with pytest.raises(ValueError):
        ws.rename(ws.find("add"), "x.py")  # bundled
    # A tab still holding the old name saves it again under that name: nothing lost.
    stale = ws.file_kernel(kf.file_name)
    ws.save_source(stale, "# the other tab's text\n")
    assert ws.read_source(ws.find(kf.id)) == "# the other tab's text\n"
    assert ws.read_source(renamed) == "# edited\n"


CORPUS_SRC = KERNELS.parent / "tests" / "fixtures" / "published" / "first_four_projects" / "liger_kernel" / "src"


def test_open_by_module_or_path_only_under_the_allowed_folders(home, monkeypatch, tmp_path):
    monkeypatch.setenv(workspace.OPEN_ROOTS_ENV, str(CORPUS_SRC))
    rms = (CORPUS_SRC / "liger_kernel" / "ops" / "rms_norm.py").resolve()
    assert CORPUS_SRC.resolve() in workspace.open_roots()
    assert workspace.resolve_open("liger_kernel.ops.rms_norm") == rms
    assert workspace.resolve_open("liger_kernel/ops/rms_norm.py") == rms  # relative to an allowed folder
    assert workspace.resolve_open(str(rms)) == rms
    with pytest.raises(ValueError, match="outside the folders this server opens"):
        workspace.resolve_open(str(KERNELS / "add.py"))
    link = CORPUS_SRC.parent / "escape.py"  # a link inside cannot lead outside
    outside = tmp_path / "secret.py"
    outside.write_text("SECRET = 1\n")
    try:
        link.symlink_to(outside)
        with pytest.raises(ValueError, match="outside"):
            workspace.resolve_open(str(link))
    finally:
        link.unlink(missing_ok=True)
    with pytest.raises(ValueError, match="no module named"):
        workspace.resolve_open("liger_kernel.ops.nothing_here")
    with pytest.raises(ValueError, match="only .py"):
        workspace.resolve_open(str(CORPUS_SRC.parent / "pyproject.toml"))


def test_an_opened_file_is_a_copy_that_remembers_its_origin_through_a_rename(home):
    ws = Workspace(new_key())
    origin = (CORPUS_SRC / "liger_kernel" / "ops" / "swiglu.py").resolve()
    kf = ws.open_file(origin)
    assert kf.file_name == "swiglu.py" and ws.read_source(kf) == origin.read_text()
    assert ws.origin_of(kf) == origin
    again = ws.open_file(origin)  # opened twice: two files, neither replaced
    assert again.file_name == "swiglu-2.py" and ws.origin_of(again) == origin
    ws.save_source(kf, "edited\n")
    assert origin.read_text() != "edited\n"  # the package's file is never written
    renamed = ws.rename(kf, "mine.py")
    assert ws.origin_of(renamed) == origin and ws.read_source(renamed) == "edited\n"
    assert ws.origin_of(ws.new_kernel()) is None and ws.origin_of(ws.find("add")) is None


def test_keep_current_puts_the_bundled_text_in_the_history_once(home):
    """Before an applied fix: the text it replaces is a version, so History can diff against it."""
    ws = Workspace(new_key())
    kf = ws.find("add")
    ws.keep_current(kf)
    ws.keep_current(kf)
    assert texts(ws, kf) == [bundled()]
    ws.save_source(kf, bundled() + "# fixed\n")
    assert texts(ws, kf) == [bundled(), bundled() + "# fixed\n"]
