"""The kernel files the app works on: bundled kernels, the user's edited copies, and uploads.

On disk, under `workspace_dir()` ($TRITON_INSPECTOR_HOME/workspace, by default
~/.local/share/triton-inspector/workspace):

    edits/<stem>.py   the user's edited copy of bundled `kernels/<stem>.py`
    files/<name>.py   a file the user uploaded

Bundled kernels are never written: the first edit of one creates its copy in `edits/`, and
"revert" deletes that copy. Every change is written here (atomically) as the user types, before any
compile, and a compile reads the file from here, so error lines point at what the user sees and
the text survives a reload or a server restart. A compile never writes here.

A kernel is named by an id: the bundled file's stem ("add") or "file:<name>.py" for an upload.
The workspace is the server user's, shared by every browser session of that server.
No Streamlit here; nothing here imports or runs the user's code (titles are read with `ast`).
"""

from __future__ import annotations

import ast
import functools
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path

from inspector.files import atomic_write_text

REPO_ROOT = Path(__file__).resolve().parents[2]
KERNELS_DIR = REPO_ROOT / "kernels"
FILE_PREFIX = "file:"
MAX_UPLOAD_BYTES = 1024 * 1024


def workspace_dir() -> Path:
    """$TRITON_INSPECTOR_HOME/workspace, or ~/.local/share/triton-inspector/workspace."""
    home = os.environ.get("TRITON_INSPECTOR_HOME")
    base = Path(home) if home else Path.home() / ".local" / "share" / "triton-inspector"
    return base / "workspace"


@dataclass(frozen=True)
class KernelFile:
    """One entry of the kernel picker."""

    id: str  # "add" or "file:my_kernel.py"
    title: str  # "Vector add" (the file's TITLE), or the file name
    bundled: Path | None  # kernels/<stem>.py for a bundled kernel
    entry: str | None  # the file's KERNEL constant: the kernel to inspect by default

    @property
    def is_bundled(self) -> bool:
        return self.bundled is not None

    @property
    def file_name(self) -> str:
        return self.bundled.name if self.bundled else self.id[len(FILE_PREFIX):]


# CPython 3.11's parser is not safe to call from several threads at once ("AST constructor
# recursion depth mismatch", gh-106905), and every browser session runs in its own thread.
_PARSE_LOCK = threading.Lock()


def _constants(path: Path) -> dict[str, str]:
    """Module-level string constants (TITLE, KERNEL) read with ast; {} if the file does not parse."""
    try:
        st = path.stat()
    except OSError:
        return {}
    return dict(_constants_cached(str(path), st.st_mtime_ns, st.st_size))


@functools.lru_cache(maxsize=256)
def _constants_cached(path: str, mtime_ns: int, size: int) -> tuple[tuple[str, str], ...]:
    """Parsed once per version of the file (the picker lists every file on every rerun)."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ()
    return tuple(_constants_of(text).items())


def _constants_of(text: str) -> dict[str, str]:
    try:
        with _PARSE_LOCK:
            tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return {}
    out: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    out[t.id] = node.value.value
    return out


def bundled_kernels(kernels_dir: Path = KERNELS_DIR) -> list[KernelFile]:
    """The bundled kernel files that declare a TITLE, sorted by title."""
    found = []
    for path in sorted(kernels_dir.glob("*.py")):
        if path.name.startswith("_"):
            continue
        consts = _constants(path)
        if "TITLE" in consts:
            found.append(KernelFile(path.stem, consts["TITLE"], path, consts.get("KERNEL")))
    return sorted(found, key=lambda k: k.title.lower())


def uploaded_files() -> list[KernelFile]:
    """The user's uploaded files, by name."""
    folder = workspace_dir() / "files"
    if not folder.is_dir():
        return []
    out = []
    for path in sorted(folder.glob("*.py")):
        consts = _constants(path)
        title = consts.get("TITLE")
        out.append(KernelFile(FILE_PREFIX + path.name, f"{title} ({path.name})" if title else path.name, None,
                              consts.get("KERNEL")))
    return out


def all_kernels(kernels_dir: Path = KERNELS_DIR) -> list[KernelFile]:
    """Bundled kernels, then uploads."""
    return bundled_kernels(kernels_dir) + uploaded_files()


def find(kernel_id: str, kernels_dir: Path = KERNELS_DIR) -> KernelFile | None:
    """The entry with this id, or None."""
    return next((k for k in all_kernels(kernels_dir) if k.id == kernel_id), None)


def edit_path(kf: KernelFile) -> Path:
    """Where the user's text for this kernel lives (an upload is its own edit)."""
    if kf.is_bundled:
        return workspace_dir() / "edits" / kf.file_name
    return workspace_dir() / "files" / kf.file_name


def source_path(kf: KernelFile) -> Path:
    """The file to compile: the user's copy when there is one, else the bundled file."""
    path = edit_path(kf)
    if path.exists() or kf.bundled is None:
        return path
    return kf.bundled


def read_source(kf: KernelFile) -> str:
    """The text the user sees for this kernel."""
    try:
        return source_path(kf).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def is_edited(kf: KernelFile) -> bool:
    """Whether a bundled kernel has an edited copy (uploads always count as the user's)."""
    return kf.is_bundled and edit_path(kf).exists()


def save_source(kf: KernelFile, text: str) -> Path:
    """Persist the user's text; return the file a compile should read.

    Text identical to the bundled file removes the edited copy (nothing of the user's to keep);
    otherwise the copy is (re)written atomically, so a crash never leaves half a file.
    """
    path = edit_path(kf)
    if kf.bundled is not None:
        try:
            same = kf.bundled.read_text(encoding="utf-8", errors="replace") == text
        except OSError:
            same = False
        if same:
            revert(kf)
            return kf.bundled
    try:
        if path.read_text(encoding="utf-8", errors="replace") == text:
            return path
    except OSError:
        pass
    atomic_write_text(path, text, durable=True)
    return path


def revert(kf: KernelFile) -> None:
    """Forget the user's edits of a bundled kernel (the bundled file is untouched)."""
    if kf.is_bundled:
        try:
            edit_path(kf).unlink()
        except FileNotFoundError:
            pass


def safe_file_name(name: str) -> str:
    """A plain `name.py` for an uploaded file name (no folders, no odd characters)."""
    stem = re.sub(r"[^\w.-]+", "_", Path(name).stem).strip("._") or "kernel"
    return f"{stem[:80]}.py"


def add_upload(name: str, data: bytes) -> KernelFile:
    """Store an uploaded file in the workspace (replacing one of the same name) and return its entry."""
    if len(data) > MAX_UPLOAD_BYTES:
        raise ValueError(f"the file is larger than {MAX_UPLOAD_BYTES // 1024} KiB")
    text = data.decode("utf-8", errors="replace")
    file_name = safe_file_name(name)
    kf = KernelFile(FILE_PREFIX + file_name, file_name, None, _constants_of(text).get("KERNEL"))
    atomic_write_text(edit_path(kf), text, durable=True)
    return kf

