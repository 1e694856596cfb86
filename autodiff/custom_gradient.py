"""``ad.custom_gradient``: a Python function whose gradient you write yourself.

The decorated function ``f(*x)`` returns ``(y, grad_fn)``; the tape then
uses ``grad_fn`` instead of differentiating the ops inside ``f``. The
advanced autodiff guide clips the gradient of an identity:

    >>> @ad.custom_gradient
    ... def clip_gradients(y):
    ...     def backward(dy):
    ...         return ad.clip_by_norm(dy, 0.5)
    ...     return y, backward
    >>> v = ad.Variable(2.0)
    >>> with ad.GradientTape() as t:
    ...     output = clip_gradients(v * v)
    >>> print(t.gradient(output, v))
    ad.Tensor(2.0, shape=(), dtype=float32)

Step by step:

1. ``v * v`` is recorded as usual: ``v1 = Mul(v, v)``, value 4.
2. ``clip_gradients(v1)`` runs ``f``, which returns ``y`` (= ``v1``) and
   ``backward``. The call is then recorded as ONE op named after the
   function, as TensorFlow's eager tape does (``record_operation(f.__name__,
   ...)``): ``v2 = clip_gradients(v1)``, whose vjp is ``backward``. In a
   graph (``ad.function``, saved models) the same call is an ``IdentityN``
   node, TensorFlow's name there. ``output`` is ``v2``, a new tensor with
   the value of ``y``.
3. ``t.gradient(output, v)`` seeds ``dy = 1`` at ``v2``. The
   ``clip_gradients`` record calls ``backward(1.0)`` = ``clip_by_norm(1.0, 0.5)`` = 0.5, which
   reaches ``v1``; ``Mul``'s rule sends ``0.5 * v`` twice to ``v``: 2.0.
   Without the clip the answer would be ``2 * v`` = 4: the "4 clipped to 2"
   of the guide.

Rules, as in TensorFlow 2:

- ``grad_fn(*dy)`` gets one upstream gradient per output of ``f`` (an
  output nobody used gets zeros) and returns one gradient per input (a
  single tensor, or a list); None means "no gradient". Inputs that are not
  floating point always get None.
- If ``f`` reads Variables that are not among its inputs, ``grad_fn`` must
  accept ``variables=``: it is called as ``grad_fn(*dy, variables=[...])``
  and returns ``(grad_xs, grad_vars)``, one gradient per variable.
- The tapes keep recording while ``f`` runs, as TensorFlow's do ("the tape
  is still watching the forward pass"). Those records are harmless: ``y``
  reaches the caller only through the call's op, so the backward pass
  never visits them. They matter for higher order: ``grad_fn`` usually
  reuses tensors computed in ``f`` (``e = exp(x)`` in ``log1pexp``), and an
  outer tape can differentiate ``grad_fn``'s ops only back through them.
- Only tapes (and forward accumulators) that watch an input of ``f``, or a
  Variable it reads, record the call's op. Any other recorder sees the
  call as the ops inside ``f``, with ``y`` passed on through an Identity op.
  So a tape that watches something ``f`` merely captures still
  differentiates through ``f``'s own ops (TensorFlow does the same).
- Nested: if ``grad_fn`` is itself a ``custom_gradient``, *its* grad_fn is
  the gradient of the backward function with respect to its inputs
  (usually ``dy``), not a second derivative with respect to ``x``
  (TensorFlow's documented caveat). A captured ``x`` that no tape watches
  as an input of the inner function is, by the rule above, differentiated
  through the inner function's ops:

      >>> @ad.custom_gradient
      ... def square(x):
      ...     def grad_fn(dy):
      ...         @ad.custom_gradient
      ...         def backward(dy):                # x is captured
      ...             return dy * 2.0 * x, lambda ddy: ddy * 2.0 * x
      ...         return backward(dy)
      ...     return x * x, grad_fn

  ``d2/dx2 square(x)`` is 2.0: the outer tape watches ``x`` but not the
  seed ``dy``, so it records ``dy * 2.0 * x`` itself, not ``backward``.
"""

import functools
import inspect

from . import nest
from . import tape as _tape
from .registry import Primitive
from .tensor import Tensor, Variable, convert_to_tensor

__all__ = ["custom_gradient"]


def custom_gradient(f=None):
    """Decorator: ``f(*x) -> (y, grad_fn)`` gets ``grad_fn`` as its gradient.

    Args:
        f: a function of tensors (nested structures allowed; Python numbers
            are converted to tensors; keyword arguments are passed through
            and get no gradient) returning ``(y, grad_fn)``.

    Returns:
        A function with ``f``'s value and the custom gradient. Works on
        methods too (``self`` is not an input).

    Raises (when the decorated function is called or differentiated):
        TypeError: ``f`` reads variables but ``grad_fn`` has no ``variables``
            keyword.
        ValueError: ``grad_fn`` returns the wrong number of gradients.

    >>> @ad.custom_gradient
    ... def log1pexp(x):
    ...     e = ad.exp(x)
    ...     def grad(upstream):
    ...         return upstream * (1 - 1 / (1 + e))
    ...     return ad.math.log(1 + e), grad
    """
    if f is None:
        return custom_gradient
    if not callable(f):
        raise TypeError(f"ad.custom_gradient decorates a function, not {type(f).__name__} {f!r}")
    return _CustomGradientFunction(f)


class _CustomGradientFunction:
    """The decorated function; a descriptor, so that methods bind ``self`` to ``f``."""

    def __init__(self, f):
        self._f = f
        functools.update_wrapper(self, f)

    def __call__(self, *args, **kwargs):
        return _call(self._f, args, kwargs)

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        bound = _CustomGradientFunction(functools.partial(self._f, instance))
        bound.__name__ = getattr(self._f, "__name__", "custom_gradient")
        return bound

    def __repr__(self):
        return f"<custom_gradient {getattr(self._f, '__name__', self._f)!r}>"


class _VariableWatcher:
    """A recorder that records nothing and lists the trainable Variables read.

    It sits on the tape stack while ``f`` runs, next to the real tapes, so
    every read reaches it (TensorFlow's ``VariableWatcher``).
    """

    def __init__(self):
        self.variables = {}  # id -> Variable, in the order first read

    def _record(self, primitive, inputs, outputs, params):
        pass

    def _wants(self, inputs):
        return False

    def _variable_read(self, variable):
        if variable._trainable and variable.dtype.is_differentiable:
            self.variables.setdefault(variable._id, variable)


def _call(f, args, kwargs):
    """Runs ``f`` and records the call as one op, named after ``f``, on the recording tapes."""
    flat_args, inputs = [], []
    for arg in nest.flatten(args):
        # f sees a Variable itself (as in TensorFlow); the op's input is a read of it.
        tensor = convert_to_tensor(arg)
        flat_args.append(arg if isinstance(arg, Variable) else tensor)
        inputs.append(tensor)
    args = nest.pack_sequence_as(args, flat_args)

    watcher = _VariableWatcher()
    _tape.thread_state.active.append(watcher)
    try:
        returned = f(*args, **kwargs)
    finally:
        _tape.thread_state.active.remove(watcher)
    if not (isinstance(returned, (tuple, list)) and len(returned) == 2 and callable(returned[1])):
        raise TypeError(f"A @custom_gradient function must return (y, grad_fn); "
                        f"{_name(f)} returned {type(returned).__name__}")
    result, grad_fn = returned

    passed = flat_args + nest.flatten(kwargs)
    variables = [v for v in watcher.variables.values() if not any(v is a for a in passed)]
    if variables and not _accepts_variables(grad_fn):
        raise TypeError(
            f"@custom_gradient: {_name(f)} reads the Variables {[v.name for v in variables]}, "
            "so its grad_fn must take a keyword argument `variables` (and return "
            "gradients for them)")
    results = [convert_to_tensor(y) for y in nest.flatten(result)]
    if not results:
        return result
    # Reading the variables again after f: the call op's inputs are these reads.
    op_inputs = inputs + [_tape.read_variable(v) for v in variables]
    op = _identity_n(f, grad_fn, inputs, variables, results)
    outputs = _record_call(op, op_inputs, results)
    return nest.pack_sequence_as(result, outputs)


def _record_call(op, op_inputs, results):
    """The call's outputs, recorded as ``op`` by the recorders that watch its inputs.

    The others see ``Identity(y)`` for each result ``y`` instead, so for them
    the outputs depend on ``y`` through the ops ``f`` ran (TensorFlow's rule).
    """
    active = _tape.thread_state.active
    custom = [r for r in active if r._wants(op_inputs)]
    if len(custom) == len(active):
        outputs = [Tensor(y._value) for y in results]
    else:
        saved = active[:]
        active[:] = [r for r in active if not any(r is c for c in custom)]
        try:
            outputs = [ops.identity(y) for y in results]
        finally:
            active[:] = saved
    for recorder in custom:
        recorder._record(op, op_inputs, tuple(outputs), {})
    return outputs


def _identity_n(f, grad_fn, inputs, variables, results):
    """The one-off primitive of one call, named after ``f`` (TensorFlow's eager record):
    forward returns ``y``, vjp calls grad_fn. Tracing turns it into an IdentityN node."""
    values = tuple(y._value for y in results)
    forward_value = values[0] if len(values) == 1 else values
    n_args = len(inputs)
    arg_specs = [(tuple(x._value.shape), x.dtype) for x in inputs]

    def vjp(g, ans, *op_inputs):
        dys = g if isinstance(g, tuple) else (g,)
        if variables:
            returned = grad_fn(*dys, variables=variables)
            if not (isinstance(returned, (tuple, list)) and len(returned) == 2):
                raise ValueError(f"@custom_gradient grad_fn of {_name(f)} reads variables, so it "
                                 "must return (grad_xs, grad_vars)")
            grad_xs, grad_vars = returned
            grad_vars = list(grad_vars) if isinstance(grad_vars, (tuple, list)) else [grad_vars]
            if len(grad_vars) != len(variables):
                raise ValueError(
                    f"@custom_gradient: {_name(f)} read {len(variables)} variable(s), but its "
                    f"grad_fn returned {len(grad_vars)} variable gradient(s); return one per "
                    "variable")
        else:
            grad_xs, grad_vars = grad_fn(*dys), []
        flat = nest.flatten(grad_xs)
        if len(flat) != n_args:
            raise ValueError(f"@custom_gradient: {_name(f)} takes {n_args} input(s), but its "
                             f"grad_fn returned {len(flat)} gradient(s); return one per input")
        specs = arg_specs + [(tuple(v.shape), v.dtype) for v in variables]
        return [_checked(grad, shape, dtype, i, f)
                for i, (grad, (shape, dtype)) in enumerate(zip(flat + grad_vars, specs))]

    prim = Primitive(_name(f), lambda xp, *arrays: forward_value, vjp, saves="shapes",
                     dtype_args=(), n_outputs=len(values), batch_aware=False, register=False,
                     doc=f"the gradient is the grad_fn of {_name(f)} (ad.custom_gradient)")
    # What tracing and saved models need to rebuild the call.
    prim.custom_fn = f
    prim.custom_grad_fn = grad_fn
    prim.custom_variables = tuple(variables)
    prim.custom_results = tuple(results)
    prim.custom_n_args = n_args
    return prim


def _checked(grad, shape, dtype, i, f):
    """One gradient from grad_fn as a Tensor, or None; its shape and dtype must fit."""
    if grad is None or not dtype.is_differentiable:
        return None
    grad = convert_to_tensor(grad, dtype_hint=dtype)
    if tuple(grad.shape) != shape or grad.dtype != dtype:
        raise ValueError(
            f"@custom_gradient grad_fn of {_name(f)} returned a gradient of shape "
            f"{tuple(grad.shape)} and dtype {grad.dtype.name} for input #{i}, which has shape "
            f"{shape} and dtype {dtype.name}: a gradient must match its input")
    return grad


def _accepts_variables(grad_fn):
    try:
        parameters = inspect.signature(grad_fn).parameters.values()
    except (TypeError, ValueError):
        return True  # a builtin or C callable: let the call itself decide
    return any(p.name == "variables" and p.kind is not p.POSITIONAL_ONLY or p.kind is p.VAR_KEYWORD
               for p in parameters)


def _name(f):
    return getattr(f, "__name__", None) or getattr(getattr(f, "func", None), "__name__", repr(f))


from . import ops  # noqa: E402  (ops import the tape, which imports this module's users)
