"""The ``ad.linalg`` namespace: matrix functions (as ``tf.linalg``)."""

from .ops.creation import eye  # noqa: F401
from .ops.linalg import *  # noqa: F401,F403
from .ops.matmul import matmul  # noqa: F401
from .ops.shape import matrix_transpose  # noqa: F401
from .ops.compositions import adjoint, global_norm, l2_normalize, matvec, tensordot  # noqa: F401

__all__ = sorted(name for name in dir() if not name.startswith("_"))
