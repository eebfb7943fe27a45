"""The kernel files the app works on: bundled kernels, and each user's own workspace of edited
copies, new kernels and uploads, with every saved version kept.

One workspace per user (per browser link): a random 128-bit key, kept in the page's URL
(`?ws=<32 hex digits>`), names a folder under `workspaces_dir()`
($TRITON_INSPECTOR_HOME/workspaces, by default ~/.local/share/triton-inspector/workspaces):

    <key>/edits/<stem>.py             the user's current text of bundled `kernels/<stem>.py`
    <key>/files/<name>.py             a file of the user's own (an upload, a "New kernel", an opened file)
    <key>/origins/<name>.py           for a file opened by path or module name: the path it came from
    <key>/history/edits/<stem>.py/    every saved version of that text, oldest first:
    <key>/history/files/<name>.py/        <number>-<unix ms>-<sha256 prefix>.py

Only a key of exactly 32 lower-case hex digits is accepted, so a key can never name a path
outside the folder; a page without one gets a new key, and its folder is made on its first save.
Bundled kernels are never written: the first edit of one makes its copy in `edits/`, and text
equal to the bundled file removes the copy again.

Nothing is lost: every save that changes the text writes the current file (atomically) and
appends a version to the file's history (a version file is created with an exclusive link, so
two writers never overwrite each other's). A save says whether the text on disk was still the
one its writer last saw; if not (another tab of the same workspace saved in between), it still
writes, since the latest write is the current text, and the other text stays in the history.
"Restore" and "Revert" write an old text as a new version; nothing deletes a version except the
cap: a workspace keeps every version up to `HISTORY_LIMIT_BYTES` (32 MiB) of history, and beyond
that drops its oldest versions, never the newest one of a file.

A kernel is named by an id: the bundled file's stem ("add") or "file:<name>.py" for a file of
the user's own. No Streamlit here; nothing here imports or runs the user's code (titles are read
with `ast`).
"""

from __future__ import annotations

import ast
import functools
import hashlib
import os
import re
import secrets
import sysconfig
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from inspector import places
from inspector.files import atomic_write_text

KERNELS_DIR = places.gallery_dir()
FILE_PREFIX = "file:"
MAX_UPLOAD_BYTES = 1024 * 1024
HISTORY_LIMIT_BYTES = 32 * 1024 * 1024
KEY_RE = re.compile(r"[0-9a-f]{32}")
_VERSION_RE = re.compile(r"(\d+)-(\d+)-([0-9a-f]{16})\.py")

NEW_KERNEL_TEMPLATE = '''"""A new kernel: out = x + y. Edit it; Ctrl+Enter compiles."""

import torch
import triton
import triton.language as tl

KERNEL = "add_kernel"


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x + y, mask=mask)


def example(device):
    """The launch to inspect: called with device=meta (shapes and dtypes, no memory)."""
    x = torch.randn(4096, device=device)
    y = torch.randn(4096, device=device)
    out = torch.empty_like(x)
    add_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel(), BLOCK=1024)
'''


OPEN_ROOTS_ENV = "TRITON_INSPECTOR_OPEN_ROOTS"


def open_roots() -> list[Path]:
    """The folders whose kernel files the app may open by path or by module name.

    A server shared by several users must not become a file browser of its own disk, so only
    these are readable: the installed packages (site-packages: public code, and the place a
    module name such as `liger_kernel.ops.rms_norm` resolves to) and the folders the operator
    lists in $TRITON_INSPECTOR_OPEN_ROOTS (separated by `os.pathsep`), e.g. a checkout of the
    team's kernels. A path is checked after resolving symbolic links, so no link leads out."""
    found: list[Path] = []
    for entry in os.environ.get(OPEN_ROOTS_ENV, "").split(os.pathsep):
        if entry.strip():
            found.append(Path(entry.strip()).expanduser())
    for key in ("purelib", "platlib"):
        found.append(Path(sysconfig.get_paths()[key]))
    out: list[Path] = []
    for p in found:
        real = p.resolve()
        if real.is_dir() and real not in out:
            out.append(real)
    return out


def resolve_open(spec: str, roots: list[Path] | None = None) -> Path:
    """The kernel file a user asked to open: a path (absolute, or relative to one of the roots)
    or a dotted module name found under the roots. ValueError, saying what is allowed, for
    anything else (a missing file, a file outside every root, not a .py file)."""
    from inspector.compile.project import module_file

    spec = spec.strip()
    roots = open_roots() if roots is None else [r.resolve() for r in roots]
    listed = ", ".join(str(r) for r in roots) or "(none)"
    if not spec:
        raise ValueError("give a path to a .py file or a module name such as liger_kernel.ops.rms_norm")
    candidates: list[Path] = []
    if spec.endswith(".py") or os.sep in spec or "/" in spec:
        p = Path(spec).expanduser()
        candidates = [p] if p.is_absolute() else [r / p for r in roots]
    else:
        found = module_file(spec, [str(r) for r in roots] + [str(r / "src") for r in roots])
        if found is None:
            raise ValueError(f"no module named {spec!r} under the folders this server opens: {listed}")
        candidates = [Path(found)]
    for c in candidates:
        real = c.resolve()
        if not real.is_file():
            continue
        if real.suffix != ".py":
            raise ValueError(f"{spec}: only .py kernel files can be opened")
        if not any(real.is_relative_to(r) for r in roots):
            raise ValueError(f"{spec} is outside the folders this server opens ({listed}); the operator can "
                             f"add a folder with ${OPEN_ROOTS_ENV}")
        if real.stat().st_size > MAX_UPLOAD_BYTES:
            raise ValueError(f"{spec} is larger than {MAX_UPLOAD_BYTES // 1024} KiB")
        return real
    raise ValueError(f"{spec}: no such file under the folders this server opens ({listed})")


def home_dir() -> Path:
    """The inspector's home (`inspector.places`)."""
    return places.inspector_home()


def workspaces_dir() -> Path:
    """The folder holding every user's workspace."""
    return home_dir() / "workspaces"


def new_key() -> str:
    """A fresh workspace key: 128 random bits as 32 hex digits."""
    return secrets.token_hex(16)


def valid_key(key: object) -> bool:
    """Exactly 32 lower-case hex digits: a key that names one folder and nothing else."""
    return isinstance(key, str) and KEY_RE.fullmatch(key) is not None


def text_digest(text: str) -> str:
    """sha256 of the text (UTF-8), in hex: what a session remembers of the text it last saw."""
    return hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).hexdigest()


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


@dataclass(frozen=True)
class Version:
    """One saved text of a file."""

    number: int  # 1, 2, ... in the order saved
    time: float  # seconds since the epoch
    digest: str  # the first 16 hex digits of text_digest(text)
    size: int  # bytes
    path: Path

    def read(self) -> str:
        return self.path.read_text(encoding="utf-8", errors="replace")


@dataclass(frozen=True)
class SaveResult:
    """What a save did: the file a compile should read, the version it appended (None when the
    text was unchanged), and whether the file had changed since the writer last saw it."""

    path: Path
    version: Version | None
    conflict: bool = False  # the file held another text than the writer last saw
    replaced: Version | None = None  # on a conflict: that other text, kept in the history


# CPython 3.11's parser is not safe to call from several threads at once ("AST constructor
# recursion depth mismatch", gh-106905), and every browser session runs in its own thread.
_PARSE_LOCK = threading.Lock()
# Every browser session is a thread of one server process: one lock orders the saves, renames
# and history appends of all workspaces (each is a few file operations).
_WRITE_LOCK = threading.RLock()


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


def parse_python(text: str) -> ast.Module | None:
    """`ast.parse` under the lock every session thread shares (None when the text does not parse)."""
    try:
        with _PARSE_LOCK:
            return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def _constants_of(text: str) -> dict[str, str]:
    tree = parse_python(text)
    if tree is None:
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


def safe_file_name(name: str) -> str:
    """A plain `name.py` for a user's file name (no folders, no odd characters)."""
    stem = re.sub(r"[^\w.-]+", "_", Path(str(name)).stem).strip("._") or "kernel"
    return f"{stem[:80]}.py"


def _versions(folder: Path) -> list[Version]:
    """The version files in one history folder, newest first."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    out = []
    for entry in entries:
        m = _VERSION_RE.fullmatch(entry.name)
        if not m:
            continue
        try:
            size = entry.stat().st_size
        except OSError:
            continue
        out.append(Version(int(m.group(1)), int(m.group(2)) / 1000, m.group(3), size, Path(entry.path)))
    return sorted(out, key=lambda v: v.number, reverse=True)


def _append_version(folder: Path, text: str) -> Version:
    """A new version file, created whole and exclusively: a link of a finished temporary file,
    so a name already taken (by another process too) is never overwritten; the next number is
    tried."""
    folder.mkdir(parents=True, exist_ok=True)
    versions = _versions(folder)
    number = (versions[0].number if versions else 0) + 1
    digest = text_digest(text)[:16]
    fd, tmp = tempfile.mkstemp(prefix=".version.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        while True:
            now_ms = int(time.time() * 1000)
            final = folder / f"{number:06d}-{now_ms}-{digest}.py"
            if any(folder.glob(f"{number:06d}-*.py")):
                number += 1
                continue
            try:
                os.link(tmp, final)
                break
            except FileExistsError:
                number += 1
    finally:
        os.unlink(tmp)
    return Version(number, now_ms / 1000, digest, final.stat().st_size, final)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


class Workspace:
    """One user's files and their history, in `workspaces_dir()/<key>`."""

    def __init__(self, key: str, kernels_dir: Path = KERNELS_DIR, history_limit: int | None = None) -> None:
        if not valid_key(key):
            raise ValueError("a workspace key is 32 lower-case hex digits")
        self.key = key
        self.root = workspaces_dir() / key
        self.kernels_dir = kernels_dir
        self.history_limit = HISTORY_LIMIT_BYTES if history_limit is None else history_limit

    # ---- the picker --------------------------------------------------------------------------
    def files(self) -> list[KernelFile]:
        """The user's own files, by name."""
        folder = self.root / "files"
        if not folder.is_dir():
            return []
        return [self._file_entry(path.name) for path in sorted(folder.glob("*.py"))]

    def _file_entry(self, name: str) -> KernelFile:
        consts = _constants(self.root / "files" / name)
        title = consts.get("TITLE")
        return KernelFile(FILE_PREFIX + name, f"{title} ({name})" if title else name, None, consts.get("KERNEL"))

    def kernels(self) -> list[KernelFile]:
        """Bundled kernels, then the user's files."""
        return bundled_kernels(self.kernels_dir) + self.files()

    def find(self, kernel_id: str) -> KernelFile | None:
        """The entry with this id, or None (a file id whose file is not in this workspace)."""
        if kernel_id.startswith(FILE_PREFIX):
            name = kernel_id[len(FILE_PREFIX):]
            if name == safe_file_name(name) and (self.root / "files" / name).is_file():
                return self._file_entry(name)
            return None
        return next((k for k in bundled_kernels(self.kernels_dir) if k.id == kernel_id), None)

    def file_kernel(self, name: str) -> KernelFile:
        """The entry of the user's file `name`, whether or not it is on disk now (saving it
        writes it: a tab whose file was renamed by another tab keeps saving under its name)."""
        if name != safe_file_name(name):
            raise ValueError(f"not a workspace file name: {name!r}")
        return self._file_entry(name)

    # ---- the current text ---------------------------------------------------------------------
    def edit_path(self, kf: KernelFile) -> Path:
        """Where this workspace keeps the current text of this kernel (never the bundled file)."""
        sub = "edits" if kf.is_bundled else "files"
        name = safe_file_name(kf.file_name)
        return self.root / sub / name

    def _history_dir(self, kf: KernelFile) -> Path:
        return self.root / "history" / ("edits" if kf.is_bundled else "files") / safe_file_name(kf.file_name)

    def source_path(self, kf: KernelFile) -> Path:
        """The file to compile: the user's copy when there is one, else the bundled file."""
        path = self.edit_path(kf)
        if path.exists() or kf.bundled is None:
            return path
        return kf.bundled

    def read_source(self, kf: KernelFile) -> str:
        """The text the user sees for this kernel."""
        return _read(self.source_path(kf)) or ""

    def is_edited(self, kf: KernelFile) -> bool:
        """Whether a bundled kernel has an edited copy (the user's own files always count)."""
        return kf.is_bundled and self.edit_path(kf).exists()

    def current_digest(self, kf: KernelFile) -> str:
        return text_digest(self.read_source(kf))

    def save_source(self, kf: KernelFile, text: str, base: str | None = None) -> SaveResult:
        """Make `text` the current text of this kernel and append it to its history.

        `base` is the text_digest of the text the writer last saw (loaded or saved); when the
        file holds another text now (another tab saved in between), the save still happens, and
        the result names the version it replaced, so the page can say so. Text identical to the
        bundled file removes the edited copy (the bundled file is never written). Unchanged text
        writes nothing."""
        with _WRITE_LOCK:
            path = self.edit_path(kf)
            current = self.read_source(kf)
            current_digest = text_digest(current)
            if current == text and (kf.bundled is not None or path.exists()):
                return SaveResult(self.source_path(kf), None)
            # The text being replaced is in the history before anything is written (it always is,
            # unless the cap dropped it or the file was put there by other means).
            if path.exists():
                latest = self._latest(kf)
                if latest is None or latest.digest != current_digest[:16]:
                    self._append(kf, current)
            conflict = base is not None and base != current_digest
            replaced = None
            if conflict:
                latest = self._latest(kf)
                replaced = latest if latest is not None and latest.digest == current_digest[:16] else None
            bundled = _read(kf.bundled) if kf.bundled is not None else None
            if bundled is not None and text == bundled:
                try:
                    path.unlink()
                except FileNotFoundError:
                    pass
                target = kf.bundled
            else:
                atomic_write_text(path, text, durable=True)
                target = path
            version = self._append(kf, text)
            self._prune()
            return SaveResult(target, version, conflict, replaced)

    def keep_current(self, kf: KernelFile) -> None:
        """Put the current text in the history if its newest version is not it (a bundled
        kernel never edited has none): done before a change the user may want to undo or diff
        against, such as an applied fix."""
        with _WRITE_LOCK:
            current = self.read_source(kf)
            latest = self._latest(kf)
            if latest is None or latest.digest != text_digest(current)[:16]:
                self._append(kf, current)

    def revert(self, kf: KernelFile, base: str | None = None) -> SaveResult:
        """Back to the bundled text (a new version; the edits stay in the history)."""
        if kf.bundled is None:
            raise ValueError("only a bundled kernel can be reverted")
        return self.save_source(kf, _read(kf.bundled) or "", base)

    # ---- history ------------------------------------------------------------------------------
    def history(self, kf: KernelFile) -> list[Version]:
        """Every kept version of this kernel's text, newest first."""
        return _versions(self._history_dir(kf))

    def _latest(self, kf: KernelFile) -> Version | None:
        versions = self.history(kf)
        return versions[0] if versions else None

    def _append(self, kf: KernelFile, text: str) -> Version:
        return _append_version(self._history_dir(kf), text)

    def restore(self, kf: KernelFile, version: Version, base: str | None = None) -> SaveResult:
        """Make an earlier version the current text again (as a new version; none is deleted)."""
        if version.path.parent != self._history_dir(kf):
            raise ValueError("that version belongs to another file")
        return self.save_source(kf, version.read(), base)

    def history_bytes(self) -> int:
        """The size of every kept version in this workspace."""
        return sum(v.size for _f, v in self._all_versions())

    def _all_versions(self) -> list[tuple[Path, Version]]:
        out = []
        for sub in ("edits", "files"):
            try:
                folders = [Path(e.path) for e in os.scandir(self.root / "history" / sub) if e.is_dir()]
            except OSError:
                continue
            for folder in folders:
                out.extend((folder, v) for v in _versions(folder))
        return out

    def _prune(self) -> None:
        """Drop the oldest versions beyond the cap, keeping the newest version of every file."""
        versions = self._all_versions()
        total = sum(v.size for _f, v in versions)
        if total <= self.history_limit:
            return
        newest = {}
        for folder, v in versions:
            if folder not in newest or v.number > newest[folder].number:
                newest[folder] = v
        keep = {v.path for v in newest.values()}
        for _folder, v in sorted(versions, key=lambda fv: (fv[1].time, fv[1].number)):
            if total <= self.history_limit:
                break
            if v.path in keep:
                continue
            try:
                v.path.unlink()
            except FileNotFoundError:
                continue
            total -= v.size

    # ---- new files, uploads, renames ----------------------------------------------------------
    def _free_name(self, wanted: str) -> str:
        """`wanted`, or `stem-2.py`, `stem-3.py`, ...: a name no file (or history) of this
        workspace has, so nothing is ever replaced."""
        stem = wanted[:-3]
        n = 1
        while True:
            name = wanted if n == 1 else f"{stem}-{n}.py"
            if not (self.root / "files" / name).exists() and not (self.root / "history" / "files" / name).exists():
                return name
            n += 1

    def _create(self, wanted: str, text: str) -> KernelFile:
        with _WRITE_LOCK:
            name = self._free_name(wanted)
            kf = KernelFile(FILE_PREFIX + name, name, None, None)
            path = self.edit_path(kf)
            atomic_write_text(path, text, durable=True)
            self._append(kf, text)
            self._prune()
            return self._file_entry(name)

    def new_kernel(self) -> KernelFile:
        """A file of its own (untitled-1.py, untitled-2.py, ...) holding the template kernel."""
        with _WRITE_LOCK:
            n = 1
            while True:
                name = f"untitled-{n}.py"
                if self._free_name(name) == name:
                    return self._create(name, NEW_KERNEL_TEMPLATE)
                n += 1

    def add_upload(self, name: str, data: bytes) -> KernelFile:
        """Store an uploaded file under a safe name; a name already in use gets a distinct one
        (`kern-2.py`), so an upload never replaces a file."""
        if len(data) > MAX_UPLOAD_BYTES:
            raise ValueError(f"the file is larger than {MAX_UPLOAD_BYTES // 1024} KiB")
        return self._create(safe_file_name(name), data.decode("utf-8", errors="replace"))

    def open_file(self, origin: Path) -> KernelFile:
        """Copy a kernel file opened by path or module name (see `resolve_open`) into the
        workspace for editing, remembering where it came from: it is compiled as that file,
        inside its package, so its relative and package imports keep working."""
        text = origin.read_text(encoding="utf-8", errors="replace")
        with _WRITE_LOCK:
            kf = self._create(safe_file_name(origin.name), text)
            atomic_write_text(self._origin_record(kf), str(origin), durable=True)
            return kf

    def _origin_record(self, kf: KernelFile) -> Path:
        return self.root / "origins" / safe_file_name(kf.file_name)

    def origin_of(self, kf: KernelFile) -> Path | None:
        """The package file a file of the user's was opened from, or None."""
        if kf.is_bundled:
            return None
        text = _read(self._origin_record(kf))
        return Path(text.strip()) if text and text.strip() else None

    def rename(self, kf: KernelFile, new_name: str) -> KernelFile:
        """Rename one of the user's files (and its history); ValueError if the name is taken."""
        if kf.is_bundled:
            raise ValueError("a bundled kernel cannot be renamed")
        name = safe_file_name(new_name if new_name.endswith(".py") else f"{new_name}.py")
        if name == kf.file_name:
            return kf
        with _WRITE_LOCK:
            if self._free_name(name) != name:
                raise ValueError(f"{name} is already in this workspace")
            new = KernelFile(FILE_PREFIX + name, name, None, None)
            old_path = self.edit_path(kf)
            if not old_path.exists():
                raise ValueError(f"{kf.file_name} is no longer in this workspace")
            old_history = self._history_dir(kf)
            if old_history.exists():
                new_history = self._history_dir(new)
                new_history.parent.mkdir(parents=True, exist_ok=True)
                os.rename(old_history, new_history)
            os.rename(old_path, self.edit_path(new))
            if self._origin_record(kf).exists():
                os.rename(self._origin_record(kf), self._origin_record(new))
            return self._file_entry(name)
