"""MultiHeadAttention, as Keras 3's: four projections, scaled dot products, a softmax.

For a query ``[B, T, dim]`` and a value ``[B, S, dim_v]`` (the key defaults
to the value), with ``N`` heads of size ``H = key_dim``:

    q = query @ Wq + bq          [B, T, N, H]     (Wq: [dim, N, H], Keras' EinsumDense)
    k = key @ Wk + bk            [B, S, N, H]
    v = value @ Wv + bv          [B, S, N, Hv]
    scores = softmax(q k^T / sqrt(H))  per head, [B, N, T, S]; masked positions get -1e9
    out = (scores v) @ Wo + bo   [B, T, dim]      (Wo: [N, Hv, dim])

The weights are Keras': ``query/kernel``, ``query/bias``, ``key/...``,
``value/...``, ``attention_output/...`` in that order, with Keras' shapes,
so Keras' weights copy over with ``set_weights``. Written with matmul and
transpose, so a tape differentiates it like any other code.

    >>> mha = ad.keras.layers.MultiHeadAttention(num_heads=2, key_dim=4)
    >>> x = ad.ones([3, 5, 8])
    >>> mha(x, x).shape
    TensorShape([3, 5, 8])
"""

import math

from ...ops import creation, elementwise
from ...ops.matmul import matmul
from ...ops.nn_compositions import dropout
from ...ops.predicates import where
from ...ops.shape import expand_dims, reshape, transpose
from ...tensor import convert_to_tensor
from .. import activations
from .base import Layer

__all__ = ["MultiHeadAttention"]


class _Projection(Layer):
    """Keras' EinsumDense as MultiHeadAttention uses it: the last axis to ``out_shape``."""

    def __init__(self, out_shape, bias_shape, kernel_initializer, bias_initializer, use_bias,
                 contract, name):
        super().__init__(name=name)
        self.out_shape, self.bias_shape, self.contract = tuple(out_shape), bias_shape, contract
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer
        self.use_bias = use_bias

    def build(self, input_shape):
        in_shape = tuple(input_shape[-self.contract:])
        self.kernel = self.add_weight(name="kernel", shape=in_shape + self.out_shape,
                                      initializer=self.kernel_initializer)
        self.bias = self.add_weight(name="bias", shape=self.bias_shape,
                                    initializer=self.bias_initializer) if self.use_bias else None

    def call(self, inputs):
        lead = tuple(inputs.shape[:-self.contract])
        size_in = math.prod(inputs.shape[-self.contract:])
        flat = matmul(reshape(inputs, (-1, size_in)),
                      reshape(self.kernel, (size_in, math.prod(self.out_shape))))
        out = reshape(flat, lead + self.out_shape)
        return out + self.bias if self.bias is not None else out


class MultiHeadAttention(Layer):
    """Multi-head attention (Vaswani et al.), Keras 3's layer.

    Args:
        num_heads: the number of heads ``N``.
        key_dim: the size of each head for the query and key.
        value_dim: the size of each head for the value (default ``key_dim``).
        dropout: dropout on the attention scores while training.
        use_bias: the projections have biases.
        output_shape: the last axis of the output (default the query's).
        kernel_initializer, bias_initializer: as ``Dense``.

    Call arguments: ``query``, ``value``, ``key`` (default the value),
    ``attention_mask`` (``[B, T, S]`` booleans, True where attending is
    allowed), ``query_mask`` / ``value_mask`` / ``key_mask`` (``[B, T]`` /
    ``[B, S]``), ``use_causal_mask``, ``return_attention_scores``, ``training``.

    Raises:
        NotImplementedError: ``attention_axes`` other than the default, naming it.
    """

    _ad_config = ("num_heads", "key_dim", "value_dim", "dropout", "use_bias", "output_shape",
                  "kernel_initializer", "bias_initializer")

    def __init__(self, num_heads, key_dim, value_dim=None, dropout=0.0, use_bias=True,
                 output_shape=None, attention_axes=None, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", seed=None, flash_attention=None, **kwargs):
        super().__init__(**kwargs)
        if attention_axes is not None:
            raise NotImplementedError(f"MultiHeadAttention: attention_axes={attention_axes!r} "
                                      f"is not implemented (attention over the sequence axis)")
        if flash_attention:
            raise NotImplementedError("MultiHeadAttention: flash_attention=True is not "
                                      "implemented")
        self.num_heads, self.key_dim = int(num_heads), int(key_dim)
        self.value_dim = int(value_dim) if value_dim else self.key_dim
        self.dropout, self.use_bias, self.seed = float(dropout), bool(use_bias), seed
        self.output_shape = output_shape
        self.kernel_initializer, self.bias_initializer = kernel_initializer, bias_initializer

    def _projection(self, out_shape, bias_shape, contract, name):
        return _Projection(out_shape, bias_shape, self.kernel_initializer, self.bias_initializer,
                           self.use_bias, contract, name)

    def build(self, query_shape, value_shape=None, key_shape=None):
        value_shape = query_shape if value_shape is None else value_shape
        key_shape = value_shape if key_shape is None else key_shape
        n, h, hv = self.num_heads, self.key_dim, self.value_dim
        self.query_dense = self._projection((n, h), (n, h), 1, "query")
        self.query_dense.build(query_shape)
        self.key_dense = self._projection((n, h), (n, h), 1, "key")
        self.key_dense.build(key_shape)
        self.value_dense = self._projection((n, hv), (n, hv), 1, "value")
        self.value_dense.build(value_shape)
        out = self.output_shape or query_shape[-1]
        out = (out,) if isinstance(out, int) else tuple(out)
        self.output_dense = self._projection(out, out, 2, "attention_output")
        self.output_dense.build(tuple(query_shape[:-1]) + (n, hv))
        for sub in (self.query_dense, self.key_dense, self.value_dense, self.output_dense):
            sub.built = True

    def __call__(self, query, value=None, key=None, **kwargs):
        if value is None:
            raise ValueError("MultiHeadAttention needs a `value` (call it as mha(query, value))")
        if not self.built and not _symbolic(query, value, key):
            query, value = convert_to_tensor(query), convert_to_tensor(value)
            key = None if key is None else convert_to_tensor(key)
            self.build(tuple(query.shape), tuple(value.shape),
                       None if key is None else tuple(key.shape))
            self.built = True
        return super().__call__(query, value, key, **kwargs)

    def call(self, query, value, key=None, query_mask=None, value_mask=None, key_mask=None,
             attention_mask=None, return_attention_scores=False, training=None,
             use_causal_mask=False):
        key = value if key is None else key
        q = transpose(self.query_dense(query), [0, 2, 1, 3])     # [B, N, T, H]
        k = transpose(self.key_dense(key), [0, 2, 1, 3])         # [B, N, S, H]
        v = transpose(self.value_dense(value), [0, 2, 1, 3])     # [B, N, S, Hv]
        q = q * (1.0 / math.sqrt(float(self.key_dim)))
        logits = matmul(q, k, transpose_b=True)                  # [B, N, T, S]
        mask = _attention_mask(q.shape[2], k.shape[2], query_mask, value_mask, key_mask,
                               attention_mask, use_causal_mask)
        if mask is not None:
            logits = where(expand_dims(mask, 1), logits, logits * 0.0 - 1e9)
        scores = activations.softmax(logits, axis=-1)
        attended = dropout(scores, self.dropout, seed=self.seed) \
            if training and self.dropout > 0 else scores
        heads = transpose(matmul(attended, v), [0, 2, 1, 3])    # [B, T, N, Hv]
        output = self.output_dense(heads)
        return (output, scores) if return_attention_scores else output


def _symbolic(*values):
    from ..functional.keras_tensor import KerasTensor
    return any(isinstance(v, KerasTensor) for v in values)


def _attention_mask(t, s, query_mask, value_mask, key_mask, attention_mask, causal):
    """Keras 3's merged mask ``[B, T, S]`` (or ``[1, T, S]``): every given mask ANDed."""
    mask = None

    def both(a, b):
        return b if a is None else elementwise.cast(elementwise.cast(a, "float32") *
                                                   elementwise.cast(b, "float32"), "bool")
    if query_mask is not None:
        mask = both(mask, expand_dims(convert_to_tensor(query_mask), -1))     # [B, T, 1]
    for m in (value_mask, key_mask):
        if m is not None:
            mask = both(mask, expand_dims(convert_to_tensor(m), -2))           # [B, 1, S]
    if causal:
        rows = reshape(creation.range(t), (t, 1))
        cols = reshape(creation.range(s), (1, s))
        mask = both(mask, expand_dims(rows >= cols, 0))                      # [1, T, S]
    if attention_mask is not None:
        mask = both(mask, convert_to_tensor(attention_mask))
    return mask
