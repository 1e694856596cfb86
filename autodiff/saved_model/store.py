"""Where a saved model lives on disk, and how a save is published as one unit.

This module owns the directory protocol only; what goes *in* the files is
``file_format.py`` (JSON) and ``arrays.py`` (.npz). It
never parses a model.

Layout of ``export_dir``::

    export_dir/
      saved_model.current     the pointer: {"format": "autodiff.saved_model.pointer",
                              "version": 1, "current": "v-000007-3fa2c91d"}
      v-000007-3fa2c91d/      the model the pointer names (never changed once named)
        saved_model.json
        variables.npz
      v-000006-81bb02e4/      the previous model, kept for readers that already chose it
      .lock                   taken (flock) by a writer while it saves

A save, step by step (``STEPS``; a test hook can stop it at any of them):
write both files into a fresh ``.staging-*`` directory and fsync each,
fsync the staging directory, rename it to its version name, fsync
``export_dir``; then write the new pointer to a temporary file, fsync it,
``os.replace`` it over ``saved_model.current`` and fsync ``export_dir``
again. Until that replace, readers see the old pointer and the old,
untouched version; after it, the new one. A crash at any instant leaves
one of the two loadable. The next save (holding the lock) removes what an
interrupted save left (staging directories, temporary pointers) and every
version except the new one and the one it replaced.

A reader resolves the pointer once and reads only inside that version. If
the version disappears under it (two saves happened while it read), it
resolves the pointer again, a few times (``read_with_retries``).

A directory written by earlier versions of this library (the two files
directly in ``export_dir``, no pointer) still loads; saving over it
publishes a version and then removes those two files.

Saving refuses any ``export_dir`` that is not ours: a file, or a directory
holding anything but the names above, or a ``saved_model.json`` that is
not ours (the user's data is never deleted).
"""

import contextlib
import json
import os
import re
import secrets
import shutil

from .file_format import FORMAT_NAME

__all__ = ["POINTER_FILE", "STEPS", "resolve", "read_with_retries", "publish", "is_ours"]

POINTER_FILE = "saved_model.current"
POINTER_FORMAT = "autodiff.saved_model.pointer"
LOCK_FILE = ".lock"
LEGACY_FILES = ("saved_model.json", "variables.npz")
_VERSION = re.compile(r"^v-(\d{6,})-[0-9a-f]{8}$")
_LEFTOVER = re.compile(r"^\.(staging|pointer)-[0-9a-f]{16}$")
_POINTER_MAX_BYTES = 4096
RETRIES = 5

# The steps of a save, in order; ``_step_hook(name)`` runs before each (tests).
STEPS = ("make staging dir", "write saved_model.json", "fsync saved_model.json",
         "write variables.npz", "fsync variables.npz", "fsync staging dir",
         "rename staging to version", "fsync export dir", "write pointer", "fsync pointer",
         "replace pointer", "fsync export dir again", "remove legacy files", "clean up")
_step_hook = None


def _step(name):
    if _step_hook is not None:
        _step_hook(name)


class StoreError(ValueError):
    """The pointer file is damaged; ``load.py`` turns it into a FormatError."""


# ---- reading ------------------------------------------------------------------------

def resolve(export_dir):
    """The directory holding this model's files: the version the pointer names.

    Returns the directory itself for the legacy layout (files directly in it).

    Raises:
        FileNotFoundError: no saved model at ``export_dir``.
        StoreError: the pointer file is damaged.
    """
    pointer = os.path.join(export_dir, POINTER_FILE)
    try:
        with open(pointer, "rb") as f:
            raw = f.read(_POINTER_MAX_BYTES + 1)
    except FileNotFoundError:
        if os.path.isfile(os.path.join(export_dir, LEGACY_FILES[0])):
            return export_dir
        raise FileNotFoundError(f"no saved model at {export_dir}: {pointer} is missing (and no "
                                f"{LEGACY_FILES[0]} of the older layout either)") from None
    except IsADirectoryError:
        raise StoreError(f"{pointer}: is a directory, not a pointer file") from None
    try:
        if len(raw) > _POINTER_MAX_BYTES:
            raise ValueError("longer than a pointer can be")
        data = json.loads(raw.decode("utf-8"))
        if not isinstance(data, dict) or data.get("format") != POINTER_FORMAT:
            raise ValueError(f"format is not {POINTER_FORMAT!r}")
        if data.get("version") != 1:
            raise ValueError(f"pointer version {data.get('version')!r} is not supported")
        name = data.get("current")
        if not isinstance(name, str) or not _VERSION.match(name):
            raise ValueError(f"$.current is not a version name: {name!r}")
    except (ValueError, UnicodeDecodeError, RecursionError) as err:
        raise StoreError(f"{pointer}: {err}") from None
    return os.path.join(export_dir, name)


def read_with_retries(export_dir, read):
    """``read(version_dir)``, resolving the pointer again if the version vanished meanwhile."""
    for attempt in range(RETRIES):
        version_dir = resolve(export_dir)
        try:
            return read(version_dir)
        except FileNotFoundError:
            if attempt == RETRIES - 1 or resolve(export_dir) == version_dir:
                raise   # the version is still current: a file really is missing


# ---- writing ------------------------------------------------------------------------

def is_ours(path, name):
    """Whether ``name`` in ``path`` is something a save writes (a version is a directory)."""
    if _VERSION.match(name) or name.startswith(".staging-"):
        full = os.path.join(path, name)
        return os.path.isdir(full) and not os.path.islink(full) and bool(
            _VERSION.match(name) or _LEFTOVER.match(name))
    return name in (POINTER_FILE, LOCK_FILE) + LEGACY_FILES or bool(_LEFTOVER.match(name))


def _is_legacy_model(path):
    """Whether ``path/saved_model.json`` is one of ours (the layout before versions)."""
    try:
        with open(os.path.join(path, LEGACY_FILES[0]), "rb") as f:
            if os.fstat(f.fileno()).st_size > 1 << 28:
                return False
            document = json.loads(f.read().decode("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError, RecursionError):
        return False
    return isinstance(document, dict) and document.get("format") == FORMAT_NAME


def _check_target(path):
    if os.path.lexists(path) and not os.path.isdir(path):
        raise ValueError(f"cannot save to {path}: it exists and is not a directory, so not "
                         f"a saved model; refusing to replace it")
    if os.path.isdir(path):
        names = os.listdir(path)
        legacy_ok = POINTER_FILE in names or _is_legacy_model(path)
        foreign = sorted(n for n in names if not is_ours(path, n)
                         or (n in LEGACY_FILES and not legacy_ok))
        if foreign:
            raise ValueError(f"cannot save to {path}: it is a directory holding "
                             f"{', '.join(map(repr, foreign[:3]))}, so not a saved model; "
                             f"refusing to replace it")


def _fsync_dir(path):
    if os.name != "posix":
        return  # Windows cannot open a directory to fsync it
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def _locked(path):
    fd = os.open(os.path.join(path, LOCK_FILE), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            import fcntl
            fcntl.flock(fd, fcntl.LOCK_EX)
        except ImportError:  # not POSIX: one writer at a time is the caller's job
            pass
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _write_file(directory, name, write):
    _step(f"write {name}")
    with open(os.path.join(directory, name), "wb") as f:
        write(f)
        f.flush()
        _step(f"fsync {name}")
        os.fsync(f.fileno())


def _current_name(path):
    try:
        version_dir = resolve(path)
    except (FileNotFoundError, StoreError):
        return None
    return None if version_dir == path else os.path.basename(version_dir)


def publish(export_dir, files):
    """Publishes one new version of the model at ``export_dir``.

    Args:
        export_dir: the model's directory (created if missing).
        files: ``[(file name, write(binary file))]``, written in order.

    Raises:
        ValueError: ``export_dir`` is not a saved model (nothing is touched).
    """
    path = os.path.abspath(os.fspath(export_dir))
    _check_target(path)
    if not os.path.isdir(path):
        os.makedirs(path, exist_ok=True)
        _fsync_dir(os.path.dirname(path))  # the new directory's own entry
    with _locked(path):
        _check_target(path)  # again, now that no other writer runs
        previous = _current_name(path)
        number = 1 + max([int(_VERSION.match(n).group(1)) for n in os.listdir(path)
                          if _VERSION.match(n)] or [0])
        name = f"v-{number:06d}-{secrets.token_hex(4)}"
        _step("make staging dir")
        staging = os.path.join(path, f".staging-{secrets.token_hex(8)}")
        os.mkdir(staging)
        try:
            for file_name, write in files:
                _write_file(staging, file_name, write)
            _step("fsync staging dir")
            _fsync_dir(staging)
            _step("rename staging to version")
            os.rename(staging, os.path.join(path, name))
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        _step("fsync export dir")
        _fsync_dir(path)
        pointer = {"format": POINTER_FORMAT, "version": 1, "current": name}
        temporary = os.path.join(path, f".pointer-{secrets.token_hex(8)}")
        _step("write pointer")
        with open(temporary, "w", encoding="utf-8") as f:
            f.write(json.dumps(pointer) + "\n")
            f.flush()
            _step("fsync pointer")
            os.fsync(f.fileno())
        _step("replace pointer")
        os.replace(temporary, os.path.join(path, POINTER_FILE))
        _step("fsync export dir again")
        _fsync_dir(path)
        _step("remove legacy files")
        for legacy in LEGACY_FILES:
            with contextlib.suppress(FileNotFoundError):
                os.remove(os.path.join(path, legacy))
        _step("clean up")
        _clean(path, keep={name, previous})


def _clean(path, keep):
    """Removes leftovers of interrupted saves and versions older than the previous one."""
    for entry in os.listdir(path):
        if entry in keep or not (_VERSION.match(entry) or _LEFTOVER.match(entry)):
            continue
        full = os.path.join(path, entry)
        if os.path.isdir(full) and not os.path.islink(full):
            shutil.rmtree(full, ignore_errors=True)
        else:
            with contextlib.suppress(FileNotFoundError):
                os.remove(full)
