"""Opening player pages in the test Chromium: one context per test, page errors kept.

    >>> with player_page(chromium, 1280, 720) as (page, errors):
    ...     open_player(page, path)
    ...     assert errors == []

``lab_context``: a context for a test JupyterLab that reaches nothing but that
server (and data: and blob: URLs): the offline classroom.
"""

import contextlib


@contextlib.contextmanager
def player_page(chromium, width=1280, height=720, timeout=30_000):
    """A fresh offline page at ``width`` x ``height`` and the list its script errors go to."""
    context = chromium.new_context(offline=True, viewport={"width": width, "height": height})
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.set_default_timeout(timeout)
    try:
        yield page, errors
    finally:
        context.close()


def open_player(page, path):
    """Goes to the exported player at ``path`` and waits for its first frame."""
    page.goto(path.as_uri())
    page.locator(".tp-root[data-frame]").wait_for()


def lab_context(chromium, base, width, height):
    """A browser context of ``width`` x ``height`` whose requests go only to ``base``."""
    context = chromium.new_context(viewport={"width": width, "height": height})
    context.route("**/*", lambda route: route.continue_()
                  if route.request.url.startswith((base + "/", "data:", "blob:")) else route.abort())
    return context
