"""Shared setup for the real-browser tests: Debian's Chromium driven by Playwright.

- Chromium is the session's one browser (the ``chromium`` fixture of
  tests/conftest.py, shared with tests/hub), the system package (``apt-get install chromium``, which
  ``.ci/run`` does); Playwright's own browser download is never used, so no
  ``playwright install``. ``TAPESCHOOL_CHROMIUM`` points at another binary.
- A missing browser, ``playwright`` or ``jupyterlab`` skips these tests on a
  laptop, but under ``CI=true`` it FAILS them: a CI run that silently skipped
  its only real-browser check would look green while proving nothing (the
  ``prerequisite`` fixture of tests/conftest.py).
- Screenshots go to the ``artifacts_dir`` fixture's folder (tests/conftest.py):
  ``$ARTIFACTS_DIR``, default ``artifacts/`` at the repo root, which CI keeps.
- ``player_demo.ipynb`` is the notebook the JupyterLab test opens; nbval
  (``--nbval`` in pyproject.toml) must not run it as a lesson: its widget
  output holds fresh model ids on every run.
"""

collect_ignore = ["player_demo.ipynb"]
