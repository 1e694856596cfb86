"""``ad.saved_model``: save a module's traced functions and variables; load them anywhere.

    >>> class Square(ad.Module):
    ...     @ad.function(input_signature=[ad.TensorSpec([None])])
    ...     def __call__(self, x):
    ...         return x * x
    >>> ad.saved_model.save(Square(), "saved_model")
    >>> loaded = ad.saved_model.load("saved_model")    # in any process, no Python code needed
    >>> loaded(ad.constant([1.0, 2.0])).numpy()
    array([1., 4.], dtype=float32)

Reading order: ``save.py`` (what is saved, and the format), ``load.py``
(reading it back, checked at every step), ``upgrade.py`` (an older format
version's graphs rewritten as the current one reads them),
``file_format.py`` (graphs to JSON and back), ``control_flow.py`` (a control-flow node's subgraphs and
layout in that JSON), ``checked_json.py`` (JSON read without trusting it: every
key checked, one error type), ``arrays.py`` (variables in a ``.npz`` read
without pickle), ``store.py`` (the directory layout, and publishing a save
atomically so a reader never sees half of one), ``safe_files.py`` (opening
the directory's entries: never through a link, regular files only, every
read bounded).

A damaged or hostile model directory gives one error family:
``FormatError`` (a ValueError) naming the file and what is wrong;
``MissingFileError`` (also a FileNotFoundError) for a file that is not
there; ``UnsafeFileError`` for a link, FIFO, device or socket where a file
belongs.

May import: the engine, traced functions (``autodiff.tracing``), control flow
(``autodiff.control_flow``, to rebuild its nodes) and ``autodiff.models.module``. Nothing else imports it but ``autodiff``'s
``__init__``.
"""

from .checked_json import FormatError
from .load import LoadedModel, load
from .safe_files import MissingFileError, UnsafeFileError
from .save import SaveOptions, current_version, save

__all__ = ["save", "load", "SaveOptions", "LoadedModel", "FormatError", "MissingFileError",
           "UnsafeFileError", "current_version"]


def __dir__():
    return __all__
