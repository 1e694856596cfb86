"""Derivatives as pictures: f and its derivatives, Jacobians and Hessians.

Reading order: ``derivative_plot.py`` (``derivatives`` from nested tapes,
``plot_derivatives``, and ``DerivativeExplorer``: sliders for the point and
the order; needs ipywidgets), ``jacobian_view.py`` (``jacobian_image``,
``hessian_image``, ``batch_jacobian_patches``: zero-centred matplotlib
Figures).

May import: the engine's public API only; no other widgets package.
matplotlib only inside functions, so ``jacobian_view`` imports cheaply.
"""
