"""What a traced tensor refuses: deciding a Python ``if`` and being read on the host.

While ``ad.function`` traces, a tensor computed from the function's arguments or variables
holds only this call's value. Using it as a Python bool, or reading it with ``.numpy()``,
``float()`` or ``np.asarray()``, would bake this call's answer into the trace for every
later call, so the tensor raises TensorFlow's error for each instead
(``tensor.Tensor.__bool__``, ``numpy``, ``__float__`` ... call these). AutoGraph converts
the usual cause, an ``if``/``while``/``for`` on a tensor (``autodiff/autograph``).
"""

__all__ = ["refuse_if_traced", "refuse_value_if_traced"]


def refuse_if_traced(tensor):
    """A tensor that changes from call to call cannot decide a Python ``if`` while
    ``ad.function`` traces: the trace would keep this call's branch for every later call."""
    from . import validate
    if validate.traced(tensor):
        from .errors import OperatorNotAllowedInGraphError
        raise OperatorNotAllowedInGraphError(
            "Using a traced ad.Tensor as a Python `bool` is not allowed: its value changes "
            "from call to call, and the trace would keep this call's answer for every later "
            "call. Inside ad.function, AutoGraph (autograph=True, the default) turns an "
            "`if`, `while` or `for` written directly in the decorated function into "
            "ad.cond / ad.while_loop; elsewhere (a function it calls, a lambda, "
            "autograph=False) use ad.cond, ad.while_loop or ad.where, or decorate that "
            "function with ad.function too.")


# What TensorFlow 2 raises when a value is read on the host inside tf.function, for a
# symbolic tensor and for a Variable (tests/conformance/test_conf_traced_values.py).
_TRACED_READ_ERRORS = {".numpy()": (AttributeError, NotImplementedError),
                       "np.asarray()": (NotImplementedError, NotImplementedError),
                       "float()": (TypeError, AttributeError), "int()": (TypeError, AttributeError),
                       "complex()": (TypeError, AttributeError), "index()": (TypeError, TypeError)}


def refuse_value_if_traced(tensor, how):
    """Raises TensorFlow's error for ``how`` (``.numpy()``, ``float()`` ...) when
    ``ad.function`` is tracing and ``tensor``'s value comes from the traced function's
    arguments or from a Variable: a value read on the host would be this call's, kept by
    the trace for every later call. The engine's own reads go through ``backend``."""
    from . import validate
    if validate.traced(tensor):
        from .variable import Variable
        variable = isinstance(tensor, Variable)
        what = "a Variable" if variable else "a tensor computed from its arguments or variables"
        raise _TRACED_READ_ERRORS.get(how, (TypeError, TypeError))[variable](
            f"{how} of a traced ad.Tensor: ad.function is tracing, and this is {what}, whose "
            f"value changes from call to call; the trace would keep this call's value for "
            f"every later call. Compute with the library's ops instead (ad.where, ad.cond, "
            f"ad.cast(step, ad.float32) ...), return the tensor and read it outside, or call "
            f"the function without ad.function.")
