"""Every byte of a small save flipped, and names of a megabyte: the same model or a FormatError.

One bit flipped in any byte of the pointer, ``saved_model.json`` or
``variables.npz`` must either load the very same model (the flip fell in
something unread, such as a zip header's timestamp) or raise
``ad.saved_model.FormatError`` naming the model; never another exception,
never a hang. "The same model" is checked by saving the loaded model again
and comparing the JSON document and every array byte for byte. Flips that
still parse are caught by the digest of the JSON the pointer records, the
arrays' by the zip's CRC-32.

A name of a megabyte (function, variable, argument, op type, dtype, array
key, unknown key, param) loads or is refused, within a second, in a message
that stays short. Every load runs under a one-second deadline (SIGALRM).
"""

import contextlib
import hashlib
import json
import os
import shutil
import signal

import numpy as np
import pytest

import autodiff as ad
from autodiff.saved_model import store

pytestmark = pytest.mark.skipif(not hasattr(signal, "setitimer"),
                                reason="the deadline needs SIGALRM")
MIB = 1 << 20


class Hung(BaseException):
    """Raised by the deadline; a BaseException, so no ``except Exception`` can hide it."""


@contextlib.contextmanager
def deadline(seconds=1.0):
    """Fails the test if it runs over ``seconds`` (SIGALRM interrupts even a blocking open)."""
    def expired(signum, frame):
        raise Hung(f"still running after {seconds} s")
    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@ad.custom_gradient
def halve(y):
    def grad(dy):
        return dy * 0.5
    return y, grad


class Small(ad.Module):
    def __init__(self):
        super().__init__()
        self.w = ad.Variable([1.0, 2.0], name="w")

    @ad.function(input_signature=[ad.TensorSpec([2])])
    def f(self, x):
        return ad.reduce_sum(halve(x * self.w))


@pytest.fixture
def small(tmp_path, engine_backend):
    if engine_backend != "numpy":
        pytest.skip("the files are host data, the same on every backend: fuzzed once")
    path = tmp_path / "small"
    ad.saved_model.save(Small(), str(path))
    return path


def _fingerprint(loaded, where):
    """The model as its own save writes it: the JSON document and every array, byte for byte."""
    ad.saved_model.save(loaded, where)
    version = store.resolve(where)
    document = json.load(open(os.path.join(version, "saved_model.json")))
    with np.load(os.path.join(version, "variables.npz")) as npz:
        arrays = {k: (npz[k].dtype.str, npz[k].shape, npz[k].tobytes()) for k in npz.files}
    shutil.rmtree(where)
    return document, arrays


def test_one_bit_flipped_in_any_byte_loads_the_same_model_or_is_refused(small, tmp_path):
    again = str(tmp_path / "again")
    expected = _fingerprint(ad.saved_model.load(str(small)), again)
    version = store.resolve(str(small))
    files = [os.path.join(small, store.POINTER_FILE), os.path.join(version, "saved_model.json"),
             os.path.join(version, "variables.npz")]
    same = refused = 0
    for file in files:
        original = open(file, "rb").read()
        for i in range(len(original)):       # the bit flipped moves along: all 8 are covered
            damaged = bytearray(original)
            damaged[i] ^= 1 << (i % 8)
            open(file, "wb").write(bytes(damaged))
            try:
                with deadline(1.0):
                    loaded = ad.saved_model.load(str(small))
            except ad.saved_model.FormatError as err:
                assert str(small) in str(err), (file, i, err)
                refused += 1
                continue
            assert _fingerprint(loaded, again) == expected, f"{file}: byte {i} flipped loads " \
                                                            f"another model"
            same += 1
        open(file, "wb").write(original)
    print(f"{same + refused} one-bit flips: {refused} refused, {same} the same model")
    assert refused > 0.8 * (same + refused)


def _edit(path, edit):
    """Edits saved_model.json and reseals it (records its new digest in the pointer)."""
    json_path = os.path.join(store.resolve(str(path)), "saved_model.json")
    document = json.load(open(json_path))
    edit(document)
    raw = json.dumps(document).encode()
    open(json_path, "wb").write(raw)
    pointer = json.load(open(path / store.POINTER_FILE))
    pointer["json_sha256"] = hashlib.sha256(raw).hexdigest()
    json.dump(pointer, open(path / store.POINTER_FILE, "w"))


def _node(document):
    return document["functions"]["f"]["traces"][0]["graph"]["nodes"][0]


@pytest.mark.parametrize("edit, loads", [
    (lambda d: d.update(functions={"f" * MIB: d["functions"]["f"]}), True),
    (lambda d: d["variables"][0].update(name="w" * MIB), True),
    (lambda d: d["functions"]["f"].update(arg_names=["x" * MIB]), True),
    (lambda d: _node(d).update(op="Op" * (MIB // 2)), False),
    (lambda d: d["variables"][0].update(dtype="f" * MIB), False),
    (lambda d: d["variables"][0].update(array="a" * MIB), False),
    (lambda d: d.update({"k" * MIB: 1}), False),
    (lambda d: _node(d)["params"].update({"p" * MIB: 1}), False),
], ids=["function", "variable", "argument", "op-type", "dtype", "array-key", "top-key", "param"])
def test_names_of_a_megabyte_load_or_are_refused_within_a_second_in_a_short_message(small, edit,
                                                                                     loads):
    _edit(small, edit)
    try:
        with deadline(1.0):
            loaded = ad.saved_model.load(str(small))
    except ad.saved_model.FormatError as err:
        assert not loads, err
        assert str(small) in str(err) and len(str(err)) < 1000
        return
    assert loads
    (function,) = loaded.functions.values()
    assert float(function(ad.constant([1.0, 1.0]))) == 3.0     # and it works


def test_a_path_or_pointer_of_a_megabyte_is_refused_within_a_second(small):
    with deadline(1.0), pytest.raises(ad.saved_model.FormatError, match="cannot be opened") as info:
        ad.saved_model.load(str(small / ("m" * MIB)))
    assert len(str(info.value)) < 1000
    pointer = json.load(open(small / store.POINTER_FILE))
    pointer["current"] = "v-" + "0" * MIB + "-0123abcd"
    json.dump(pointer, open(small / store.POINTER_FILE, "w"))
    with deadline(1.0), pytest.raises(ad.saved_model.FormatError, match="over the 4096"):
        ad.saved_model.load(str(small))
