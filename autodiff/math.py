"""The ``ad.math`` namespace: elementwise math and reductions (as ``tf.math``)."""

from .ops.elementwise import *  # noqa: F401,F403
from .ops.predicates import *  # noqa: F401,F403
from .ops.reduce import *  # noqa: F401,F403
from .ops.clip import *  # noqa: F401,F403
from .ops.math_extra import *  # noqa: F401,F403
from .ops.special import (divide_no_nan, erfc, is_finite, is_inf, is_nan,  # noqa: F401
                          log_sigmoid, multiply_no_nan, softsign, xdivy, xlogy)
from .ops.trigonometry import *  # noqa: F401,F403
from .ops.compositions import l2_normalize, reduce_all, reduce_any  # noqa: F401
from .ops.nn import log_softmax  # noqa: F401
from .ops.sorting import top_k  # noqa: F401
from .ops.gather_dynamic import segment_sum, unsorted_segment_sum  # noqa: F401

__all__ = sorted(name for name in dir() if not name.startswith("_"))
