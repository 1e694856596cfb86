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

    ``attention_axes`` (an int or a tuple, as Keras): the axes of ``[B, T..., dim]``
    inputs that attention runs over (default: every axis between the batch and
    the features); the other axes are batch axes, and the softmax normalizes over
    all the attention axes together. The scores come back as Keras', shaped
    ``[B, other axes..., N, T..., S...]``.

    Raises:
        NotImplementedError: a mask together with inputs of rank above 3 or
            ``attention_axes`` other than the sequence axis.
    """

    _ad_config = ("num_heads", "key_dim", "value_dim", "dropout", "use_bias", "output_shape",
                  "attention_axes", "kernel_initializer", "bias_initializer")

    def __init__(self, num_heads, key_dim, value_dim=None, dropout=0.0, use_bias=True,
                 output_shape=None, attention_axes=None, kernel_initializer="glorot_uniform",
                 bias_initializer="zeros", seed=None, flash_attention=None, **kwargs):
        super().__init__(**kwargs)
        if isinstance(attention_axes, int):
            attention_axes = (attention_axes,)
        elif attention_axes is not None and not isinstance(attention_axes, (list, tuple)):
            raise ValueError(f"`attention_axes` must be an int, list, or tuple.Received: "
                             f"attention_axes={attention_axes}")
        self.attention_axes = None if attention_axes is None else tuple(attention_axes)
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
        # as Keras 3, building fixes the axes (None: all between batch and features)
        self.attention_axes = self._axes(len(query_shape) + 1)[1]
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
        q = self.query_dense(query)                              # [B, T..., N, H]
        lead, attn, order = self._axes(len(q.shape))
        q, t_shape = _heads_first(q * (1.0 / math.sqrt(float(self.key_dim))), order, lead)
        k, s_shape = _heads_first(self.key_dense(key), order, lead)      # [b..., N, S, H]
        v, _ = _heads_first(self.value_dense(value), order, lead)        # [b..., N, S, Hv]
        logits = matmul(q, k, transpose_b=True)                  # [b..., N, T, S]
        masks = (query_mask, value_mask, key_mask, attention_mask)
        if use_causal_mask or any(m is not None for m in masks):
            if lead != 2 or len(attn) != 1:
                raise NotImplementedError(
                    f"MultiHeadAttention: masks with attention_axes={self.attention_axes!r} on "
                    f"inputs of rank {len(q.shape) - 1 + len(attn)} are not implemented (only "
                    f"over one sequence axis of [batch, seq, dim] inputs)")
            mask = _attention_mask(q.shape[2], k.shape[2], query_mask, value_mask, key_mask,
                                   attention_mask, use_causal_mask)
            logits = where(expand_dims(mask, 1), logits, logits * 0.0 - 1e9)
        scores = activations.softmax(logits, axis=-1)            # over all attention axes
        attended = dropout(scores, self.dropout, seed=self.seed) \
            if training and self.dropout > 0 else scores
        heads = reshape(matmul(attended, v), tuple(q.shape[:lead]) + t_shape + (v.shape[-1],))
        heads = transpose(heads, [order.index(i) for i in range(len(order))])   # [B, T..., N, Hv]
        output = self.output_dense(heads)
        if not return_attention_scores:
            return output
        return output, reshape(scores, tuple(q.shape[:lead]) + t_shape + s_shape)

    def _axes(self, rank):
        """For projections of ``rank`` (``[B, T..., N, H]``): how many axes lead (the batch
        axes and the heads), the attention axes, and the order that puts them
        ``[batch..., N, attention..., H]`` (Keras 3's einsum equations)."""
        if self.attention_axes is None:
            attn = tuple(range(1, rank - 2))
        else:
            attn = tuple(a if a >= 0 else (rank - 1) + a for a in self.attention_axes)
        if any(not 0 < a < rank - 2 for a in attn) or len(set(attn)) != len(attn):
            raise ValueError(f"MultiHeadAttention: attention_axes={self.attention_axes!r} must "
                             f"name distinct axes between the batch axis and the features of "
                             f"inputs of rank {rank - 1}")
        lead = [i for i in range(rank - 1) if i not in attn]     # the heads' axis is last
        return len(lead), attn, lead + list(attn) + [rank - 1]


def _heads_first(x, order, lead):
    """``x`` put in ``order`` with its attention axes flattened into one: ``[b..., N, T, H]``,
    and the attention axes' sizes."""
    x = transpose(x, order)
    shape = tuple(x.shape)
    return reshape(x, shape[:lead] + (math.prod(shape[lead:-1]), shape[-1])), shape[lead:-1]


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
