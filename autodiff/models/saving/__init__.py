"""Saving models in Keras 3's own file formats.

Reading order: ``atomic.py`` (a file is written whole or not at all),
``weights_h5.py`` (where each variable lives in a ``.weights.h5`` file),
``config.py`` (a model's architecture as Keras' ``config.json``, and back,
without running any code from the file), ``model_io.py`` (``save_weights``,
``load_weights``, ``save``, ``load_model``: the ``.keras`` zip).
"""
