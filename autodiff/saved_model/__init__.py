"""``ad.saved_model``: save a module's traced functions and variables; load them anywhere.

    >>> ad.saved_model.save(module, "saved_model")
    >>> loaded = ad.saved_model.load("saved_model")    # in any process, no Python code needed

Reading order: ``save.py`` (what is saved, and the format), ``load.py``
(reading it back, checked at every step), ``file_format.py`` (graphs to
JSON and back), ``arrays.py`` (variables in a ``.npz`` read without
pickle), ``store.py`` (the directory layout, and publishing a save
atomically so a reader never sees half of one).

May import: the engine, traced functions (``autodiff.tracing``) and
``autodiff.models.module``. Nothing else imports it but ``autodiff``'s
``__init__``.
"""

from .file_format import FormatError
from .load import LoadedModel, MissingFileError, load
from .save import SaveOptions, current_version, save

__all__ = ["save", "load", "SaveOptions", "LoadedModel", "FormatError", "MissingFileError",
           "current_version"]


def __dir__():
    return __all__
