"""TensorFlow for the conformance suite, imported once, quietly, on few CPU threads.

The ``tf`` fixture hands the tests the TensorFlow module. Without TensorFlow
the suite is skipped on a developer's machine, but under ``CI=true`` the
fixture fails instead: CI installs the ``conformance`` extra and must never
pass by skipping. TensorFlow's C++ logging is turned down before import, and
its thread pools are set to one thread each (on a 2-core CI machine this is
faster for the tiny ops these tests run, and leaves a core to the engine).
"""

import os

import pytest

_TF = None


def _import_tensorflow():
    global _TF
    if _TF is None:
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")  # Eigen's kernels: stable round-off
        os.environ.setdefault("CUDA_VISIBLE_DEVICES", "-1")  # CPU only, even on a GPU machine
        import tensorflow as tf

        try:  # only possible before TensorFlow's runtime starts
            tf.config.threading.set_inter_op_parallelism_threads(1)
            tf.config.threading.set_intra_op_parallelism_threads(1)
        except RuntimeError:
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
