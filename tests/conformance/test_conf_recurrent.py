"""Recurrent layers and cells (``autodiff/models/layers/recurrent.py``, ``recurrent_cells.py``) against Keras 3.

Each test builds a Keras layer and ours with the same arguments, gives
Keras' weights random values and copies them into ours, runs the same input
(float32, batch 3, time 5, features 4, units 6) and compares the outputs and
the gradients of one scalar loss with respect to every weight and the input
(``tf.GradientTape`` against ``ad.GradientTape``). Argument defaults,
variable names, shapes and order, and Keras' initial biases are compared too.
"""

import inspect
import itertools

import numpy as np
import pytest

import autodiff as ad
from autodiff.layers import GRU, LSTM, RNN, GRUCell, LSTMCell, SimpleRNN, SimpleRNNCell
from autodiff.models.initializers import Orthogonal

BATCH, TIME, FEATURES, UNITS = 3, 5, 4, 6
RTOL, ATOL = 1e-5, 1e-6

KINDS = {   # test id -> (class name in both libraries, extra arguments)
    "simple_rnn": ("SimpleRNN", {}),
    "gru": ("GRU", {}),
    "gru_reset_before": ("GRU", {"reset_after": False}),
    "lstm": ("LSTM", {}),
}
# return_sequences, return_state, go_backwards
FLAGS = list(itertools.product([False, True], repeat=3))


def _inputs(seed=0):
    return np.random.default_rng(seed).standard_normal((BATCH, TIME, FEATURES)).astype(np.float32)


def _copy_random_weights(theirs, ours, seed=1):
    """Random values into Keras' weights (its biases start at 0 and 1), then the same into ours."""
    rng = np.random.default_rng(seed)
    assert len(ours.trainable_variables) == len(theirs.trainable_variables) == 3
    for t, o in zip(theirs.trainable_variables, ours.trainable_variables):
        assert tuple(o.shape) == tuple(t.shape), (o.name, t.path)
        t.assign((0.5 * rng.standard_normal(tuple(t.shape))).astype(np.float32))
        o.assign(t.numpy())


def _loss(m, result):
    """A scalar that weighs every returned element differently (so no gradient cancels)."""
    outputs = list(result) if isinstance(result, (list, tuple)) else [result]
    rng = np.random.default_rng(7)
    return sum(m.reduce_sum(out * rng.standard_normal(tuple(out.shape)).astype(np.float32))
               for out in outputs)


def _run_keras(tf, layer, x, **call_kwargs):
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        result = layer(xt, **call_kwargs)
        loss = _loss(tf, result)
    grads = tape.gradient(loss, [xt, *layer.trainable_variables])
    return result, grads


def _run_ours(layer, x, **call_kwargs):
    xa = ad.constant(x)
    with ad.GradientTape() as tape:
        tape.watch(xa)
        result = layer(xa, **call_kwargs)
        loss = _loss(ad, result)
    grads = tape.gradient(loss, [xa, *layer.trainable_variables])
    return result, grads


def _assert_same(ours, theirs):
    ours = list(ours) if isinstance(ours, (list, tuple)) else [ours]
    theirs = list(theirs) if isinstance(theirs, (list, tuple)) else [theirs]
    assert len(ours) == len(theirs)
    for i, (o, t) in enumerate(zip(ours, theirs)):
        assert o is not None and t is not None, i
        np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=RTOL, atol=ATOL, err_msg=str(i))


def _pair(tf, kind, **kwargs):
    cls, extra = KINDS[kind]
    theirs = getattr(tf.keras.layers, cls)(UNITS, **extra, **kwargs)
    ours = getattr(ad.layers, cls)(UNITS, **extra, **kwargs)
    x = _inputs()
    theirs(x)
    ours(ad.constant(x))   # both built
    _copy_random_weights(theirs, ours)
    return theirs, ours


@pytest.mark.parametrize("return_sequences,return_state,go_backwards", FLAGS)
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_layer_outputs_and_gradients_equal_keras(tf, kind, return_sequences, return_state,
                                                 go_backwards):
    theirs, ours = _pair(tf, kind, return_sequences=return_sequences,
                         return_state=return_state, go_backwards=go_backwards)
    x = _inputs(2)
    their_result, their_grads = _run_keras(tf, theirs, x)
    our_result, our_grads = _run_ours(ours, x)
    assert isinstance(our_result, tuple) == isinstance(their_result, tuple)
    _assert_same(our_result, their_result)
    _assert_same(our_grads, their_grads)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_layer_without_bias_and_other_activations_equals_keras(tf, kind):
    extra = {} if kind == "simple_rnn" else {"recurrent_activation": "tanh"}
    theirs = getattr(tf.keras.layers, KINDS[kind][0])(
        UNITS, use_bias=False, activation="relu", return_sequences=True, **KINDS[kind][1], **extra)
    ours = getattr(ad.layers, KINDS[kind][0])(
        UNITS, use_bias=False, activation="relu", return_sequences=True, **KINDS[kind][1], **extra)
    x = _inputs(3)
    theirs(x), ours(ad.constant(x))
    assert ours.cell.bias is None and len(ours.trainable_variables) == 2
    rng = np.random.default_rng(4)
    for t, o in zip(theirs.trainable_variables, ours.trainable_variables):
        # smaller than elsewhere: relu does not saturate, and large sums cancel in float32
        t.assign((0.3 * rng.standard_normal(tuple(t.shape))).astype(np.float32))
        o.assign(t.numpy())
    their_result, their_grads = _run_keras(tf, theirs, x)
    our_result, our_grads = _run_ours(ours, x)
    _assert_same(our_result, their_result)
    _assert_same(our_grads, their_grads)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_initial_state_is_used_and_differentiated_as_keras(tf, kind):
    theirs, ours = _pair(tf, kind, return_sequences=True, return_state=True)
    n_states = 2 if kind == "lstm" else 1
    rng = np.random.default_rng(5)
    starts = [rng.standard_normal((BATCH, UNITS)).astype(np.float32) for _ in range(n_states)]
    x = _inputs(6)
    tf_starts = [tf.constant(s) for s in starts]
    with tf.GradientTape() as tape:
        tape.watch(tf_starts)
        loss = _loss(tf, theirs(tf.constant(x), initial_state=tf_starts))
    their_grads = tape.gradient(loss, tf_starts)
    ad_starts = [ad.constant(s) for s in starts]
    with ad.GradientTape() as tape:
        tape.watch(ad_starts)
        loss = _loss(ad, ours(ad.constant(x), initial_state=ad_starts))
    _assert_same(tape.gradient(loss, ad_starts), their_grads)
    if n_states == 1:   # a single state may also be passed bare
        _assert_same(ours(ad.constant(x), initial_state=ad_starts[0]),
                     theirs(tf.constant(x), initial_state=tf_starts[0]))


@pytest.mark.parametrize("reset_after", [True, False])
def test_rnn_around_a_gru_cell_equals_keras(tf, reset_after):
    theirs = tf.keras.layers.RNN(tf.keras.layers.GRUCell(UNITS, reset_after=reset_after),
                                 return_sequences=True)
    ours = RNN(GRUCell(UNITS, reset_after=reset_after), return_sequences=True)
    x = _inputs(8)
    theirs(x), ours(ad.constant(x))
    _copy_random_weights(theirs, ours)
    assert [v.path for v in ours.trainable_variables][0] == f"{ours.name}/{ours.cell.name}/kernel"
    their_result, their_grads = _run_keras(tf, theirs, x)
    our_result, our_grads = _run_ours(ours, x)
    _assert_same(our_result, their_result)
    _assert_same(our_grads, their_grads)


@pytest.mark.parametrize("cell", ["SimpleRNNCell", "GRUCell", "LSTMCell"])
def test_one_cell_step_equals_keras(tf, cell):
    theirs, ours = getattr(tf.keras.layers, cell)(UNITS), getattr(ad.layers, cell)(UNITS)
    rng = np.random.default_rng(9)
    x = rng.standard_normal((BATCH, FEATURES)).astype(np.float32)
    states = [rng.standard_normal((BATCH, UNITS)).astype(np.float32)
              for _ in range(2 if cell == "LSTMCell" else 1)]
    theirs(x, [tf.constant(s) for s in states])
    ours(ad.constant(x), [ad.constant(s) for s in states])
    _copy_random_weights(theirs, ours)
    their_h, their_states = theirs(x, [tf.constant(s) for s in states])
    our_h, our_states = ours(ad.constant(x), [ad.constant(s) for s in states])
    assert isinstance(our_states, list) and len(our_states) == len(their_states)
    _assert_same([our_h, *our_states], [their_h, *their_states])


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_variable_names_shapes_and_order_equal_keras(tf, kind):
    cls, extra = KINDS[kind]
    theirs = getattr(tf.keras.layers, cls)(UNITS, name=f"conf_{kind}", **extra)
    ours = getattr(ad.layers, cls)(UNITS, name=f"conf_{kind}", **extra)
    x = _inputs()
    theirs(x), ours(ad.constant(x))
    assert ours.name == theirs.name and ours.cell.name == theirs.cell.name
    assert [(v.name, v.path) for v in ours.trainable_variables] == \
        [(v.name, v.path) for v in theirs.trainable_variables]
    assert [tuple(v.shape) for v in ours.weights] == [tuple(v.shape) for v in theirs.weights]


def test_default_names_are_keras_names():
    for cls, name in ((SimpleRNN, "simple_rnn"), (GRU, "gru"), (LSTM, "lstm"), (RNN, "rnn"),
                      (SimpleRNNCell, "simple_rnn_cell"), (GRUCell, "gru_cell"),
                      (LSTMCell, "lstm_cell")):
        layer = cls(GRUCell(2)) if cls is RNN else cls(2)
        assert layer.name == name or layer.name.startswith(name + "_") \
            and layer.name[len(name) + 1:].isdigit(), (cls, layer.name)


@pytest.mark.parametrize("cls", ["SimpleRNN", "GRU", "LSTM", "SimpleRNNCell", "GRUCell",
                                 "LSTMCell", "RNN"])
def test_argument_defaults_equal_keras(tf, cls):
    ours = inspect.signature(getattr(ad.layers, cls)).parameters
    theirs = inspect.signature(getattr(tf.keras.layers, cls)).parameters
    shared = [p for p in ours if p in theirs]
    # name, dtype and zero_output_for_mask are in Keras' **kwargs
    assert len(shared) >= len(ours) - 3
    for p in shared:
        assert ours[p].default == theirs[p].default, (cls, p)
    assert list(shared) == [p for p in theirs if p in ours], cls   # same order too


@pytest.mark.parametrize("unit_forget_bias", [True, False])
def test_lstm_initial_bias_equals_keras(tf, unit_forget_bias):
    theirs = tf.keras.layers.LSTM(UNITS, unit_forget_bias=unit_forget_bias)
    ours = LSTM(UNITS, unit_forget_bias=unit_forget_bias)
    theirs(_inputs()), ours(ad.constant(_inputs()))
    np.testing.assert_array_equal(ours.cell.bias.numpy(), theirs.cell.bias.numpy())


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_orthogonal_recurrent_kernel_has_orthonormal_rows_as_keras(tf, kind):
    theirs, ours = (getattr(m, KINDS[kind][0])(UNITS, **KINDS[kind][1])
                    for m in (tf.keras.layers, ad.layers))
    theirs(_inputs()), ours(ad.constant(_inputs()))
    for kernel in (theirs.cell.recurrent_kernel.numpy(), ours.cell.recurrent_kernel.numpy()):
        assert kernel.shape[0] <= kernel.shape[1]
        np.testing.assert_allclose(kernel @ kernel.T, np.eye(UNITS), atol=1e-5)
    square = Orthogonal()((5, 2, 5), ad.float32).numpy().reshape(10, 5)   # rows > cols
    np.testing.assert_allclose(square.T @ square, np.eye(5), atol=1e-5)


def test_compiled_forward_and_gradient_equal_eager():
    layer = LSTM(UNITS, return_sequences=True, go_backwards=True)
    x = ad.constant(_inputs(10))

    def loss_and_grads(x):
        with ad.GradientTape() as tape:
            loss = _loss(ad, layer(x))
        return layer(x), tape.gradient(loss, layer.trainable_variables)

    eager = loss_and_grads(x)
    compiled = ad.function(loss_and_grads, jit_compile=True)(x)
    _assert_same(compiled[0], eager[0])
    _assert_same(compiled[1], eager[1])


@pytest.mark.parametrize("cls", [LSTM, GRU])
def test_compiled_fused_gates_equal_eager_bit_for_bit(cls):
    """The fused gates (LSTMGates/LSTMGatesGrad, GRUGates/GRUGatesGrad) run the same
    arithmetic in both modes."""
    layer = cls(UNITS)
    x = ad.constant(_inputs(11))

    def grads(x):
        with ad.GradientTape() as tape:
            tape.watch(x)
            loss = _loss(ad, layer(x))
        return tape.gradient(loss, [x, *layer.trainable_variables])

    eager = grads(x)
    compiled = ad.function(grads, jit_compile=True)(x)
    for c, e in zip(compiled, eager):
        np.testing.assert_array_equal(c.numpy(), e.numpy())


# kind, its arguments -> (fused op, its count, MatMuls, Sigmoids) on the tape of one call
TAPE_OPS = {
    ("lstm", "tanh"): ("LSTMGates", TIME, TIME + 1, 0),
    ("lstm", "relu"): ("LSTMGates", 0, 2 * TIME, 3 * TIME),
    ("gru", "tanh"): ("GRUGates", TIME, TIME + 1, 0),
    ("gru", "relu"): ("GRUGates", 0, 2 * TIME, 2 * TIME),
    ("gru_reset_before", "tanh"): ("GRUGates", 0, 3 * TIME, 2 * TIME),
}


@pytest.mark.parametrize("kind, activation", sorted(TAPE_OPS))
def test_keras_activations_run_fused_gates(kind, activation):
    """Default activations (and, for the GRU, reset_after=True): one fused gates op a step
    and one input matmul for all steps; otherwise the cell's ops one by one (each gate on
    the tape)."""
    name, extra = KINDS[kind]
    layer = getattr(ad.layers, name)(UNITS, activation=activation, **extra)
    with ad.GradientTape(persistent=True) as tape:
        layer(ad.constant(_inputs(12)))
    types = [record.op_type for record in tape.records]
    op, fused, matmuls, sigmoids = TAPE_OPS[kind, activation]
    assert (types.count(op), types.count("MatMul"), types.count("Sigmoid")) == \
        (fused, matmuls, sigmoids)


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_use_cudnn_false_runs_the_gates_op_by_op_with_the_same_values(kind):
    """use_cudnn=False: no fused op on the tape, and the same outputs and gradients."""
    name, extra = KINDS[kind]
    x = _inputs(17)
    fused, by_op = (getattr(ad.layers, name)(UNITS, use_cudnn=flag) for flag in ("auto", False))
    fused(ad.constant(x)), by_op(ad.constant(x))
    by_op.set_weights(fused.get_weights())
    with ad.GradientTape(persistent=True) as tape:
        by_op(ad.constant(x))
    op = TAPE_OPS[kind, "relu"][0]
    assert [r.op_type for r in tape.records].count(op) == 0
    assert [r.op_type for r in tape.records].count("Sigmoid") == TAPE_OPS[kind, "relu"][3]
    (result, grads), (expected, expected_grads) = _run_ours(by_op, x), _run_ours(fused, x)
    _assert_same(result, expected)
    _assert_same(grads, expected_grads)


@pytest.mark.parametrize("kind", ["lstm", "gru", "gru_reset_before"])
def test_use_cudnn_true_where_the_gates_cannot_fuse_raises_value_error_as_keras(tf, kind):
    name, extra = KINDS[kind]
    x = _inputs(18)
    with pytest.raises(ValueError, match="use_cudnn=True was specified"):
        getattr(tf.keras.layers, name)(UNITS, activation="relu", use_cudnn=True, **extra)(x)
    with pytest.raises(ValueError, match="use_cudnn=True was specified.*use_cudnn='auto'"):
        getattr(ad.layers, name)(UNITS, activation="relu", use_cudnn=True, **extra)(
            ad.constant(x))
    with pytest.raises(ValueError, match="use_cudnn must be 'auto', True or False"):
        getattr(ad.layers, name)(UNITS, use_cudnn="yes")
    layer = getattr(ad.layers, name)(UNITS, use_cudnn=True, **extra)
    assert layer.get_config()["use_cudnn"] is True
    if kind == "gru_reset_before":   # the fused GRU gates are reset_after=True's
        with pytest.raises(ValueError, match="reset_after=True"):
            layer(ad.constant(x))
    else:
        assert layer(ad.constant(x)).shape == (BATCH, UNITS)


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_fused_gates_without_bias_equal_keras(tf, kind):
    """use_bias=False with the default activations: the fused path with no bias adds."""
    name, extra = KINDS[kind]
    theirs = getattr(tf.keras.layers, name)(UNITS, use_bias=False, return_sequences=True)
    ours = getattr(ad.layers, name)(UNITS, use_bias=False, return_sequences=True)
    x = _inputs(15)
    theirs(tf.constant(x))
    ours(ad.constant(x))
    rng = np.random.default_rng(16)
    for t, o in zip(theirs.trainable_variables, ours.trainable_variables):
        t.assign((0.5 * rng.standard_normal(tuple(t.shape))).astype(np.float32))
        o.assign(t.numpy())
    result, grads = _run_ours(ours, x)
    expected, expected_grads = _run_keras(tf, theirs, x)
    _assert_same(result, expected)
    _assert_same(grads, expected_grads)


@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_saturated_gates_equal_keras(tf, kind):
    """Pre-activations far past float32's exp range (|z| > 88): the fused sigmoid gives
    exactly 0 or 1 without overflow warnings, and values and gradients equal Keras'.
    Inputs of size 60 make the kernel's gradient a float32 sum of terms near 60 that
    cancel (the GRU's: entries of 3e-6 beside 14), so the gradients' absolute tolerance
    is RTOL times each one's largest entry; the op-by-op GRU misses the plain ATOL too."""
    name, extra = KINDS[kind]
    theirs, ours = getattr(tf.keras.layers, name)(UNITS), getattr(ad.layers, name)(UNITS)
    x = _inputs(13) * 60.0
    theirs(tf.constant(x))
    ours(ad.constant(x))
    _copy_random_weights(theirs, ours, seed=14)
    with np.errstate(over="raise", divide="raise", invalid="raise"):
        result, grads = _run_ours(ours, x)
    expected, expected_grads = _run_keras(tf, theirs, x)
    _assert_same(result, expected)
    for i, (o, t) in enumerate(zip(grads, expected_grads)):
        np.testing.assert_allclose(o.numpy(), t.numpy(), rtol=RTOL,
                                   atol=RTOL * np.abs(t.numpy()).max(), err_msg=str(i))


@pytest.mark.parametrize("cls", [SimpleRNN, GRU, LSTM, GRUCell])
@pytest.mark.parametrize("units", [0, -3, 2.5, True, "6"])
def test_bad_units_raise_value_error_naming_the_class(cls, units):
    with pytest.raises(ValueError, match=f"{cls.__name__}: units must be a positive int"):
        cls(units)


@pytest.mark.parametrize("cls", [SimpleRNN, GRU, LSTM])
def test_input_of_wrong_rank_raises_value_error_naming_the_layer(cls):
    layer = cls(UNITS)
    with pytest.raises(ValueError, match=f"{layer.name}'.*rank 3"):
        layer(ad.ones([BATCH, FEATURES]))      # not built: build checks
    layer(ad.ones([BATCH, TIME, FEATURES]))
    with pytest.raises(ValueError, match=f"{layer.name}'.*rank 3"):
        layer(ad.ones([BATCH, TIME, 2, FEATURES]))   # built: call checks


def test_features_other_than_built_for_raise_value_error():
    layer = GRU(UNITS)
    layer(ad.ones([BATCH, TIME, FEATURES]))
    with pytest.raises(ValueError, match="gru_cell'.*built for inputs"):
        layer(ad.ones([BATCH, TIME, FEATURES + 1]))


def test_wrong_initial_states_raise_value_error():
    layer = LSTM(UNITS)
    x = ad.ones([BATCH, TIME, FEATURES])
    with pytest.raises(ValueError, match="needs 2 tensor"):
        layer(x, initial_state=[ad.zeros([BATCH, UNITS])])
    with pytest.raises(ValueError, match=r"shape \(3, 6\)"):
        layer(x, initial_state=[ad.zeros([BATCH, UNITS + 1])] * 2)


@pytest.mark.parametrize("cls", [SimpleRNN, GRU, LSTM, LSTMCell])
def test_dropout_raises_not_implemented_error(cls):
    with pytest.raises(NotImplementedError, match="dropout"):
        cls(UNITS, dropout=0.2)
    with pytest.raises(NotImplementedError, match="dropout"):
        cls(UNITS, recurrent_dropout=0.2)


def test_stateful_raises_not_implemented_error():
    with pytest.raises(NotImplementedError, match="stateful"):
        GRU(UNITS, stateful=True)


@pytest.mark.parametrize("return_sequences", [True, False])
@pytest.mark.parametrize("zero_output", [True, False])
def test_a_masked_step_keeps_the_states_as_keras(tf, return_sequences, zero_output):
    mask = np.ones([BATCH, TIME], bool)
    mask[0, 2:] = False
    mask[1, :1] = False
    theirs = tf.keras.layers.GRU(UNITS, return_sequences=return_sequences, return_state=True,
                                 zero_output_for_mask=zero_output)
    ours = GRU(UNITS, return_sequences=return_sequences, return_state=True,
               zero_output_for_mask=zero_output)
    x = _inputs()
    theirs(x), ours(ad.constant(x))
    ours.set_weights(theirs.get_weights())
    for a, t in zip(ours(ad.constant(x), mask=ad.constant(mask)),
                    theirs(x, mask=tf.constant(mask))):
        np.testing.assert_allclose(a.numpy(), t.numpy(), rtol=2e-5, atol=2e-6)
