"""autodiff: TensorFlow's GradientTape, rebuilt small enough to read.

``import autodiff as ad`` and TensorFlow's autodiff guides run with ``tf.``
replaced by ``ad.``:

    >>> import autodiff as ad
    >>> x = ad.Variable(3.0)
    >>> with ad.GradientTape() as tape:
    ...     y = x ** 2
    >>> print(tape.gradient(y, x))
    ad.Tensor(6.0, shape=(), dtype=float32)

A reader's map, in reading order. The engine, at the front:

    tape.py              recording ops, and ``gradient``: start here
    backward.py          the reverse sweep over the records
    registry.py          how an op and its derivative rules are declared
    ops/                 the ops, one file per family (``ops/elementwise.py`` first)
    tensor.py, variable.py, dtypes.py, records.py   values, and what a tape stores
    tensor_shape.py, traced_reads.py   shapes; what a traced tensor refuses
    variable_slice.py    ``v[0].assign(5.0)``: a slice of a Variable that assigns
    forward.py           forward mode (``ad.autodiff.ForwardAccumulator``)
    jacobian.py          many cotangents in one backward pass
    functional.py        ``grad``, ``jacobian``, ``hessian``, ``hvp`` as functions
    custom_gradient.py, user_ops.py   your own gradients, your own ops
    recompute.py         ``recompute_grad``: keep less on the tape, run f again
    memory.py            what a tape keeps (``ad.debugging.tape_memory``)
    vectorized_map.py    ``vectorized_map``: fn per example, results stacked
    testing.py           gradients checked against finite differences
    backend.py           the only file that knows NumPy from CuPy

Subsystems built on the engine (the engine imports none of them):

    tracing/             ``ad.function``: trace once per signature, replay the graph
    control_flow/        ``ad.cond``, ``ad.while_loop``, ``ad.scan`` ...: one graph node each;
                         ``ad.TensorArray``, what loops fill and stack
    autograph/           a Python ``if``/``while``/``for`` on a tensor made into control flow
    compiler/            ``jit_compile=True``: a trace written out as a Python program
    saved_model/         ``ad.saved_model``: save and load traced functions, no pickle
    models/              ``ad.Module`` and ``ad.keras``: layers, models, losses, optimizers

The one tie that runs both ways is between the tape and the ops: an op
records itself on the tape, and the tape's backward pass calls the ops'
VJP rules (which are ops). The modules involved import ``ops`` at their
bottom, each with a comment saying so.
"""

import sys as _sys
import types as _types

from . import debugging, errors, linalg, math, nest, nn, random, testing
from .backend import get_backend, set_backend, use_backend
from .dtypes import (DType, as_dtype, bool, complex64, complex128, float16, float32,  # noqa: A004
                     float64, int8, int16, int32, int64, uint8)
from .functional import gradients, gradients_function
from .ops import *  # noqa: F403
from .ops import convert_to_tensor
from .registry import NotDifferentiable, Primitive
from .records import BackwardStep, BackwardTrace, TapeRecord
from .tape import AutodiffWarning, GradientTape, UnconnectedGradients
from .tensor import Tensor, TensorShape, Variable, constant
from .indexed_slices import IndexedSlices
from .ops.elementwise import abs, pow, round  # noqa: A004  (shadow builtins, as tf does)
from .ops.creation import range  # noqa: A004
from .ops.shape import shape  # the function; ops.shape is also a module
from .ops.math_extra import add_n, reverse  # top level in tf too
from .ops.printing import print_v2 as print  # noqa: A001  (tf.print)
from .ops.trigonometry import *  # noqa: F403  (tf.asin ... tf.atan2 are top level too)
from .ops.losses import one_hot
from . import autodiff, functional  # ad.autodiff.ForwardAccumulator, as tf.autodiff
from .custom_gradient import custom_gradient
from .recompute import recompute_grad
from .vectorized_map import vectorized_map
from .name_scope import name_scope
from .user_ops import RegisterGradient, no_gradient, primitive

from .tracing import TensorSpec
from .tracing.function import function
from .control_flow import TensorArray, cond, foldl, foldr, map_fn, scan, switch_case, while_loop
from . import autograph
from .models import Module, keras, layers, optimizers
from .models.keras import losses, metrics   # ad.losses, ad.metrics: as tf.losses, tf.metrics
from . import saved_model

# ``import autodiff.layers`` and ``from autodiff.keras.optimizers import Adam`` name
# the same modules as ``ad.layers`` and ``ad.keras.optimizers``.
for _path, _module in {"layers": layers, "optimizers": optimizers, "keras": keras,
                       "keras.layers": layers, "keras.optimizers": optimizers,
                       "keras.losses": losses, "losses": losses, "keras.metrics": metrics,
                       "metrics": metrics}.items():
    _sys.modules[f"{__name__}.{_path}"] = _module


def stop_gradient(input, name=None):  # noqa: A002
    """Returns ``input`` unchanged, but no gradient flows back through it.

    >>> x, y = ad.Variable(3.0), ad.Variable(4.0)
    >>> with ad.GradientTape() as t:
    ...     z = x ** 2 + ad.stop_gradient(y ** 2)
    >>> dx, dy = t.gradient(z, [x, y])
    >>> float(dx), dy                  # no path back to y
    (6.0, None)
    """
    return ops.shape.STOP_GRADIENT(input)


__version__ = "0.1.0"

# The public names: every function, class and dtype above, and the public
# namespaces; not the engine's modules (``ad.tape``, ``ad.backward``, ...),
# which stay importable for readers of the source.
_NAMESPACES = ("autodiff", "autograph", "debugging", "errors", "functional", "layers", "linalg", "math", "nest", "nn",
               "optimizers", "random", "saved_model", "testing", "keras", "losses",
               "metrics")
__all__ = sorted([name for name, value in globals().items()
                  if not name.startswith("_") and not isinstance(value, _types.ModuleType)]
                 + list(_NAMESPACES))


def __dir__():
    return __all__
