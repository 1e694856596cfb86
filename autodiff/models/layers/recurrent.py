"""Recurrent layers: RNN, which runs a cell (SimpleRNNCell, GRUCell, LSTMCell) over
time; and SimpleRNN, GRU, LSTM, which are RNN around their cell. The cells live in
``recurrent_cells.py``; Keras' ``'orthogonal'`` initializer (the default for
recurrent kernels) in ``base.py``.

A *cell* computes one time step, ``output, new_states = cell(x_t, states)``.
``RNN`` calls it once per step of a ``[batch, time, features]`` input, in a
plain Python loop, so the whole sequence is ordinary ops: a tape
differentiates through time (backpropagation through time is the tape's
reverse walk and nothing more) and ``ad.function`` traces the unrolled loop.

Everything follows Keras 3, so weights copied from a Keras layer give the same
outputs: argument names and defaults, variable names and shapes (``kernel``,
``recurrent_kernel``, ``bias``, listed in that order), the gate order (GRU: z,
r, h; LSTM: i, f, c, o) and each cell's equations. Not here: dropout, stateful
layers and stacked cells (they raise NotImplementedError).
"""

from ...ops import creation, elementwise, open_sizes
from ...ops.join import stack, unstack
from ...ops.predicates import where
from ...ops.shape import expand_dims
from ...tensor import convert_to_tensor
from .base import Layer
from .recurrent_cells import GRUCell, LSTMCell, SimpleRNNCell, _as_list, _Cell, _checked_units

__all__ = ["RNN", "SimpleRNN", "GRU", "LSTM"]


class RNN(Layer):
    """Runs a cell over the time axis of ``[batch, time, features]`` inputs.

    Each step calls ``cell(x_t, states)`` with the states of the step before
    (zeros, or ``initial_state``, at the first), in a Python loop: the
    result is the unrolled graph, so a tape differentiates through every step.
    A cell with ``_project_inputs`` (``LSTMCell`` and ``GRUCell`` with their
    default activations) first multiplies every step's input by its kernel in
    one matmul, and each step then runs the step function it returns,
    ``step(z_x_t, states)``.

    Args:
        cell: a cell (``GRUCell(8)``, or any layer with ``call(inputs,
            states)`` and ``state_size``).
        return_sequences: return every step's output ``[batch, time, units]``
            instead of the last one's ``[batch, units]``.
        return_state: return ``(output, *final_states)``, a tuple as Keras.
        go_backwards: read the input from its last step to its first; the
            returned sequence is in that (reversed) order too, as in Keras.
        stateful, unroll, zero_output_for_mask: Keras' arguments. Only
            ``stateful=False`` works; ``unroll`` changes nothing (the loop is
            always unrolled here). With a ``mask`` (``[batch, time]`` booleans, or
            an ``Embedding(mask_zero=True)`` before it in a model), a masked step
            keeps the states and repeats the last output (zeros with
            ``zero_output_for_mask=True``), as Keras.

    Call arguments: ``inputs``; ``initial_state``, a tensor or a list of one
    per state (each ``[batch, size]``); ``training`` (passed to the cell).

    >>> layer = ad.layers.RNN(ad.layers.GRUCell(3), return_sequences=True)
    >>> layer(ad.ones([2, 5, 4])).shape, [v.shape for v in layer.trainable_variables]
    (TensorShape([2, 5, 3]), [TensorShape([4, 9]), TensorShape([3, 9]), TensorShape([2, 9])])
    """

    def __init__(self, cell, return_sequences=False, return_state=False, go_backwards=False,
                 stateful=False, unroll=False, zero_output_for_mask=False, name=None, dtype=None,
                 **kwargs):
        who = type(self).__name__
        if isinstance(cell, (list, tuple)):
            raise NotImplementedError(f"{who}: a list of cells (Keras' StackedRNNCells) is not "
                                      f"implemented; stack {who} layers instead")
        if not callable(getattr(cell, "call", None)) or getattr(cell, "state_size", None) is None:
            raise ValueError(f"{who}: the cell needs a `call(inputs, states)` method and a "
                             f"`state_size` (an int, or a list with one per state); got {cell!r}")
        if stateful:
            raise NotImplementedError(f"{who}: stateful=True is not implemented; carry the "
                                      f"states yourself with return_state and initial_state")
        super().__init__(name=name, dtype=dtype, **kwargs)
        self.cell = cell    # an attribute, so trainable_variables walks into the cell's
        self.return_sequences = bool(return_sequences)
        self.return_state = bool(return_state)
        self.go_backwards = bool(go_backwards)
        self.stateful = False
        self.unroll = bool(unroll)
        self.zero_output_for_mask = bool(zero_output_for_mask)
        size = cell.state_size
        self.state_size = [size] if isinstance(size, int) else list(size)

    def compute_mask(self, inputs, mask=None):
        """The mask goes on with the sequence (``return_sequences``), as Keras."""
        return mask if self.return_sequences else None

    def _check_sequences(self, shape):
        if len(shape) != 3 or shape[-1] is None:
            raise ValueError(f"{type(self).__name__} layer {self.name!r}: its input must have "
                             f"rank 3 [batch, time, features], got shape {tuple(shape)}")
        if shape[1] == 0:
            raise ValueError(f"{type(self).__name__} layer {self.name!r}: the input has no "
                             f"time steps (shape {tuple(shape)})")

    def build(self, input_shape):
        self._check_sequences(input_shape)
        if isinstance(self.cell, Layer) and not self.cell.built:
            if isinstance(self.cell, _Cell):
                self.cell._ad_owner = self.name
            self.cell.build((input_shape[0],) + tuple(input_shape[2:]))
            self.cell.built = True

    def _initial_states(self, batch, initial_state, inputs):
        if initial_state is None:
            if open_sizes.open_sized(inputs):   # zeros of the batch size read in the graph
                batch = open_sizes.dims(inputs)[0]
            get = getattr(self.cell, "get_initial_state", None)
            states = get(batch_size=batch) if get else [
                creation.zeros((batch, size), dtype=self.dtype) for size in self.state_size]
            return _as_list(states)
        states, dtype = _as_list(initial_state), getattr(self.cell, "dtype", self.dtype)
        if len(states) != len(self.state_size):
            raise ValueError(f"{type(self).__name__} layer {self.name!r}: initial_state needs "
                             f"{len(self.state_size)} tensor(s), one per state, got {len(states)}")
        states = [convert_to_tensor(state) for state in states]
        for state, size in zip(states, self.state_size):
            if tuple(state.shape) != (batch, size):
                raise ValueError(f"{type(self).__name__} layer {self.name!r}: each initial "
                                 f"state must have shape {(batch, size)}, got {tuple(state.shape)}")
        return [elementwise.cast(s, dtype) if s.dtype != dtype and s.dtype.is_floating else s
                for s in states]

    def call(self, inputs, initial_state=None, mask=None, training=False):
        self._check_sequences(inputs.shape)
        states = self._initial_states(inputs.shape[0], initial_state, inputs)
        project = getattr(self.cell, "_project_inputs", None)
        projected = project(inputs) if project is not None else None
        if projected is None:   # each step calls the cell on its input
            steps = unstack(inputs, axis=1)
            kwargs = {"training": training} if isinstance(self.cell, Layer) else {}
            step = lambda x_t, states: self.cell(x_t, states, **kwargs)   # noqa: E731
        else:                   # the cell took every step's input product at once
            steps, step = projected
        masks = [None] * len(steps) if mask is None else \
            unstack(expand_dims(convert_to_tensor(mask), -1), axis=1)
        if self.go_backwards:
            steps, masks = steps[::-1], masks[::-1]
        outputs = []
        for x_t, m_t in zip(steps, masks):
            output, new_states = step(x_t, states)
            new_states = _as_list(new_states)
            if m_t is not None:   # a masked step keeps the states and repeats the last output
                before = outputs[-1] if outputs and not self.zero_output_for_mask \
                    else creation.zeros_like(output)
                output = where(m_t, output, before)
                new_states = [where(m_t, n, s) for n, s in zip(new_states, states)]
            states = new_states
            outputs.append(output)
        output = stack(outputs, axis=1) if self.return_sequences else outputs[-1]
        return (output, *states) if self.return_state else output


_CELL_ATTRIBUTES = {"units", "activation", "recurrent_activation", "use_bias", "reset_after",
                    "unit_forget_bias", "dropout", "recurrent_dropout", "kernel_initializer",
                    "recurrent_initializer", "bias_initializer", "seed"}


class _OwnCellRNN(RNN):
    """SimpleRNN, GRU, LSTM: an RNN that makes its cell and shows the cell's settings.

    Each checks its arguments before making the cell, so that an error names
    the layer the user asked for (``GRU``) rather than its cell."""

    def _set_fused_gates(self, use_cudnn):
        if use_cudnn not in ("auto", True, False):
            raise ValueError(f"{type(self).__name__}: use_cudnn must be 'auto', True or False, "
                             f"not {use_cudnn!r}")
        self.use_cudnn = use_cudnn
        self.cell._ad_fuse = use_cudnn is not False

    def call(self, inputs, initial_state=None, mask=None, training=False):
        if getattr(self, "use_cudnn", "auto") is True and not self.cell._fused:
            raise ValueError(f"{type(self).__name__} layer {self.name!r}: use_cudnn=True was "
                             f"specified, but the fused gates do not support this layer "
                             f"configuration (they need activation='tanh', "
                             f"recurrent_activation='sigmoid'{self._fused_needs}). Pass "
                             f"use_cudnn='auto' to fall back to the cell's ops one by one.")
        return super().call(inputs, initial_state, mask, training)

    _fused_needs = ""

    def get_config(self):
        """Keras' config: the constructor's arguments, read from the layer or its cell."""
        import inspect
        from .base import _dtype_policy, _serialized
        config = {"name": self.name, "trainable": self.trainable,
                  "dtype": _dtype_policy(self.dtype)}
        for key in inspect.signature(type(self).__init__).parameters:
            if key in ("self", "name", "dtype", "kwargs"):
                continue
            value = getattr(self, key) if key in vars(self) else getattr(self.cell, key)
            config[key] = _serialized(value, key)
        return config

    def __getattr__(self, attribute):   # only called for what the layer itself lacks
        if attribute in _CELL_ATTRIBUTES and "cell" in self.__dict__:
            return getattr(self.cell, attribute)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {attribute!r}")


class SimpleRNN(_OwnCellRNN):
    """A fully connected RNN: ``RNN(SimpleRNNCell(units, ...))`` with Keras' names.

    Args:
        units, activation, use_bias, kernel_initializer, recurrent_initializer,
            bias_initializer, dropout, recurrent_dropout, seed: ``SimpleRNNCell``'s.
        return_sequences, return_state, go_backwards, stateful, unroll: ``RNN``'s.

    The cell is named ``'simple_rnn_cell'``, its variables
    ``'simple_rnn/simple_rnn_cell/kernel'`` and so on, as Keras' paths.

    >>> layer = ad.layers.SimpleRNN(3, return_state=True)
    >>> output, state = layer(ad.ones([2, 5, 4]))
    >>> output.shape, [v.path for v in layer.trainable_variables][1]
    (TensorShape([2, 3]), 'simple_rnn/simple_rnn_cell/recurrent_kernel')
    """

    def __init__(self, units, activation="tanh", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", dropout=0.0, recurrent_dropout=0.0,
                 return_sequences=False, return_state=False, go_backwards=False, stateful=False,
                 unroll=False, seed=None, name=None, dtype=None, zero_output_for_mask=False,
                 **kwargs):
        _checked_units("SimpleRNN", units, dropout, recurrent_dropout)
        cell = SimpleRNNCell(units, activation, use_bias, kernel_initializer,
                             recurrent_initializer, bias_initializer, dropout, recurrent_dropout,
                             seed, name="simple_rnn_cell", dtype=dtype)
        super().__init__(cell, return_sequences, return_state, go_backwards, stateful, unroll,
                         zero_output_for_mask, name=name, dtype=dtype, **kwargs)


class GRU(_OwnCellRNN):
    """A gated recurrent unit layer: ``RNN(GRUCell(units, ...))`` with Keras' names.

    Args:
        units, activation, recurrent_activation, use_bias, kernel_initializer,
            recurrent_initializer, bias_initializer, dropout, recurrent_dropout,
            seed, reset_after: ``GRUCell``'s (its docstring has the equations).
        return_sequences, return_state, go_backwards, stateful, unroll: ``RNN``'s.
        use_cudnn: ``'auto'`` (Keras' default), True or False; see ``LSTM``.

    >>> layer = ad.layers.GRU(3, return_sequences=True)
    >>> layer(ad.ones([2, 5, 4])).shape, layer.cell.bias.shape
    (TensorShape([2, 5, 3]), TensorShape([2, 9]))
    """

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", dropout=0.0, recurrent_dropout=0.0, seed=None,
                 return_sequences=False, return_state=False, go_backwards=False, stateful=False,
                 unroll=False, reset_after=True, use_cudnn="auto", name=None, dtype=None,
                 zero_output_for_mask=False, **kwargs):
        _checked_units("GRU", units, dropout, recurrent_dropout)
        cell = GRUCell(units, activation, recurrent_activation, use_bias, kernel_initializer,
                       recurrent_initializer, bias_initializer, dropout, recurrent_dropout,
                       reset_after, seed, name="gru_cell", dtype=dtype)
        super().__init__(cell, return_sequences, return_state, go_backwards, stateful, unroll,
                         zero_output_for_mask, name=name, dtype=dtype, **kwargs)
        self._set_fused_gates(use_cudnn)

    _fused_needs = " and reset_after=True"


class LSTM(_OwnCellRNN):
    """A long short-term memory layer: ``RNN(LSTMCell(units, ...))`` with Keras' names.

    Args:
        units, activation, recurrent_activation, use_bias, kernel_initializer,
            recurrent_initializer, bias_initializer, unit_forget_bias, dropout,
            recurrent_dropout, seed: ``LSTMCell``'s (its docstring has the equations).
        return_sequences, return_state, go_backwards, stateful, unroll: ``RNN``'s.
        use_cudnn: Keras' switch for its fused cuDNN kernel; here it chooses the
            fused gates ops (``ops/recurrent.py``), which need no GPU. ``'auto'``:
            fused where the activations (and the GRU's ``reset_after=True``) allow;
            False: the cell's ops one by one, each gate on the tape (what a lesson
            shows); True: fused, and a ValueError at the call where the
            configuration does not allow it, as Keras raises there. (Keras on a
            machine without a GPU raises for True in every configuration.)

    >>> layer = ad.layers.LSTM(3, return_state=True)
    >>> output, h, c = layer(ad.ones([2, 5, 4]))       # the final states too
    >>> layer.cell.kernel.shape
    TensorShape([4, 12])
    """

    def __init__(self, units, activation="tanh", recurrent_activation="sigmoid", use_bias=True,
                 kernel_initializer="glorot_uniform", recurrent_initializer="orthogonal",
                 bias_initializer="zeros", unit_forget_bias=True, dropout=0.0,
                 recurrent_dropout=0.0, seed=None, return_sequences=False, return_state=False,
                 go_backwards=False, stateful=False, unroll=False, use_cudnn="auto", name=None,
                 dtype=None, zero_output_for_mask=False, **kwargs):
        _checked_units("LSTM", units, dropout, recurrent_dropout)
        cell = LSTMCell(units, activation, recurrent_activation, use_bias, kernel_initializer,
                        recurrent_initializer, bias_initializer, unit_forget_bias, dropout,
                        recurrent_dropout, seed, name="lstm_cell", dtype=dtype)
        super().__init__(cell, return_sequences, return_state, go_backwards, stateful, unroll,
                         zero_output_for_mask, name=name, dtype=dtype, **kwargs)
        self._set_fused_gates(use_cudnn)
