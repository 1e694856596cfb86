"""An argument that does not fit an ``input_signature`` is a TypeError, as in TensorFlow 2
(whatever does not fit: a size, the rank, the dtype), in ``ad.function`` and in a function
a saved model loads. The message names the argument and its spec in the library's words."""

import numpy as np
import pytest

import autodiff as ad

# what the argument is, made by each library (a NumPy int array converts, as in TensorFlow:
# only an int tensor has the wrong dtype)
MISFITS = {"a size": ([2], lambda m: np.float32([1, 2, 3])),
           "the rank": ([None], lambda m: np.float32([[1.0]])),
           "a scalar": ([None], lambda m: np.float32(1.0)),
           "the dtype": ([2], lambda m: m.constant([1, 2])),
           "a list's length": ([2], lambda m: [1.0, 2.0, 3.0])}


def _error(call):
    try:
        call()
    except Exception as err:  # noqa: BLE001 - the class is what is compared
        return type(err)
    return None


@pytest.mark.parametrize("misfit", sorted(MISFITS))
def test_an_argument_that_does_not_fit_the_signature_is_a_type_error(tf, misfit):
    shape, make = MISFITS[misfit]
    for m in (tf, ad):
        f = m.function(lambda x: x * 2, input_signature=[m.TensorSpec(shape, m.float32)])
        assert _error(lambda: f(make(m))) is TypeError, m.__name__


@pytest.mark.parametrize("misfit", ["a size", "the rank", "the dtype"])
def test_a_loaded_function_refuses_a_misfit_with_a_type_error(tf, tmp_path, misfit):
    shape, make = MISFITS[misfit]
    for m in (tf, ad):
        class Doubler(m.Module):
            @m.function(input_signature=[m.TensorSpec(shape, m.float32)])
            def double(self, x):
                return x * 2
        path = str(tmp_path / m.__name__)
        m.saved_model.save(Doubler(), path)
        loaded = m.saved_model.load(path)
        assert _error(lambda: loaded.double(make(m))) is TypeError, m.__name__
        np.testing.assert_allclose(loaded.double(np.ones([1] if None in shape else shape,
                                                         np.float32)).numpy(), 2.0)
