"""Forward mode: ``ForwardAccumulator`` pushes tangents through ops as they run.

Reverse mode (``tape.py``) records now and differentiates later, one
cotangent per output. Forward mode differentiates *while* the ops run, one
tangent per input: watch a primal ``x`` with a tangent ``v``, and every op
that reads a tensor with a tangent computes its output's tangent on the
spot. At the end, ``acc.jvp(y)`` is the Jacobian-vector product ``J v``:

    >>> x = ad.constant([1.0, 2.0])
    >>> with ad.autodiff.ForwardAccumulator(x, ad.constant([1.0, 0.0])) as acc:
    ...     y = ad.sin(x) * x
    >>> acc.jvp(y)        # (cos x * x + sin x) * v
    <ad.Tensor: shape=(2,), dtype=float32, numpy=array([1.3817732, 0.       ], dtype=float32)>

The accumulator is a *recorder* in ``autodiff.tape.active``, like a tape: every
op calls its ``_record``. It keeps a dict ``tensor id -> tangent`` (a Variable
read carries the variable's id, so a Variable primal's tangent reaches
every read). How an op's output tangent is found:

1. the op's ``jvp`` rule, ``jvp(tangents, ans, *inputs, **params)``, with
   zeros in ``tangents`` for floating inputs without one (None for the rest,
   and for a one-input op there is always one). The rules live in the table
   at the bottom of this file and are attached to the primitives at import;
2. otherwise the **double-VJP** construction: an op's VJP is linear in its
   cotangent ``u``, ``vjp(u) = J^T u``, so ``<vjp(u), v> = <u, J v>`` and
   ``J v`` is the gradient of ``<vjp(u), v>`` with respect to ``u``. A
   private tape watches ``u`` (ones, as TensorFlow), the VJP rules run, and one
   ``gradient`` call gives ``J v``. Every op with a VJP thus has a JVP.

Nesting follows TensorFlow: recorders are ordered by when they were
entered, and while an accumulator computes tangents only the recorders
entered *before* it stay active:

- the accumulator does not see its own tangent computations;
- a tape entered *inside* the accumulator does not record them either;
- a tape (or accumulator) entered *outside* does record them, so
  reverse-over-forward works: ``outer_tape.gradient(acc.jvp(y), x)``;
- an accumulator outside a tape sees that tape's backward pass (it runs
  ordinary ops), so forward-over-reverse gives Hessian-vector products:

    >>> with ad.autodiff.ForwardAccumulator(x, ad.constant([1.0, 0.0])) as acc:
    ...     with ad.GradientTape() as tape:
    ...         tape.watch(x)
    ...         y = ad.reduce_sum(x ** 3)
    ...     g = tape.gradient(y, x)       # 3x^2, and its tangent 6x * v
    >>> acc.jvp(g)                        # H v
    <ad.Tensor: shape=(2,), dtype=float32, numpy=array([6., 0.], dtype=float32)>

Tangents are kept for the accumulator's lifetime (drop it to free them).
Tangents are real: complex ops are not covered.
"""

import warnings

from . import nest
from .errors import InvalidArgumentError
from .registry import NotDifferentiable, get_primitive
from .tape import AutodiffWarning, GradientTape, UnconnectedGradients, _normalize_unconnected
from . import tape as _tape
from .tensor import Tensor, convert_to_tensor

__all__ = ["ForwardAccumulator"]


class ForwardAccumulator:
    """Computes Jacobian-vector products with forward-mode autodiff.

    Args:
        primals: a Tensor, Variable or nested structure of them to watch.
        tangents: the same structure: for each primal, the vector ``v`` of
            ``J v``, with the primal's shape (numbers and arrays take the
            primal's dtype).

    Raises:
        ValueError: a primal named twice, structures that differ, a primal
            that is not a Tensor, or a tangent whose shape or dtype differs
            from its primal's (InvalidArgumentError, a ValueError).

    >>> w = ad.Variable([1.0, 2.0])
    >>> with ad.autodiff.ForwardAccumulator(w, [1.0, 1.0]) as acc:
    ...     y = ad.reduce_sum(w * w)
    >>> acc.jvp(y)                          # 2 w . v
    <ad.Tensor: shape=(), dtype=float32, numpy=6.0>
    """

    def __init__(self, primals, tangents):
        self._tangents = {}      # tensor id -> tangent Tensor
        self._recording = False
        seen = set()
        for i, (primal, tangent) in enumerate(_pairs(primals, tangents)):
            if not isinstance(primal, Tensor):
                raise ValueError(f"ForwardAccumulator: primal #{i} must be a Tensor or Variable, "
                                 f"not {type(primal).__name__} {primal!r}")
            if primal._id in seen:
                raise ValueError(f"ForwardAccumulator: primal #{i} ({primal!r}) is given more "
                                 f"than once; give it once, with the sum of its tangents")
            seen.add(primal._id)
            self._watch(i, primal, tangent)

    def _watch(self, i, primal, tangent):
        if not primal.dtype.is_differentiable:
            warnings.warn(f"The dtype of the watched primal must be floating (e.g. ad.float32), "
                          f"got ad.{primal.dtype.name}", AutodiffWarning, stacklevel=3)
            return
        if isinstance(tangent, Tensor) and tangent.dtype != primal.dtype:
            raise InvalidArgumentError(
                f"ForwardAccumulator: the tangent for primal #{i} has dtype {tangent.dtype.name}, "
                f"but the primal has dtype {primal.dtype.name}")
        tangent = convert_to_tensor(tangent, dtype=primal.dtype)
        if tangent._value.shape != primal._value.shape:
            raise InvalidArgumentError(
                f"ForwardAccumulator: the tangent for primal #{i} has shape "
                f"{tuple(tangent._value.shape)}, but the primal has shape "
                f"{tuple(primal._value.shape)}")
        self._tangents[primal._id] = tangent

    # ---- context manager --------------------------------------------------
    def __enter__(self):
        if self._recording:
            raise ValueError("ForwardAccumulator: this accumulator is already recording; it "
                             "cannot be entered a second time")
        self._recording = True
        _tape.thread_state.active.append(self)
        return self

    def __exit__(self, *exc_info):
        if self._recording:
            self._recording = False
            _tape.thread_state.active.remove(self)

    def __repr__(self):
        return f"<ForwardAccumulator: {len(self._tangents)} tangents>"

    # ---- the result ---------------------------------------------------------
    def jvp(self, primals, unconnected_gradients=UnconnectedGradients.NONE):
        """The tangents computed for ``primals`` (a Tensor or nested structure).

        Only looks them up: the work happened while the ops ran.

        Args:
            primals: Tensors computed while the accumulator was active (or
                the watched primals themselves).
            unconnected_gradients: ``'none'`` (default) or ``'zero'``: what to
                return for a tensor that does not depend on the primals.

        Returns:
            The same structure with a tangent (``J v``) for each, shaped like it.
        """
        unconnected = _normalize_unconnected(unconnected_gradients)

        def fetch(t):
            if not isinstance(t, Tensor):
                raise TypeError(f"jvp() takes Tensors, not {type(t).__name__} {t!r}")
            tangent = self._tangents.get(t._id)
            if tangent is None and unconnected is UnconnectedGradients.ZERO:
                tangent = ops.zeros(t._value.shape, dtype=t.dtype)
            return tangent

        return nest.map_structure(fetch, primals)

    # ---- the recorder protocol ---------------------------------------------------
    def _variable_read(self, variable):
        pass  # reads carry the variable's id, so a watched Variable's tangent is found by id

    def _wants(self, inputs):
        """Whether an op reading ``inputs`` gets a tangent here (one of them has one)."""
        return any(t._id in self._tangents for t in inputs)

    def _record(self, primitive, inputs, outputs, params):
        tangents = self._tangents
        if len(inputs) == 1:
            t = tangents.get(inputs[0]._id)
            if t is None:
                return
            input_tangents = [t]
        else:
            input_tangents = [tangents.get(x._id) for x in inputs]
            if all(t is None for t in input_tangents):
                return
        if not any(o._value.dtype.kind in "fc" for o in outputs):
            return  # integer and bool results carry no tangent
        # Pause this accumulator and every recorder entered after it (TensorFlow's
        # nesting rule); those entered before see the tangent computations.
        active = _tape.thread_state.active
        saved = active[:]
        del active[active.index(self):]
        try:
            results = _output_tangents(primitive, inputs, outputs, params, input_tangents)
        finally:
            active[:] = saved
        for o, t in zip(outputs, results):
            if t is not None and o._value.dtype.kind in "fc":
                tangents[o._id] = t


def _pairs(primals, tangents):
    """(primal, tangent) pairs, walking the primals' structure; a primal's tangent
    may itself be a list of numbers (so it is not flattened)."""
    if isinstance(primals, (list, tuple, dict)):
        same = (isinstance(tangents, dict) and sorted(tangents) == sorted(primals)) \
            if isinstance(primals, dict) else \
            (isinstance(tangents, (list, tuple)) and len(tangents) == len(primals))
        if not same:
            raise ValueError(f"ForwardAccumulator: primals and tangents must have the same "
                             f"structure; got {primals!r} and {tangents!r}")
        keys = sorted(primals) if isinstance(primals, dict) else range(len(primals))
        return [pair for k in keys for pair in _pairs(primals[k], tangents[k])]
    return [(primals, tangents)]


def _output_tangents(primitive, inputs, outputs, params, tangents):
    """One tangent (or None) per output: the JVP rule if there is one, else double VJP."""
    ans = outputs[0] if len(outputs) == 1 else tuple(outputs)
    if len(tangents) > 1:
        # TensorFlow transposes the VJP with a zero tangent for each floating input that
        # has none, so a zero tangent meets an infinite partial derivative (0 * inf =
        # NaN), as in ``stop_gradient(x) * x`` at x = inf. The rules see the zeros too.
        tangents = [ops.zeros_like(x) if t is None and x._value.dtype.kind in "fc" else t
                    for t, x in zip(tangents, inputs)]
    if primitive.jvp is not None:
        result = primitive.jvp(tangents, ans, *inputs, **params)
        # A multi-output op returns a sequence even when it made one output
        # (unstack along a size-1 axis); only a single-output op's rule is bare.
        results = list(result) if isinstance(result, (tuple, list)) else [result]
    else:
        results = _tangents_from_vjp(primitive, inputs, outputs, params, tangents)
    return [_fit(t, o) for t, o in zip(results, outputs)]


def _fit(t, out):
    """A tangent with the output's shape (a rule may leave broadcasting undone)."""
    if t is None or t._value.shape == out._value.shape:
        return t
    return broadcast_gradient_to(t, out._value.shape)


def _tangents_from_vjp(primitive, inputs, outputs, params, tangents):
    """J v from the VJP rules: the gradient of <vjp(u), v> with respect to u.

    The VJP is linear in u, so any u gives J v; TensorFlow takes u = 1 (a u of 0
    would make rules that divide by g, such as EuclideanNorm's, NaN).
    """
    rules = primitive.vjp
    if rules is NotDifferentiable:
        return [None] * len(outputs)
    if rules is None:
        raise LookupError(f"No gradient defined for operation '{primitive.name}' (op type: "
                          f"{primitive.name}); forward mode needs a VJP or a JVP rule")
    us = [ops.ones(o._value.shape, dtype=o.dtype) for o in outputs]
    wrt = [u for u in us if u.dtype.is_differentiable]
    ans = outputs[0] if len(outputs) == 1 else tuple(outputs)
    g = us[0] if len(us) == 1 else tuple(us)
    inner = GradientTape(watch_accessed_variables=False)
    with inner:
        inner._watch_quietly(wrt)
        if type(rules) is tuple:
            vjps = [rule(g, ans, *inputs, **params) if t is not None else None
                    for rule, t in zip(rules, tangents)]
        else:
            vjps = rules(g, ans, *inputs, **params)
        # For complex inputs the rules give g * conj(f'(z)) and the tape's gradient
        # conjugates once more; conj(t) makes the result the plain f'(z) t again.
        terms = [ops.reduce_sum(ops.multiply(c, ops.conj(t)))
                 for c, t in zip(vjps, tangents) if c is not None and t is not None]
    if not terms:
        return [None] * len(outputs)  # no input with a tangent has a gradient
    # An output whose u the rules never read gets None, not zeros: TensorFlow's
    # accumulator says "unconnected" there (sign, whose VJP is zeros whatever g is).
    jvs = iter(inner.gradient(terms, wrt))
    return [next(jvs) if u.dtype.is_differentiable else None for u in us]


# ---- JVP rules: jvp(tangents, ans, *inputs, **params) ------------------------------
# Explicit rules for the common ops (faster than double VJP), written with this
# library's ops so that outer tapes and accumulators can differentiate them.

def _plus(*terms):
    """The sum of the terms that are not None (None if all are)."""
    present = [t for t in terms if t is not None]
    if not present:
        return None
    total = present[0]
    for t in present[1:]:
        total = total + t
    return total


def _linear(prim):
    """A linear op's JVP is the op itself applied to the tangents (zeros where none)."""
    def rule(tangents, ans, *inputs, **params):
        filled = [ops.zeros_like(x) if t is None else t for t, x in zip(tangents, inputs)]
        return prim(*filled, **params)
    return rule


def _multilinear(prim):
    """Linear in each input separately (Mul, MatMul, Einsum): replace one input at a
    time by its tangent and add, the product rule."""
    def rule(tangents, ans, *inputs, **params):
        return _plus(*[None if t is None else prim(*inputs[:i], t, *inputs[i + 1:], **params)
                       for i, t in enumerate(tangents)])
    return rule


def _self_adjoint(prim):
    """An elementwise op's Jacobian is diagonal, hence symmetric (J v = J^T v): its VJP
    rule, fed the tangent as the cotangent, is its JVP rule. Softmax's is symmetric too."""
    vjp_rule = prim.vjp[0]
    vjp_rule = getattr(vjp_rule, "__wrapped__", vjp_rule)  # not conjugated: a JVP is f'(z) t
    return lambda tangents, ans, x, **params: vjp_rule(tangents[0], ans, x, **params)


def _pow_jvp(t, ans, x, y):
    tx, ty = t
    dx = None if tx is None else tx * y * ops.pow(x, y - 1)
    if ty is None:
        return dx  # the common case, x ** constant
    # d/dy x^y = x^y log x, taken as 0 where x <= 0 (TensorFlow's convention, as in the VJP)
    return _plus(dx, ty * ans * ops.elementwise.safe_log_base(x))


_JVP_RULES = {
    "AddV2": lambda t, ans, x, y: _plus(t[0], t[1]),
    "Sub": lambda t, ans, x, y: _plus(t[0], None if t[1] is None else -t[1]),
    # the transposes of TensorFlow's VJP formulas (RealDiv: g / y and g * ((-x / y) / y))
    "RealDiv": lambda t, ans, x, y: _plus(None if t[0] is None else t[0] / y,
                                          None if t[1] is None else t[1] * ((-x / y) / y)),
    "Neg": lambda t, ans, x: -t[0],
    "Sin": lambda t, ans, x: t[0] * ops.cos(x),
    "Cos": lambda t, ans, x: -t[0] * ops.sin(x),
    "Exp": lambda t, ans, x: t[0] * ans,
    "Log": lambda t, ans, x: t[0] * ops.reciprocal(x),
    "Tanh": lambda t, ans, x: ops.elementwise.tanh_grad(ans, t[0]),
    "TanhGrad": lambda t, ans, y, dy: _plus(
        None if t[1] is None else ops.elementwise.tanh_grad(y, t[1]),
        None if t[0] is None else t[0] * (-2 * y * dy)),
    "Sigmoid": lambda t, ans, x: t[0] * ans * (1 - ans),
    "Relu": lambda t, ans, x: ops.nn.relu_grad(t[0], ans),
    # zeros, not None, with no tangent on g: the rule reads g's cotangent (as TensorFlow's)
    "ReluGrad": lambda t, ans, g, relu_out: ops.nn.relu_grad(
        ops.zeros_like(g) if t[0] is None else t[0], relu_out),
    "Relu6Grad": lambda t, ans, g, x: ops.nn.RELU6_GRAD(
        ops.zeros_like(g) if t[0] is None else t[0], x),
    "LeakyReluGrad": lambda t, ans, g, x, alpha=0.2: ops.nn.LEAKY_RELU_GRAD(
        ops.zeros_like(g) if t[0] is None else t[0], x, alpha=alpha),
    "Pow": _pow_jvp,
    # TensorFlow transposes SqrtGrad's VJP (0.5 * t / y, no zero test: a zero tangent
    # at y = 0 is NaN); RsqrtGrad's and ReciprocalGrad's transposes are those kernels.
    "Sqrt": lambda t, ans, x: 0.5 * (t[0] / ans),
    "Rsqrt": lambda t, ans, x: ops.grad_kernels.rsqrt_grad(ans, t[0]),
    "Reciprocal": lambda t, ans, x: ops.grad_kernels.reciprocal_grad(ans, t[0]),
}
_LINEAR = ["Identity", "Sum", "Mean", "Reshape", "Transpose", "BroadcastTo", "Tile", "Cumsum",
           "StridedSlice", "StridedSliceGrad", "GatherV2", "GatherV2Grad", "MirrorPad",
           "MatrixDiagPart", "MatrixDiag", "ConcatV2", "Pack", "Unpack", "Cast", "Conj",
           "ReverseV2", "AddN"]
_MULTILINEAR = ["Mul", "MatMul", "Einsum"]
_SELF_ADJOINT = ["Square", "Expm1", "Log1p", "Tan", "Softplus",
                 "Erf", "Abs", "Relu6", "Elu", "Selu", "LeakyRelu", "Softmax"]


def _attach_rules():
    """Gives each primitive in the tables its JVP rule, unless it declared its own."""
    rules = dict(_JVP_RULES)
    rules.update({name: _linear(get_primitive(name)) for name in _LINEAR})
    rules.update({name: _multilinear(get_primitive(name)) for name in _MULTILINEAR})
    rules.update({name: _self_adjoint(get_primitive(name)) for name in _SELF_ADJOINT})
    for name, rule in rules.items():
        primitive = get_primitive(name)
        if primitive.jvp is None:
            primitive.jvp = rule
    return rules


from . import ops  # noqa: E402  (ops need the tape; this module needs ops)
from .ops.shape import broadcast_gradient_to  # noqa: E402

JVP_RULES = _attach_rules()  # op type -> the rule this module attached (read by the tests)
