"""What a server's sandbox binds of the Python environment (``hubspawners.python_mounts``).

A pod's server gets a ``/tmp`` of its own, so a checkout installed in editable mode under
``/tmp`` (a teacher trying the course out of ``/tmp/course``, or a CI clone) disappears from
it and the server's ``nbgrader_config.py`` cannot import ``tapeschool`` (nbgrader then falls
back to a folder exchange: "Error fetching courses!"). The full hub test
(``test_hub_course.py``) runs where the checkout happens to be; these pin the rule itself.
"""


import pytest


@pytest.fixture
def mounts(monkeypatch, nbgrader_installed, prerequisite):
    import importlib.util
    prerequisite(importlib.util.find_spec("jupyterhub") is not None,
                 'the Python package \'jupyterhub\' is not installed (pip install -e ".[hub]")')
    from tapeschool.course import hubspawners

    def python_mounts(package_roots, hidden=()):
        monkeypatch.setattr(hubspawners, "package_folders", lambda: list(package_roots))
        return hubspawners.python_mounts(hidden=hidden)
    return python_mounts


def _bound(args):
    return [args[i + 1] for i, arg in enumerate(args) if arg == "--ro-bind"]


@pytest.fixture
def open_folder():
    """A folder under /tmp that every account may enter (pytest's own are closed: 0700)."""
    import shutil
    import tempfile
    from pathlib import Path
    folder = Path(tempfile.mkdtemp(dir="/tmp"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


def test_a_checkout_inside_a_hidden_folder_is_bound_into_it_again(mounts, open_folder):
    checkout = open_folder / "course" / "tapeschool"
    checkout.mkdir(parents=True)
    assert str(checkout) not in _bound(mounts([checkout]))   # enterable: nothing to do
    args = mounts([checkout], hidden=["/tmp"])
    assert str(checkout) in _bound(args)
    # the folders above it are made (enterable) inside the empty /tmp first
    assert args.index(str(open_folder / "course")) < args.index(str(checkout))


def test_a_checkout_outside_the_hidden_folders_is_left_as_it_is(mounts, open_folder):
    checkout = open_folder / "course" / "tapeschool"
    checkout.mkdir(parents=True)
    (open_folder / "elsewhere").mkdir()
    args = mounts([checkout], hidden=[str(open_folder / "elsewhere"), "/dev/shm"])
    assert str(checkout) not in _bound(args)
