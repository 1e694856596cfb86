"""Reading a traced value on the host raises TensorFlow 2's error (issue 33): ``.numpy()``,
``float()``, ``int()``, ``complex()``, ``np.asarray()``, ``np.array()`` and indexing a list,
on a tensor computed from the function's arguments and on a Variable, inside a traced
function. The same reads of a constant, and every read eagerly, still give the value."""

import numpy as np
import pytest

import autodiff as ad

READS = {"numpy": lambda t: t.numpy(), "float": float, "int": int, "complex": complex,
         "asarray": np.asarray, "array": np.array, "index": lambda t: [1.0, 2.0, 3.0, 4.0][t]}


def _error(xp, read, of_variable):
    """The exception type the read raises inside a traced function (None if none)."""
    v = xp.Variable(3 if read == "index" else 3.0)

    def body(x):
        value = v if of_variable else (x * 2 if read == "index" else x * 2.0)
        return x * 0 + READS[read](value)

    f = xp.function(body, autograph=False)
    try:
        f(xp.constant(1 if read == "index" else 1.0))
    except Exception as err:   # noqa: BLE001 - the type is what is compared
        return type(err)
    return None


@pytest.mark.parametrize("of_variable", [False, True], ids=["tensor", "variable"])
@pytest.mark.parametrize("read", sorted(READS))
def test_reading_a_traced_value_raises_tensorflows_error(tf, read, of_variable):
    want = _error(tf, read, of_variable)
    assert want is not None, f"TensorFlow accepted {read}"
    got = _error(ad, read, of_variable)
    assert got is want, f"{read}: TensorFlow raises {want.__name__}, ad {getattr(got, '__name__', got)}"


@pytest.mark.parametrize("read", sorted(READS))
def test_the_same_reads_of_a_constant_inside_and_of_a_tensor_eagerly_give_the_value(read):
    c = ad.constant(2 if read == "index" else 2.0)
    expected = 3.0 if read == "index" else 2.0    # [1, 2, 3, 4][2], or the value
    f = ad.function(lambda x: x * 0.0 + ad.constant(np.real(READS[read](c)), ad.float32),
                    autograph=False)
    assert float(f(ad.constant(1.0))) == expected
    assert float(np.real(READS[read](c))) == expected
