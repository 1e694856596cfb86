"""A fuzz of damaged saved models: only ``FormatError`` escapes, memory stays bounded, no code runs.

Every mutation starts from one good model (two functions, a constant, a
custom gradient) and breaks one thing: a JSON value replaced by a value of
another type, truncation, bit flips, deep nesting, huge declared shapes, a
zip bomb, missing files, extra members, a pickle that would run code.
A load must then succeed (some edits are harmless, e.g. a variable's name)
or raise ``ad.saved_model.FormatError`` (``MissingFileError`` is one).
Edits of the JSON are resealed (the pointer's digest of it recomputed) so
that they meet the structural checks.

One bit flipped in every byte, and names of a megabyte, are in
``test_saved_model_hostile_bytes.py``; links, FIFOs and other hostile
layouts in ``test_saved_model_hostile.py``.
"""

import copy
import hashlib
import json
import os
import shutil
import sys
import tracemalloc
import zipfile

import numpy as np
import pytest

import autodiff as ad
from autodiff.saved_model import store

WRONG_VALUES = [None, -1, 2 ** 70, "x", [], {}, True, 1.5, [[["deep"]]], {"ref": ["node", 9, 9]}]


@ad.custom_gradient
def clip(y):
    def grad(dy):
        return ad.clip_by_value(dy, -0.5, 0.5)
    return y, grad


class Model(ad.Module):
    def __init__(self):
        super().__init__()
        self.w = ad.Variable([1.0, 2.0, 3.0], name="w")

    @ad.function(input_signature=[ad.TensorSpec([3])])
    def f(self, x):
        return ad.reduce_sum(clip(x * self.w) + ad.constant([0.5, 0.25, 0.125]))

    @ad.function(input_signature=[ad.TensorSpec([2, 3])])
    def g(self, x):
        return ad.matmul(x, ad.reshape(self.w, [3, 1]))


@pytest.fixture
def good(tmp_path, engine_backend):
    if engine_backend != "numpy":
        pytest.skip("the files are host data, the same on every backend: fuzzed once")
    path = tmp_path / "good"
    ad.saved_model.save(Model(), str(path))
    return path


def _version(path):
    return store.resolve(str(path))


def _reseal(path):
    """Records the edited saved_model.json's SHA-256 in the pointer, as a forger would.

    The loader compares that digest last, so an edit that is otherwise
    harmless fails there; resealed, the edit meets only the structural
    checks, which are what a hostile (not merely corrupted) file faces.
    """
    pointer_path = os.path.join(path, store.POINTER_FILE)
    pointer = json.load(open(pointer_path))
    raw = open(os.path.join(_version(path), "saved_model.json"), "rb").read()
    pointer["json_sha256"] = hashlib.sha256(raw).hexdigest()
    with open(pointer_path, "w") as f:
        json.dump(pointer, f)


def _load_must_fail_cleanly(path):
    """Loads; True if it failed with FormatError; any other exception fails the test."""
    try:
        ad.saved_model.load(str(path))
    except ad.saved_model.FormatError as err:
        assert str(path) in str(err)   # names the file
        return True
    return False


def _paths(value, here=()):
    """Every path into a JSON document, containers included."""
    yield here
    children = value.items() if isinstance(value, dict) else \
        enumerate(value) if isinstance(value, list) else ()
    for key, child in children:
        yield from _paths(child, here + (key,))


def _set(document, path, value):
    for key in path[:-1]:
        document = document[key]
    document[path[-1]] = value


def test_every_json_value_replaced_by_a_wrong_one(good, tmp_path):
    json_path = os.path.join(_version(good), "saved_model.json")
    original = json.loads(open(json_path).read())
    modules_before = {m for m in sys.modules if not m.startswith("encodings.")}
    tried = refused = 0
    for path in list(_paths(original))[1:]:
        for wrong in WRONG_VALUES:
            document = copy.deepcopy(original)
            _set(document, path, wrong)
            with open(json_path, "w") as f:
                json.dump(document, f)
            _reseal(good)
            tried += 1
            refused += _load_must_fail_cleanly(good)
    print(f"{tried} JSON mutations, {refused} refused")
    assert tried > 1000 and refused > tried // 2
    # nothing was imported (zipfile may load a codec for member names)
    assert {m for m in sys.modules if not m.startswith("encodings.")} == modules_before


def test_truncations_and_bit_flips(good):
    rng = np.random.default_rng(0)
    version = _version(good)
    tried = 0
    for name in ("saved_model.json", "variables.npz", store.POINTER_FILE):
        file = os.path.join(good if name == store.POINTER_FILE else version, name)
        original = open(file, "rb").read()
        cuts = sorted(set(rng.integers(0, len(original), 40).tolist()))
        for damaged in [original[:cut] for cut in cuts] + [
                _flip(original, rng) for _ in range(60)]:
            with open(file, "wb") as f:
                f.write(damaged)
            tried += 1
            try:
                _load_must_fail_cleanly(good)
            except FileNotFoundError:
                assert name == store.POINTER_FILE  # a damaged pointer naming another version
        with open(file, "wb") as f:
            f.write(original)
    print(f"{tried} truncations and bit flips")
    assert ad.saved_model.load(str(good)).f([1.0, 1.0, 1.0]).numpy() == 6.875


def _flip(data, rng):
    data = bytearray(data)
    for _ in range(int(rng.integers(1, 4))):
        data[int(rng.integers(0, len(data)))] ^= 1 << int(rng.integers(0, 8))
    return bytes(data)


def _edit(path, edit):
    json_path = os.path.join(_version(path), "saved_model.json")
    document = json.load(open(json_path))
    edit(document)
    with open(json_path, "w") as f:
        json.dump(document, f)
    _reseal(path)


@pytest.mark.parametrize("edit, message", [
    (lambda d: d["variables"][0].update(shape=[2 ** 40, 2 ** 40]), "over the limit"),
    (lambda d: d["variables"][0].update(shape=[2 ** 20] * 3), "over the limit"),
    (lambda d: d["variables"][0].update(shape=[1] * 100), "rank 100 is over the limit"),
    (lambda d: d["functions"]["f"]["traces"][0]["graph"]["args"][0].update(shape=[-3]),
     "is not a valid shape"),
    (lambda d: d["functions"]["f"]["traces"][0]["graph"]["nodes"][0]["inputs"].__setitem__(
        1, ["var", 7]), r"\$.functions.f.traces\[0\].graph.nodes\[0\].inputs\[1\]: reference"),
])
def test_huge_or_impossible_declarations(good, edit, message):
    _edit(good, edit)
    with pytest.raises(ad.saved_model.FormatError, match=message):
        ad.saved_model.load(str(good))


def test_deep_nesting_is_refused(good):
    json_path = os.path.join(_version(good), "saved_model.json")
    for depth in (100, 3000, 100_000):
        with open(json_path, "w") as f:
            f.write('{"format": ' + "[" * depth + "]" * depth + "}")
        with pytest.raises(ad.saved_model.FormatError, match="nested too deeply"):
            ad.saved_model.load(str(good))


def _rewrite_npz(path, members):
    """Replaces variables.npz by a zip of ``{member name: bytes or (bytes, compression)}``."""
    npz = os.path.join(_version(path), "variables.npz")
    with zipfile.ZipFile(npz, "w") as zf:
        for name, data in members.items():
            data, compression = data if isinstance(data, tuple) else (data, zipfile.ZIP_STORED)
            zf.writestr(name, data, compress_type=compression)
    return npz


def _npy(array):
    import io
    buffer = io.BytesIO()
    np.save(buffer, array, allow_pickle=True)
    return buffer.getvalue()


def _original_members(path):
    npz = os.path.join(_version(path), "variables.npz")
    with zipfile.ZipFile(npz) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


BOMB_MIB = 64


def _bomb():
    return (_npy(np.zeros(BOMB_MIB << 18, np.float32)), zipfile.ZIP_DEFLATED)


def _peak_mib_of_load(path):
    tracemalloc.start()
    try:
        try:
            ad.saved_model.load(str(path))
        except ad.saved_model.FormatError:
            pass
        return tracemalloc.get_traced_memory()[1] / 2 ** 20
    finally:
        tracemalloc.stop()


def test_zip_bombs_are_never_inflated(good):
    members = _original_members(good)
    bomb = _bomb()
    # An unreferenced member is never read: the model loads, memory stays small.
    _rewrite_npz(good, {**members, "bomb.npy": bomb})
    peak = _peak_mib_of_load(good)
    print(f"peak with an unreferenced {BOMB_MIB} MiB bomb: {peak:.1f} MiB")
    assert peak < 8
    assert ad.saved_model.load(str(good)).f([1.0, 1.0, 1.0]).numpy() == 6.875
    # A referenced bomb whose JSON declares its full size: refused by its ratio.
    _rewrite_npz(good, {**members, "variable_0.npy": bomb})
    _edit(good, lambda d: d["variables"][0].update(shape=[BOMB_MIB << 18]))
    with pytest.raises(ad.saved_model.FormatError, match="refusing a ratio"):
        ad.saved_model.load(str(good))
    assert _peak_mib_of_load(good) < 8


@pytest.mark.parametrize("members, message", [
    (lambda m: {k: v for k, v in m.items() if k != "variable_0.npy"}, "'variable_0' is missing"),
    (lambda m: {**m, "variable_0.npy": _npy(np.zeros([3], np.float64))},
     r"header says shape \[3\] of float64"),
    (lambda m: {**m, "variable_0.npy": _npy(np.zeros([1, 3], np.float32))},
     r"header says shape \[1, 3\]"),
    (lambda m: {**m, "variable_0.npy": _npy(np.array([1, 2, 3], object))},
     r"header says shape \[3\] of object"),
    (lambda m: {**m, "variable_0.npy": m["variable_0.npy"][:-1] + b"\x00\x00"},
     "header declares"),
])
def test_wrong_members_are_refused(good, members, message):
    _rewrite_npz(good, members(_original_members(good)))
    with pytest.raises(ad.saved_model.FormatError, match=message):
        ad.saved_model.load(str(good))


class _Evil:
    """Unpickling this would create a directory: proof that code ran."""

    marker = None

    def __reduce__(self):
        return (os.mkdir, (self.marker,))


def test_a_pickle_in_the_arrays_never_runs(good, tmp_path):
    _Evil.marker = str(tmp_path / "code-ran")
    evil = _npy(np.array([_Evil()], dtype=object))
    members = _original_members(good)
    _rewrite_npz(good, {**members, "extra.npy": evil})        # unreferenced: ignored
    assert ad.saved_model.load(str(good)).f([1.0, 1.0, 1.0]).numpy() == 6.875
    _rewrite_npz(good, {**members, "variable_0.npy": evil})
    _edit(good, lambda d: d["variables"][0].update(dtype="object"))
    with pytest.raises(ad.saved_model.FormatError):
        ad.saved_model.load(str(good))
    assert not os.path.exists(_Evil.marker)


@pytest.mark.parametrize("damage", [
    lambda p, v: os.remove(os.path.join(v, "saved_model.json")),
    lambda p, v: os.remove(os.path.join(v, "variables.npz")),
    lambda p, v: shutil.rmtree(v),
    lambda p, v: (os.remove(os.path.join(v, "variables.npz")),
                  os.mkdir(os.path.join(v, "variables.npz"))),
    lambda p, v: open(os.path.join(p, store.POINTER_FILE), "w").write('{"current": "../etc"}'),
    lambda p, v: open(os.path.join(p, store.POINTER_FILE), "w").write("x" * 10_000),
    lambda p, v: (shutil.rmtree(p), open(p, "w").write("a file, not a directory")),
])
def test_missing_or_misplaced_files(good, damage):
    damage(str(good), _version(good))
    with pytest.raises(ad.saved_model.FormatError):
        ad.saved_model.load(str(good))


def test_a_loaded_custom_gradient_of_the_wrong_shape_fails_at_gradient_time(good):
    def wrong(document):
        grad = document["functions"]["f"]["traces"][0]["graph"]["nodes"]
        custom = next(n for n in grad if "custom_gradient" in n)["custom_gradient"]["graph"]
        custom["nodes"].append({"op": "Sum", "inputs": [custom["outputs"]["list"][0]["ref"]],
                                "params": {"axis": None, "keepdims": False}})
        custom["outputs"]["list"][0]["ref"] = ["node", len(custom["nodes"]) - 1, 0]
    _edit(good, wrong)
    loaded = ad.saved_model.load(str(good))
    x = ad.constant([1.0, 2.0, 3.0])
    with ad.GradientTape() as tape:
        tape.watch(x)
        y = loaded.f(x)
    with pytest.raises(ValueError, match=r"saved custom gradient returned, for input 0, a "
                                         r"gradient of shape \[\]"):
        tape.gradient(y, x)

