"""Writing a file whole or not at all: to a temporary file beside it, then one rename.

A crash (or an exception) while ``model.save`` or ``save_weights`` writes
leaves any earlier file at that path untouched: the new content goes to
``.<name>.<random>.tmp`` in the same folder, is flushed to disk, and only
then replaces the target with ``os.replace`` (atomic on POSIX and Windows
within one file system). On failure the temporary file is removed.

    >>> from autodiff.models.saving.atomic import atomic_path
    >>> with atomic_path("notes.txt") as tmp:
    ...     with open(tmp, "w") as f:  # a crash here: notes.txt is as it was
    ...         _ = f.write("new")
    >>> open("notes.txt").read()
    'new'
"""

import contextlib
import os
import tempfile

__all__ = ["atomic_path"]


@contextlib.contextmanager
def atomic_path(path, overwrite=True):
    """Yields a temporary path; on success it becomes ``path``.

    Raises:
        FileExistsError: ``path`` exists and ``overwrite`` is False.
    """
    path = os.fspath(path)
    if not overwrite and os.path.exists(path):
        raise FileExistsError(f"{path} exists and overwrite=False")
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    handle, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp",
                                   dir=folder)
    os.close(handle)
    try:
        yield tmp
        with open(tmp, "rb+") as f:
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise
