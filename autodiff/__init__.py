"""autodiff: TensorFlow's GradientTape, rebuilt small enough to read.

``import autodiff as ad`` and TensorFlow's autodiff guides run with ``tf.``
replaced by ``ad.``:

    >>> import autodiff as ad
    >>> x = ad.Variable(3.0)
    >>> with ad.GradientTape() as tape:
    ...     y = x ** 2
    >>> print(tape.gradient(y, x))
    ad.Tensor(6.0, shape=(), dtype=float32)

Where to read: ``tape.py`` (reverse mode), ``registry.py`` (how an op and its
derivative are declared), ``ops/`` (the ops), ``tensor.py`` (values).
"""

from . import errors, linalg, math, nest, nn, random, testing  # noqa: F401
from .backend import get_backend, set_backend, use_backend  # noqa: F401
from .dtypes import (DType, as_dtype, bool, complex64, complex128, float16, float32,  # noqa: F401
                     float64, int8, int16, int32, int64, uint8)
from .functional import gradients, gradients_function  # noqa: F401
from .ops import *  # noqa: F401,F403
from .ops import convert_to_tensor  # noqa: F401
from .registry import NotDifferentiable, Primitive  # noqa: F401
from .records import BackwardStep, BackwardTrace, TapeRecord  # noqa: F401
from .tape import AutodiffWarning, GradientTape, UnconnectedGradients  # noqa: F401
from .tensor import Tensor, TensorShape, Variable, constant  # noqa: F401
from .ops.elementwise import abs, pow, round  # noqa: F401,A004  (shadow builtins, as tf does)
from .ops.creation import range  # noqa: F401,A004
from .ops.shape import shape  # noqa: F401  (the function; ops.shape is also a module)
from .ops.math_extra import add_n, reverse  # noqa: F401  (top level in tf too)
from .ops.trigonometry import *  # noqa: F401,F403  (tf.asin ... tf.atan2 are top level too)

# ---- forward mode and the functional API (forward.py, functional.py) ----
# ad.autodiff.ForwardAccumulator as in tf.autodiff; ad.functional: grad, jacobian, hessian, ...
from . import autodiff, forward, functional  # noqa: F401
# ---- end forward mode and the functional API ----

# ---- custom gradients and user-defined ops (custom_gradient.py, user_ops.py) ----
from .custom_gradient import custom_gradient  # noqa: F401,E402
from .user_ops import RegisterGradient, no_gradient, primitive  # noqa: F401,E402
# ---- end custom gradients and user-defined ops ----

# ---- modules, layers, traced functions, saved models (module.py, layers.py, function.py, ...) ----
from . import layers, saved_model  # noqa: F401,E402
from .function import TensorSpec, function  # noqa: F401,E402
from .module import Module  # noqa: F401,E402
from .name_scope import name_scope  # noqa: F401,E402
from .ops.losses import one_hot  # noqa: F401,E402
from . import optimizers  # noqa: F401,E402
# ---- end modules, layers, traced functions, saved models ----


def stop_gradient(input, name=None):  # noqa: A002
    """Returns ``input`` unchanged, but no gradient flows back through it.

    >>> with ad.GradientTape() as t:
    ...     z = x ** 2 + ad.stop_gradient(y ** 2)   # dz/dy is None
    """
    return ops.shape.STOP_GRADIENT(input)


__version__ = "0.1.0"
