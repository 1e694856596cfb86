"""``ad.keras.regularizers``: penalties on weights, added to the loss through ``model.losses``.

    >>> layer = ad.keras.layers.Dense(2, kernel_regularizer=ad.keras.regularizers.L2(0.01))
    >>> y = layer(ad.ones([1, 3]))
    >>> len(layer.losses)       # 0.01 * sum(kernel ** 2), recomputed each time it is read
    1

As in Keras 3, a layer's ``losses`` recompute each weight's penalty from its
current value when read (so read them inside the tape that takes the
gradient), and ``fit`` adds ``sum(model.losses)`` to the loss. Owns: L1,
L2, L1L2, OrthogonalRegularizer is not here (NotImplementedError by name
through ``get``), ``get``, ``serialize``.
"""

from ..ops import elementwise
from ..ops.reduce import reduce_sum

__all__ = ["Regularizer", "L1", "L2", "L1L2", "l1", "l2", "l1_l2", "get", "serialize"]


class Regularizer:
    """The base: ``regularizer(weight) -> scalar penalty``; ``get_config()`` for saving."""

    def __call__(self, x):
        return 0.0

    def get_config(self):
        return {}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


class L1L2(Regularizer):
    """``l1 * sum(|x|) + l2 * sum(x^2)``.

    >>> L1L2 = ad.keras.regularizers.L1L2
    >>> float(L1L2(l1=0.5, l2=0.25)(ad.constant([1.0, -2.0])))
    2.75
    """

    def __init__(self, l1=0.0, l2=0.0):
        self.l1, self.l2 = float(l1), float(l2)

    def __call__(self, x):
        penalty = 0.0
        if self.l1:
            penalty = reduce_sum(elementwise.abs(x)) * self.l1
        if self.l2:
            penalty = penalty + reduce_sum(elementwise.square(x)) * self.l2
        return penalty if self.l1 or self.l2 else reduce_sum(x * 0.0)

    def get_config(self):
        return {"l1": self.l1, "l2": self.l2}


class L1(Regularizer):
    """``l1 * sum(|x|)`` (Keras' default factor 0.01)."""

    def __init__(self, l1=0.01):
        self.l1 = float(l1)

    def __call__(self, x):
        return reduce_sum(elementwise.abs(x)) * self.l1

    def get_config(self):
        return {"l1": self.l1}


class L2(Regularizer):
    """``l2 * sum(x^2)`` (Keras' default factor 0.01)."""

    def __init__(self, l2=0.01):
        self.l2 = float(l2)

    def __call__(self, x):
        return reduce_sum(elementwise.square(x)) * self.l2

    def get_config(self):
        return {"l2": self.l2}


l1, l2, l1_l2 = L1, L2, L1L2
_BY_NAME = {"l1": L1, "l2": L2, "l1_l2": L1L2, "L1": L1, "L2": L2, "L1L2": L1L2}


def get(identifier):
    """A regularizer from None, an instance or callable, a name (``'l2'``) or a Keras config.

    Raises:
        ValueError: an unknown name; NotImplementedError for Keras' OrthogonalRegularizer.
    """
    if identifier is None or callable(identifier):
        return identifier
    if isinstance(identifier, dict):
        name, config = identifier.get("class_name"), identifier.get("config") or {}
    else:
        name, config = identifier, {}
    if name == "OrthogonalRegularizer":
        raise NotImplementedError("regularizers: OrthogonalRegularizer is not implemented")
    if name in _BY_NAME:
        return _BY_NAME[name].from_config(config)
    raise ValueError(f"Unknown regularizer: {identifier!r} (known: 'l1', 'l2', 'l1_l2')")


def serialize(regularizer):
    """Keras' config dict for ``regularizer``."""
    return {"module": "keras.regularizers", "class_name": type(regularizer).__name__,
            "config": regularizer.get_config(), "registered_name": None}
