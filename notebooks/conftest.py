"""pytest setup for the lessons: nbval compares outputs after this sanitizing.

``pyproject.toml`` runs pytest with ``--nbval`` (strict: every output is
compared) and ``--nbval-current-env`` (the kernel runs in the Python that runs
pytest, so it imports this checkout's ``autodiff``). This file adds
``nbval_sanitize.cfg``, found next to it, so that pytest may be started from
any directory; a ``--nbval-sanitize-with`` given on the command line wins.
"""

from pathlib import Path

SANITIZE = Path(__file__).with_name("nbval_sanitize.cfg")


def pytest_configure(config):
    if getattr(config.option, "nbval_sanitize_with", "unset") is None:
        config.option.nbval_sanitize_with = str(SANITIZE)
    _build_matplotlib_font_cache()


def _build_matplotlib_font_cache():
    """On a fresh machine, matplotlib's first import builds a font cache and says so on
    stderr. Doing it here, before any kernel starts, keeps that message out of the
    lessons' outputs (where nbval would count it as a difference)."""
    try:
        import matplotlib.font_manager  # noqa: F401
    except ImportError:
        pass
