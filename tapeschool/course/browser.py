"""A hub user in Chromium: log in, reach JupyterLab, fetch a lesson and open it.

What a student does in a browser on the course's hub (``localhub.LocalHub``),
for the hub test (tests/hub) and the load benchmark (benchmarks/course_load.py),
which both drive it the same way::

    with chromium() as browser:
        ada = HubUser("ada", browser, hub)
        pressed = ada.log_in()                # the hub's login page, "Sign in"
        ada.wait_for_lab()                    # JupyterLab up, nbgrader's menu in it
        ada.fetch_and_open("lesson01", "01_gradients_and_tapes.ipynb")   # kernel idle
        ada.run_in_kernel("import os; print(os.getcwd())")   # a kernel of her own server
        ada.close()

Chromium is Debian's (``/usr/bin/chromium``, or ``$TAPESCHOOL_CHROMIUM``) driven
by Playwright's sync API; Playwright's own browser download is never used. A
user's page may only reach the hub: any other address is refused and recorded
in ``HubUser.outside``.

What it must not do: touch nbgrader's exchange or the course directory (a user
gets lessons through JupyterLab, as a student does), or grade anything.
"""

import contextlib
import os
import re
import time
import urllib.parse

CHROMIUM = os.environ.get("TAPESCHOOL_CHROMIUM", "/usr/bin/chromium")
# Headless in a container as root: no sandbox, no GPU, and nothing that phones home.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 "--disable-dev-shm-usage"]

# The notebook in front is open, its kernel connected and idle.
NOTEBOOK_READY = """() => {
  const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const kernel = panel && panel.sessionContext && panel.sessionContext.session &&
                 panel.sessionContext.session.kernel;
  return !!panel && !!panel.content && !!panel.content.widgets &&
         panel.content.widgets.length > 0 && !!kernel &&
         kernel.connectionStatus === "connected" && kernel.status === "idle";
}"""


# A kernel of the user's own server, started by JupyterLab's service manager in the page.
RUN_IN_KERNEL = """async ([code, timeout]) => {
  const kernel = await window.jupyterapp.serviceManager.kernels.startNew({name: "python3"});
  try {
    let out = "";
    const future = kernel.requestExecute({code, stop_on_error: true});
    future.onIOPub = (msg) => {
      if (msg.header.msg_type === "stream") out += msg.content.text;
      if (msg.header.msg_type === "error") out += msg.content.ename + ": " + msg.content.evalue;
    };
    const late = new Promise((_, reject) => setTimeout(() => reject(new Error("timeout")), timeout));
    await Promise.race([future.done, late]);
    return out;
  } finally {
    await kernel.shutdown();
  }
}"""


@contextlib.contextmanager
def chromium():
    """A headless Debian Chromium under Playwright's sync API, closed on the way out.
    Playwright's sync API belongs to one thread: start one of these per thread."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                             headless=True)
        try:
            yield browser
        finally:
            browser.close()


class HubUser:
    """One hub user's browser context (cookies of their own) on a ``LocalHub``.

    Args:
        name: the hub user name (the hub's shared password logs them in).
        browser: a Playwright browser (``chromium()``).
        hub: the running ``localhub.LocalHub``.
        viewport: the page's ``(width, height)``.
        timeout_ms: Playwright's default wait for anything on the page.
    """

    def __init__(self, name, browser, hub, viewport=(1400, 1000), timeout_ms=30_000):
        self.name, self.hub = name, hub
        self.context = browser.new_context(viewport={"width": viewport[0],
                                                     "height": viewport[1]})
        self.outside = []   # addresses the page tried to reach beyond the hub
        self.context.route("**/*", self._hub_only)
        self.page = self.context.new_page()
        self.page.set_default_timeout(timeout_ms)

    def _hub_only(self, route):
        url = route.request.url
        if url.startswith((self.hub.url + "/", "data:", "blob:")):
            route.continue_()
        else:
            self.outside.append(url)
            route.abort()

    def log_in(self, next_url=None):
        """Fills in the hub's login form and presses *Sign in*; the user's server starts
        (or ``next_url`` opens).

        Returns:
            ``time.monotonic()`` when *Sign in* was pressed.
        """
        query = f"?next={urllib.parse.quote(next_url)}" if next_url else ""
        self.page.goto(f"{self.hub.url}/hub/login{query}")
        self.page.fill("#username_input", self.name)
        self.page.fill("#password_input", self.hub.password)
        pressed = time.monotonic()
        self.page.click("#login_submit")
        return pressed

    def wait_for_lab(self, timeout=180, patience=20):
        """Waits until the hub's spawn-pending page has sent the user on to JupyterLab and
        nbgrader's menu is in it.

        On a busy machine that page's scripts can time out (RequireJS gives up after 7 s),
        and it then waits for ever: a student reloads it, and so does this, once the hub has
        said for ``patience`` seconds that the server is ready.

        Returns:
            How many times the page was reloaded.
        """
        lab = re.compile(rf".*/user/{re.escape(self.name)}/lab.*")
        deadline, ready_since, reloads = time.monotonic() + timeout, None, 0
        while True:
            try:
                self.page.wait_for_url(lab, timeout=5_000)
                break
            except Exception:  # noqa: BLE001 (Playwright's timeout: look again)
                if time.monotonic() > deadline:
                    raise
            status, user = self.hub.api("GET", f"/users/{self.name}")
            server = (user or {}).get("servers", {}).get("", {})
            if status == 200 and server.get("ready") and "/spawn-pending/" in self.page.url:
                ready_since = ready_since or time.monotonic()
                if time.monotonic() - ready_since > patience:
                    self.page.reload()
                    reloads, ready_since = reloads + 1, None
        left_ms = max(1, deadline - time.monotonic()) * 1000
        self.page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader").first.wait_for(
            timeout=left_ms)
        return reloads

    def get(self, path):
        """GET ``path`` on the hub through this user's session (their cookies).

        Returns:
            ``(status, final URL)``.
        """
        response = self.page.request.get(self.hub.url + path)
        return response.status, response.url

    def menu(self, menu, item):
        """Clicks JupyterLab's menu ``menu``, then its item ``item``."""
        self.page.locator(".lm-MenuBar-itemLabel", has_text=menu).first.click()
        label = self.page.locator(".lm-Menu-itemLabel", has_text=re.compile(rf"^{item}$"))
        self.page.locator(".lm-Menu-item").filter(has=label).click()

    def assignments_panel(self):
        """nbgrader's Assignment List (its tab, or *Nbgrader > Assignment List*)."""
        tab = self.page.locator(".lm-TabBar-tab", has_text="Assignments")
        if tab.count():
            tab.first.click()
        else:
            self.menu("Nbgrader", "Assignment List")
        return self.page.locator("#nbgrader-assignment-list")

    def fetch_and_open(self, assignment, notebook, timeout_ms=90_000):
        """*Fetch* a released assignment in the Assignment List, open its notebook and wait
        for the notebook's kernel to be idle.

        Args:
            assignment: ``"lesson01"``.
            notebook: its notebook's file name (``"01_gradients_and_tapes.ipynb"``).
            timeout_ms: how long the kernel may take to start.
        """
        panel = self.assignments_panel()
        released = panel.locator("#released_assignments_list .list_item", has_text=assignment)
        released.locator("button", has_text="Fetch").click()
        fetched = panel.locator("#fetched_assignments_list > .list_item", has_text=assignment)
        fetched.locator("a.assignment-notebooks-link").click()
        fetched.locator(".nested_list_item a", has_text=notebook.removesuffix(".ipynb")).click()
        self.page.wait_for_function(NOTEBOOK_READY, timeout=timeout_ms)

    def run_in_kernel(self, code, timeout_ms=90_000):
        """Runs ``code`` in a new ``python3`` kernel of this user's JupyterLab, started and
        driven by the page as a notebook's would be, then shuts the kernel down.

        Returns:
            What the code printed (and an error's ``name: value``, if it raised).
        """
        return self.page.evaluate(RUN_IN_KERNEL, [code, timeout_ms])

    def close(self):
        self.context.close()
