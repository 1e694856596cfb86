"""tape.jacobian and tape.batch_jacobian: the advanced guide's examples, and beyond.

- The guide (seeds/002, "Jacobians"): a scalar source, a tensor source whose
  Jacobian summed over the targets is the gradient, a Hessian of a two-layer
  relu model with its Newton step, the batch Jacobian equal to the diagonal
  blocks of the full one, and the BatchNormalization caution (a batch-mixing
  function, where batch_jacobian is silently wrong and
  ``ad.testing.check_batch_independence`` says so).
- TensorFlow's edges: unconnected sources, mismatched batch dimensions,
  ``experimental_use_pfor=False`` and non-persistent tapes, nested sources.
- The machinery: the vectorized pass against the row loop and against central
  finite differences on random compositions of registry ops; chunks
  (``parallel_iterations``) against one pass; a VJP that is not batch-aware
  (applied row by row); the memory guard that refuses before allocating.

Dense and BatchNormalization layers are built here from ``ad.Variable`` so
the tests need nothing but the tape and the ops.
"""

import warnings
import zlib

import numpy as np
import pytest

import autodiff as ad
import autodiff.jacobian as jacobian_module
from autodiff import testing
from autodiff.errors import InvalidArgumentError
from autodiff.registry import REGISTRY, Primitive


class Dense:
    """A Keras-like Dense layer: kernel and bias Variables, built on first call."""

    def __init__(self, units, activation=None, seed=0, dtype=np.float32):
        self.units, self.activation, self.seed, self.dtype = units, activation, seed, dtype
        self.kernel = None

    def __call__(self, x):
        if self.kernel is None:
            rng = np.random.default_rng(self.seed)
            fan_in = x.shape[-1]
            limit = np.sqrt(6.0 / (fan_in + self.units))  # Glorot uniform, as Keras
            self.kernel = ad.Variable(rng.uniform(-limit, limit, (fan_in, self.units))
                                      .astype(self.dtype), name="kernel")
            self.bias = ad.Variable((0.1 * rng.standard_normal(self.units)).astype(self.dtype),
                                    name="bias")
        y = ad.matmul(x, self.kernel) + self.bias
        return y if self.activation is None else self.activation(y)


def batch_norm(y, epsilon=1e-3):
    """BatchNormalization in training mode: every example sees the batch statistics."""
    mean = ad.reduce_mean(y, axis=0)
    variance = ad.reduce_mean(ad.square(y - mean), axis=0)
    return (y - mean) / ad.sqrt(variance + epsilon)


def normal(shape, seed=0, dtype=np.float32):
    return ad.constant(np.random.default_rng(seed).standard_normal(shape).astype(dtype))


# ---- the guide: scalar source, tensor source -------------------------------------------

def test_jacobian_wrt_a_scalar_source_has_the_target_shape_and_is_sigmoid_prime():
    x = ad.linspace(-10.0, 10.0, 200 + 1)
    delta = ad.Variable(0.0)
    with ad.GradientTape() as tape:
        y = ad.nn.sigmoid(x + delta)
    dy_dx = tape.jacobian(y, delta)
    assert y.shape == (201,) and dy_dx.shape == (201,) and dy_dx.dtype == ad.float32
    s = 1 / (1 + np.exp(-x.numpy().astype(np.float64)))
    np.testing.assert_allclose(dy_dx.numpy(), s * (1 - s), rtol=1e-5, atol=1e-7)


def test_jacobian_wrt_a_kernel_concatenates_shapes_and_sums_to_the_gradient():
    x = normal([7, 5])
    layer = Dense(10, activation=ad.nn.relu)
    with ad.GradientTape(persistent=True) as tape:
        y = layer(x)
    assert y.shape == (7, 10) and layer.kernel.shape == (5, 10)
    j = tape.jacobian(y, layer.kernel)
    assert j.shape == (7, 10, 5, 10)
    g = tape.gradient(y, layer.kernel)
    j_sum = ad.reduce_sum(j, axis=[0, 1])
    delta = float(ad.reduce_max(abs(g - j_sum)))
    assert delta < 1e-6  # the guide allows 1e-3; the rows sum to the same numbers
    # and each entry is the analytic one: dy[i, o] / dK[k, l] = [o == l] x[i, k] relu'(z[i, o])
    active = (y.numpy() > 0).astype(np.float32)
    expected = np.einsum("ik,io,ol->iokl", x.numpy(), active, np.eye(10, dtype=np.float32))
    np.testing.assert_allclose(j.numpy(), expected, rtol=1e-6)


# ---- the guide: Hessian and Newton step -----------------------------------------------

def _hessian_model(dtype=np.float32, seed=1):
    x = normal([7, 5], seed=seed, dtype=dtype)
    layer1 = Dense(8, activation=ad.nn.relu, seed=seed + 1, dtype=dtype)
    layer2 = Dense(6, activation=ad.nn.relu, seed=seed + 2, dtype=dtype)

    def loss_fn():
        return ad.reduce_mean(layer2(layer1(x)) ** 2)

    return layer1, loss_fn


def _hessian(layer1, loss_fn):
    with ad.GradientTape() as t2:
        with ad.GradientTape() as t1:
            loss = loss_fn()
        g = t1.gradient(loss, layer1.kernel)
    h = t2.jacobian(g, layer1.kernel)
    return loss, g, h


def test_hessian_from_nested_tapes_has_kernel_shape_twice_and_is_symmetric():
    layer1, loss_fn = _hessian_model()
    _, g, h = _hessian(layer1, loss_fn)
    assert layer1.kernel.shape == (5, 8) and g.shape == (5, 8)
    assert h.shape == (5, 8, 5, 8) and h.dtype == ad.float32
    h_mat = h.numpy().reshape(40, 40)
    assert np.abs(h_mat).max() > 1e-3  # not trivially symmetric
    np.testing.assert_allclose(h_mat, h_mat.T, rtol=1e-4, atol=1e-6)


def test_hessian_equals_finite_differences_of_the_gradient():
    layer1, loss_fn = _hessian_model(dtype=np.float64)
    _, _, h = _hessian(layer1, loss_fn)
    kernel = layer1.kernel.numpy()

    def gradient_at(k):
        layer1.kernel.assign(k)
        with ad.GradientTape() as tape:
            loss = loss_fn()
        return tape.gradient(loss, layer1.kernel).numpy()

    eps, numeric = 1e-6, np.zeros((5, 8, 5, 8))
    for idx in np.ndindex(5, 8):
        step = np.zeros_like(kernel)
        step[idx] = eps
        numeric[(Ellipsis,) + idx] = (gradient_at(kernel + step) - gradient_at(kernel - step)) / (2 * eps)
    layer1.kernel.assign(kernel)
    np.testing.assert_allclose(h.numpy(), numeric, rtol=1e-5, atol=1e-8)


def test_newton_step_from_the_hessian_lowers_the_loss():
    layer1, loss_fn = _hessian_model()
    loss, g, h = _hessian(layer1, loss_fn)
    n_params = ad.reduce_prod(layer1.kernel.shape)
    g_vec = ad.reshape(g, [n_params, 1])
    h_mat = ad.reshape(h, [n_params, n_params])
    assert g_vec.shape == (40, 1) and h_mat.shape == (40, 40)

    eps = 1e-3
    eye_eps = ad.eye(h_mat.shape[0]) * eps
    update = ad.linalg.solve(h_mat + eye_eps, g_vec)
    assert update.shape == (40, 1) and update.dtype == ad.float32
    _ = layer1.kernel.assign_sub(ad.reshape(update, layer1.kernel.shape))
    assert float(loss_fn()) < 0.5 * float(loss)


# ---- the guide: batch Jacobian --------------------------------------------------------

def _elu_model(x, batch_normalization=False):
    layer1 = Dense(8, activation=ad.nn.elu, seed=3)
    layer2 = Dense(6, activation=ad.nn.elu, seed=4)
    with ad.GradientTape(persistent=True, watch_accessed_variables=False) as tape:
        tape.watch(x)
        y = layer1(x)
        if batch_normalization:
            y = batch_norm(y)
        y = layer2(y)
    return tape, y


def test_batch_jacobian_equals_the_diagonal_blocks_of_the_full_jacobian():
    x = normal([7, 5])
    tape, y = _elu_model(x)
    assert y.shape == (7, 6)
    j = tape.jacobian(y, x)
    assert j.shape == (7, 6, 7, 5)
    j_sum = ad.reduce_sum(j, axis=2)
    j_select = ad.einsum("bxby->bxy", j)
    assert j_sum.shape == (7, 6, 5) and j_select.shape == (7, 6, 5)
    jb = tape.batch_jacobian(y, x)
    assert jb.shape == (7, 6, 5) and jb.dtype == ad.float32
    assert float(ad.reduce_max(abs(jb - j_sum))) < 1e-6
    np.testing.assert_allclose(jb.numpy(), j_select.numpy(), rtol=1e-6, atol=1e-7)
    # every (batch, batch) slice of the full Jacobian is diagonal
    off_diagonal = j.numpy() * (1 - np.eye(7))[:, None, :, None]
    assert np.abs(off_diagonal).max() == 0.0
    assert testing.check_batch_independence(tape, y, x) is True


def test_batch_jacobian_of_a_batch_mixing_function_is_not_the_block_diagonal():
    x = normal([7, 5])
    tape, y = _elu_model(x, batch_normalization=True)
    j = tape.jacobian(y, x)
    assert j.shape == (7, 6, 7, 5)
    off_diagonal = j.numpy() * (1 - np.eye(7))[:, None, :, None]
    assert np.abs(off_diagonal).max() > 1e-2  # these slices are not diagonal
    jb = tape.batch_jacobian(y, x)
    assert jb.shape == (7, 6, 5)  # it still runs, with the expected shape ...
    blocks = ad.einsum("bxby->bxy", j).numpy()
    assert np.abs(jb.numpy() - blocks).max() > 1e-2  # ... but not the per-example Jacobian:
    # what it returns is, for each input example b, the sum over output examples
    np.testing.assert_allclose(jb.numpy(), np.einsum("axbi->bxi", j.numpy()), rtol=1e-5, atol=1e-6)


def test_check_batch_independence_warns_on_batch_normalization():
    x = normal([7, 5])
    tape, y = _elu_model(x, batch_normalization=True)
    with pytest.warns(ad.AutodiffWarning, match=r"batch_jacobian would be wrong.*example"):
        assert testing.check_batch_independence(tape, y, x) is False

    def model(inputs):
        return _elu_model(inputs, batch_normalization=True)[1]

    with pytest.warns(ad.AutodiffWarning, match="einsum"):
        assert testing.check_batch_independence(model, x) is False


def test_check_batch_independence_is_silent_for_independent_examples():
    x = np.random.default_rng(0).standard_normal((4, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning fails the test
        assert testing.check_batch_independence(lambda v: ad.tanh(v) * ad.reduce_sum(v, axis=1,
                                                                                     keepdims=True), x)
        assert testing.check_batch_independence(lambda v: ad.zeros_like(v) + 1.0, x)  # unconnected


def test_check_batch_independence_flags_a_mean_over_the_batch():
    x = np.ones((7, 5))
    with pytest.warns(ad.AutodiffWarning, match=r"reaches 0\.143"):  # d (x - mean) = -1/7 across
        assert testing.check_batch_independence(lambda v: v - ad.reduce_mean(v, axis=0), x) is False


def test_check_batch_independence_refuses_mismatched_batches():
    with pytest.raises(InvalidArgumentError, match=r"first dimension.*\[3, 2\].*\[2, 3\]"):
        testing.check_batch_independence(ad.transpose, np.ones((2, 3)))


def test_check_batch_independence_takes_a_source_only_with_a_tape():
    x = normal([3, 2])
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = ad.sin(x)
    with pytest.raises(TypeError, match="source is missing"):
        testing.check_batch_independence(tape, y)
    with pytest.raises(TypeError, match="only for a tape"):
        testing.check_batch_independence(ad.sin, x, x)
    assert testing.check_batch_independence(tape, y, x) is True


# ---- TensorFlow's edges -------------------------------------------------------------------

def test_batch_jacobian_of_an_unconnected_source_is_zeros():
    x, z = normal([4, 3]), normal([4, 2], seed=1)
    with ad.GradientTape(persistent=True) as tape:
        tape.watch([x, z])
        y = ad.sin(x)
    jb = tape.batch_jacobian(y, z)
    assert jb.shape == (4, 3, 2) and jb.dtype == ad.float32
    assert not np.any(jb.numpy())
    assert tape.jacobian(y, z) is None
    j = tape.jacobian(y, z, unconnected_gradients="zero")
    assert j.shape == (4, 3, 4, 2) and not np.any(j.numpy())
    j = tape.jacobian(y, [x, z], unconnected_gradients=ad.UnconnectedGradients.ZERO)
    np.testing.assert_allclose(ad.einsum("bxby->bxy", j[0]).numpy(),
                               np.stack([np.diag(r) for r in np.cos(x.numpy())]), rtol=1e-6)
    assert j[1].shape == (4, 3, 4, 2)


def test_batch_jacobian_needs_matching_first_dimensions():
    x = normal([4, 3])
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = ad.reshape(x, [3, 4])
    with pytest.raises(InvalidArgumentError, match=r"\[3, 4\].*\[4, 3\].*first \(batch\) dimension"):
        tape.batch_jacobian(y, x)


@pytest.mark.parametrize("method", ["jacobian", "batch_jacobian"])
def test_row_loop_needs_a_persistent_tape(method):
    x = normal([3, 2])
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = x * x
    with pytest.raises(RuntimeError, match="persistent=True"):
        getattr(tape, method)(y, x, experimental_use_pfor=False)


@pytest.mark.parametrize("method", ["jacobian", "batch_jacobian"])
def test_row_loop_on_a_persistent_tape_equals_the_vectorized_pass(method):
    x = normal([3, 4])
    w = ad.Variable(np.random.default_rng(5).standard_normal((4, 2)).astype(np.float32))
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = ad.nn.softmax(ad.tanh(ad.matmul(x, w)) * x[:, :2])
    looped = getattr(tape, method)(y, x, experimental_use_pfor=False)
    vectorized = getattr(tape, method)(y, x)
    assert looped.shape == vectorized.shape
    np.testing.assert_allclose(looped.numpy(), vectorized.numpy(), rtol=1e-6, atol=1e-7)


def test_second_jacobian_call_on_a_non_persistent_tape_raises():
    x = normal([3])
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = ad.exp(x)
    np.testing.assert_allclose(tape.jacobian(y, x).numpy(), np.diag(np.exp(x.numpy())), rtol=1e-6)
    with pytest.raises(RuntimeError, match="non-persistent"):
        tape.jacobian(y, x)
    with pytest.raises(RuntimeError, match="non-persistent"):
        tape.gradient(y, x)


def test_jacobian_wrt_nested_sources_keeps_their_structure():
    a, b = normal([2]), normal([3], seed=1)
    w = ad.Variable(np.arange(6.0, dtype=np.float32).reshape(3, 2))
    with ad.GradientTape(persistent=True) as tape:
        tape.watch([a, b])
        y = ad.matmul(ad.reshape(b, [1, 3]), w)[0] * a  # shape (2,)
    sources = {"weights": w, "pair": [a, (b,)]}
    j = tape.jacobian(y, sources)
    assert set(j) == {"weights", "pair"} and isinstance(j["pair"], list)
    assert isinstance(j["pair"][1], tuple) and len(j["pair"][1]) == 1
    assert j["weights"].shape == (2, 3, 2) and j["pair"][0].shape == (2, 2)
    assert j["pair"][1][0].shape == (2, 3)
    bw = b.numpy() @ w.numpy()
    np.testing.assert_allclose(j["pair"][0].numpy(), np.diag(bw), rtol=1e-6)
    np.testing.assert_allclose(j["pair"][1][0].numpy(), (w.numpy() * a.numpy()).T, rtol=1e-6)
    expected_w = np.einsum("o,k,ol->okl", a.numpy(), b.numpy(), np.eye(2))
    np.testing.assert_allclose(j["weights"].numpy(), expected_w, rtol=1e-6)


# ---- random compositions: vectorized vs row loop vs finite differences ----------------------

def _elementwise_ops():
    """Differentiable registry ops of one or two inputs that take no params and broadcast."""
    ops = []
    for name, prim in sorted(REGISTRY.items()):
        if not prim.differentiable or not prim.batch_aware or name in ("Conj", "Cast"):
            continue
        cases = testing.op_cases(prim) if prim.cases is None or prim.cases == \
            testing._BINARY_CASES else None
        if cases and all(params == {} for _, params in cases):
            ops.append(prim)
    return ops


ELEMENTWISE = _elementwise_ops()


def _squash(value, spec, signs):
    """Maps any real tensor smoothly into an op's declared input range."""
    (lo, hi), signed = (spec[0], True) if spec[1] == "signs" else (spec, False)
    inside = lo + (hi - lo) * ad.sigmoid(value)
    return inside * signs if signed else inside


def _random_program(seed):
    """3 to 6 steps; each applies a random op (or a reduction, a matmul) to earlier values."""
    rng = np.random.default_rng(seed)
    steps = []
    for _ in range(rng.integers(3, 7)):
        kind = rng.choice(["op", "op", "op", "op", "reduce", "matmul"])
        if kind == "op":
            prim = ELEMENTWISE[rng.integers(len(ELEMENTWISE))]
            n_in = len(testing.op_cases(prim)[0][0])
            steps.append(("op", prim, [int(rng.integers(2 + len(steps))) for _ in range(n_in)],
                          rng.choice([-1.0, 1.0], size=(2, 3))))
        elif kind == "reduce":
            steps.append(("reduce", int(rng.integers(2 + len(steps)))))
        else:
            steps.append(("matmul", int(rng.integers(2 + len(steps))), rng.standard_normal((3, 3))))
    return steps


def _run_program(steps, x, y):
    values = [x, y]  # x: (3,), y: (2, 3); every value broadcasts against (2, 3)
    for step in steps:
        if step[0] == "op":
            _, prim, picks, signs = step
            domain = prim.domain or (-2.0, 2.0)
            specs = [domain] * len(picks) if testing._is_range(domain) else list(domain)
            args = [_squash(values[k], spec, ad.constant(signs))
                    for k, spec in zip(picks, specs)]
            values.append(prim(*args))
        elif step[0] == "reduce":
            values.append(ad.reduce_sum(values[step[1]], axis=-1, keepdims=True))
        else:
            v = values[step[1]]
            v = v if v.ndim == 2 else ad.reshape(v, [1, -1])
            values.append(ad.matmul(ad.broadcast_to(v, [v.shape[0], 3]), ad.constant(step[2])))
    return values[-1] + 0.0 * values[-2]  # the target touches the last two values at least


@pytest.mark.parametrize("seed", range(40))
def test_jacobian_of_random_compositions_matches_row_loop_and_finite_differences(seed):
    program = _random_program(seed)
    rng = np.random.default_rng(zlib.crc32(f"program-{seed}".encode()))
    x0, y0 = rng.uniform(-2, 2, 3), rng.uniform(-2, 2, (2, 3))
    x, y = ad.constant(x0), ad.constant(y0)
    with ad.GradientTape(persistent=True) as tape:
        tape.watch([x, y])
        out = _run_program(program, x, y)
    vectorized = tape.jacobian(out, [x, y], unconnected_gradients="zero")
    looped = tape.jacobian(out, [x, y], unconnected_gradients="zero", experimental_use_pfor=False)
    numeric = testing.numerical_jacobian(lambda a, b: _run_program(program, a, b), [x0, y0])
    names = [step[1].name if step[0] == "op" else step[0] for step in program]
    for v, lp, fd, source in zip(vectorized, looped, numeric, (x, y)):
        assert v.shape == tuple(out.shape) + tuple(source.shape) and v.dtype == ad.float64
        np.testing.assert_allclose(v.numpy(), lp.numpy(), rtol=1e-12, atol=1e-12,
                                   err_msg=f"vectorized vs row loop, ops {names}")
        np.testing.assert_allclose(v.numpy(), fd, rtol=1e-5, atol=1e-6,
                                   err_msg=f"vectorized vs finite differences, ops {names}")


def test_random_programs_cover_many_op_types():
    used = {step[1].name for seed in range(40) for step in _random_program(seed) if step[0] == "op"}
    assert len(ELEMENTWISE) >= 30 and len(used) >= 25


# ---- chunks ------------------------------------------------------------------------------------

@pytest.mark.parametrize("parallel_iterations", [1, 2, 3, 5, 7, 12, 24, 100])
def test_chunked_jacobian_equals_one_pass(parallel_iterations):
    x, w = normal([4, 3]), ad.Variable(normal([3, 6], seed=2))
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = ad.nn.elu(ad.matmul(x, w))  # 24 rows
    whole = tape.jacobian(y, [x, w])
    chunked = tape.jacobian(y, [x, w], parallel_iterations=parallel_iterations)
    for a, b in zip(whole, chunked):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-7)
    whole = tape.batch_jacobian(y, x)
    chunked = tape.batch_jacobian(y, x, parallel_iterations=parallel_iterations)
    assert chunked.shape == (4, 6, 3)
    np.testing.assert_allclose(whole.numpy(), chunked.numpy(), rtol=1e-6, atol=1e-7)


def test_chunks_that_miss_a_source_still_give_its_rows():
    x, z = normal([4]), normal([2], seed=1)
    with ad.GradientTape(persistent=True) as tape:
        tape.watch([x, z])
        y = ad.concat([ad.sin(x), z * z], axis=0)  # rows 0-3 depend on x only, 4-5 on z only
    for k in (1, 2, 4, 6):
        jx, jz = tape.jacobian(y, [x, z], parallel_iterations=k)
        np.testing.assert_allclose(jx.numpy()[:4], np.diag(np.cos(x.numpy())), rtol=1e-6)
        assert not np.any(jx.numpy()[4:]) and not np.any(jz.numpy()[:4])
        np.testing.assert_allclose(jz.numpy()[4:], np.diag(2 * z.numpy()), rtol=1e-6)


# ---- a VJP that is not batch-aware: applied row by row ---------------------------------------

def _my_scale(calls):
    """x * s with rules that assume one cotangent: reduce_sum would also sum a batch axis."""

    def grad_x(g, ans, x, s):
        calls.append(tuple(g.shape))
        return g * s

    def grad_s(g, ans, x, s):
        calls.append(tuple(g.shape))
        return ad.reduce_sum(g * x)

    return Primitive("MyScale", lambda xp, x, s: x * s, (grad_x, grad_s), register=False,
                     batch_aware=False, saves="inputs", doc="d(x s) = s dx + x ds")


def test_vjp_that_is_not_batch_aware_gives_a_correct_jacobian_row_by_row():
    calls = []
    my_scale = _my_scale(calls)
    x, s = ad.constant([1.0, 2.0, 3.0]), ad.constant(2.5)
    with ad.GradientTape(persistent=True) as tape:
        tape.watch([x, s])
        y = ad.sin(my_scale(x, s))
    jx, js = tape.jacobian(y, [x, s])
    cos = np.cos(x.numpy() * 2.5)
    np.testing.assert_allclose(jx.numpy(), np.diag(cos * 2.5), rtol=1e-6)
    np.testing.assert_allclose(js.numpy(), cos * x.numpy(), rtol=1e-6)
    assert calls and all(shape == (3,) for shape in calls)  # one unbatched cotangent per call
    assert len(calls) == 2 * 3  # both rules, once for each of the 3 rows

    xb = ad.constant(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    with ad.GradientTape() as tape:
        tape.watch(xb)
        yb = my_scale(xb, s) ** 2
    jb = tape.batch_jacobian(yb, xb)
    expected = np.stack([np.diag(2 * 2.5 * 2.5 * row) for row in xb.numpy()])
    np.testing.assert_allclose(jb.numpy(), expected, rtol=1e-6)


# ---- the memory guard --------------------------------------------------------------------------

def _refuse_backward(*args, **kwargs):
    raise AssertionError("the backward pass ran: memory was allocated before the check")


@pytest.mark.parametrize("method", ["jacobian", "batch_jacobian"])
def test_a_jacobian_that_would_not_fit_is_refused_before_allocating(monkeypatch, method):
    x = normal([20, 20])
    with ad.GradientTape(persistent=True) as tape:
        tape.watch(x)
        y = ad.tanh(x)
    monkeypatch.setattr(jacobian_module, "_available_bytes", lambda: 10_000)
    monkeypatch.setattr(jacobian_module, "backward", _refuse_backward)
    with pytest.raises(jacobian_module.JacobianMemoryError, match="parallel_iterations") as info:
        getattr(tape, method)(y, x)
    assert isinstance(info.value, MemoryError) and "GiB" in str(info.value)


def test_parallel_iterations_fits_a_jacobian_that_would_not_fit_at_once(monkeypatch):
    # y: 20 float32 rows; the result is 20 * 20 * 4 = 1600 bytes and each row
    # in flight costs (20 + 20) * 4 = 160 bytes (twice: cotangent and gradient)
    x = normal([20])
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = ad.tanh(x) * 3.0
    expected = np.diag(3.0 * (1 - np.tanh(x.numpy()) ** 2))
    monkeypatch.setattr(jacobian_module, "_available_bytes", lambda: 3_000)
    with pytest.raises(MemoryError, match="parallel_iterations=k"):
        tape.jacobian(y, x)
    # the refusal left the (non-persistent) tape usable: follow the hint
    j = tape.jacobian(y, x, parallel_iterations=4)
    np.testing.assert_allclose(j.numpy(), expected, rtol=1e-6)
