"""``save_weights`` / ``load_weights`` (``.weights.h5``) and ``save`` / ``load_model``
(``.keras``), in Keras 3's formats.

    >>> model = ad.keras.Sequential([ad.keras.Input((3,)),
    ...                              ad.keras.layers.Dense(4, activation="relu"),
    ...                              ad.keras.layers.Dense(1)])
    >>> model.compile(optimizer="adam", loss="mse")
    >>> model.save("mlp.keras")                       # architecture, weights, compile
    >>> again = ad.keras.models.load_model("mlp.keras")
    >>> model.save_weights("mlp.weights.h5")
    >>> again.load_weights("mlp.weights.h5")
    >>> x = ad.ones([2, 3])
    >>> bool(ad.reduce_all(again(x) == model(x)))
    True

A ``.keras`` file is a zip of ``metadata.json``, ``config.json`` (the
architecture, ``config.py``) and ``model.weights.h5`` (``weights_h5.py``),
as Keras 3 writes it: a file Keras 3 wrote loads here for the layers both
have, and one written here loads in Keras 3. Files are written atomically
(``atomic.py``). The optimizer's state is saved with the model once it has
taken a step, and restored when the file is loaded.
"""

import datetime
import io
import json
import os
import zipfile

from .atomic import atomic_path
from .config import deserialize_layer, serialize_layer
from .weights_h5 import read_weights, require_h5py, write_weights

__all__ = ["SavingMixin", "load_model"]

_CONFIG, _METADATA, _WEIGHTS = "config.json", "metadata.json", "model.weights.h5"


def _check_suffix(path, suffix, what):
    if not os.fspath(path).endswith(suffix):
        raise ValueError(f"The filename must end in `{suffix}` ({what}). Received: "
                         f"filepath={os.fspath(path)}")


class SavingMixin:
    """What ``Model`` gains: Keras 3's saving methods."""

    def save_weights(self, filepath, overwrite=True, max_shard_size=None):
        """Writes every variable (the optimizer's too) to ``filepath`` (``.weights.h5``).

        Raises:
            ValueError: another suffix; ImportError: h5py is missing.
        """
        _check_suffix(filepath, ".weights.h5", "Keras 3's weights format")
        if max_shard_size is not None:
            raise NotImplementedError("save_weights: max_shard_size is not implemented")
        h5py = require_h5py()
        with atomic_path(filepath, overwrite) as tmp:
            with h5py.File(tmp, "w") as f:
                write_weights(self, f)

    def load_weights(self, filepath, skip_mismatch=False):
        """Assigns every variable from a ``.weights.h5`` file (Keras 3's or this library's),
        or from a legacy ``.h5``/``.hdf5`` file (Keras 2's layout, read by layer order as
        Keras 3 reads it: ``legacy_h5.py``).

        Args:
            skip_mismatch: load what fits and skip, with a warning, what does not:
                a layer whose variables differ in number or shape (``.weights.h5``),
                or a weight whose shape differs (legacy ``.h5``), as Keras 3.

        Raises:
            ValueError: a layer or shape that does not match, naming it (nothing changes).
        """
        path = os.fspath(filepath)
        legacy = path.endswith((".h5", ".hdf5")) and not path.endswith(".weights.h5")
        if not legacy:
            _check_suffix(filepath, ".weights.h5", "Keras 3's weights format")
        h5py = require_h5py()
        if legacy:
            from .legacy_h5 import read_legacy_weights
            with h5py.File(filepath, "r") as f:
                read_legacy_weights(self, f, path, skip_mismatch=skip_mismatch)
            return
        with h5py.File(filepath, "r") as f:
            self._ad_prepare_optimizer(f)
            read_weights(self, f, path, skip_mismatch=skip_mismatch)

    def _ad_prepare_optimizer(self, h5_file):
        """A file with optimizer state needs the optimizer's slots made first (Keras builds)."""
        optimizer = getattr(self, "optimizer", None)
        if optimizer is not None and "optimizer/vars" in h5_file and not optimizer.built \
                and len(h5_file["optimizer/vars"]) > len(optimizer.variables):
            optimizer.build(list(self.trainable_variables))

    def save(self, filepath, overwrite=True, zipped=None, **kwargs):
        """Writes the model (architecture, weights, compile arguments) to a ``.keras`` file.

        Raises:
            ValueError: another suffix (Keras 3 saves only ``.keras`` and ``.h5``; the
                legacy ``.h5`` is not supported here).
        """
        if os.fspath(filepath).endswith(".h5"):
            raise NotImplementedError("model.save: the legacy .h5 format is not implemented; "
                                      "use a .keras file")
        _check_suffix(filepath, ".keras", "Keras 3's model format")
        h5py = require_h5py()
        config = serialize_layer(self)
        config["compile_config"] = _compile_config(self)
        metadata = {"keras_version": "3.0.0", "date_saved":
                    datetime.datetime.now().strftime("%Y-%m-%d@%H:%M:%S"),
                    "written_by": "autodiff (tapeschool)"}
        weights = io.BytesIO()
        with h5py.File(weights, "w") as f:
            write_weights(self, f)
        with atomic_path(filepath, overwrite) as tmp:
            with zipfile.ZipFile(tmp, "w") as archive:
                archive.writestr(_METADATA, json.dumps(metadata))
                archive.writestr(_CONFIG, json.dumps(config))
                archive.writestr(_WEIGHTS, weights.getvalue())


def _compile_config(model):
    from ..training.serialize import serialize_compile
    return serialize_compile(model)


def load_model(filepath, custom_objects=None, compile=True, safe_mode=True):  # noqa: A002
    """The model a ``.keras`` file holds, built, with its weights (and compiled, when it was).

    Args:
        filepath: a ``.keras`` file written by Keras 3 or by this library.
        custom_objects: not supported (a file can name only ``ad.keras``'s classes).
        compile: compile the model as the file says.
        safe_mode: always True here: nothing in a file is ever run.

    Raises:
        ValueError: not a ``.keras`` file, or a layer ``ad.keras`` does not have (named).
    """
    if custom_objects:
        raise NotImplementedError("load_model: custom_objects is not supported; a file can "
                                  "name only ad.keras's own classes")
    if not safe_mode:
        raise ValueError("load_model: safe_mode=False is refused: nothing in a file is ever "
                         "run here")
    _check_suffix(filepath, ".keras", "Keras 3's model format")
    h5py = require_h5py()
    where = os.fspath(filepath)
    with zipfile.ZipFile(filepath, "r") as archive:
        names = set(archive.namelist())
        if _CONFIG not in names:
            raise ValueError(f"{where} is not a Keras 3 model file: it has no {_CONFIG}")
        config = json.loads(archive.read(_CONFIG))
        model = deserialize_layer(config, f"{where}: {_CONFIG}")
        compile_config = config.get("compile_config")
        if compile and compile_config:
            from ..training.serialize import compile_from_config
            compile_from_config(model, compile_config)
        if _WEIGHTS in names:
            with h5py.File(io.BytesIO(archive.read(_WEIGHTS)), "r") as f:
                model._ad_prepare_optimizer(f)
                read_weights(model, f, f"{where}: {_WEIGHTS}")   # uncompiled: no optimizer
    return model
