"""All ops, one module per family; this package re-exports their public functions.

Each family module declares its Primitives (op type, forward, VJP rules)
next to the public functions that call them, and lists the public
functions in ``__all__``. Importing this package fills
``autodiff.registry.REGISTRY`` with every op type.
"""

from ..tensor import convert_to_tensor  # noqa: F401
from . import (clip, creation, einsum, elementwise, grad_kernels, join, linalg, matmul,  # noqa: F401
               nn, predicates, random, reduce, shape, slicing, transfer)
from . import conv, conv_forms, losses, nn_compositions, pooling  # noqa: F401,E402  (ad.nn's rest)
from . import math_extra, special, trigonometry  # noqa: F401,E402  (ad.math's rest)
from . import gather_dynamic, gathering, rearrange, resource_gather, sorting  # noqa: F401,E402
from . import debugging  # noqa: F401,E402  (ad.debugging)
from . import printing  # noqa: F401,E402  (ad.print)
from . import recurrent  # noqa: F401,E402  (LSTMCell's fused gates)
from .compositions import *  # noqa: F401,F403,E402
from .rearrange import *  # noqa: F401,F403,E402
from .sorting import *  # noqa: F401,F403,E402
from .gathering import *  # noqa: F401,F403,E402
from .clip import *  # noqa: F401,F403
from .creation import *  # noqa: F401,F403
from .einsum import *  # noqa: F401,F403
from .elementwise import *  # noqa: F401,F403
from .join import *  # noqa: F401,F403
from .matmul import *  # noqa: F401,F403
from .predicates import *  # noqa: F401,F403
from .reduce import *  # noqa: F401,F403
from .shape import *  # noqa: F401,F403
from .slicing import *  # noqa: F401,F403
from .transfer import *  # noqa: F401,F403
from .nn import relu  # noqa: F401  (the tape's tests use it; ad.nn has the rest)

# The built-in ops' rules are written for reals; one wrapper gives them
# TensorFlow's complex convention (registry.conjugating_vjp says how).
from ..registry import REGISTRY as _REGISTRY, conjugating_vjp as _conjugating_vjp  # noqa: E402

for _primitive in list(_REGISTRY.values()):
    _primitive.vjp = _conjugating_vjp(_primitive)

# `from autodiff.ops import *` exports the families' public functions, never
# the family modules themselves (ad.nn must stay the ad.nn namespace).
import sys as _sys  # noqa: E402

__all__ = ["convert_to_tensor", "relu"] + [
    name for family in ("clip", "creation", "einsum", "elementwise", "join", "matmul",
                        "predicates", "reduce", "shape", "slicing", "transfer", "compositions", "rearrange", "sorting",
                        "gathering")
    for name in _sys.modules[f"{__name__}.{family}"].__all__]
