"""Answers a GPU backend gave differently (found on an H200), pinned on every backend.

CuPy's kernels are not NumPy's: an out-of-range fancy index wraps instead of
raising, ``maximum(0, -0.0)`` is ``+0.0``, ``sign`` accepts bools, integer
negative powers answer, and CUDA's solver can return finite numbers for a
matrix holding a NaN. The engine now decides these itself, the same way on
every backend (as TensorFlow's CPU kernels do), so these tests run on NumPy
and the strict stand-in on CI, and on CuPy where a GPU is present.
"""

import numpy as np
import pytest

import autodiff as ad
from autodiff.errors import InvalidArgumentError


def test_an_out_of_range_index_is_refused_before_the_op_runs():
    x = ad.constant(np.arange(12.0).reshape(3, 4))
    with pytest.raises(InvalidArgumentError, match=r"StridedSlice: index 3 is out of bounds for "
                                                   r"axis 0 with size 3 \(input shape \(3, 4\)\)"):
        x[3]
    with pytest.raises(InvalidArgumentError, match=r"StridedSlice: index -4 is out of bounds"):
        x[-4]
    with pytest.raises(InvalidArgumentError, match=r"GatherV2: index 4 is out of bounds for axis 1"):
        x[:, [0, 4]]
    assert x[-3].numpy().tolist() == [0.0, 1.0, 2.0, 3.0]
    assert x[:, [-1, 0]].numpy().tolist() == [[3.0, 0.0], [7.0, 4.0], [11.0, 8.0]]


def test_relu_keeps_the_sign_of_zero_and_passes_nan_as_tensorflow_does():
    y = ad.nn.relu(ad.constant([-0.0, -1.0, np.nan, 2.0])).numpy()
    assert np.signbit(y[0]) and y[1] == 0.0 and not np.signbit(y[1])
    assert np.isnan(y[2]) and y[3] == 2.0


def test_floordiv_of_floats_is_the_floor_of_the_quotient():
    # TensorFlow's kernel: floor(x / y) (tests/conformance/test_conf_edge_inputs.py)
    got = ad.math.floordiv(ad.constant([-5.0, np.inf, -7.0, 0.0]),
                           ad.constant([np.inf, 1.0, 2.0, -3.0])).numpy()
    assert got[0] == 0.0 and np.signbit(got[0])
    assert got[1] == np.inf and got[2] == -4.0
    assert got[3] == 0.0 and np.signbit(got[3])


def test_integers_to_negative_powers_and_the_sign_of_bools_are_refused():
    with pytest.raises(InvalidArgumentError, match="Pow: integers to negative integer powers"):
        ad.pow(ad.constant([2, 3]), ad.constant([1, -1]))
    assert ad.pow(ad.constant([2, 3]), ad.constant([1, 2])).numpy().tolist() == [2, 9]
    with pytest.raises((InvalidArgumentError, TypeError), match="Sign"):
        ad.sign(ad.constant([True, False]))


def test_a_matrix_holding_a_nan_solves_and_inverts_to_nan():
    a = np.array([[3.0, np.nan, -1.0], [0.5, 2.0, 0.0], [1.0, 0.0, 4.0]])
    b = np.ones((3, 2))
    assert np.isnan(ad.linalg.solve(ad.constant(a), ad.constant(b)).numpy()).all()
    assert np.isnan(ad.linalg.inv(ad.constant(a)).numpy()).all()
    batch = np.stack([a, np.eye(3)])
    solved = ad.linalg.solve(ad.constant(batch), ad.constant(np.ones((2, 3, 1)))).numpy()
    assert np.isnan(solved[0]).all() and solved[1].ravel().tolist() == [1.0, 1.0, 1.0]


def test_shapes_of_2_to_the_63_elements_and_integer_erf_are_refused_by_the_engine():
    from autodiff.ops.elementwise import ERF
    with pytest.raises(InvalidArgumentError, match=r"eye: .* an array holds fewer than 2\*\*63"):
        ad.linalg.eye(2 ** 70)
    with pytest.raises(InvalidArgumentError, match=r"zeros: shape"):
        ad.zeros([2 ** 40, 2 ** 40])
    with pytest.raises(InvalidArgumentError, match="Erf: erf takes floating-point values"):
        ERF(ad.constant(1))   # the primitive itself: each library answers ints differently


def test_argmax_over_an_empty_axis_is_refused():
    # TensorFlow: "Reduction axis 0 is empty in shape [0,0]"; CuPy answered
    with pytest.raises(InvalidArgumentError, match=r"ArgMax: reduction axis 0 is empty"):
        ad.argmax(ad.zeros([0, 0]), axis=0)
    with pytest.raises(InvalidArgumentError, match=r"ArgMin: reduction axis 1 is empty"):
        ad.argmin(ad.zeros([2, 0]), axis=1)
    assert ad.argmax(ad.zeros([0, 3]), axis=1).shape == (0,)
