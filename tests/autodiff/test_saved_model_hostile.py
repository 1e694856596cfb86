"""A hostile model directory: links, special files, entries of the wrong kind, keys misspelt.

Whatever a directory holds, ``load`` must end within a second with an
``ad.saved_model.FormatError`` naming the entry (``UnsafeFileError`` for a
link or special file), never read or block on anything outside the
directory, and ``save`` must never create a file outside it. Each case runs
under a one-second deadline (SIGALRM), so a regression that blocks on a
FIFO fails the test instead of hanging the suite. A key the format does
not define, or one given twice, is refused, even when the pointer's digest
of the JSON is forged to match. Bit flips over every byte and huge names
are in ``test_saved_model_fuzz.py``.
"""

import contextlib
import hashlib
import io
import json
import os
import shutil
import signal
import socket
import stat
import struct
import tracemalloc
import zipfile

import numpy as np
import pytest

import autodiff as ad
from autodiff.saved_model import store

pytestmark = pytest.mark.skipif(os.name != "posix", reason="links, FIFOs and SIGALRM are POSIX")
UnsafeFileError = ad.saved_model.UnsafeFileError


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


class Model(ad.Module):
    def __init__(self, w=2.0):
        super().__init__()
        self.w = ad.Variable(w, name="w")

    @ad.function(input_signature=[ad.TensorSpec([])])
    def f(self, x):
        return halve(x * self.w)


@pytest.fixture
def saved(tmp_path, engine_backend):
    """``(model dir, another model dir beside it)``: the other is what a link would lead to."""
    if engine_backend != "numpy":
        pytest.skip("the directories are host data, the same on every backend: checked once")
    ad.saved_model.save(Model(2.0), str(tmp_path / "m"))
    ad.saved_model.save(Model(7.0), str(tmp_path / "elsewhere"))
    return tmp_path / "m", tmp_path / "elsewhere"


def _version(path):
    return store.resolve(str(path))


def _replace(path, make):
    """Replaces the entry ``path`` by what ``make(path)`` creates."""
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path)
    elif os.path.lexists(path):
        os.remove(path)
    make(path)


def _link_to(target):
    return lambda path: os.symlink(target, path)


def _to_legacy(path):
    """Turns ``path`` into the layout before versions (the two files directly in it)."""
    version = _version(path)
    for name in ("saved_model.json", "variables.npz"):
        os.replace(os.path.join(version, name), path / name)
    os.rmdir(version)
    os.remove(path / store.POINTER_FILE)


def _socket(path):
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.close()   # the socket file stays


# (which entry, how it is replaced, what the message says); `o` is the other model's dir
HOSTILE = [
    ("version", lambda o: _link_to(_version(o)), "is a symbolic link"),
    ("saved_model.json", lambda o: _link_to(os.path.join(_version(o), "saved_model.json")),
     "is a symbolic link"),
    ("variables.npz", lambda o: _link_to(os.path.join(_version(o), "variables.npz")),
     "is a symbolic link"),
    ("saved_model.json", lambda o: lambda p: os.symlink(p, p), "is a symbolic link"),   # itself
    ("saved_model.json", lambda o: _link_to("/dev/urandom"), "is a symbolic link"),
    ("saved_model.json", lambda o: _link_to(str(o / "nothing here")), "is a symbolic link"),
    ("pointer", lambda o: _link_to(o / store.POINTER_FILE), "is a symbolic link"),
    ("pointer", lambda o: os.mkfifo, r"is a FIFO \(named pipe\), not a regular file"),
    ("saved_model.json", lambda o: os.mkfifo, r"is a FIFO \(named pipe\)"),
    ("variables.npz", lambda o: os.mkfifo, r"is a FIFO \(named pipe\)"),
    ("saved_model.json", lambda o: _socket, "is a socket"),
    ("version", lambda o: os.mkfifo, r"is a FIFO \(named pipe\), not a directory"),
    ("version", lambda o: lambda p: open(p, "w").close(), "is a regular file, not a directory"),
    ("legacy saved_model.json", lambda o: _link_to(os.path.join(_version(o), "saved_model.json")),
     "is a symbolic link"),
    ("legacy variables.npz", lambda o: _link_to(os.path.join(_version(o), "variables.npz")),
     "is a symbolic link"),
    ("legacy saved_model.json", lambda o: os.mkfifo, r"is a FIFO \(named pipe\)"),
]


def _entry(path, which):
    if which == "pointer":
        return str(path / store.POINTER_FILE)
    if which == "version":
        return _version(path)
    if which.startswith("legacy "):
        _to_legacy(path)
        return str(path / which.split()[1])
    return os.path.join(_version(path), which)


HOSTILE_IDS = ["version-link", "json-link", "npz-link", "json-link-to-itself",
               "json-link-to-urandom", "json-dangling-link", "pointer-link", "pointer-fifo",
               "json-fifo", "npz-fifo", "json-socket", "version-fifo", "version-file",
               "legacy-json-link", "legacy-npz-link", "legacy-json-fifo"]


@pytest.mark.parametrize("which, make, message", HOSTILE, ids=HOSTILE_IDS)
def test_a_link_or_special_file_is_refused_with_a_typed_error_within_a_second(
        saved, which, make, message):
    path, other = saved
    entry = _entry(path, which)
    _replace(entry, make(other))
    with deadline(1.0), pytest.raises(UnsafeFileError, match=message) as info:
        ad.saved_model.load(str(path))
    assert str(info.value).startswith(entry + ":")   # names the entry itself
    assert float(ad.saved_model.load(str(other)).f(1.0)) == 7.0   # the other model untouched


def test_a_device_node_is_refused_without_being_opened(saved):
    path, _ = saved
    json_path = os.path.join(_version(path), "saved_model.json")
    os.remove(json_path)
    try:
        os.mknod(json_path, 0o644 | stat.S_IFCHR, os.makedev(1, 9))   # /dev/urandom's numbers
    except (PermissionError, OSError) as err:
        pytest.skip(f"cannot make a device node here: {err}")
    with deadline(1.0), pytest.raises(UnsafeFileError, match="is a character device"):
        ad.saved_model.load(str(path))


def test_a_pointer_naming_a_file_and_a_json_linked_to_itself_are_typed_errors(saved):
    # They were a bare NotADirectoryError and a bare OSError [Errno 40].
    path, _ = saved
    version = _version(path)
    json_path = os.path.join(version, "saved_model.json")
    os.remove(json_path)
    os.symlink(json_path, json_path)
    with deadline(1.0), pytest.raises(ad.saved_model.FormatError, match="saved_model.json: is a "
                                                                        "symbolic link"):
        ad.saved_model.load(str(path))
    _replace(version, lambda p: open(p, "w").close())
    with deadline(1.0), pytest.raises(ad.saved_model.FormatError,
                                      match="is a regular file, not a directory"):
        ad.saved_model.load(str(path))


def _huge_member_npz(npz_path, n):
    """An npz whose member 'variable_0.npy' says it holds n float32s (its data is 8 bytes)."""
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f4", "fortran_order": False,
                                                  "shape": (n,)})
    with zipfile.ZipFile(npz_path, "w") as zf:
        zf.writestr("variable_0.npy", header.getvalue() + b"\0" * 8)
    data = bytearray(open(npz_path, "rb").read())
    central = data.rindex(b"PK\x01\x02")           # the member's central directory record
    stated = n * 4 + len(header.getvalue())
    data[central + 20:central + 28] = struct.pack("<II", stated, stated)  # compressed, full size
    open(npz_path, "wb").write(bytes(data))


def test_an_npz_member_stating_more_bytes_than_the_file_holds_is_refused_before_reading(saved):
    path, _ = saved
    version = _version(path)
    n = 1 << 28                                    # 1 GiB of float32 stated, 8 bytes present
    _huge_member_npz(os.path.join(version, "variables.npz"), n)
    json_path = os.path.join(version, "saved_model.json")
    document = json.load(open(json_path))
    document["variables"][0].update(shape=[n])
    raw = json.dumps(document).encode()
    open(json_path, "wb").write(raw)
    pointer = json.load(open(path / store.POINTER_FILE))
    pointer["json_sha256"] = hashlib.sha256(raw).hexdigest()
    json.dump(pointer, open(path / store.POINTER_FILE, "w"))
    tracemalloc.start()
    try:
        with deadline(1.0), pytest.raises(ad.saved_model.FormatError,
                                          match="which the file's .* bytes cannot hold"):
            ad.saved_model.load(str(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20   # nothing was allocated for the stated gigabyte


# ---- saving into a hostile directory -----------------------------------------------------

def test_a_lock_linked_outside_is_refused_and_nothing_is_created_there(saved, tmp_path):
    path, _ = saved
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "precious").write_text("keep me")
    for target in (outside / "created-by-save", outside / "precious"):
        _replace(str(path / store.LOCK_FILE), _link_to(target))
        with deadline(1.0), pytest.raises(UnsafeFileError, match=r"\.lock: is a symbolic link"):
            ad.saved_model.save(Model(), str(path))
        assert sorted(os.listdir(outside)) == ["precious"]
        assert (outside / "precious").read_text() == "keep me"
    assert float(ad.saved_model.load(str(path)).f(1.0)) == 2.0


@pytest.mark.parametrize("entry, make", [
    (store.LOCK_FILE, os.mkfifo),
    ("saved_model.json", os.mkfifo),          # the older layout's file: used to block forever
    (store.POINTER_FILE, _link_to("/dev/null")),
    ("v-000009-0123abcd", _link_to("/tmp")),
], ids=["lock-fifo", "legacy-json-fifo", "pointer-link", "version-link"])
def test_saving_into_a_directory_holding_a_link_or_special_file_refuses_it(tmp_path, entry, make,
                                                                           engine_backend):
    if engine_backend != "numpy":
        pytest.skip("the directories are host data, the same on every backend: checked once")
    path = tmp_path / "m"
    path.mkdir()
    make(str(path / entry))
    before = sorted(os.listdir(path))
    with deadline(1.0), pytest.raises(ValueError, match=f"{entry}.*refus"):
        ad.saved_model.save(Model(), str(path))
    assert sorted(os.listdir(path)) == before   # nothing added, not even the .lock


# ---- keys: misspelt, unknown, repeated; the digest ---------------------------------------

def _json_path(path):
    return os.path.join(_version(path), "saved_model.json")


def _reseal(path):
    """Records the JSON's SHA-256 in the pointer, as a forger would: only the key checks remain."""
    pointer = json.load(open(path / store.POINTER_FILE))
    pointer["json_sha256"] = hashlib.sha256(open(_json_path(path), "rb").read()).hexdigest()
    json.dump(pointer, open(path / store.POINTER_FILE, "w"))


def _rewrite(path, old, new, reseal=True):
    raw = open(_json_path(path), "rb").read()
    assert old in raw, old
    open(_json_path(path), "wb").write(raw.replace(old, new, 1))   # the first one
    if reseal:
        _reseal(path)


def test_one_flipped_bit_in_the_key_custom_gradient_is_refused_not_ignored(saved):
    # "d" (0x64) -> "`" (0x60): the node used to load as a plain IdentityN, and only
    # differentiating it failed, with a LookupError. The format says every key is checked.
    path, _ = saved
    raw = open(_json_path(path), "rb").read()
    flipped = raw.replace(b'"custom_gradient"', b'"custom_gra`ient"')
    assert sum(bin(a ^ b).count("1") for a, b in zip(raw, flipped)) == 1
    open(_json_path(path), "wb").write(flipped)
    for forged in (False, True):
        if forged:
            _reseal(path)
        with deadline(1.0), pytest.raises(ad.saved_model.FormatError,
                                          match=r"nodes\[1\]: unknown key 'custom_gra`ient'"):
            ad.saved_model.load(str(path))


@pytest.mark.parametrize("old, new, message", [
    (b'"trainable": true', b'"trainable": false, "trainable": true',
     "the key 'trainable' appears twice in one object"),
    (b'"n_y": 1', b'"n_y": 1, "n_y": 1', "the key 'n_y' appears twice"),
    (b'"format": "autodiff.saved_model",', b'"format": "autodiff.saved_model", "extra": 1,',
     r"\$: unknown key 'extra'"),
    (b'"trainable": true', b'"trainable": true, "trainable ": true',
     r"\$.variables\[0\]: unknown key 'trainable '"),
    (b'"params": {}', b'"params": {"bogus": 1}', "params: they do not fit op type Mul"),
    (b'"custom_gradients": true', b'"custom_gradients": 1',
     r"\$.custom_gradients: expected bool, got 1"),
    (b'"name": "w"', b'"name": NaN', "NaN is not JSON"),
], ids=["repeated-variable-key", "repeated-custom-key", "unknown-top-key", "unknown-variable-key",
        "unknown-param", "wrong-type-unused-key", "nan"])
def test_unknown_or_repeated_keys_are_refused_even_with_a_forged_digest(saved, old, new, message):
    path, _ = saved
    _rewrite(path, old, new)
    with deadline(1.0), pytest.raises(ad.saved_model.FormatError, match=message) as info:
        ad.saved_model.load(str(path))
    assert _json_path(path) in str(info.value)


@pytest.mark.parametrize("edit, message", [
    (lambda p: p.update(extra=1), "unknown key 'extra'"),
    (lambda p: p.update(json_sha256="ABC"), "json_sha256 is not a SHA-256"),
    (lambda p: p.update(version=True), "pointer version True is not supported"),
], ids=["unknown-key", "digest-not-hex", "version-not-int"])
def test_the_pointer_keys_are_checked_too(saved, edit, message):
    path, _ = saved
    pointer = json.load(open(path / store.POINTER_FILE))
    edit(pointer)
    json.dump(pointer, open(path / store.POINTER_FILE, "w"))
    with deadline(1.0), pytest.raises(ad.saved_model.FormatError, match=message):
        ad.saved_model.load(str(path))
    text = open(path / store.POINTER_FILE).read()
    open(path / store.POINTER_FILE, "w").write(text.replace('{"format"', '{"version": 1, "format"'))
    with pytest.raises(ad.saved_model.FormatError, match="the key 'version' appears twice"):
        ad.saved_model.load(str(path))


def test_an_edit_that_still_parses_is_caught_by_the_digest_the_pointer_recorded(saved):
    path, _ = saved
    _rewrite(path, b'"name": "w"', b'"name": "v"', reseal=False)     # one bit: w -> v
    with deadline(1.0), pytest.raises(ad.saved_model.FormatError,
                                      match="saved_model.json: its SHA-256 is not the one"):
        ad.saved_model.load(str(path))
    _reseal(path)
    assert ad.saved_model.load(str(path)).variables[0].name.startswith("v")
