"""``ad.name_scope``: names for groups of ops, as ``tf.name_scope`` in eager mode.

A name scope does not change what is computed. It labels it: every record
a tape makes carries the scope its op ran in (``TapeRecord.scope``), so a
printout or the tape player can show a model as layers rather than as a
flat list of MatMuls:

    >>> x = ad.constant(1.0)
    >>> with ad.GradientTape() as tape:
    ...     tape.watch(x)
    ...     with ad.name_scope("model"):
    ...         with ad.name_scope("dense") as scope:
    ...             y = x * 2.0
    >>> scope
    'model/dense/'
    >>> tape.records[0].scope
    'model/dense'

As in TensorFlow's eager mode, nested scopes join with ``/``, a name ending
in ``/`` is taken as a whole scope name (it does not nest), the empty name
goes back to the top, and names are not made unique. The current scope
belongs to one thread (it lives in ``autodiff.tape.thread_state.scope``,
without the trailing ``/``, so that recording an op costs one attribute
read). Layers and modules enter a scope named after themselves when called.
"""

from .tape import thread_state

__all__ = ["name_scope"]


class name_scope:  # noqa: N801  (lower case, as tf.name_scope)
    """A context manager that opens a name scope.

    Args:
        name: the scope's name (a string). ``'b'`` inside ``'a'`` is ``'a/b'``;
            ``'a/b/'`` is used as it is; ``''`` goes back to the top scope.

    Returns (from ``with ... as s``):
        The full scope name with a trailing slash (``'a/b/'``), or ``''``.

    Raises:
        ValueError: ``name`` is not a string.

    >>> with ad.name_scope("block") as s:
    ...     s
    'block/'
    """

    __slots__ = ("_name", "_saved")

    def __init__(self, name):
        if not isinstance(name, str):
            raise ValueError("name for name_scope must be a string.")
        self._name = name
        self._saved = []   # a stack: the same object may be entered again while inside

    @property
    def name(self):
        return self._name

    def __enter__(self):
        old = thread_state.scope
        name = self._name
        if not name:
            full = ""
        elif name[-1] == "/":
            full = name
        elif old:
            full = f"{old}/{name}/"
        else:
            full = name + "/"
        self._saved.append(old)
        thread_state.scope = full[:-1]
        return full

    def __exit__(self, *exc_info):
        thread_state.scope = self._saved.pop()
        return False


def current_scope():
    """This thread's scope, without a trailing slash (``''`` at the top)."""
    return thread_state.scope
