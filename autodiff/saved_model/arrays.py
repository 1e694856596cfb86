"""Reading ``variables.npz`` without trusting it: sizes are checked before anything inflates.

``np.load`` on an ``.npz`` decompresses whichever member is asked for and
believes its header; a 1 MiB file can inflate to gigabytes. This reader
takes the zip already opened (``safe_files.py``: a regular file, its size
known) and refuses two members of one name; then, for each array the JSON
references (and only those), it checks before reading a byte of data:

- the JSON's declared shape and dtype give ``nbytes``, which must be under
  ``MAX_ARRAY_BYTES`` (and all arrays together under ``MAX_TOTAL_BYTES``);
- the zip entry's declared uncompressed size must be ``nbytes`` plus a
  small ``.npy`` header, and a compressed entry may not inflate more than
  ``MAX_RATIO`` times (we write stored entries; a bomb is refused);
- its compressed bytes must lie inside the file (a stored entry's sizes
  agree), so no read asks for more than the file holds;
- the ``.npy`` header must state exactly that shape and dtype (never an
  object dtype: nothing is unpickled).

Then exactly ``nbytes`` are read, so memory is bounded by what the JSON
declares, and the entry is read to its end, so the zip's CRC-32 of it is
checked (a flipped bit in the data is caught). Every problem is a
``FormatError`` naming the file and member.
It does not know the layout of the model directory (``store.py``).
"""

import math
import zipfile
import zlib

import numpy as np

from .checked_json import FormatError, short_repr

__all__ = ["ArrayFile", "MAX_ARRAY_BYTES", "MAX_TOTAL_BYTES"]

MAX_ARRAY_BYTES = 1 << 34    # 16 GiB: one array
MAX_TOTAL_BYTES = 1 << 36    # 64 GiB: all arrays of one model
MAX_RATIO = 64               # compressed entries (not ours) may inflate this much
_HEADER_SLACK = 1 << 16      # an .npy header is at most this long


class ArrayFile:
    """An open ``variables.npz``; ``read(key, shape, dtype, where)`` gives one checked array.

    Args:
        file: the npz, open in binary mode (the caller closes it).
        size: its size in bytes.
        path: its path, for messages; ``name``: its name in the format.
    """

    def __init__(self, file, size, path, name):
        self.path, self.name, self._size, self._total = path, name, size, 0
        try:
            self._zip = zipfile.ZipFile(file)
            infos = self._zip.infolist()
        except (zipfile.BadZipFile, OSError, ValueError, EOFError, NotImplementedError,
                RuntimeError) as err:
            raise self._error(f"cannot be read as a zip (truncated or corrupted?): "
                              f"{type(err).__name__}: {err}") from None
        self._members = {info.filename: info for info in infos}
        if len(self._members) != len(infos):
            self._zip.close()
            raise self._error("holds two members of one name")

    def close(self):
        self._zip.close()

    def _error(self, message):
        err = FormatError(f"{self.path}: {message}")
        err.names_file = True
        return err

    def read(self, key, shape, dtype, where):
        """The array ``key`` (a NumPy array), which must have this shape and NumPy dtype."""
        if dtype.hasobject:
            raise self._error(f"{where}: dtype {dtype} holds Python objects; refusing it")
        nbytes = math.prod(shape) * dtype.itemsize
        if nbytes > MAX_ARRAY_BYTES or self._total + nbytes > MAX_TOTAL_BYTES:
            raise self._error(f"{where}: declared shape {list(shape)} of {dtype} needs {nbytes} "
                              f"bytes, over the limit ({MAX_ARRAY_BYTES} per array, "
                              f"{MAX_TOTAL_BYTES} in all)")
        info = self._members.get(f"{key}.npy")
        if info is None:
            raise self._error(f"{where}: array {short_repr(key)} is missing from {self.name}")
        member = f"member {info.filename!r}"
        if info.header_offset + info.compress_size > self._size or (
                info.compress_type == zipfile.ZIP_STORED and info.compress_size != info.file_size):
            raise self._error(f"{member} declares {info.compress_size} bytes at offset "
                              f"{info.header_offset} ({info.file_size} uncompressed), which "
                              f"the file's {self._size} bytes cannot hold")
        if not nbytes <= info.file_size <= nbytes + _HEADER_SLACK:
            raise self._error(f"{member} declares {info.file_size} bytes uncompressed, but "
                              f"{where} declares shape {list(shape)} of {dtype} ({nbytes} bytes)")
        if info.compress_type != zipfile.ZIP_STORED and \
                info.file_size > MAX_RATIO * info.compress_size + _HEADER_SLACK:
            raise self._error(f"{member} would inflate {info.compress_size} bytes to "
                              f"{info.file_size}; refusing a ratio over {MAX_RATIO}")
        try:
            with self._zip.open(info) as f:
                array = _read_npy(f, shape, dtype, nbytes, info.file_size)
        except FormatError as err:
            raise self._error(f"{member}: {err}") from None
        except (zipfile.BadZipFile, zlib.error, OSError, ValueError, EOFError,
                NotImplementedError, RuntimeError) as err:
            raise self._error(f"{member} cannot be read (truncated or corrupted?): "
                              f"{type(err).__name__}: {err}") from None
        self._total += nbytes
        return array


def _read_npy(f, shape, dtype, nbytes, file_size):
    version = np.lib.format.read_magic(f)
    if version == (1, 0):
        header = np.lib.format.read_array_header_1_0(f, max_header_size=_HEADER_SLACK)
    elif version in ((2, 0), (3, 0)):
        header = np.lib.format.read_array_header_2_0(f, max_header_size=_HEADER_SLACK)
    else:
        raise FormatError(f".npy version {version} is not supported")
    stored_shape, fortran_order, stored_dtype = header
    if tuple(stored_shape) != tuple(shape) or stored_dtype != dtype:
        raise FormatError(f"its .npy header says shape {list(stored_shape)} of {stored_dtype}, "
                          f"the JSON shape {list(shape)} of {dtype}")
    data = f.read(nbytes)
    if len(data) != nbytes or f.read(1):
        raise FormatError(f"holds {len(data)} data bytes, not the {nbytes} its header declares")
    order = "F" if fortran_order else "C"
    return np.frombuffer(data, dtype=dtype).reshape(shape, order=order).copy()
