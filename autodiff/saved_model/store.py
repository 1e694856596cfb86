"""Where a saved model lives on disk, and how a save is published as one unit.

This module owns the directory protocol only; what goes *in* the files is
``file_format.py`` (JSON) and ``arrays.py`` (.npz), and how an entry is
opened safely is ``safe_files.py``. It never parses a model.

Layout of ``export_dir``::

    export_dir/
      saved_model.current     the pointer: {"format": "autodiff.saved_model.pointer",
                              "version": 1, "current": "v-000007-3fa2c91d",
                              "json_sha256": "<the SHA-256 of its saved_model.json>"}
      v-000007-3fa2c91d/      the model the pointer names (never changed once named)
        saved_model.json
        variables.npz
      v-000006-81bb02e4/      the previous model, kept for readers that already chose it
      .lock                   taken (flock) by a writer while it saves

Every entry is of the kind shown: the versions real directories, the rest
regular files. A link, FIFO, device or socket is never followed, opened or
replaced: a reader refuses it with an ``UnsafeFileError``, a writer
refuses the directory. The pointer's keys are checked like the model's
(``json_sha256`` may be absent: pointers written before it existed).

A save, step by step (``STEPS``; a test hook can stop it at any of them):
write both files into a fresh ``.staging-*`` directory and fsync each,
fsync the staging directory, rename it to its version name, fsync
``export_dir``; then write the new pointer (naming the version and the
JSON's digest) to a temporary file, fsync it,
``os.replace`` it over ``saved_model.current`` and fsync ``export_dir``
again. Until that replace, readers see the old pointer and the old,
untouched version; after it, the new one. A crash at any instant leaves
one of the two loadable. The next save (holding the lock) removes what an
interrupted save left (staging directories, temporary pointers) and every
version except the new one and the one it replaced.

A writer takes the lock (``flock`` on ``.lock``) *before* it looks at the
directory: only then does no other writer rename or remove entries while
it lists them. A writer that finds the directory is not a saved model
removes the ``.lock`` it made, and touches nothing else.

A reader resolves the pointer once and reads only inside that version, an
open directory (a rename cannot swap it). If the version disappears under
it (two saves happened while it read), it resolves the pointer again, a
few times (``read_with_retries``).

A directory written by earlier versions of this library (the two files
directly in ``export_dir``, no pointer) still loads; saving over it
publishes a version and then removes those two files.

Saving refuses any ``export_dir`` that is not ours: a file, or a directory
holding anything but the names above, or a ``saved_model.json`` that is
not ours (the user's data is never deleted).
"""

import collections
import contextlib
import json
import os
import re
import secrets
import shutil
import stat

from .checked_json import FormatError, check_keys, parse_json, short_repr
from .file_format import FORMAT_NAME
from .safe_files import Directory, MissingFileError, UnsafeFileError, kind_of

__all__ = ["POINTER_FILE", "STEPS", "Pointer", "resolve", "read_with_retries", "publish",
           "is_ours"]

POINTER_FILE = "saved_model.current"
POINTER_FORMAT = "autodiff.saved_model.pointer"
POINTER_KEYS = ("format", "version", "current", "json_sha256")
LOCK_FILE = ".lock"
LEGACY_FILES = ("saved_model.json", "variables.npz")
_VERSION = re.compile(r"v-([0-9]{6,18})-[0-9a-f]{8}")      # matched whole (fullmatch)
_STAGING = re.compile(r"\.staging-[0-9a-f]{16}")
_TEMPORARY_POINTER = re.compile(r"\.pointer-[0-9a-f]{16}")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_POINTER_MAX_BYTES = 4096
_LEGACY_MAX_BYTES = 1 << 28
RETRIES = 5

# What the pointer says: the version's name, and its saved_model.json's SHA-256 (or None).
Pointer = collections.namedtuple("Pointer", "name json_sha256")

# The steps of a save, in order; ``_step_hook(name)`` runs before each (tests).
STEPS = ("make staging dir", "write saved_model.json", "fsync saved_model.json",
         "write variables.npz", "fsync variables.npz", "fsync staging dir",
         "rename staging to version", "fsync export dir", "write pointer", "fsync pointer",
         "replace pointer", "fsync export dir again", "remove legacy files", "clean up")
_step_hook = None


def _step(name):
    if _step_hook is not None:
        _step_hook(name)


# ---- reading ------------------------------------------------------------------------

def resolve(export_dir):
    """The directory holding this model's files: the version the pointer names.

    Returns the directory itself for the legacy layout (files directly in it).

    Raises:
        FileNotFoundError: no saved model at ``export_dir``.
        FormatError: the pointer file is damaged, or is not a regular file.
    """
    with Directory.open(export_dir) as top:
        pointer = _read_pointer(top)
        return top.path if pointer is None else top.join(pointer.name)


def read_with_retries(export_dir, read):
    """``read(version, json_sha256)``, resolving the pointer again if the version vanished.

    ``version`` is an open ``safe_files.Directory``; ``json_sha256`` what the
    pointer recorded (None for the legacy layout and older pointers).
    """
    with Directory.open(export_dir) as top:
        for attempt in range(RETRIES):
            pointer = _read_pointer(top)
            try:
                if pointer is None:
                    return read(top, None)
                with top.subdirectory(pointer.name) as version:
                    return read(version, pointer.json_sha256)
            except FileNotFoundError:
                if attempt == RETRIES - 1 or _read_pointer(top) == pointer:
                    raise   # the version is still current: a file really is missing


def _read_pointer(top):
    """The ``Pointer`` in the open directory ``top``; None for the legacy layout."""
    try:
        raw = top.read(POINTER_FILE, _POINTER_MAX_BYTES)
    except MissingFileError:
        if top.lstat(LEGACY_FILES[0]) is not None:   # whatever it is, reading it will judge
            return None
        raise FileNotFoundError(f"no saved model at {top.path}: {POINTER_FILE} is missing (and "
                                f"no {LEGACY_FILES[0]} of the older layout either)") from None
    try:
        data = parse_json(raw)
        if not isinstance(data, dict) or data.get("format") != POINTER_FORMAT:
            raise FormatError(f"format is not {POINTER_FORMAT!r}")
        if type(data.get("version")) is not int or data["version"] != 1:
            raise FormatError(f"pointer version {short_repr(data.get('version'))} is not "
                              f"supported")
        check_keys(data, "$", POINTER_KEYS)
        name, digest = data.get("current"), data.get("json_sha256")
        if not isinstance(name, str) or not _VERSION.fullmatch(name):
            raise FormatError(f"$.current is not a version name: {short_repr(name)}")
        if digest is not None and not (isinstance(digest, str) and _SHA256.fullmatch(digest)):
            raise FormatError(f"$.json_sha256 is not a SHA-256 in hex: {short_repr(digest)}")
    except FormatError as err:
        raise FormatError(f"{top.join(POINTER_FILE)}: {err}") from None
    return Pointer(name, digest)


# ---- writing ------------------------------------------------------------------------

def is_ours(path, name):
    """Whether the entry ``name`` of ``path`` is something a save writes, of the kind it writes.

    A version or staging directory must be a directory; the pointer, the lock,
    the legacy files and temporary pointers must be regular files. An entry
    that vanished while we looked is no obstacle.
    """
    try:
        mode = os.lstat(os.path.join(path, name)).st_mode
    except FileNotFoundError:
        return True
    if _VERSION.fullmatch(name) or _STAGING.fullmatch(name):
        return stat.S_ISDIR(mode)
    return stat.S_ISREG(mode) and (name in (POINTER_FILE, LOCK_FILE) + LEGACY_FILES
                                   or bool(_TEMPORARY_POINTER.fullmatch(name)))


def _is_legacy_model(path):
    """Whether ``path/saved_model.json`` is one of ours (the layout before versions)."""
    try:
        with Directory.open(path) as top:
            document = parse_json(top.read(LEGACY_FILES[0], _LEGACY_MAX_BYTES))
    except (OSError, FormatError):
        return False
    return isinstance(document, dict) and document.get("format") == FORMAT_NAME


def _check_target(path):
    """Refuses ``path`` unless it holds a saved model's entries only (run holding the lock)."""
    names = os.listdir(path)
    legacy_ok = POINTER_FILE in names or _is_legacy_model(path)
    foreign = sorted(n for n in names if not is_ours(path, n)
                     or (n in LEGACY_FILES and not legacy_ok))
    if foreign:
        shown = ", ".join(f"{short_repr(n)} ({_kind(path, n)})" for n in foreign[:3])
        raise ValueError(f"cannot save to {path}: it is a directory holding {shown}, so not a "
                         f"saved model; refusing to replace it")


def _kind(path, name):
    try:
        return kind_of(os.lstat(os.path.join(path, name)).st_mode)
    except OSError:
        return "gone"


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
    """Holds the writers' lock of ``path``; yields whether this call created ``.lock``.

    ``.lock`` is opened as any entry is (``safe_files.py``): a link there is
    refused, never followed to create a file elsewhere.
    """
    try:
        import fcntl
    except ImportError:  # not POSIX: one writer at a time is the caller's job
        fcntl = None
    with Directory.open(path) as top:
        while True:
            try:
                fd, created = top.open_lock(LOCK_FILE)
            except UnsafeFileError as err:
                raise UnsafeFileError(f"cannot save to {path}: {err}; refusing to save "
                                      f"there") from None
            if fcntl is None:
                break
            fcntl.flock(fd, fcntl.LOCK_EX)
            if top.holds(LOCK_FILE, fd):
                break   # else a writer that refused the directory removed this .lock: again
            os.close(fd)
        try:
            yield created
        finally:
            os.close(fd)  # closing releases the lock


def _write_file(directory, name, write):
    _step(f"write {name}")
    with open(os.path.join(directory, name), "xb") as f:
        write(f)
        f.flush()
        _step(f"fsync {name}")
        os.fsync(f.fileno())


def _current_name(path):
    try:
        version_dir = resolve(path)
    except (FileNotFoundError, FormatError):
        return None
    return None if version_dir == path else os.path.basename(version_dir)


def publish(export_dir, files, json_sha256):
    """Publishes one new version of the model at ``export_dir``.

    Args:
        export_dir: the model's directory (created if missing).
        files: ``[(file name, write(binary file))]``, written in order.
        json_sha256: the SHA-256 (hex) of the ``saved_model.json`` among
            them, which the pointer records for readers to check.

    Raises:
        ValueError: ``export_dir`` is not a saved model (nothing is touched).
    """
    path = os.path.abspath(os.fspath(export_dir))
    if os.path.lexists(path) and not os.path.isdir(path):
        raise ValueError(f"cannot save to {path}: it exists and is not a directory, so not "
                         f"a saved model; refusing to replace it")
    if not os.path.isdir(path):
        os.makedirs(path, exist_ok=True)
        _fsync_dir(os.path.dirname(path))  # the new directory's own entry
    with _locked(path) as created_lock:
        try:
            _check_target(path)  # holding the lock: no other writer changes the directory
        except ValueError:
            if created_lock:
                os.remove(os.path.join(path, LOCK_FILE))  # leave it as it was
            raise
        previous = _current_name(path)
        number = 1 + max([int(_VERSION.fullmatch(n).group(1)) for n in os.listdir(path)
                          if _VERSION.fullmatch(n)] or [0])
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
        pointer = {"format": POINTER_FORMAT, "version": 1, "current": name,
                   "json_sha256": json_sha256}
        temporary = os.path.join(path, f".pointer-{secrets.token_hex(8)}")
        _step("write pointer")
        with open(temporary, "x", encoding="utf-8") as f:   # "x": never through a planted link
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
        if entry in keep or not (_VERSION.fullmatch(entry) or _STAGING.fullmatch(entry)
                                 or _TEMPORARY_POINTER.fullmatch(entry)):
            continue
        full = os.path.join(path, entry)
        if os.path.isdir(full) and not os.path.islink(full):
            shutil.rmtree(full, ignore_errors=True)
        else:
            with contextlib.suppress(FileNotFoundError):
                os.remove(full)
