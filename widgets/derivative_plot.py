"""``widgets.derivative_plot``, an old path: the module is ``widgets/plots/derivative_plot.py``."""
import sys

from .plots import derivative_plot

sys.modules[__name__] = derivative_plot   # this path names that module, private names included
