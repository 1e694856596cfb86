"""Primitives: how an op and its derivative rules are declared and run.

An op type (``Sin``, ``MatMul``) is declared once, as one ``Primitive``:

    SIN = Primitive("Sin", lambda xp, x: xp.sin(x),
                    vjp=(lambda g, ans, x: g * cos(x),),     # d/dx sin x = cos x
                    saves="inputs", domain=REALS)

- ``forward(xp, *arrays, **params)`` computes on backend arrays (``xp`` is
  NumPy or CuPy); it never sees a Tensor.
- ``vjp`` holds one rule per input, ``rule(g, ans, *inputs, **params)``,
  returning that input's gradient (or None). Rules are written with this
  library's own ops, so a tape recording during ``gradient()`` records them
  too: that is how second derivatives come for free. A variadic op (concat,
  einsum) gives one function returning the list of all input gradients.
- ``g`` may carry extra *leading* batch axes (shape ``B + ans.shape``) and
  the rule must return ``B + x.shape``: rules use negative axes, matmul on
  the last two axes and ``unbroadcast``. That lets ``jacobian`` push a whole
  stack of cotangents through one backward pass.
- ``saves`` says what the tape keeps for the rules: ``"inputs"``, ``"ans"``,
  ``"both"`` or ``"shapes"`` (only shapes and dtypes: no memory held).

Calling a primitive converts its arguments, runs the forward, wraps the
result in a Tensor and offers the op to every recording tape.
"""

import numpy as np

from . import backend
from .errors import InvalidArgumentError
from .tensor import Tensor, Variable, _convert_python

__all__ = ["Primitive", "NotDifferentiable", "REGISTRY", "get_primitive", "conjugating_vjp"]

REGISTRY = {}  # op type -> Primitive


class _NotDifferentiable:
    """Marker for ``vjp=NotDifferentiable``: the gradient through the op is None."""

    def __repr__(self):
        return "NotDifferentiable"


NotDifferentiable = _NotDifferentiable()

_SAVES = ("inputs", "ans", "both", "shapes")


class Primitive:
    """One op type: forward computation, derivative rules and test metadata.

    Args:
        name: the TensorFlow op type, e.g. ``"AddV2"``.
        forward: ``forward(xp, *arrays, **params) -> array`` (a tuple of arrays
            when ``n_outputs > 1``).
        vjp: a tuple with one rule per input, a single function for variadic
            ops, ``NotDifferentiable``, or None (no gradient registered:
            differentiating raises LookupError).
        jvp: optional forward-mode rule ``jvp(tangents, ans, *inputs, **params)``.
        saves: what a tape keeps for the rules (see the module docstring).
        domain: the inputs' valid range for the gradient tests, e.g. ``(0.1, 3)``.
        label: display template for tapes, e.g. ``"{0} * {1}"``.
        dtype_args: positions of the inputs that must share one dtype
            (default: all of them).
        n_outputs: number of outputs; None when the forward decides (it then
            returns a tuple whose length depends on the params, as Unpack does).
        batch_aware: whether the rules accept leading batch axes on ``g``.
        watches_outputs: False for an op whose outputs a tape does not watch
            although it recorded the op (TensorFlow's StopGradient: nothing
            computed from its output is recorded, and its output gets no
            gradient).
        cases: test cases, a list of ``(input_shapes, params)``; the default
            depends on the arity (scalars, vectors, matrices, broadcasting).
        doc: one line stating the derivative.
        stateful: the op must run every time, even when nothing uses its result
            (a check that raises); a traced graph keeps it, and the compiler
            never folds it into a constant or merges it with a twin.
        register: add to the global registry (False for one-off ops).
    """

    def __init__(self, name, forward, vjp=None, *, jvp=None, saves="inputs", domain=None,
                 label=None, dtype_args=None, n_outputs=1, batch_aware=True, cases=None,
                 doc=None, register=True, watches_outputs=True, stateful=False):
        if saves not in _SAVES:
            raise ValueError(f"{name}: saves must be one of {_SAVES}, not {saves!r}")
        self.name = name
        self.forward = forward
        self.vjp = vjp
        self.jvp = jvp
        self.saves = saves
        self.domain = domain
        self.label = label
        self.dtype_args = dtype_args
        self.n_outputs = n_outputs
        self.batch_aware = batch_aware
        self.watches_outputs = watches_outputs
        self.cases = cases
        self.doc = doc
        self.stateful = stateful
        if register:
            if name in REGISTRY:
                raise KeyError(f"an op type named {name!r} is already registered")
            REGISTRY[name] = self

    @property
    def differentiable(self):
        return self.vjp is not None and self.vjp is not NotDifferentiable

    def __repr__(self):
        return f"<Primitive {self.name}>"

    def __call__(self, *args, **params):
        """Runs the op on tensors (or values convertible to tensors)."""
        # The hot path of the whole engine, so it avoids comprehensions and
        # helper calls where it can (each costs a frame on Python 3.11).
        for a in args:
            if type(a) is not Tensor:
                args = self._convert(args)
                break
        else:
            if len(args) > 1 and (len(args) > 2 or args[0]._value.dtype is not args[1]._value.dtype):
                self._check_dtypes(args)
        try:
            # Spelled out by arity: `f(*map(...), **{})` costs more than sin itself.
            forward, n = self.forward, len(args)
            if params:
                out = forward(backend.xp, *[a._value for a in args], **params)
            elif n == 1:
                out = forward(backend.xp, args[0]._value)
            elif n == 2:
                out = forward(backend.xp, args[0]._value, args[1]._value)
            else:
                out = forward(backend.xp, *[a._value for a in args])
        except InvalidArgumentError:
            raise
        except (ValueError, TypeError, IndexError, np.linalg.LinAlgError) as err:
            # Inputs on two backends fail inside the forward (CuPy and the strict
            # backend refuse to mix); only then is it worth asking where each lives.
            message = _backend_mismatch(self.name, args) or \
                f"{self.name}: {err} ({_describe(args)})"
            raise InvalidArgumentError(message) from err
        active = _thread_state.active  # this thread's recorders
        if self.n_outputs == 1:
            result = Tensor(out)
            if active:
                outputs = (result,)
                for recorder in active:  # usually just one
                    recorder._record(self, args, outputs, params)
            return result
        outputs = tuple(map(Tensor, out))
        for recorder in active:
            recorder._record(self, args, outputs, params)
        return outputs

    def _convert(self, args):
        """Tensors for the arguments; a bare number takes a tensor partner's dtype."""
        if len(args) == 2:  # fast path for `tensor * 2.0`, the commonest mixed case
            a, b = args
            if type(a) is Tensor and type(b) in _PYTHON_SCALARS:
                array = _SCALAR_CACHE.get((type(b), b, a._value.dtype, backend.xp))
                return (a, Tensor(_python_value(b, a._value.dtype) if array is None else array))
            if type(b) is Tensor and type(a) in _PYTHON_SCALARS:
                return (Tensor(_python_value(a, b._value.dtype)), b)
        hint = None
        for a in args:
            if isinstance(a, Tensor):
                hint = a._value.dtype
                break
        inputs = []
        for a in args:
            if type(a) is Tensor:
                inputs.append(a)
            elif isinstance(a, Variable):
                inputs.append(_tape.read_variable(a))
            elif isinstance(a, Tensor):
                inputs.append(a)
            elif hasattr(a, "_to_dense_tensor"):   # an IndexedSlices: its dense tensor
                inputs.append(a._to_dense_tensor())
            else:
                inputs.append(Tensor(_python_value(a, hint)))
        if len(inputs) > 1:
            self._check_dtypes(inputs)
        return inputs

    def _check_dtypes(self, inputs):
        positions = self.dtype_args
        if positions is None:
            if len(inputs) == 2 and inputs[0]._value.dtype == inputs[1]._value.dtype:
                return
            positions = range(len(inputs))
        first = None
        for i in positions:
            dtype = inputs[i]._value.dtype
            if first is None:
                first, first_i = dtype, i
            elif dtype != first:
                raise InvalidArgumentError(
                    f"{self.name}: cannot mix dtypes {first.name} and {dtype.name} (input "
                    f"#{first_i} is {first.name}, input #{i} is {dtype.name}); autodiff never "
                    f"casts implicitly: convert one with ad.cast")


_SCALAR_CACHE = {}
_PYTHON_SCALARS = (float, int, bool)


def _python_value(value, hint):
    """Backend array for a Python value, with 0-d results cached.

    Loops such as ``y = y * 1.0001 + 0.1`` convert the same two numbers on
    every step; the cache keeps that from dominating. Cached arrays are
    never written to (tensors are immutable), so sharing them is safe.
    """
    kind = type(value)
    if kind is float or kind is int or kind is bool:
        key = (kind, value, hint, backend.xp)
        array = _SCALAR_CACHE.get(key)
        if array is None:
            if len(_SCALAR_CACHE) > 4096:
                _SCALAR_CACHE.clear()
            array = _SCALAR_CACHE[key] = _convert_python(value, _fitting(value, hint))
        return array
    return _convert_python(value, _fitting(value, hint))


def _fitting(value, hint):
    """The hint dtype if the Python value converts to it losslessly, else None."""
    if hint is None:
        return None
    if hasattr(value, "dtype"):  # a NumPy array or scalar
        return hint if np.can_cast(value.dtype, hint, "same_kind") else None
    kind = hint.kind
    if isinstance(value, bool):
        return hint if kind == "b" else None
    if isinstance(value, int):
        return hint
    if isinstance(value, float):
        return hint if kind in "fc" else _raise_lossy(value, hint)
    if isinstance(value, complex):
        return hint if kind == "c" else _raise_lossy(value, hint)
    if isinstance(value, (list, tuple)):
        try:
            np.asarray(value).astype(hint, casting="same_kind")
            return hint
        except TypeError:
            return None
    return None


def _raise_lossy(value, hint):
    raise TypeError(f"cannot convert {value!r} to a tensor of dtype {np.dtype(hint).name} "
                    f"without losing information (autodiff never casts implicitly)")


def _backend_mismatch(op_type, inputs):
    """The message for inputs on two backends, or on one that is not active; else None."""
    active = backend.get_backend()
    where = [backend.backend_of(t._value) for t in inputs]
    first = next((i for i, name in enumerate(where) if name is not None), None)
    if first is None:
        return None
    other = next((i for i, name in enumerate(where) if name not in (None, where[first])), None)
    if other is not None:
        return (f"{op_type}: input #{first} is on {where[first]!r} but input #{other} is on "
                f"{where[other]!r}; move one explicitly, e.g. ad.to_backend(t, {active!r}) "
                f"(the active backend is {active!r})")
    if where[first] != active:
        return (f"{op_type}: the inputs are on {where[first]!r} but the active backend is "
                f"{active!r}; switch with ad.set_backend({where[first]!r}) or move them "
                f"with ad.to_backend(t, {active!r})")
    return None


def _describe(inputs):
    return ", ".join(f"input #{i}: shape {tuple(t._value.shape)} {t._value.dtype}"
                     for i, t in enumerate(inputs))


def conjugating_vjp(primitive):
    """The op's VJP rules made to follow TensorFlow's convention for complex inputs.

    Rules are written for real numbers, as ``g * f'(x)``. For a complex input,
    TensorFlow's gradient (of a real loss) is ``g * conj(f'(z))``: ``x * x`` at
    ``1+2j`` gets ``2 conj(z) = 2-4j``. For the ops here, whose Taylor series
    have real coefficients, ``f'(conj z) = conj(f'(z))``, so it is enough to
    hand the rules the conjugates of what they read (inputs and ``ans``); real
    inputs cost one dtype check. Forward mode keeps the unwrapped rules
    (``rule.__wrapped__``): a JVP is the plain ``f'(z) * t``.
    """
    rules = primitive.vjp
    if rules is None or rules is NotDifferentiable or getattr(rules, "__wrapped__", None):
        return rules
    saves = primitive.saves
    if saves == "shapes":
        return rules  # the rules read no values, so there is nothing to conjugate
    if type(rules) is tuple:
        if all(getattr(r, "__wrapped__", None) for r in rules):
            return rules
        return tuple(_conjugating(r, saves) for r in rules)
    return _conjugating(rules, saves)


def _conjugating(rule, saves):
    from .ops.matmul import conj

    def vjp_rule(g, ans, *inputs, **params):
        if type(g) is Tensor and g._value.dtype.kind != "c":
            return rule(g, ans, *inputs, **params)  # a real cotangent: a real (or to-real) op
        for x in inputs:
            if x._value.dtype.kind == "c":
                break
        else:
            if type(ans) is not Tensor or ans._value.dtype.kind != "c":
                return rule(g, ans, *inputs, **params)
        if saves != "ans":
            inputs = [conj(x) for x in inputs]
        if saves != "inputs":
            ans = tuple(map(conj, ans)) if type(ans) is tuple else conj(ans)
        return rule(g, ans, *inputs, **params)

    vjp_rule.__wrapped__ = rule
    vjp_rule.__name__ = getattr(rule, "__name__", "vjp_rule")
    vjp_rule.__doc__ = getattr(rule, "__doc__", None)
    return vjp_rule


def get_primitive(op_type):
    """The registered Primitive named ``op_type``; KeyError naming it if none."""
    try:
        return REGISTRY[op_type]
    except KeyError:
        raise KeyError(f"no op type {op_type!r} is registered") from None


from . import tape as _tape  # noqa: E402  (the tape module needs Primitive's users)
_thread_state = _tape.thread_state
