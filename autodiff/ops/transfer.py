"""Moving a tensor to another backend: ``ad.to_backend`` and its op, ``ToBackend``.

A tensor lives on the backend that made it (``t.backend``), and nothing in
the engine moves it behind your back (see ``autodiff/backend.py``): an op
whose inputs live on two backends raises InvalidArgumentError naming both.
Moving is explicit, and it is this one op. It is differentiable, like
TensorFlow's copies between devices: the gradient of a move is the
cotangent moved back.

    >>> with ad.use_backend("strict"):
    ...     x = ad.constant([1.0, 2.0])          # x.backend == 'strict'
    >>> y = ad.to_backend(x, "numpy")             # a copy on NumPy
    >>> y.backend
    'numpy'

Tensors, not arrays: to get a NumPy array out of any tensor, ``t.numpy()``.
"""

from .. import backend
from ..registry import Primitive
from ..tensor import convert_to_tensor

__all__ = ["to_backend"]


def _move(xp, x, to=None, source=None):
    if to is None:   # the op table's cases: stay on the backend the forward is given
        return xp.asarray(x)
    return backend.move(x, to)


TO_BACKEND = Primitive(
    "ToBackend", _move, (lambda g, ans, x, to=None, source=None: to_backend(g, source),),
    jvp=lambda tangents, ans, x, to=None, source=None: to_backend(tangents[0], to),
    saves="shapes", domain=(-2.0, 2.0), label="to_backend({0})",
    cases=[(((),), {}), (((3,),), {}), (((2, 3),), {})],
    doc="a copy: the gradient is the cotangent moved back to the source backend")


def to_backend(tensor, name=None):
    """A copy of ``tensor`` on backend ``name`` (the tensor itself if it is already there).

    Args:
        tensor: a Tensor or Variable (a Variable is read), or anything
            ``ad.convert_to_tensor`` accepts (which makes it on the active
            backend first).
        name: ``"numpy"``, ``"cupy"`` or ``"strict"``; None for the active
            backend.

    Returns:
        A Tensor on ``name``. Tapes record the move: the gradient flows back
        to ``tensor``'s own backend.

    Raises:
        ValueError: an unknown backend, or CuPy without a GPU.

    >>> ad.to_backend(ad.constant([1.0, 2.0]), "numpy").backend
    'numpy'
    """
    x = convert_to_tensor(tensor)
    name = backend.get_backend() if name is None else backend.check_name(name)
    source = backend.backend_of(x._value)
    if source == name:
        return x
    return TO_BACKEND(x, to=name, source=source)
