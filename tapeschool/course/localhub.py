"""A real JupyterHub on loopback for a course: for the tests, the benchmark and a dry run.

It runs the hub that ``hub_config.write_hub_config`` describes, with three
test-only choices added at the end of its ``jupyterhub_config.py``:
JupyterHub's ``DummyAuthenticator`` (one shared password),
``SimpleLocalProcessSpawner`` (every user's server runs as the OS user running
this, with a home folder of its own under ``<workdir>/home/<user>``), and
configurable-http-proxy from npm, all on 127.0.0.1 with free ports::

    with LocalHub(workdir, course, students=["ada", "ben"], instructors=["ines"]) as hub:
        hub.url                      # http://127.0.0.1:<port>: log in at hub.url + "/hub/login"
        hub.api("GET", "/users")     # the hub's REST API, with an admin token of its own

``SimpleLocalProcessSpawner`` isolates nothing on disk: a student's kernel can read
every home folder and the exchange. What a hub like this can show is what the hub
itself enforces (a user's browser session cannot open another user's server or the
formgrader service) and what nbgrader's steps do with names; see tests/hub.

What it must not do: listen anywhere but loopback, or outlive its ``with`` block
(``stop`` ends the hub, the proxy, the servers it started and their kernels, by pid).
"""

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from .hub_config import HubPlan, write_hub_config
from .layout import ROOT

PROXY_ENV = "TAPESCHOOL_CHP"   # a configurable-http-proxy binary to use instead
PROXY_LOCAL = ROOT / "tests" / "hub" / "node_modules" / ".bin" / "configurable-http-proxy"
ADMIN_SERVICE = "localhub-admin"

LOCAL_CONFIG = '''
# ---- Test-only: a hub on loopback for one machine (tapeschool/course/localhub.py) ----
c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = {port}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {hub_port}
c.ConfigurableHTTPProxy.command = [{proxy!r}]
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{proxy_api_port}"
c.ConfigurableHTTPProxy.pid_file = {proxy_pid!r}
c.JupyterHub.db_url = "sqlite:///" + {db!r}
c.JupyterHub.cookie_secret_file = {cookie_secret!r}
c.JupyterHub.pid_file = {hub_pid!r}
c.JupyterHub.authenticator_class = "dummy"
c.DummyAuthenticator.password = {password!r}
c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = {homes!r} + "/{{username}}"
c.Spawner.args = {server_args!r}
c.Spawner.environment["PYTHONPATH"] = {pythonpath!r}
c.Spawner.http_timeout = {spawn_timeout}
c.Spawner.start_timeout = {spawn_timeout}
c.JupyterHub.services.append({{"name": {admin!r}, "api_token": {admin_token!r}}})
c.JupyterHub.load_roles.append({{"name": "localhub-admin", "services": [{admin!r}],
                                "scopes": ["admin:users", "admin:servers", "list:users",
                                           "read:users", "read:groups", "list:services"]}})
'''

# Quiet, offline JupyterLab servers (no news, no update check) that tests can drive.
NEVER_CHECK = "jupyterlab.handlers.announcements.NeverCheckForUpdate"
SERVER_ARGS = ["--ServerApp.allow_root=True", "--LabApp.news_url=None",
               f"--LabApp.check_for_updates_class={NEVER_CHECK}",
               "--LabApp.expose_app_in_browser=True"]


# JupyterLab settings written into every user's home: no news prompt, no update check.
QUIET_LAB_SETTINGS = {"@jupyterlab/apputils-extension:notification":
                      {"fetchNews": "false", "checkForUpdates": False}}


def find_proxy():
    """configurable-http-proxy: ``$TAPESCHOOL_CHP``, then ``npm ci --prefix tests/hub``'s,
    then one on PATH. Returns None when there is none."""
    for candidate in (os.environ.get(PROXY_ENV), PROXY_LOCAL,
                      shutil.which("configurable-http-proxy")):
        if candidate and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalHub:
    """A JupyterHub for a course on 127.0.0.1 (see the module docstring).

    Args:
        workdir: the hub's folder (config, database, logs, and ``home/<user>``).
        course: the ``layout.Course``; its directory must lie inside ``workdir/grader``
            (the formgrader service's folder) when ``grader_home`` is not given.
        students, instructors: hub user names (all share ``password``).
        spawn_timeout: seconds a server may take to start (raise it for many at once).
        lab_settings: JupyterLab user settings for every user, ``{plugin id: settings}``
            (a plugin id such as ``"@jupyterlab/notebook-extension:tracker"``)
            (``QUIET_LAB_SETTINGS`` by default).
    """

    def __init__(self, workdir, course, students, instructors, password=None, grader_home=None,
                 spawn_timeout=120, lab_settings=None):
        self.workdir = Path(workdir).resolve()
        self.course = course
        self.students, self.instructors = list(students), list(instructors)
        self.password = password or secrets.token_urlsafe(12)
        self.admin_token = secrets.token_hex(32)
        self.grader_home = Path(grader_home or self.workdir / "grader")
        self.spawn_timeout = spawn_timeout
        self.lab_settings = QUIET_LAB_SETTINGS if lab_settings is None else lab_settings
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log_path = self.workdir / "jupyterhub.log"
        self.process = None
        self._children = []
        self.pythonpath = str(ROOT)   # where the kernels import autodiff and widgets from

    def home(self, user):
        """A user's home folder (their server's root)."""
        return self.workdir / "home" / user

    def write_config(self):
        """Writes the course's hub configuration plus the loopback settings.

        Returns:
            The path of ``jupyterhub_config.py``.
        """
        proxy = find_proxy()
        if proxy is None:
            raise FileNotFoundError("configurable-http-proxy is missing: npm ci --prefix tests/hub")
        for user in self.students + self.instructors:
            settings = self.home(user) / ".jupyter" / "lab" / "user-settings"
            for plugin, values in self.lab_settings.items():
                path = settings / f"{plugin.replace(':', '/')}.jupyterlab-settings"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(json.dumps(values), encoding="utf-8")
        plan = HubPlan(self.course, self.students, self.instructors, grader_home=self.grader_home,
                       service_port=free_port(), service_args=SERVER_ARGS)
        path = write_hub_config(self.workdir, plan)
        state = self.workdir / "state"
        state.mkdir(exist_ok=True)
        with open(path, "a", encoding="utf-8") as config:
            config.write(LOCAL_CONFIG.format(
                port=self.port, hub_port=free_port(), proxy=proxy, proxy_api_port=free_port(),
                proxy_pid=str(state / "proxy.pid"), db=str(state / "jupyterhub.sqlite"),
                cookie_secret=str(state / "cookie_secret"), hub_pid=str(state / "hub.pid"),
                password=self.password, homes=str(self.workdir / "home"),
                server_args=SERVER_ARGS, pythonpath=self.pythonpath,
                spawn_timeout=self.spawn_timeout, admin=ADMIN_SERVICE,
                admin_token=self.admin_token))
        return path

    def start(self, timeout=120):
        """Starts the hub and waits until it answers through its proxy."""
        config = self.write_config()
        log = open(self.log_path, "ab")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "jupyterhub", "-f", str(config)], cwd=self.workdir,
            stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
            start_new_session=True)
        log.close()
        deadline = time.monotonic() + timeout
        while True:
            try:
                if self.api("GET", "/", token=None, timeout=2)[0] == 200:
                    return self
            except OSError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                log_tail = self.log_path.read_text(errors="replace")[-4000:]
                self.stop()
                raise RuntimeError(f"JupyterHub did not start on {self.url} "
                                   f"(exit code {self.process.returncode}):\n{log_tail}")
            time.sleep(0.5)

    def api(self, method, path, body=None, token="admin", timeout=30):
        """Calls the hub's REST API (``/hub/api`` + ``path``).

        Args:
            token: ``"admin"`` (this hub's admin service), another token, or None.

        Returns:
            ``(status, decoded JSON or None)``; an HTTP error status is returned, not raised.
        """
        headers = {"Content-Type": "application/json"}
        token = self.admin_token if token == "admin" else token
        if token:
            headers["Authorization"] = f"token {token}"
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"{self.url}/hub/api{path}", data=data, method=method,
                                         headers=headers)
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))   # never a proxy
        try:
            with opener.open(request, timeout=timeout) as response:
                text = response.read()
                return response.status, json.loads(text) if text else None
        except urllib.error.HTTPError as error:
            return error.code, None

    def stop(self, timeout=30):
        """Stops the hub (which stops the servers, the service and the proxy), then ends
        any process it started that is still there, by pid."""
        if self.process is None:
            return
        self._remember_children()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for process in self._children:
            try:
                if process.is_running():   # psutil checks it is the same process, not a reused pid
                    process.kill()
            except Exception:  # noqa: BLE001 (gone already, or not ours to end)
                pass
        self.process = None

    def processes(self):
        """The processes of this hub (psutil's): the hub and what it started (the proxy, the
        formgrader service), the users' servers and their kernels. The servers start
        sessions of their own, so they are found by their working folder, which lies in
        this hub's folder. Empty without psutil or a running hub."""
        try:
            import psutil
        except ImportError:   # without psutil the hub's own shutdown is all there is
            return []
        if self.process is None:
            return []
        found = {}
        try:
            hub = psutil.Process(self.process.pid)
            found.update((p.pid, p) for p in [hub] + hub.children(recursive=True))
        except psutil.NoSuchProcess:
            pass
        for process in psutil.process_iter(["cwd"]):
            cwd = process.info.get("cwd") or ""
            if (cwd + os.sep).startswith(str(self.workdir) + os.sep) and process.pid != os.getpid():
                found[process.pid] = process
                try:
                    found.update((c.pid, c) for c in process.children(recursive=True))
                except psutil.NoSuchProcess:
                    pass
        return list(found.values())

    def _remember_children(self):
        self._children.extend(p for p in self.processes() if p.pid != self.process.pid)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False
