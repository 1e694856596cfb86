"""Differentiating Python functions: ``ad.functional`` (JAX-style) and ``gradients_function``.

A tape differentiates a *block of code*; the functions here differentiate a
*Python function of tensors* and return a new function. They are thin
layers over the same machinery, and worth reading as examples of it:

    grad(f)            reverse mode: one tape, one ``gradient`` call
    value_and_grad(f)  the same, also returning f's value
    jacobian(f)        one tape, ``tape.jacobian`` (one vectorized backward pass)
    hessian(f)         the gradient recorded on a second tape, then its jacobian
    jvp(f, xs, vs)     forward mode: a ForwardAccumulator
    vjp(f, *xs)        a persistent tape kept for later cotangents
    hvp(f, xs, vs)     forward-over-reverse: an accumulator around a tape

    >>> f = lambda x: ad.reduce_sum(ad.sin(x) * x)
    >>> x = ad.constant([0.5, 1.0])
    >>> ad.functional.grad(f)(x).numpy()         # cos(x) x + sin(x)
    array([0.9182168, 1.3817732], dtype=float32)
    >>> ad.functional.hessian(f)(x).shape
    TensorShape([2, 2])

Conventions (JAX's, where TensorFlow has none): ``argnums`` is an int (one
result) or a tuple (a tuple of results); an argument may be a nested
structure of tensors, and its result has the same structure; numbers and
arrays become tensors as ``ad.constant`` makes them; ``grad``, ``hessian``
and ``hvp`` need a scalar floating output (TypeError otherwise); a result
an argument does not influence is zeros, never None.

TensorFlow has no Hessian helper; ``tape_hessian(tape, target, sources)``
is one for a tape that has already recorded ``target``. Only TensorFlow's
names (``gradients_function``, ``gradients``) are also at the top of ``ad``.
"""

import contextlib

import numpy as np

from . import nest
from .tape import GradientTape, UnconnectedGradients, _normalize_unconnected
from .tensor import Tensor, Variable, convert_to_tensor

__all__ = ["grad", "value_and_grad", "jacobian", "hessian", "hvp", "jvp", "vjp",
           "tape_hessian", "gradients_function", "gradients"]


def __dir__():   # dir(ad.functional) shows the functions, not this module's imports
    return __all__


# ---- helpers ---------------------------------------------------------------------

def _as_tensors(value):
    """Every leaf of an argument as a Tensor (Variables stay Variables)."""
    return nest.map_structure(lambda leaf: leaf if isinstance(leaf, Tensor)
                              else convert_to_tensor(leaf), value)


def _prepare(args, argnums, who):
    """(args with the differentiated ones converted, the structure to differentiate)."""
    args = list(args)
    positions = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for i in positions:
        if not -len(args) <= i < len(args):
            raise ValueError(f"{who}: argnums {argnums!r} out of range for {len(args)} arguments")
        args[i] = _as_tensors(args[i])
        for leaf in nest.flatten(args[i]):
            if not leaf.dtype.is_differentiable:
                raise TypeError(f"{who} requires floating-point arguments to differentiate, but "
                                f"argument {i} has dtype {leaf.dtype.name}")
    wrt = args[argnums] if isinstance(argnums, int) else tuple(args[i] for i in positions)
    return args, wrt


def _scalar(value, who):
    """Checks that f returned a scalar floating tensor (what a gradient needs)."""
    if not isinstance(value, Tensor) or value._value.shape != () or not value.dtype.is_floating:
        what = (f"a tensor of shape {tuple(value.shape)} and dtype {value.dtype.name}"
                if isinstance(value, Tensor) else type(value).__name__)
        raise TypeError(f"{who} needs f to return a scalar floating tensor, got {what} "
                        f"(use ad.functional.jacobian, or reduce the output first)")
    return value


def _split_aux(out, has_aux, who):
    if not has_aux:
        return out, None
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError(f"{who}(has_aux=True) needs f to return a pair (output, auxiliary data)")
    return out[0], out[1]


@contextlib.contextmanager
def _watching_tape(wrt, persistent=False):
    """A tape that watches the floating leaves of ``wrt`` (and nothing it is not told)."""
    with GradientTape(persistent=persistent, watch_accessed_variables=False) as tape:
        tape._watch_quietly([t for t in nest.flatten(wrt) if t.dtype.is_differentiable])
        yield tape


# ---- reverse mode ----------------------------------------------------------------

def value_and_grad(f, argnums=0, has_aux=False):
    """Returns a function that computes ``f`` and its gradient.

    Args:
        f: a function of tensors returning a scalar floating tensor (or, with
            ``has_aux=True``, a pair ``(scalar, auxiliary data)``).
        argnums: the argument (int) or arguments (tuple of ints) to differentiate.
        has_aux: whether ``f`` returns auxiliary data alongside its value.

    Returns:
        ``g(*args, **kwargs) -> (value, gradient)``, ``((value, aux), gradient)``
        with ``has_aux``; the gradient has the structure of the argument(s).

    >>> f = ad.functional.value_and_grad(lambda x: ad.reduce_sum(x * x))
    >>> value, dx = f(ad.constant([1.0, 2.0]))
    >>> float(value), dx.numpy()       # sum x^2 and 2x
    (5.0, array([2., 4.], dtype=float32))
    """
    def value_and_grad_f(*args, **kwargs):
        args, wrt = _prepare(args, argnums, "grad")
        with _watching_tape(wrt) as tape:
            out = f(*args, **kwargs)
        value, aux = _split_aux(out, has_aux, "grad")
        grads = tape.gradient(_scalar(value, "grad"), wrt, unconnected_gradients="zero")
        return ((value, aux) if has_aux else value), grads

    value_and_grad_f.__name__ = f"value_and_grad_of_{getattr(f, '__name__', 'f')}"
    return value_and_grad_f


def grad(f, argnums=0, has_aux=False):
    """Returns the gradient function of a scalar function ``f``.

    Nest it for higher derivatives: ``grad(grad(f))`` records the inner
    gradient on the outer tape.

    Args:
        f, argnums, has_aux: as in ``value_and_grad``.

    Returns:
        ``g(*args, **kwargs) -> gradient`` (``(gradient, aux)`` with ``has_aux``).

    >>> grad = ad.functional.grad
    >>> float(grad(ad.sin)(ad.constant(0.0)))           # cos 0
    1.0
    >>> float(grad(grad(ad.sin))(ad.constant(0.0)))     # -sin 0
    -0.0
    >>> dx, dy = grad(lambda x, y: x * y, argnums=(0, 1))(2.0, 3.0)
    >>> float(dx), float(dy)                            # (y, x)
    (3.0, 2.0)
    """
    value_and_grad_f = value_and_grad(f, argnums, has_aux)

    def grad_f(*args, **kwargs):
        value, grads = value_and_grad_f(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads

    grad_f.__name__ = f"grad_of_{getattr(f, '__name__', 'f')}"
    return grad_f


def jacobian(f, argnums=0):
    """Returns the Jacobian function of ``f`` (reverse mode, vectorized).

    Args:
        f: a function of tensors returning a tensor or a nested structure of them.
        argnums: the argument (int) or arguments (tuple of ints) to differentiate.

    Returns:
        ``j(*args, **kwargs)``: for each output, its Jacobian with respect to
        the argument(s), shaped ``output.shape + argument.shape``; nested like
        the output, then like the arguments.

    >>> a = ad.constant([[1.0, 2.0], [3.0, 4.0]])
    >>> j = ad.functional.jacobian(lambda x: ad.matmul(a, x))(ad.ones([2, 1]))
    >>> j.shape
    TensorShape([2, 1, 2, 1])
    >>> ad.reshape(j, [2, 2]).numpy()      # a itself
    array([[1., 2.],
           [3., 4.]], dtype=float32)
    """
    def jacobian_f(*args, **kwargs):
        args, wrt = _prepare(args, argnums, "jacobian")
        with _watching_tape(wrt, persistent=True) as tape:
            out = f(*args, **kwargs)
        return nest.map_structure(
            lambda y: tape.jacobian(y, wrt, unconnected_gradients="zero"), out)

    jacobian_f.__name__ = f"jacobian_of_{getattr(f, '__name__', 'f')}"
    return jacobian_f


def tape_hessian(tape, target, sources, unconnected_gradients=UnconnectedGradients.NONE):
    """The Hessian of ``target`` (summed if not scalar) from a tape that recorded it.

    A private tape starts from a copy of ``tape``'s records and watched set
    and records ``tape.gradient``'s backward pass; its ``jacobian`` of that
    gradient is the Hessian (one vectorized pass per source). ``tape`` counts
    as used, as after ``gradient``.

    Args:
        tape: a GradientTape that recorded ``target`` from ``sources``.
        target: a floating Tensor.
        sources: a Tensor, Variable or nested structure of them.
        unconnected_gradients: ``'none'`` or ``'zero'``, for blocks with no path.

    Returns:
        Blocks ``H[i][j]`` of shape ``sources[i].shape + sources[j].shape``,
        nested as ``sources`` inside ``sources``; one Tensor for one source.

    >>> x = ad.Variable([1.0, 2.0, 3.0])
    >>> with ad.GradientTape() as tape:
    ...     y = ad.reduce_sum(x ** 3)
    >>> ad.functional.tape_hessian(tape, y, x).numpy()     # diag(6 x)
    array([[ 6.,  0.,  0.],
           [ 0., 12.,  0.],
           [ 0.,  0., 18.]], dtype=float32)
    """
    unconnected = _normalize_unconnected(unconnected_gradients)
    if not isinstance(tape, GradientTape):
        raise TypeError(f"tape_hessian: tape must be an ad.GradientTape, got {type(tape).__name__}")
    if tape._records is None:
        raise RuntimeError("GradientTape: this non-persistent tape was already used for "
                           "one gradient (or jacobian) call and has freed its records; "
                           "create it with persistent=True to call it more than once")
    flat = nest.flatten(sources)
    recorder = GradientTape(persistent=True, watch_accessed_variables=False)
    recorder._records, recorder._watched = list(tape._records), set(tape._watched)
    with recorder:  # records the backward pass of tape.gradient
        grads = tape.gradient(target, flat, unconnected_gradients=unconnected)
    rows = []
    for g, s in zip(grads, flat):
        if g is None:
            zero = unconnected is UnconnectedGradients.ZERO and s.dtype.is_differentiable
            rows.append([ops.zeros(s.shape + x.shape, dtype=s.dtype) if zero else None
                         for x in flat])
        else:
            rows.append(recorder.jacobian(g, flat, unconnected_gradients=unconnected))
    return nest.pack_sequence_as(sources, [nest.pack_sequence_as(sources, row) for row in rows])


def hessian(f, argnums=0):
    """Returns the Hessian function of a scalar function ``f``.

    Args:
        f: a function of tensors returning a scalar floating tensor.
        argnums: the argument (int) or arguments (tuple of ints) to differentiate.

    Returns:
        ``h(*args, **kwargs)``: for one argument x, a Tensor of shape
        ``x.shape + x.shape``; for ``argnums=(0, 1)``, the blocks
        ``((H_xx, H_xy), (H_yx, H_yy))``.

    >>> a = ad.constant([[2.0, 1.0], [1.0, 3.0]])
    >>> h = ad.functional.hessian(lambda x: 0.5 * ad.reduce_sum(x * ad.matmul(a, x)))
    >>> hx = h(ad.ones([2, 1]))
    >>> hx.shape
    TensorShape([2, 1, 2, 1])
    >>> ad.reshape(hx, [2, 2]).numpy()     # a itself
    array([[2., 1.],
           [1., 3.]], dtype=float32)
    """
    def hessian_f(*args, **kwargs):
        args, wrt = _prepare(args, argnums, "hessian")
        with _watching_tape(wrt) as tape:
            value = _scalar(f(*args, **kwargs), "hessian")
        return tape_hessian(tape, value, wrt, unconnected_gradients="zero")

    hessian_f.__name__ = f"hessian_of_{getattr(f, '__name__', 'f')}"
    return hessian_f


def vjp(f, *primals, has_aux=False):
    """Runs ``f`` on ``primals`` and returns its output and a VJP function.

    Args:
        f: a function of tensors returning a tensor or nested structure of them.
        *primals: the arguments (numbers and arrays become tensors).
        has_aux: whether ``f`` returns ``(output, auxiliary data)``.

    Returns:
        ``(output, vjp_fn)`` (``(output, vjp_fn, aux)`` with ``has_aux``).
        ``vjp_fn(cotangent)``, with ``cotangent`` shaped like ``output``, returns
        a tuple with ``J^T cotangent`` for each primal (None for integer ones);
        it may be called many times (it keeps a persistent tape alive until it
        is dropped).

    >>> y, vjp_fn = ad.functional.vjp(lambda x: x * x, ad.constant([1.0, 2.0]))
    >>> (dx,) = vjp_fn(ad.constant([1.0, 1.0]))
    >>> dx.numpy()                           # 2x
    array([2., 4.], dtype=float32)
    """
    xs = tuple(_as_tensors(p) for p in primals)
    with _watching_tape(xs, persistent=True) as tape:
        out = f(*xs)
    out, aux = _split_aux(out, has_aux, "vjp")

    def vjp_fn(cotangent):
        leaves = nest.flatten(xs)
        wrt = [t for t in leaves if t.dtype.is_differentiable]
        grads = iter(tape.gradient(out, wrt, output_gradients=nest.flatten(cotangent),
                                   unconnected_gradients="zero"))
        return nest.pack_sequence_as(xs, [next(grads) if t.dtype.is_differentiable else None
                                          for t in leaves])

    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


# ---- forward mode ----------------------------------------------------------------

def _forward_args(primals, tangents, who):
    """(primals as a list of tensor structures, tangents as a list, one argument?)"""
    single = not isinstance(primals, (list, tuple))
    if single:
        primals, tangents = [primals], [tangents]
    if not isinstance(tangents, (list, tuple)) or len(tangents) != len(primals):
        raise ValueError(f"{who}: primals and tangents must be sequences of the same length")
    return [_as_tensors(p) for p in primals], list(tangents), single


def jvp(f, primals, tangents):
    """Runs ``f`` on ``primals`` and pushes ``tangents`` forward: ``(f(x), J v)``.

    Args:
        f: a function of tensors returning a tensor or nested structure of them.
        primals: the arguments, as a tuple or list (or one tensor for one argument).
        tangents: one tangent per argument, shaped like it.

    Returns:
        ``(output, output_tangent)``, the tangent nested like the output
        (zeros where the output does not depend on the primals).

    >>> y, y_dot = ad.functional.jvp(ad.sin, (ad.constant(0.0),), (ad.constant(2.0),))
    >>> float(y), float(y_dot)               # sin 0, cos 0 * 2
    (0.0, 2.0)
    """
    xs, ts, _ = _forward_args(primals, tangents, "jvp")
    with forward.ForwardAccumulator(xs, ts) as acc:
        out = f(*xs)
    return out, acc.jvp(out, unconnected_gradients="zero")


def hvp(f, primals, tangents):
    """The Hessian-vector product of a scalar function, forward-over-reverse.

    An accumulator carrying ``tangents`` surrounds a tape that computes the
    gradient; the accumulator sees the backward pass, so the gradient's
    tangent is ``H v``. Costs about two gradients; the Hessian is never built.

    Args:
        f: a function of tensors returning a scalar floating tensor.
        primals: the arguments, a tuple or list (or one tensor).
        tangents: the vector ``v``, one tangent per argument.

    Returns:
        ``H v``: a tuple with one tensor per argument (one tensor for one
        argument), ``sum over j of H[i][j] v[j]`` for argument ``i``.

    >>> f = lambda x: ad.reduce_sum(x ** 3)
    >>> ad.functional.hvp(f, ad.constant([1.0, 2.0]), ad.constant([1.0, 0.0])).numpy()
    array([6., 0.], dtype=float32)
    """
    xs, ts, single = _forward_args(primals, tangents, "hvp")
    with forward.ForwardAccumulator(xs, ts) as acc:
        with _watching_tape(xs) as tape:
            value = _scalar(f(*xs), "hvp")
        grads = tape.gradient(value, xs, unconnected_gradients="zero")
    products = acc.jvp(grads, unconnected_gradients="zero")
    return products[0] if single else tuple(products)


# ---- the older TensorFlow eager API -----------------------------------------------------

def gradients_function(f, params=None):
    """Returns ``g(*args, dy=None)``: the list of derivatives of ``f`` for each argument.

    Args:
        f: a function of tensors returning a tensor (a non-scalar result is summed,
            or weighted by ``dy``).
        params: indices of the arguments to differentiate (default: all).

    Integer arguments get None, as with ``GradientTape.gradient``.

    >>> dx, dy = ad.gradients_function(lambda x, y: x * x * y)(3.0, 2.0)
    >>> float(dx), float(dy)                 # (2xy, x^2)
    (12.0, 9.0)
    """

    if not callable(f):
        raise TypeError(f"gradients_function: f must be callable, not {type(f).__name__} {f!r}")

    def grad_fn(*args, dy=None):
        tensors = [a if isinstance(a, Variable) else convert_to_tensor(a) for a in args]
        wanted = range(len(tensors)) if params is None else _checked_params(params, len(tensors))
        # One object passed twice (``g(x, x)``) is two arguments, each with its
        # own derivative: later copies become new tensors (as TensorFlow did).
        seen = set()
        for i in wanted:
            if tensors[i]._id in seen:
                tensors[i] = ops.identity(tensors[i])
            seen.add(tensors[i]._id)
        sources = [tensors[i] for i in wanted]
        with GradientTape() as tape:
            tape._watch_quietly([s for s in sources if isinstance(s, Tensor)])
            result = f(*tensors)
        return tape.gradient(result, sources, output_gradients=None if dy is None else [dy])

    grad_fn.__name__ = f"gradients_of_{getattr(f, '__name__', 'f')}"
    grad_fn.__doc__ = f"Derivatives of {getattr(f, '__name__', 'f')} for each argument."
    return grad_fn


def _checked_params(params, n_args):
    """``params`` as a list of argument positions, each an int in range."""
    if isinstance(params, (str, bytes)) or not hasattr(params, "__iter__"):
        raise TypeError(f"gradients_function: params must be a list of argument positions "
                        f"(ints), not {type(params).__name__} {params!r}")
    positions = list(params)
    for p in positions:
        if isinstance(p, bool) or not isinstance(p, (int, np.integer)):
            raise TypeError(f"gradients_function: params must hold ints (argument positions), "
                            f"got {type(p).__name__} {p!r}")
        if not -n_args <= p < n_args:
            raise ValueError(f"gradients_function: params names argument {p}, but the function "
                             f"was called with {n_args} argument(s)")
    return positions


def gradients(ys, xs, grad_ys=None, name="gradients", **kwargs):
    """Symbolic gradients do not exist in eager mode: use a GradientTape.

    Raises:
        RuntimeError: always, as ``tf.gradients`` does under eager execution.
    """
    raise RuntimeError("ad.gradients builds symbolic gradients, which do not exist in this "
                       "eager engine (nor in TensorFlow 2's eager mode): record the computation "
                       "with ad.GradientTape and call tape.gradient")


from . import forward, ops  # noqa: E402  (both build on the tape, which this module needs first)
