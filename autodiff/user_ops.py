"""Defining a new op, and registering its gradient by op type.

TensorFlow separates an op (a named computation, ``"MyCube"``) from its
gradient function, registered under the same name with
``tf.RegisterGradient``. This module gives the same two steps on top of
``registry.Primitive``:

    >>> @ad.primitive("MyCube")
    ... def my_cube(xp, x):              # backend arrays in, an array out
    ...     return x * x * x
    >>> @ad.RegisterGradient("MyCube")
    ... def _my_cube_grad(op, grad):     # library ops: differentiable again
    ...     x = op.inputs[0]
    ...     return grad * 3.0 * x * x
    >>> x = ad.constant(2.0)
    >>> with ad.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = my_cube(x)
    >>> print(tape.gradient(y, x))
    ad.Tensor(12.0, shape=(), dtype=float32)

- ``ad.primitive("OpType")`` turns ``fn(xp, *arrays, **attrs)`` into an op
  on tensors. ``fn`` has the signature of every built-in forward: ``xp`` is
  the array module (NumPy or CuPy), the arrays are the inputs' values and
  the keyword attrs are plain Python values (ints, floats, strings, tuples:
  what a saved model can write as JSON). The op is registered by name, so
  ``str(tape)``, error messages and saved models speak of ``MyCube``.
- ``ad.RegisterGradient("OpType")`` registers ``grad_fn(op, *grads)``: one
  upstream gradient per output in, one gradient (or None) per input out.
  ``op`` describes the recorded call: ``op.inputs``, ``op.outputs``,
  ``op.type``, ``op.name`` and ``op.get_attr("name")``. The gradient
  registry is global, so a second registration for one op type (or one for
  a built-in op, which already has its gradient) raises KeyError.
- ``ad.no_gradient("OpType")`` declares the op non-differentiable: the
  gradient through it is None. An op with neither raises ``LookupError: No
  gradient defined for operation 'MyCube' (op type: MyCube)`` when a tape
  needs its gradient (only then: an op off the path costs nothing).

Either order works: a gradient registered before its op is defined waits
for it. User gradients are not assumed to accept stacked cotangents (see
``registry.py``: batch axes); pass ``batch_aware=True`` to ``primitive``
when ``grad_fn`` is written with negative axes and handles them.
"""

import functools

from .registry import REGISTRY, NotDifferentiable, Primitive
from .tensor import convert_to_tensor

__all__ = ["primitive", "RegisterGradient", "no_gradient"]

_PENDING = {}  # op type -> vjp registered before the op itself was defined


def primitive(op_type, *, n_outputs=1, saves="both", batch_aware=False, dtype_args=None,
              domain=None, cases=None, doc=None):
    """Decorator: a function on backend arrays becomes a registered op on tensors.

    Args:
        op_type: the op's type name, e.g. ``"MyCube"`` (must be new).
        n_outputs: how many arrays ``fn`` returns (a tuple when more than one).
        saves: what tapes keep for the gradient function (``"both"``: inputs
            and outputs, so ``op.inputs`` and ``op.outputs`` hold values).
        batch_aware: whether the gradient function handles leading batch
            axes on its upstream gradients (the vectorized ``jacobian``).
        dtype_args: positions of the inputs that must share one dtype
            (default: all of them; ``()`` for none). Nothing is cast.
        domain, cases, doc: test metadata, as for built-in ops.

    Returns:
        A decorator; it returns ``op(*inputs, name=None, **attrs)``, which
        converts its inputs to tensors, runs ``fn`` and is recorded by tapes.
        ``op.primitive`` is the registered Primitive.

    Raises:
        KeyError: an op with this type already exists.

    >>> @ad.primitive("ScaledSquare")
    ... def scaled_square(xp, x, scale=1.0):
    ...     return scale * x * x
    >>> print(scaled_square(ad.constant(3.0), scale=2.0))
    ad.Tensor(18.0, shape=(), dtype=float32)
    """
    _check_name(op_type)

    def decorate(fn):
        @functools.wraps(fn)
        def forward(xp, *arrays, **attrs):
            out = fn(xp, *arrays, **attrs)
            # A reduction may hand back a NumPy scalar; tensors hold arrays.
            return xp.asarray(out) if n_outputs == 1 else tuple(xp.asarray(o) for o in out)

        prim = Primitive(op_type, forward, _PENDING.get(op_type), saves=saves, domain=domain,
                         n_outputs=n_outputs, batch_aware=batch_aware, cases=cases,
                         dtype_args=dtype_args,
                         doc=doc or _first_line(fn.__doc__) or f"user-defined op {op_type}")
        _PENDING.pop(op_type, None)

        @functools.wraps(fn)
        def op(*inputs, name=None, **attrs):
            return prim(*inputs, **attrs)

        op.primitive = prim
        op.op_type = op_type
        return op

    return decorate


class RegisterGradient:
    """Decorator registering ``grad_fn(op, *grads)`` as the gradient of an op type.

    Args:
        op_type: the op type's name, e.g. ``"MyCube"``.

    Raises:
        TypeError: ``op_type`` is not a string.
        KeyError: the op type already has a gradient (or is non-differentiable).

    >>> @ad.RegisterGradient("MyCube")
    ... def _my_cube_grad(op, grad):
    ...     return grad * 3.0 * op.inputs[0] ** 2
    """

    def __init__(self, op_type):
        _check_name(op_type)
        self._op_type = op_type

    def __call__(self, grad_fn):
        _set_vjp(self._op_type, _vjp_calling(grad_fn, self._op_type))
        return grad_fn


def no_gradient(op_type):
    """Declares ``op_type`` non-differentiable: the gradient through it is None.

    Raises:
        TypeError: ``op_type`` is not a string.
        KeyError: the op type already has a gradient.

    >>> ad.no_gradient("MyRandomOp")
    """
    _check_name(op_type)
    _set_vjp(op_type, NotDifferentiable)


class Operation:
    """What a gradient function sees of one recorded op call (TensorFlow's ``op``).

    Attributes:
        type: the op type (``"MyCube"``); ``name`` is the same.
        inputs: the input Tensors (the very tensors the tapes recorded, so
            ops on them are differentiated again by an outer tape).
        outputs: the output Tensors, a list.
    """

    __slots__ = ("type", "name", "inputs", "outputs", "_attrs")

    def __init__(self, op_type, inputs, outputs, attrs):
        self.type = self.name = op_type
        self.inputs = tuple(inputs)
        self.outputs = list(outputs)
        self._attrs = attrs

    def get_attr(self, name):
        """The value of the keyword attr ``name`` the op was called with."""
        try:
            return self._attrs[name]
        except KeyError:
            raise ValueError(f"Operation '{self.name}' has no attr named '{name}'.") from None

    def __repr__(self):
        return f"<Operation {self.type}: {len(self.inputs)} inputs, {len(self.outputs)} outputs>"


def _vjp_calling(grad_fn, op_type):
    """A Primitive vjp (one function for all inputs) that calls ``grad_fn(op, *grads)``."""

    def vjp(g, ans, *inputs, **params):
        grads = g if isinstance(g, tuple) else (g,)
        outputs = ans if isinstance(ans, tuple) else (ans,)
        result = grad_fn(Operation(op_type, inputs, outputs, params), *grads)
        result = list(result) if isinstance(result, (list, tuple)) else [result]
        if len(result) != len(inputs):
            raise ValueError(f"Num gradients {len(result)} generated for op {op_type} do not "
                             f"match num inputs {len(inputs)}")
        return [None if r is None or not x.dtype.is_differentiable
                else convert_to_tensor(r, dtype_hint=x.dtype)
                for r, x in zip(result, inputs)]

    vjp.grad_fn = grad_fn  # the user's function, for readers and saved models
    return vjp


def _set_vjp(op_type, vjp):
    prim = REGISTRY.get(op_type)
    registered = prim.vjp if prim is not None else _PENDING.get(op_type)
    if registered is not None:
        raise KeyError(f"RegisterGradient: op type '{op_type}' already has a gradient "
                       f"({_describe(registered)}); an op type gets one gradient only")
    if prim is not None:
        prim.vjp = vjp
    else:
        _PENDING[op_type] = vjp


def _describe(vjp):
    if vjp is NotDifferentiable:
        return "no gradient: it was declared non-differentiable"
    grad_fn = getattr(vjp, "grad_fn", None)
    if grad_fn is not None:
        return f"the gradient function {grad_fn.__qualname__}"
    return "a built-in gradient"


def _check_name(op_type):
    if not isinstance(op_type, str):
        raise TypeError(f"op_type must be a string, not {type(op_type).__name__} {op_type!r}")


def _first_line(text):
    return text.strip().splitlines()[0] if text and text.strip() else None


def _forget(op_type):
    """Removes a user op and its gradient from the registries (for tests)."""
    REGISTRY.pop(op_type, None)
    _PENDING.pop(op_type, None)
