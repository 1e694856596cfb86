"""Gradient checking: the tape's derivatives against central finite differences.

``check_grads`` is the test every VJP rule must pass (the idea of HIPS/autograd's
``test_util.check_grads``). It never builds a whole Jacobian: for each argument
``x_i`` it draws a random direction ``v`` and output cotangent ``u``, and compares

    tape:                <gradient of <u, f(x)> w.r.t. x_i, v>   (= <u, J_i v>)
    finite differences:  <u, (f(x + eps v) - f(x - eps v)) / (2 eps)>

They agree up to O(eps^2) when the rules are right; a random ``u`` (even for
a scalar output) catches a rule that ignores its cotangent. Order 2 repeats
the check on the scalar function

    x  ->  <gradient of <u, f(x)> w.r.t. x, w>        (random w)

whose gradient the tape gets only by recording the inner tape's backward
pass on an outer tape (nested tapes are exercised); order 3 recurses again.

    >>> from autodiff import testing
    >>> testing.check_grads(lambda x: ad.sin(x) * x, [np.array([0.5, 1.0])], order=2)
    >>> testing.check_grads(lambda x, y: x / y, [1.5, -2.0], order=3)

The module's tools:

- ``check_grads``: derivatives of a function, up to any order, against
  finite differences along random directions.
- ``numerical_jacobian``: central-difference Jacobians, one per argument.
- ``op_cases`` / ``op_inputs``: the test cases and inputs a Primitive declares.
- ``check_batch_independence``: whether ``batch_jacobian`` may be used,
  i.e. whether example ``b`` of the output depends on example ``b`` of the
  input only (it warns and returns False when it does not).
"""

import inspect
import warnings

import numpy as np

from . import backend, nest
from .errors import InvalidArgumentError
from .ops import add, multiply, reduce_sum
from .tape import AutodiffWarning, GradientTape
from .tensor import Tensor, convert_to_tensor

__all__ = ["check_grads", "numerical_jacobian", "op_cases", "op_inputs",
           "check_batch_independence"]


def __dir__():   # dir(ad.testing) shows the checks, not this module's imports
    return __all__

_MODES = ("rev", "fwd")
_REALS = (-2.0, 2.0)
_UNARY_CASES = [(((),), {}), (((3,),), {}), (((2, 3),), {})]
_BINARY_CASES = [(((), ()), {}), (((3,), (3,)), {}), (((2, 3), (2, 3)), {}),
                 (((2, 3), (3,)), {}), (((2, 1), (1, 3)), {}), (((), (2, 3)), {})]


def check_grads(f, args, order=2, modes=("rev",), eps=1e-6, rtol=1e-5, atol=1e-6, seed=0):
    """Checks the derivatives of ``f`` up to ``order`` against finite differences.

    Args:
        f: a function of tensors returning a tensor or a nested structure of
            them (integer and bool outputs are ignored).
        args: a list or tuple of arguments (a single Tensor, array or number
            is one argument). Floating values and Python numbers become
            float64 tensors and are differentiated; integer and bool arrays
            and tensors are passed unchanged and held fixed.
        order: the highest derivative order to check (1 = first derivatives).
        modes: ``"rev"`` (GradientTape) and/or ``"fwd"`` (ForwardAccumulator).
        eps: the finite-difference step along each (unit-variance) direction.
        rtol, atol: a check passes when ``|tape - fd| <= atol + rtol * |fd|``.
        seed: seeds the random directions and cotangents.

    Raises:
        AssertionError: a derivative disagrees (the message names the order,
            mode and argument, both numbers, the absolute and relative error
            and the worst element), or a gradient has the wrong shape or dtype.

    >>> from autodiff.testing import check_grads
    >>> check_grads(ad.tanh, [np.linspace(-1.0, 1.0, 4)], order=2)      # silent: they agree
    >>> check_grads(lambda a, b: ad.matmul(a, b), [np.ones((2, 3)), np.ones((3, 1))])
    """
    if any(mode not in _MODES for mode in modes) or order < 1:
        raise ValueError(f"check_grads: modes must come from {_MODES} (got {tuple(modes)}) "
                         f"and order must be at least 1 (got {order})")
    xs, wrt = _prepare(args)
    _check(f, xs, wrt, order, 1, tuple(modes), eps, rtol, atol, np.random.default_rng(seed))


def numerical_jacobian(f, args, eps=1e-6):
    """Central-difference Jacobians of ``f`` (one float tensor output) for each argument.

    Returns:
        A list with, per argument, a float64 array of shape
        ``f(*args).shape + arg.shape`` (None for integer or bool arguments).

    >>> from autodiff.testing import numerical_jacobian
    >>> numerical_jacobian(lambda x: x * x, [np.array([1.0, 2.0])])[0]
    array([[2., 0.],
           [0., 4.]])
    """
    xs, wrt = _prepare(args)

    def only_output(moved):
        (output,) = _evaluate(f, moved)  # f must return exactly one float tensor
        return output

    jacobians = [None] * len(xs)
    for i in wrt:
        jacobians[i] = _partials(lambda x, i=i: only_output(_moved(xs, i, x)), xs[i], eps)
    return jacobians


def op_cases(primitive):
    """A Primitive's ``cases`` (a list of ``(input_shapes, params)``), else a
    default by arity: shapes (), (3,), (2, 3) for unary ops, with broadcasting
    partners for binary ops."""
    if primitive.cases is not None:
        return list(primitive.cases)
    arity = len(primitive.vjp) if isinstance(primitive.vjp, tuple) else _forward_arity(primitive)
    if arity in (1, 2):
        return list(_UNARY_CASES if arity == 1 else _BINARY_CASES)
    raise ValueError(f"{primitive.name}: declare `cases` (no default for {arity} inputs)")


def op_inputs(primitive, shapes, rng):
    """NumPy inputs for one case: ``make_inputs(rng, shapes)`` if declared, else
    float64 values drawn from ``domain`` (a ``(lo, hi)`` for all inputs, a tuple
    of them per input; ``((lo, hi), "signs")``: magnitudes with random signs)."""
    make_inputs = getattr(primitive, "make_inputs", None)
    if make_inputs is not None:
        return [np.asarray(a) for a in make_inputs(rng, shapes)]
    domain = _REALS if primitive.domain is None else primitive.domain
    specs = [domain] * len(shapes) if _is_range(domain) else list(domain)
    if len(specs) != len(shapes) or not all(_is_range(s) for s in specs):
        raise ValueError(f"{primitive.name}: domain {domain!r} does not fit {len(shapes)} inputs")
    arrays = []
    for spec, shape in zip(specs, shapes):
        (lo, hi), signed = (spec[0], True) if spec[1] == "signs" else (spec, False)
        signs = rng.choice([-1.0, 1.0], size=shape) if signed else 1.0
        values = rng.uniform(lo, hi, size=shape) * signs
        arrays.append(np.asarray(values, dtype=np.float64))
    return arrays


def _is_range(spec):
    """``(lo, hi)`` or ``((lo, hi), "signs")``."""
    if not isinstance(spec, tuple) or len(spec) != 2:
        return False
    if isinstance(spec[1], str):
        return spec[1] == "signs" and _is_range(spec[0])
    return all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in spec)


def _forward_arity(primitive):
    """Inputs of ``forward(xp, x, y, *, params)``: positional parameters without defaults."""
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    params = list(inspect.signature(primitive.forward).parameters.values())[1:]
    return sum(1 for p in params if p.kind in kinds and p.default is p.empty)


# ---- the recursion ---------------------------------------------------------------

def _check(f, xs, wrt, order, level, modes, eps, rtol, atol, rng):
    us = [rng.standard_normal(y.shape) for y in _evaluate(f, xs)]
    vs = {i: rng.standard_normal(xs[i].shape) for i in wrt}
    for mode in modes:
        failures = []
        if mode == "rev":
            grads = {i: np.zeros(xs[i].shape) if g is None else _host(g)
                     for i, g in _tape_gradients(f, xs, wrt, us, level).items()}
        for i in wrt:
            numeric, fd_outputs = _finite_difference(f, xs, i, vs[i], us, eps)
            if mode == "rev":
                exact = float(np.sum(grads[i] * vs[i]))
            else:
                jvps = _forward_jvps(f, xs, i, vs[i])
                exact = float(sum(np.sum(u * t) for u, t in zip(us, jvps)))
            error = abs(exact - numeric)
            if not error <= atol + rtol * abs(numeric):  # `not <=` also catches NaN
                if mode == "rev":  # elementwise, for the report (not for large arguments)
                    fd = None if grads[i].size > 400 else _partials(
                        lambda x, i=i: _contracted(f, _moved(xs, i, x), us), xs[i], eps)
                    detail = ("gradient of <u, f>", grads[i], fd)
                else:
                    flat = [np.concatenate([a.ravel() for a in arrays] or [np.zeros(0)])
                            for arrays in (jvps, fd_outputs)]
                    detail = ("J v (outputs flattened)", *flat)
                failures.append((error, i, exact, numeric, detail))
        if failures:
            raise AssertionError(_report(failures, xs, level, mode, rtol, atol))
    if order > 1:
        ws = {i: rng.standard_normal(xs[i].shape) for i in wrt}
        _check(_gradient_function(f, wrt, us, ws, level), xs, wrt, order - 1, level + 1,
               modes, eps, rtol, atol, rng)


def _gradient_function(f, wrt, us, ws, level):
    """x -> <gradient of <u, f(x)> w.r.t. x, w>, computed on a tape (for the next order)."""

    def contracted_gradient(*xs):
        grads = _tape_gradients(f, xs, wrt, us, level)
        total = convert_to_tensor(np.zeros((), dtype=np.float64))
        for i in wrt:
            if grads[i] is not None:
                total = add(total, reduce_sum(multiply(grads[i], convert_to_tensor(ws[i]))))
        return total

    contracted_gradient.__name__ = f"order{level}_gradient_of_{getattr(f, '__name__', 'f')}"
    return contracted_gradient


def _tape_gradients(f, xs, wrt, us, level):
    """{i: tape gradient of <u, f(x)> w.r.t. x_i, or None}, checking shapes and dtypes."""
    with GradientTape() as tape:
        tape.watch([xs[i] for i in wrt])
        outputs = _float_outputs(f(*xs))
    grads = tape.gradient(outputs, [xs[i] for i in wrt], output_gradients=list(us))
    for i, grad in zip(wrt, grads):
        if grad is not None and (grad.shape != xs[i].shape or grad.dtype != xs[i].dtype):
            raise AssertionError(
                f"check_grads: the order-{level} gradient for argument {i} has shape "
                f"{tuple(grad.shape)} and dtype {grad.dtype.name}, but argument {i} has shape "
                f"{tuple(xs[i].shape)} and dtype {xs[i].dtype.name}")
    return dict(zip(wrt, grads))


def _forward_jvps(f, xs, i, v):
    from .forward import ForwardAccumulator  # imported late: forward mode builds on the tape
    with ForwardAccumulator(xs[i], convert_to_tensor(v)) as acc:
        outputs = _float_outputs(f(*xs))
    jvps = acc.jvp(outputs, unconnected_gradients="zero")
    return [_host(t) for t in jvps]


def _finite_difference(f, xs, i, v, us, eps):
    """<u, (f(x + eps v) - f(x - eps v)) / 2 eps> and the per-output differences."""
    x = _host(xs[i])
    plus = _evaluate(f, _moved(xs, i, x + eps * v))
    minus = _evaluate(f, _moved(xs, i, x - eps * v))
    diffs = [(p - m) / (2 * eps) for p, m in zip(plus, minus)]
    return float(sum(np.sum(u * d) for u, d in zip(us, diffs))), diffs


# ---- values in and out -------------------------------------------------------------

def _prepare(args):
    """(tensors, positions to differentiate): floats become float64 tensors."""
    if not isinstance(args, (list, tuple)):
        args = [args]
    xs, wrt = [], []
    for i, a in enumerate(args):
        value = a.numpy() if isinstance(a, Tensor) else a
        array = np.asarray(value)
        if array.dtype.kind == "c":
            raise ValueError(f"check_grads: argument {i} is complex; only real ones are checked")
        if array.dtype.kind in "biu" and type(value) not in (int, float):
            xs.append(convert_to_tensor(array))  # indices, masks: held fixed
        else:
            xs.append(convert_to_tensor(array.astype(np.float64)))
            wrt.append(i)
    return xs, wrt


def _moved(xs, i, value):
    moved = list(xs)
    moved[i] = convert_to_tensor(np.asarray(value, dtype=np.float64))
    return moved


def _float_outputs(out):
    flat = [t if isinstance(t, Tensor) else convert_to_tensor(t) for t in nest.flatten(out)]
    return [t for t in flat if t.dtype.is_floating]


def _evaluate(f, xs):
    return [_host(t) for t in _float_outputs(f(*xs))]


def _host(tensor):
    """A tensor's value as a float64 NumPy array: finite differences run on the host."""
    if hasattr(tensor, "_to_dense_tensor"):   # an IndexedSlices gradient: compare it dense
        tensor = tensor._to_dense_tensor()
    return backend.to_numpy(tensor._value).astype(np.float64)


def _contracted(f, xs, us):
    return sum(float(np.sum(u * y)) for u, y in zip(us, _evaluate(f, xs)))


def _partials(fn, x, eps):
    """Central differences of ``fn`` at ``x``, one coordinate at a time: fn(x).shape + x.shape."""
    x = _host(x) if isinstance(x, Tensor) else np.asarray(x, dtype=np.float64)
    out = np.zeros(np.shape(fn(x)) + x.shape)
    for k in np.ndindex(x.shape):
        e = np.zeros(x.shape)
        e[k] = eps
        out[(Ellipsis,) + k] = (fn(x + e) - fn(x - e)) / (2 * eps)
    return out


# ---- the failure report -------------------------------------------------------------

def _report(failures, xs, level, mode, rtol, atol):
    failures.sort(key=lambda item: -item[0] if item[0] == item[0] else -np.inf)  # NaN first
    what = "first derivative" if level == 1 else (
        f"order-{level} derivative (that of x -> <gradient of the order-{level - 1} function, w>)")
    lines = [f"check_grads: the {what} in {mode} mode disagrees with central finite differences "
             f"for argument(s) {', '.join(str(item[1]) for item in failures)} (worst first)."]
    for error, i, exact, numeric, (name, tape_value, fd_value) in failures:
        relative = error / abs(numeric) if numeric else np.inf
        lines += [f"argument {i}: shape {tuple(xs[i].shape)}, {xs[i].dtype.name}",
                  f"  along a random direction v:  tape <u, J v> = {exact:.10g}   "
                  f"finite differences = {numeric:.10g}",
                  f"  mismatch: absolute {error:.3g}, relative {relative:.3g} "
                  f"(allowed: atol={atol:g} + rtol={rtol:g} * |finite differences|)"]
        if fd_value is not None and tape_value.size:
            diff = np.nan_to_num(np.abs(tape_value - fd_value), nan=np.inf)
            k = np.unravel_index(int(np.argmax(diff)), diff.shape)
            lines += [f"  worst element of the {name} at {list(map(int, k))}: tape "
                      f"{tape_value[k]:.10g}, finite differences {fd_value[k]:.10g}",
                      f"  tape:               {np.array2string(tape_value, precision=6)}",
                      f"  finite differences: {np.array2string(fd_value, precision=6)}"]
    return "\n".join(lines)


# ---- batch independence -------------------------------------------------------------

def check_batch_independence(f, x, source=None, rtol=1e-6, atol=0.0):
    """Whether ``batch_jacobian`` is right here: warns and returns False when it is not.

    ``tape.batch_jacobian(y, x)`` pushes one cotangent per output position
    through a single backward pass, set to 1 in *every* example at once, so
    what it returns for example ``b`` is ``sum over b2 of d y[b2] / d x[b]``.
    That is the per-example Jacobian ``d y[b] / d x[b]`` only when no output
    example depends on another example's input: when the full Jacobian
    (shape ``(batch,) + y.shape[1:] + (batch,) + x.shape[1:]``) is
    block-diagonal over the batch. Like TensorFlow, ``batch_jacobian`` does
    not check; this function does, by computing that full Jacobian (so it
    costs ``batch`` times more; use it in tests, not in a training loop).

    Args:
        f: a function of one batch-first tensor returning one batch-first
            tensor; or a persistent ``GradientTape`` that recorded the
            computation, in which case ``x`` is the target and ``source``
            the source (the arguments ``batch_jacobian`` would get).
        x: the input, batch first (a Tensor, Variable, array or list; its
            dtype is kept), or the target when ``f`` is a tape.
        source: the source, only when ``f`` is a tape.
        rtol, atol: an entry of an off-diagonal block counts as a dependence
            when its magnitude exceeds ``atol + rtol * max |Jacobian|``.

    Returns:
        True when the Jacobian is block-diagonal over the batch (or the output
        does not depend on the input at all); False, after an AutodiffWarning
        naming the largest cross-example entry, when it is not.

    Raises:
        InvalidArgumentError: the first dimensions of output and input differ.

    >>> from autodiff.testing import check_batch_independence
    >>> dense = lambda x: ad.nn.elu(ad.matmul(x, ad.ones((5, 6))))
    >>> check_batch_independence(dense, np.ones((7, 5), np.float32))
    True
    >>> center = lambda x: x - ad.reduce_mean(x, axis=0)   # mixes the examples
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     check_batch_independence(center, np.ones((7, 5)))
    False
    >>> caught[0].category.__name__
    'AutodiffWarning'
    """
    if isinstance(f, GradientTape):
        if source is None:
            raise TypeError("check_batch_independence(tape, target, source): the source is missing")
        tape, target = f, convert_to_tensor(x)
    else:
        if source is not None:
            raise TypeError("check_batch_independence(f, x): `source` is only for a tape")
        source = x if isinstance(x, Tensor) else convert_to_tensor(np.asarray(x))
        with GradientTape() as tape:
            tape.watch(source)
            target = convert_to_tensor(f(source))
    t_shape, s_shape = tuple(target.shape), tuple(source.shape)
    if not t_shape or not s_shape or t_shape[0] != s_shape[0]:
        raise InvalidArgumentError(
            f"check_batch_independence: need first dimension of target shape ({list(t_shape)}) "
            f"and source shape ({list(s_shape)}) to match.")
    jacobian = tape.jacobian(target, source)
    batch = t_shape[0]
    if jacobian is None or batch == 0:
        return True
    m, n = (int(np.prod(shape[1:], dtype=np.int64)) for shape in (t_shape, s_shape))
    blocks = np.abs(_host(jacobian)).reshape(batch, m, batch, n)
    largest = np.nanmax(blocks, initial=0.0)
    blocks[np.arange(batch), :, np.arange(batch), :] = 0  # what is left: b != b2
    worst = blocks.max(initial=0.0)
    if worst <= atol + rtol * largest:  # `<=` is False for NaN: NaN across examples fails
        return True
    b_out, _, b_in, _ = np.unravel_index(
        int(np.argmax(np.where(np.isnan(blocks), np.inf, blocks))), blocks.shape)
    warnings.warn(
        f"batch_jacobian would be wrong: output example {b_out} depends on input example "
        f"{b_in} (|d target[{b_out}] / d source[{b_in}]| reaches {worst:.3g}; the largest "
        f"entry of the Jacobian is {largest:.3g}). The batch is mixed (as by "
        f"BatchNormalization in training mode), so batch_jacobian would return, for each "
        f"example b, the sum over b2 of d target[b2] / d source[b]. Use tape.jacobian and "
        f"take its diagonal blocks with ad.einsum('bxby->bxy', j) instead.",
        AutodiffWarning, stacklevel=2)
    return False
