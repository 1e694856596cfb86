"""The recurrent cells: SimpleRNNCell, GRUCell, LSTMCell, each one time step of Keras 3's equations.

A cell computes ``output, new_states = cell(x_t, states)``; ``recurrent.py``
runs one over time. Variables follow Keras (``kernel``, ``recurrent_kernel``,
``bias``, in that order), and so do the gate orders (GRU: z, r, h; LSTM: i,
f, c, o), so weights copied from a Keras cell give the same outputs.
"""

import functools

from ...ops import creation, elementwise, open_sizes
from ...ops.join import concat, split, unstack
from ...ops.matmul import matmul
from ...ops.recurrent import gru_gates, lstm_gates
from ...ops.shape import broadcast_to, reshape
from ...tensor import Variable
from .. import initializers
from .base import Layer, get_activation

__all__ = ["SimpleRNNCell", "GRUCell", "LSTMCell"]


def _linear(x):
    return x


# tanh and sigmoid as a cell may hold them: from a Keras name, or the ops themselves
_TANH = (get_activation("tanh"), elementwise.tanh)
_SIGMOID = (get_activation("sigmoid"), elementwise.sigmoid)


def _as_list(states):
    return list(states) if isinstance(states, (list, tuple)) else [states]


def _checked_units(who, units, dropout, recurrent_dropout):
    if isinstance(units, bool) or not hasattr(units, "__index__") or int(units) <= 0:
        raise ValueError(f"{who}: units must be a positive int (the size of the output and of "
                         f"each state), not {units!r}")
    if dropout or recurrent_dropout:
        raise NotImplementedError(
            f"{who}: dropout={dropout!r}, recurrent_dropout={recurrent_dropout!r}: dropout "
            f"inside recurrent layers is not implemented in this library; pass 0.0 (the default)")
    return int(units)


def _projected(cell, inputs, bias):
    """``inputs @ cell.kernel (+ bias)`` for all steps of ``[batch, time, features]`` inputs
    as one matmul: a list with one ``[batch, gates * units]`` tensor per step."""
    batch, steps, features = inputs.shape
    if features != cell.kernel.shape[0]:
        cell._check_step(inputs[:, 0])
    open_batch = open_sizes.open_sized(inputs) and steps * features * cell.kernel.shape[1] > 0
    z = matmul(reshape(inputs, (-1 if open_batch else batch * steps, features)), cell.kernel)
    if bias is not None:
        z = z + bias
    return unstack(reshape(z, (-1 if open_batch else batch, steps, cell.kernel.shape[1])), axis=1)


class _Cell(Layer):
    """What the three cells share: checks, states of ``units`` each, Keras' variable paths."""

    def __init__(self, units, activation, use_bias, kernel_initializer, recurrent_initializer,
                 bias_initializer, dropout, recurrent_dropout, seed, name, dtype):
        units = _checked_units(type(self).__name__, units, dropout, recurrent_dropout)
        super().__init__(name=name, dtype=dtype)
        self.units = units
        self.activation = get_activation(activation) or _linear   # Keras: None means linear
        self.use_bias = bool(use_bias)
        self.kernel_initializer = kernel_initializer
        self.recurrent_initializer = recurrent_initializer
        self.bias_initializer = bias_initializer
        self.dropout, self.recurrent_dropout, self.seed = dropout, recurrent_dropout, seed
        self.kernel = self.recurrent_kernel = self.bias = None
        self._ad_owner = None   # the RNN layer's name once one builds this cell
        self._ad_fuse = True    # False: never the fused gates (the layer's use_cudnn=False)

    @property
    def state_size(self):
        return self.units

    @property
    def output_size(self):
        return self.units

    def get_initial_state(self, batch_size=None):
        """Zero states, one ``(batch_size, units)`` tensor per entry of ``state_size``."""
        sizes = self.state_size if isinstance(self.state_size, list) else [self.state_size]
        return [creation.zeros((batch_size, size), dtype=self.dtype) for size in sizes]

    def _build_kernels(self, input_shape, gates):
        if len(input_shape) != 2 or input_shape[-1] is None:
            raise ValueError(f"{type(self).__name__} {self.name!r}: its input must have rank 2 "
                             f"[batch, features], got shape {tuple(input_shape)}")
        width = gates * self.units
        self.kernel = self.add_weight(name="kernel", shape=(input_shape[-1], width), initializer=self.kernel_initializer)
        self.recurrent_kernel = self.add_weight(name="recurrent_kernel", shape=(self.units, width),
                                                initializer=self.recurrent_initializer)

    def _check_step(self, inputs):
        if inputs.ndim != 2 or inputs.shape[-1] != self.kernel.shape[0]:
            raise ValueError(f"{type(self).__name__} {self.name!r}: it was built for inputs "
                             f"[batch, {self.kernel.shape[0]}], but this input has shape "
                             f"{tuple(inputs.shape)}")


class SimpleRNNCell(_Cell):
    """One step of a fully connected RNN:
    ``h = activation(x @ kernel + bias + h_prev @ recurrent_kernel)``; output and state are ``h``.

    Args:
        units: size of the output and of the state.
        activation: a callable, a name or None (linear); default ``'tanh'``.
        use_bias: whether to add ``bias`` (shape ``(units,)``).
        kernel_initializer, recurrent_initializer, bias_initializer: names
            (``'orthogonal'`` too) or functions ``(shape, dtype) -> tensor``.
        dropout, recurrent_dropout, seed: accepted for Keras' signature; only 0 works.

    ``states`` is a tensor or a list of one; the new state comes back the same way.

    >>> cell = ad.layers.SimpleRNNCell(3)
    >>> h, [state] = cell(ad.ones([2, 4]), [ad.zeros([2, 3])])
    >>> h.shape, cell.recurrent_kernel.shape
    (TensorShape([2, 3]), TensorShape([3, 3]))
    """

    def __init__(self, units, activation="tanh", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", dropout=0.0, recurrent_dropout=0.0, seed=None,
                 name=None, dtype=None):
        super().__init__(units, activation, use_bias, kernel_initializer, recurrent_initializer,
                         bias_initializer, dropout, recurrent_dropout, seed, name, dtype)

    def build(self, input_shape):
        self._build_kernels(input_shape, 1)
        if self.use_bias:
            self.bias = self.add_weight(name="bias", shape=(self.units,), initializer=self.bias_initializer)

    def call(self, inputs, states, training=False):
        self._check_step(inputs)
        nested = isinstance(states, (list, tuple))
        h_prev = states[0] if nested else states
        h = matmul(inputs, self.kernel)
        if self.use_bias:
            h = h + self.bias
        output = self.activation(h + matmul(h_prev, self.recurrent_kernel))
        return output, ([output] if nested else output)


class GRUCell(_Cell):
    """One step of a gated recurrent unit (Cho et al. 2014), as Keras 3 computes it.

    With ``reset_after=True`` (the default, cuDNN's convention) the inputs and
    the state have separate biases, ``bias`` of shape ``(2, 3 * units)``:

        x_z, x_r, x_h = split(x @ kernel + bias[0])
        r_z, r_r, r_h = split(h_prev @ recurrent_kernel + bias[1])
        z = recurrent_activation(x_z + r_z)
        r = recurrent_activation(x_r + r_r)
        hh = activation(x_h + r * r_h)
        h = z * h_prev + (1 - z) * hh

    With ``reset_after=False`` the reset gate multiplies the state before its
    product, ``hh = activation(x_h + (r * h_prev) @ recurrent_kernel[:, 2u:])``,
    and there is one bias of shape ``(3 * units,)``, on the inputs only.

    With the default activations (tanh, sigmoid) and ``reset_after=True`` the
    gates are one ``GRUGates`` op, whose gradient is one ``GRUGatesGrad`` op
    (``ops/recurrent.py``), and a ``GRU`` layer multiplies every step's input
    by ``kernel`` in one matmul before the loop (``_project_inputs``), as
    Keras' cuDNN path does. Otherwise the gates run op by op, each on the tape.

    Args:
        units: size of the output and of the state.
        activation, recurrent_activation: callables, names or None (linear);
            default ``'tanh'`` and ``'sigmoid'``.
        use_bias, kernel_initializer, recurrent_initializer, bias_initializer,
            dropout, recurrent_dropout, seed: as ``SimpleRNNCell``.
        reset_after: which convention (above).

    >>> cell = ad.layers.GRUCell(3)
    >>> h, _ = cell(ad.ones([2, 4]), ad.zeros([2, 3]))
    >>> h.shape, cell.kernel.shape, cell.bias.shape
    (TensorShape([2, 3]), TensorShape([4, 9]), TensorShape([2, 9]))
    """

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", dropout=0.0, recurrent_dropout=0.0, reset_after=True,
                 seed=None, name=None, dtype=None):
        super().__init__(units, activation, use_bias, kernel_initializer, recurrent_initializer,
                         bias_initializer, dropout, recurrent_dropout, seed, name, dtype)
        self.recurrent_activation = get_activation(recurrent_activation) or _linear
        self.reset_after = bool(reset_after)

    def build(self, input_shape):
        self._build_kernels(input_shape, 3)
        if self.use_bias:
            shape = (2, 3 * self.units) if self.reset_after else (3 * self.units,)
            self.bias = self.add_weight(name="bias", shape=shape, initializer=self.bias_initializer)

    @property
    def _fused(self):
        """Keras' default activations and reset_after=True: the gates are one GRUGates op."""
        return (self._ad_fuse and self.reset_after and self.activation in _TANH
                and self.recurrent_activation in _SIGMOID)

    @Layer.with_name_scope
    def _project_inputs(self, inputs):
        """``(steps, step)``: ``x_t @ kernel + bias[0]`` for every step of ``[batch, time,
        features]`` inputs as one matmul, and the function that runs one step from it
        (``step(x_proj_t, states) -> (h, [h])``); None when the gates are not fused."""
        if not self._fused:
            return None
        bias = unstack(self.bias, axis=0) if self.use_bias else (None, None)
        state_bias = bias[1]
        if state_bias is not None:   # [batch, 3 units] once: each step's add then broadcasts
            # nothing, so its gradient passes straight through, and one sum after the loop
            # (BroadcastTo's) takes the batch axis away instead of one a step
            batch = open_sizes.dims(inputs)[0] if open_sizes.open_sized(inputs) else \
                inputs.shape[0]   # the batch size read in the graph in a trace serving any
            state_bias = broadcast_to(state_bias, (batch, 3 * self.units))
        return (_projected(self, inputs, bias[0]),
                functools.partial(self._projected_step, state_bias=state_bias))

    @Layer.with_name_scope
    def _projected_step(self, x_proj, states, state_bias=None):
        """One step from its projected input ``x_proj`` (``_project_inputs``): ``(h, [h])``."""
        h_prev = states[0]
        h_proj = matmul(h_prev, self.recurrent_kernel)
        if state_bias is not None:
            h_proj = h_proj + state_bias
        h = gru_gates(x_proj, h_proj, h_prev)
        return h, [h]

    def call(self, inputs, states, training=False):
        self._check_step(inputs)
        nested = isinstance(states, (list, tuple))
        h_prev = states[0] if nested else states
        u = self.units
        if self._fused:
            matrix_x = matmul(inputs, self.kernel)
            matrix_inner = matmul(h_prev, self.recurrent_kernel)
            if self.use_bias:
                matrix_x, matrix_inner = matrix_x + self.bias[0], matrix_inner + self.bias[1]
            h = gru_gates(matrix_x, matrix_inner, h_prev)
            return h, ([h] if nested else h)
        matrix_x = matmul(inputs, self.kernel)
        if self.use_bias:
            matrix_x = matrix_x + (self.bias[0] if self.reset_after else self.bias)
        x_z, x_r, x_h = split(matrix_x, 3, axis=-1)
        if self.reset_after:
            matrix_inner = matmul(h_prev, self.recurrent_kernel)
            if self.use_bias:
                matrix_inner = matrix_inner + self.bias[1]
        else:   # the candidate's product has to wait for r
            matrix_inner = matmul(h_prev, self.recurrent_kernel[:, :2 * u])
        z = self.recurrent_activation(x_z + matrix_inner[:, :u])
        r = self.recurrent_activation(x_r + matrix_inner[:, u:2 * u])
        if self.reset_after:
            recurrent_h = r * matrix_inner[:, 2 * u:]
        else:
            recurrent_h = matmul(r * h_prev, self.recurrent_kernel[:, 2 * u:])
        hh = self.activation(x_h + recurrent_h)
        h = z * h_prev + (1 - z) * hh
        return h, ([h] if nested else h)


class LSTMCell(_Cell):
    """One step of a long short-term memory (Hochreiter and Schmidhuber 1997), as Keras 3.

        i, f, c_in, o = split(x @ kernel + h_prev @ recurrent_kernel + bias)
        c = sig(f) * c_prev + sig(i) * activation(c_in)
        h = sig(o) * activation(c)

    where ``sig`` is ``recurrent_activation``. The states are ``[h, c]``.

    With Keras' default activations (tanh, sigmoid) the last two lines run as
    one ``LSTMGates`` op, whose gradient is one ``LSTMGatesGrad`` op
    (``ops/recurrent.py``), as TensorFlow's ``LSTMBlockCell`` fuses them; an
    ``LSTM`` layer then also multiplies every step's input by ``kernel`` in one
    matmul before the loop (``_project_inputs``), as Keras' cuDNN path does.
    Other activations run op by op, each gate visible on the tape.

    Args:
        units: size of the output and of each state.
        activation, recurrent_activation: as ``GRUCell``.
        unit_forget_bias: start the forget gate's slice of ``bias`` at ones
            (and the rest with ``bias_initializer``), as Jozefowicz et al. 2015
            advise.
        use_bias, kernel_initializer, recurrent_initializer, bias_initializer,
            dropout, recurrent_dropout, seed: as ``SimpleRNNCell``.

    >>> cell = ad.layers.LSTMCell(3)
    >>> h, [h, c] = cell(ad.ones([2, 4]), [ad.zeros([2, 3]), ad.zeros([2, 3])])
    >>> cell.bias.numpy()[3:6]
    array([1., 1., 1.], dtype=float32)
    """

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", unit_forget_bias=True, dropout=0.0,
                 recurrent_dropout=0.0, seed=None, name=None, dtype=None):
        super().__init__(units, activation, use_bias, kernel_initializer, recurrent_initializer,
                         bias_initializer, dropout, recurrent_dropout, seed, name, dtype)
        self.recurrent_activation = get_activation(recurrent_activation) or _linear
        self.unit_forget_bias = bool(unit_forget_bias)

    @property
    def state_size(self):
        return [self.units, self.units]

    def build(self, input_shape):
        self._build_kernels(input_shape, 4)
        if self.use_bias:
            init, u = initializers.get(self.bias_initializer), self.units
            if self.unit_forget_bias:
                def bias_init(shape, dtype):   # Keras' order: i, f, c, o; f starts at one
                    return concat([init((u,), dtype), creation.ones((u,), dtype=dtype),
                                   init((2 * u,), dtype)], axis=0)
            else:
                bias_init = init
            self.bias = self.add_weight(name="bias", shape=(4 * u,), initializer=bias_init)

    @property
    def _fused(self):
        """Keras' default activations: the gates are one LSTMGates op."""
        return (self._ad_fuse and self.activation in _TANH
                and self.recurrent_activation in _SIGMOID)

    @Layer.with_name_scope
    def _project_inputs(self, inputs):
        """``(steps, step)``: ``x_t @ kernel + bias`` for every step of ``[batch, time,
        features]`` inputs as one matmul, and ``_projected_step``; None when the gates are
        not fused (each step then runs ``call``)."""
        if not self._fused:
            return None
        return _projected(self, inputs, self.bias if self.use_bias else None), \
            self._projected_step

    @Layer.with_name_scope
    def _projected_step(self, z_x, states):
        """One step from its projected input ``z_x`` (``_project_inputs``): ``(h, [h, c])``."""
        h, c = lstm_gates(z_x + matmul(states[0], self.recurrent_kernel), states[1])
        return h, [h, c]

    def call(self, inputs, states, training=False):
        self._check_step(inputs)
        h_prev, c_prev = states[0], states[1]
        z = matmul(inputs, self.kernel)
        z = z + matmul(h_prev, self.recurrent_kernel)
        if self.use_bias:
            z = z + self.bias
        if self._fused:
            h, c = lstm_gates(z, c_prev)
            return h, [h, c]
        z_i, z_f, z_c, z_o = split(z, 4, axis=1)
        c = self.recurrent_activation(z_f) * c_prev + \
            self.recurrent_activation(z_i) * self.activation(z_c)
        h = self.recurrent_activation(z_o) * self.activation(c)
        return h, [h, c]
