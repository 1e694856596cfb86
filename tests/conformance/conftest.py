"""TensorFlow for the conformance suite, imported once, quietly, on few CPU threads.

The ``tf`` fixture hands the tests the TensorFlow module. Without TensorFlow
the suite is skipped on a developer's machine, but under ``CI=true`` the
fixture fails instead: CI installs the ``conformance`` extra and must never
pass by skipping. TensorFlow's C++ logging is turned down before import,
oneDNN is turned off (Eigen's kernels: the same round-off on every CPU), GPUs
are hidden from TensorFlow, and its thread pools get one thread each. Measured
on the 2-core machine: the suite takes the same time (about 55 s) with one
thread or TensorFlow's default pools; one thread keeps it predictable.
"""

import os

import pytest

_TF = None


def _import_tensorflow():
    global _TF
    if _TF is None:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")  # Eigen's kernels: stable round-off
        import tensorflow as tf

        # CPU only, even where a full TensorFlow sees a GPU (tf's setting, not
        # CUDA_VISIBLE_DEVICES, which would hide the GPU from CuPy's tests too)
        settings = (lambda: tf.config.set_visible_devices([], "GPU"),
                    lambda: tf.config.threading.set_inter_op_parallelism_threads(1),
                    lambda: tf.config.threading.set_intra_op_parallelism_threads(1))
        for setting in settings:
            try:
                setting()
            except RuntimeError:  # only possible before TensorFlow's runtime starts
                pass
        tf.get_logger().setLevel("ERROR")
        _TF = tf
    return _TF


@pytest.fixture(scope="session")
def tf():
    """The TensorFlow module (skipped locally when missing, a failure under CI=true)."""
    try:
        return _import_tensorflow()
    except ImportError as exc:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail(f"CI=true but TensorFlow is not importable ({exc}); "
                        "install the extra: python -m pip install -e '.[conformance]'")
        pytest.skip(f"TensorFlow is not installed ({exc}); pip install -e '.[conformance]'")
