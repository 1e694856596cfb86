"""The ``ad.nn`` namespace: activations, losses, convolution and pooling (as ``tf.nn``)."""

from .ops.elementwise import sigmoid, softplus, tanh  # noqa: F401
from .ops.nn import *  # noqa: F401,F403
from .ops.losses import (sigmoid_cross_entropy_with_logits,  # noqa: F401
                         softmax_cross_entropy_with_logits,
                         sparse_softmax_cross_entropy_with_logits)
from .ops.nn_compositions import dropout, moments  # noqa: F401
from .ops.conv import conv1d, conv2d  # noqa: F401
from .ops.pooling import avg_pool2d, max_pool2d  # noqa: F401
from .ops.conv_forms import (avg_pool, avg_pool1d, convolution, max_pool,  # noqa: F401
                              max_pool1d, pool)
from .ops.special import softsign  # noqa: F401  (also ad.math.softsign, as in tf)
from .ops.compositions import bias_add, l2_normalize  # noqa: F401
from .ops.sorting import top_k  # noqa: F401

__all__ = sorted(name for name in dir() if not name.startswith("_"))
