"""f-strings of tensors as TensorFlow 2.21 writes them: an EagerTensor formats its value
(lessons 1 and 3 print gradients with ``f"{name:>8}: {g}"``), ``print`` shows the wrapper,
and a Variable in an f-string shows the variable."""

import numpy as np
import pytest

import autodiff as ad

CASES = [(2.0, ""), (2.0, ">8"), (2.0, ".3f"), (-0.5, "+.2e"), ([1.0, 2.0], ""),
         ([[1.5, -2.0], [0.0, 3.25]], ""), (7, ""), (7, "03d"), (True, "")]


@pytest.mark.parametrize("value, spec", CASES)
def test_a_tensor_in_an_f_string_reads_as_in_tensorflow(tf, value, spec):
    want = format(tf.constant(value), spec)
    got = format(ad.constant(value), spec)
    assert got == want, (value, spec)


def test_an_array_with_a_number_format_is_refused_as_in_tensorflow(tf):
    for m in (tf, ad):
        with pytest.raises(TypeError):
            format(m.constant([1.0, 2.0]), ".2f")


def test_print_and_an_unformatted_variable_still_show_the_wrapper(tf):
    assert str(tf.constant(2.0)).startswith("tf.Tensor(2.0")
    assert str(ad.constant(2.0)).startswith("ad.Tensor(2.0")
    assert f"{tf.Variable(3.0)}".startswith("<tf.Variable 'Variable:0' shape=() dtype=float32")
    assert f"{ad.Variable(3.0)}".startswith("<ad.Variable 'Variable:0' shape=() dtype=float32")
    np.testing.assert_equal(f"{ad.Variable(3.0):.2f}", "3.00")   # an extension: TF refuses
