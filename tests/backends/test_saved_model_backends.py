"""A saved model is host data (JSON and .npz): it loads onto whichever backend is active."""

import numpy as np
import pytest

import autodiff as ad


class Model(ad.Module):
    def __init__(self):
        super().__init__()
        self.dense = ad.layers.Dense(2, activation="tanh")
        self.scale = ad.Variable([2.0, 3.0], name="scale")

    @ad.function(input_signature=[ad.TensorSpec([None, 3], ad.float32)])
    def __call__(self, x):
        return self.dense(x) * self.scale


X = np.array([[0.5, -1.0, 2.0], [1.0, 0.0, -0.5]], dtype=np.float32)


def _run(model):
    x = ad.constant(X)
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = model(x)
    return y, tape.gradient(y, x)


@pytest.mark.parametrize("saved_on, loaded_on", [("numpy", "strict"), ("strict", "numpy")])
def test_a_model_saved_on_one_backend_loads_and_runs_on_the_active_one(tmp_path, saved_on,
                                                                      loaded_on):
    with ad.use_backend(saved_on):
        ad.random.set_seed(1)
        model = Model()
        y_saved, g_saved = _run(model)
        ad.saved_model.save(model, str(tmp_path / "model"))
    with ad.use_backend(loaded_on):
        loaded = ad.saved_model.load(str(tmp_path / "model"))
        assert {v.backend for v in loaded.variables} == {loaded_on}
        y, g = _run(loaded)
    assert y.backend == g.backend == loaded_on
    np.testing.assert_allclose(y.numpy(), y_saved.numpy(), rtol=1e-6)
    np.testing.assert_allclose(g.numpy(), g_saved.numpy(), rtol=1e-6)
