"""Function-style differentiation on top of the tape: ``gradients_function``.

The older TensorFlow eager API differentiated a Python function rather than
a block of code. It is a thin layer over ``GradientTape``:

    >>> def f(x, y):
    ...     return x * x * y
    >>> ad.gradients_function(f)(3.0, 2.0)      # [df/dx, df/dy]
    [<ad.Tensor: shape=(), dtype=float32, numpy=12.0>,
     <ad.Tensor: shape=(), dtype=float32, numpy=9.0>]
"""

from .tape import GradientTape
from .tensor import Tensor, Variable, convert_to_tensor

__all__ = ["gradients_function", "gradients"]


def gradients_function(f, params=None):
    """Returns ``g(*args, dy=None)``: the list of derivatives of ``f`` for each argument.

    Args:
        f: a function of tensors returning a tensor (a non-scalar result is summed,
            or weighted by ``dy``).
        params: indices of the arguments to differentiate (default: all).

    Integer arguments get None, as with ``GradientTape.gradient``.
    """

    def grad_fn(*args, dy=None):
        tensors = [a if isinstance(a, Variable) else convert_to_tensor(a) for a in args]
        wanted = range(len(tensors)) if params is None else params
        sources = [tensors[i] for i in wanted]
        with GradientTape() as tape:
            tape._watch_quietly([s for s in sources if isinstance(s, Tensor)])
            result = f(*tensors)
        return tape.gradient(result, sources, output_gradients=None if dy is None else [dy])

    grad_fn.__name__ = f"gradients_of_{getattr(f, '__name__', 'f')}"
    grad_fn.__doc__ = f"Derivatives of {getattr(f, '__name__', 'f')} for each argument."
    return grad_fn


def gradients(ys, xs, grad_ys=None, name="gradients", **kwargs):
    """Symbolic gradients do not exist in eager mode: use a GradientTape.

    Raises:
        RuntimeError: always, as ``tf.gradients`` does under eager execution.
    """
    raise RuntimeError("ad.gradients is not supported when eager execution is enabled. "
                       "Use ad.GradientTape instead.")
