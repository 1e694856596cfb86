"""``ad.nn`` functions that TensorFlow builds from other ops: moments, dropout.

Neither is an op type of its own (in TensorFlow or here): each calls a few
ops, and its gradient is theirs. Two details copy TensorFlow exactly:

- ``moments`` computes the variance around ``stop_gradient(mean)``. The
  first derivative is unchanged (the variance is stationary in its centre),
  but second derivatives differ from the textbook ones: TensorFlow's do,
  and so do ours.
- ``dropout`` multiplies by ``1 / (1 - rate)`` first, then selects with the
  keep mask (``uniform >= rate``): the gradient is ``g / (1 - rate)`` where a
  unit was kept and 0 where it was dropped, the same mask as the forward.
  The numbers come from ``ad.random`` (``set_seed`` and ``seed=`` work as
  there); they are not TensorFlow's numbers.
"""

import numbers

from .. import validate as _validate
from ..errors import InvalidArgumentError
from ..tensor import Tensor, convert_to_tensor

__all__ = ["moments", "dropout"]


def moments(x, axes, shift=None, keepdims=False, name=None):
    """Mean and variance of ``x`` over ``axes``.

    Args:
        x: a tensor.
        axes: an int or a list of ints, the axes to reduce.
        shift: unused (as in TensorFlow 2).
        keepdims: keep the reduced axes with length 1.

    Returns:
        ``(mean, variance)``. float16 inputs are reduced in float32, as TensorFlow does.

    >>> mean, variance = ad.nn.moments(ad.constant([1., 2., 3., 6.]), axes=[0])
    >>> float(mean), float(variance)
    (3.0, 3.5)
    """
    x = convert_to_tensor(x)
    axes = [int(axes)] if isinstance(axes, numbers.Integral) else [int(a) for a in axes]
    y = cast(x, "float32") if x.dtype.name == "float16" else x
    mean = reduce_mean(y, axis=axes, keepdims=True)
    variance = reduce_mean(square(y - stop_gradient(mean)), axis=axes, keepdims=True)
    if not keepdims:
        mean, variance = squeeze(mean, axes), squeeze(variance, axes)
    if y is not x:
        mean, variance = cast(mean, x.dtype), cast(variance, x.dtype)
    return mean, variance


def _noise_shape(x, noise_shape):
    shape = tuple(x.shape)
    if noise_shape is None:
        return shape
    if isinstance(noise_shape, Tensor):
        noise_shape = _validate.host_value(noise_shape, "dropout", "noise_shape").tolist()
    noise_shape = [None if d is None else int(d) for d in noise_shape]
    if len(noise_shape) == len(shape):   # None means "as x" (TensorFlow's _get_noise_shape)
        noise_shape = [s if d is None else d for d, s in zip(noise_shape, shape)]
    if None in noise_shape or len(noise_shape) > len(shape) or any(
            d not in (1, s) for d, s in zip(noise_shape[::-1], shape[::-1])):
        raise InvalidArgumentError(f"dropout: noise_shape {noise_shape} does not broadcast to "
                                   f"the shape {shape} of x")
    return tuple(noise_shape)


def dropout(x, rate, noise_shape=None, seed=None, name=None):
    """Sets each element to 0 with probability ``rate`` and scales the rest by ``1 / (1 - rate)``.

    Args:
        x: a floating tensor.
        rate: a number in [0, 1) (or a scalar tensor): the probability to drop.
        noise_shape: the shape of the keep mask, broadcast against ``x``
            (``[batch, 1]`` drops whole rows); None entries mean "as x".
        seed: an op seed for ``ad.random`` (see ``ad.random.set_seed``).

    Returns:
        A tensor like ``x``. ``rate == 0`` returns ``x`` itself.

    >>> ad.random.set_seed(0)
    >>> y = ad.nn.dropout(ad.ones([4]), rate=0.5)     # elements are 0.0 or 2.0
    """
    is_number = isinstance(rate, numbers.Real)
    if is_number and not 0 <= rate < 1:
        raise ValueError(f"dropout: rate must be a scalar tensor or a float in the range "
                         f"[0, 1), got rate={rate}")
    x = convert_to_tensor(x)
    if not x.dtype.is_floating:
        raise InvalidArgumentError(f"dropout: x must be a floating tensor (it is scaled), not "
                                   f"{x.dtype.name}")
    if is_number and rate == 0:
        return x
    shape = _noise_shape(x, noise_shape)
    if is_number:
        kept = x * (1.0 / (1.0 - rate))
    else:
        rate = convert_to_tensor(rate, dtype_hint=x.dtype)
        if rate.ndim != 0:
            raise InvalidArgumentError(f"dropout: rate must be a scalar, got shape "
                                       f"{tuple(rate.shape)}")
        rate = cast(rate, x.dtype) if rate.dtype != x.dtype else rate
        kept = x / (1.0 - rate)
    if noise_shape is None and open_sized(x):   # the batch size read in the graph
        keep = greater_equal(uniform_like(x, dtype=x.dtype, seed=seed), rate)
    else:
        keep = greater_equal(uniform(shape, dtype=x.dtype, seed=seed), rate)
    return where(keep, kept, zeros_like(kept))


from .creation import zeros_like  # noqa: E402
from .elementwise import cast, square  # noqa: E402
from .predicates import greater_equal, where  # noqa: E402
from .open_sizes import open_sized  # noqa: E402
from .random import uniform, uniform_like  # noqa: E402
from .reduce import reduce_mean  # noqa: E402
from .shape import STOP_GRADIENT as _STOP_GRADIENT, squeeze  # noqa: E402


def stop_gradient(x):
    return _STOP_GRADIENT(x)
