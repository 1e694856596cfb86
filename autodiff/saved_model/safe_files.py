"""Opening a saved model's entries without trusting them: no links, regular files, bounded reads.

A model's directory is input like any other: it may be damaged, or made by
someone hostile. Whatever it holds, ``load`` must end quickly with a
``FormatError`` naming the entry, and must never read, wait on or create
anything outside the directory. This module owns how entries are opened;
what the files say is ``file_format.py`` and ``arrays.py``, which names the
directory holds is ``store.py``.

- Links are never followed below ``export_dir``. A ``Directory`` is an open
  directory, and each entry is opened relative to it (``dir_fd``), with
  ``O_NOFOLLOW``: a link (to ``/etc/passwd``, to a FIFO, to itself) is
  refused, and a directory renamed meanwhile cannot send the reader
  elsewhere. ``export_dir`` itself, the path the caller gave, may be a link:
  that was the caller's choice.
- Only regular files are read. An entry is ``lstat``-ed before it is opened
  (opening a device can do things of its own), opened with ``O_NONBLOCK``
  (opening a FIFO to read waits for a writer, forever if none comes), and
  ``fstat``-ed once open, in case it was swapped in between.
- Every read is bounded: the size ``fstat`` gives is checked against the
  caller's cap before a byte is read, and no more than that size is read.

A refusal is an ``UnsafeFileError`` (a FormatError) naming the entry and
what it is instead::

    .../m/v-000003-3fa2c91d/saved_model.json: is a symbolic link, not a
    regular file; links are never followed inside a saved model

A missing entry is a ``MissingFileError`` (a FormatError and a
FileNotFoundError); an entry the process may not open raises the usual
``PermissionError``. Where ``dir_fd`` is missing (Windows) the same checks
run on paths, which a concurrent swap could race.

    >>> import os
    >>> from autodiff.saved_model.safe_files import Directory
    >>> model = ad.Module()
    >>> model.w = ad.Variable(1.0)
    >>> ad.saved_model.save(model, "m")
    >>> name = os.path.basename(ad.saved_model.current_version("m"))   # v-000001-...
    >>> with Directory.open("m") as top, top.subdirectory(name) as version:
    ...     raw = version.read("saved_model.json", max_bytes=1 << 28)
    >>> raw[:1]
    b'{'
"""

import errno
import os
import stat

from .file_format import FormatError, short_text

__all__ = ["Directory", "MissingFileError", "UnsafeFileError"]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
_RELATIVE = _NOFOLLOW != 0 and {os.open, os.stat} <= os.supports_dir_fd

_KINDS = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISDIR, "a directory"),
          (stat.S_ISREG, "a regular file"))


class MissingFileError(FormatError, FileNotFoundError):
    """A file of a saved model's directory is missing (a FormatError and a FileNotFoundError)."""


class UnsafeFileError(FormatError):
    """An entry of a saved model is not the kind the layout says, so it was never read.

    A link (never followed), a FIFO, a device or a socket where a file
    belongs, or a file where a directory belongs. The message names the
    entry and what it is, e.g. ``.../v-000002-81bb02e4: is a regular file,
    not a directory``.
    """


def kind_of(mode):
    """``"a symbolic link"``, ``"a FIFO (named pipe)"``, ...: what an ``st_mode`` is, in words."""
    return next((text for test, text in _KINDS if test(mode)), "a special file")


class Directory:
    """An open directory of a saved model: entries are opened relative to it, never through a link.

    ``path`` is for messages (and for systems without ``dir_fd``).
    """

    def __init__(self, path, fd):
        self.path, self._fd = path, fd

    @classmethod
    def open(cls, path):
        """Opens ``export_dir``, the caller's path (a link in it is followed).

        Raises:
            FileNotFoundError: nothing is there.
            FormatError: it is not a directory, or cannot be opened.
        """
        path = os.fspath(path)
        try:
            mode = os.stat(path).st_mode
            if not stat.S_ISDIR(mode):
                raise FormatError(f"{short_text(path)}: is {kind_of(mode)}; a saved model is "
                                  f"a directory")
            fd = os.open(path, os.O_RDONLY | _DIRECTORY | _NONBLOCK | _CLOEXEC) \
                if _RELATIVE else None
        except FileNotFoundError:
            raise FileNotFoundError(f"no saved model at {short_text(path)}") from None
        except PermissionError:
            raise
        except OSError as err:
            raise FormatError(f"{short_text(path)}: cannot be opened as a directory "
                              f"({err.strerror})") from None
        return cls(path, fd)

    def close(self):
        if self._fd is not None and self._fd >= 0:
            os.close(self._fd)
            self._fd = -1   # any later use fails (EBADF); it never falls back to paths

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def join(self, name):
        return os.path.join(self.path, name)

    def lstat(self, name):
        """The entry's ``os.stat_result`` (a link itself, not what it points to); None if absent."""
        try:
            if self._fd is None:
                return os.lstat(self.join(name))
            return os.stat(name, dir_fd=self._fd, follow_symlinks=False)
        except FileNotFoundError:
            return None
        except OSError as err:
            raise self._error(name, err) from None

    def subdirectory(self, name):
        """The directory ``name`` in this one, opened (refused if a link or not a directory)."""
        if self._fd is None:
            self._checked_mode(name, stat.S_ISDIR)
            return Directory(self.join(name), None)
        return Directory(self.join(name), self._open(name, os.O_RDONLY | _DIRECTORY, stat.S_ISDIR))

    def open_file(self, name, max_bytes=None):
        """``(binary file, size)``: the regular file ``name``, refused if over ``max_bytes``."""
        fd = self._open(name, os.O_RDONLY, stat.S_ISREG)
        size = os.fstat(fd).st_size
        if max_bytes is not None and size > max_bytes:
            os.close(fd)
            raise FormatError(f"{self.join(name)}: {size} bytes, over the {max_bytes} such a "
                              f"file may have; refusing it")
        return os.fdopen(fd, "rb"), size

    def read(self, name, max_bytes):
        """All the bytes of the regular file ``name``, which may have at most ``max_bytes``."""
        file, size = self.open_file(name, max_bytes)
        with file:
            data = file.read(size)
        if len(data) != size:
            raise FormatError(f"{self.join(name)}: {len(data)} bytes read of the {size} it had "
                              f"when opened (cut short while being read?)")
        return data

    def open_lock(self, name):
        """``(fd, created)``: the regular file ``name`` opened to write, made if it was missing."""
        while True:
            try:
                return self._open_fd(name, os.O_RDWR | os.O_CREAT | os.O_EXCL), True
            except FileExistsError:   # O_EXCL says so for a link too, wherever it points
                pass
            try:
                return self._open(name, os.O_RDWR, stat.S_ISREG), False
            except MissingFileError:
                continue              # removed meanwhile (by a writer that refused the directory)

    def holds(self, name, fd):
        """Whether the entry ``name`` is still the open file ``fd`` (not removed or replaced)."""
        entry, opened = self.lstat(name), os.fstat(fd)
        return entry is not None and (entry.st_dev, entry.st_ino) == (opened.st_dev, opened.st_ino)

    # ---- the checks ---------------------------------------------------------------------

    def _open(self, name, flags, is_kind):
        """Opens an entry, checking its kind (``stat.S_ISREG``, ``S_ISDIR``) before and after."""
        self._checked_mode(name, is_kind)
        try:
            fd = self._open_fd(name, flags)
        except FileNotFoundError:  # removed between the lstat and the open
            raise MissingFileError(f"{self.join(name)}: a file of the saved model is "
                                   f"missing") from None
        mode = os.fstat(fd).st_mode
        if not is_kind(mode):   # swapped between the lstat and the open
            os.close(fd)
            raise self._kind_error(name, mode, is_kind)
        return fd

    def _open_fd(self, name, flags):
        try:
            if self._fd is None:
                return os.open(self.join(name), flags | _NOFOLLOW | _NONBLOCK | _CLOEXEC, 0o644)
            return os.open(name, flags | _NOFOLLOW | _NONBLOCK | _CLOEXEC, 0o644, dir_fd=self._fd)
        except (FileNotFoundError, FileExistsError):
            raise
        except OSError as err:
            raise self._error(name, err) from None

    def _checked_mode(self, name, is_kind):
        entry = self.lstat(name)
        if entry is None:
            raise MissingFileError(f"{self.join(name)}: a file of the saved model is missing")
        if not is_kind(entry.st_mode):
            raise self._kind_error(name, entry.st_mode, is_kind)

    def _kind_error(self, name, mode, is_kind):
        wanted = "a directory" if is_kind is stat.S_ISDIR else "a regular file"
        why = ("links are never followed inside a saved model" if stat.S_ISLNK(mode) else
               "a saved model holds nothing else" if is_kind is stat.S_ISREG else
               "the layout puts a directory here")
        return UnsafeFileError(f"{self.join(name)}: is {kind_of(mode)}, not {wanted}; {why}")

    def _error(self, name, err):
        """An OSError met opening ``name``, as a FormatError naming it (a PermissionError stays)."""
        if err.errno in (errno.ELOOP, errno.EMLINK):    # O_NOFOLLOW met a link
            return UnsafeFileError(f"{self.join(name)}: is a symbolic link; links are never "
                                   f"followed inside a saved model")
        if isinstance(err, PermissionError):   # the reader's rights, not the file's fault
            return err
        return FormatError(f"{short_text(self.join(name))}: cannot be opened "
                           f"({err.strerror or err})")
