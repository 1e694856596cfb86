"""Conformance suite: the same test code runs on ``autodiff`` and on TensorFlow 2.

Each test is written once as a function of a module ``m`` (``tf`` or ``ad``);
``harness.py`` runs it on both and compares the normalized results. The random
program generator lives in ``programs.py`` (specs and runner) and ``shrink.py``;
the ops it draws in ``program_ops.py``, ``program_ops_indexing.py`` (gathers) and
``program_ops_nn.py`` (convolutions and pools).
"""
