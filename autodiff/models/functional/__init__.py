"""The functional API: ``ad.keras.Input``, layers called on it, ``Model(inputs, outputs)``.

Reading order: ``keras_tensor.py`` (placeholders, and what a layer called on
one records), ``graph.py`` (the recorded calls put in order, as Keras 3's
``map_graph``), ``model.py`` (the model that runs them), ``summary.py``
(``model.summary()``'s table for every kind of model).
"""
