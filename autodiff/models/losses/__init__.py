"""``ad.keras.losses``: Keras 3's losses, written with the engine's ops.

Each loss comes in two forms, as in Keras: a function,
``binary_crossentropy(y_true, y_pred)``, gives one loss per sample (the last
axis averaged or summed away); a class, ``BinaryCrossentropy()``, also weighs
those by ``sample_weight`` and reduces them, by default to their mean.

    >>> bce = ad.losses.BinaryCrossentropy()
    >>> p = ad.constant([[0.2, 0.9]])
    >>> with ad.GradientTape() as tape:
    ...     tape.watch(p)
    ...     loss = bce([[0.0, 1.0]], p)         # (-log 0.8 - log 0.9) / 2
    >>> tape.gradient(loss, p).numpy()          # [1/0.8, -1/0.9] / 2
    array([[ 0.625    , -0.5555556]], dtype=float32)

The arithmetic is Keras 3's TensorFlow backend, op for op, so float32
results agree with ``tf.keras`` to rounding:

- probabilities (``from_logits=False``) are clipped to ``[1e-7, 1 - 1e-7]``
  and logged, nothing added inside the log; where the clip bites, the
  gradient is zero (a prediction of exactly 0 or 1 gets no push). On
  logits, the stable ``ad.nn`` cross-entropies do the work, as ``tf.nn``'s.
- ``y_true`` is cast to ``y_pred``'s dtype; a class first casts both to its
  ``dtype``, float32 by default, even for float64 inputs (Keras' floatx).
- ``'sum_over_batch_size'`` divides the weighted sum by the number of
  per-sample losses (not by the sum of the weights).

Nothing reads a tensor's values on the host (shapes are static, as in a
trace): tapes differentiate every loss and ``ad.function`` traces it. This
file owns the losses; the namespaces that export them live elsewhere.
"""

from .classes import (BinaryCrossentropy, CategoricalCrossentropy, Huber, Loss,
                      MeanAbsoluteError, MeanSquaredError, SparseCategoricalCrossentropy)
from .per_sample import (binary_crossentropy, categorical_crossentropy, huber,
                         mean_absolute_error, mean_squared_error, sparse_categorical_crossentropy)

mse = MSE = mean_squared_error     # Keras' short names
mae = MAE = mean_absolute_error

__all__ = ["Loss", "MeanSquaredError", "MeanAbsoluteError", "BinaryCrossentropy",
           "CategoricalCrossentropy", "SparseCategoricalCrossentropy", "Huber",
           "mean_squared_error", "mean_absolute_error", "binary_crossentropy",
           "categorical_crossentropy", "sparse_categorical_crossentropy", "huber",
           "mse", "MSE", "mae", "MAE"]


def __dir__():
    return __all__
