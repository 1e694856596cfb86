"""pytest setup for the student editions: nbval runs them lax.

``pyproject.toml`` runs every collected notebook with ``--nbval`` (strict).
A student edition has blanks and cleared exercise outputs, so comparing its
outputs would mean nothing; what must hold is that "Run All" finishes. Here,
and only for the notebooks in this folder, nbval runs every cell in a fresh
kernel and fails on an error, but compares no outputs (what ``--nbval-lax``
does). A cell may still opt in with nbval's ``nbval-check-output`` tag.
"""

import pytest


@pytest.hookimpl(wrapper=True)
def pytest_collect_file(file_path, parent):
    collected = yield
    for node in collected or []:
        if file_path.suffix == ".ipynb" and hasattr(node, "compare_outputs"):
            node.compare_outputs = False  # nbval's IPyNbFile: lax, as --nbval-lax
    return collected
