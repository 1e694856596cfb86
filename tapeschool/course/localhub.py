"""A real JupyterHub on loopback for a course: for the tests, the benchmark and a dry run.

It runs the hub that ``hub_config.write_hub_config`` describes, with test-only
choices added at the end of its ``jupyterhub_config.py``: JupyterHub's
``DummyAuthenticator`` (one shared password), a spawner for the deployment asked
for, and configurable-http-proxy from npm, all on 127.0.0.1 with free ports::

    with LocalHub(workdir, course, students=["ada", "ben"], instructors=["ines"],
                  deployment="pods") as hub:
        hub.url                      # http://127.0.0.1:<port>: log in at hub.url + "/hub/login"
        hub.api("GET", "/users")     # the hub's REST API, with an admin token of its own
        hub.token("ines")            # an API token of a hub user (ngshare knows them by it)

The deployments (``DEPLOYMENTS``), each a hub a course meets:

    "pods"      every server as one unprivileged OS account (``pod_account``), each in a
                container of its own, as on Zero to JupyterHub (hubspawners.PodSpawner);
                the course's exchange must be the ngshare service (``ngshare_url()``)
    "os-users"  one OS account per hub user, created here and removed by ``stop``
                (hubspawners.OSUserSpawner); nbgrader's exchange folder, whose modes keep
                students apart. ``workdir`` must be enterable by every account
    "shared"    every server as the OS user running this, no container
                (``SimpleLocalProcessSpawner``): a student's kernel reads every home and
                the exchange. For a quick look and the load benchmark only

"pods" and "os-users" need root (servers are started through bubblewrap, then dropped
to their account) and Debian's ``bubblewrap``.

What it must not do: listen anywhere but loopback, or outlive its ``with`` block
(``stop`` ends the hub, the proxy, the servers it started and their kernels, by pid, and
removes the accounts it made).
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
from .layout import ROOT, ServiceExchange

DEPLOYMENTS = ("pods", "os-users", "shared")

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
{spawner}c.Spawner.args = {server_args!r}
c.Spawner.environment["PYTHONPATH"] = {pythonpath!r}
c.Spawner.http_timeout = {spawn_timeout}
c.Spawner.start_timeout = {spawn_timeout}
c.JupyterHub.services.append({{"name": {admin!r}, "api_token": {admin_token!r}}})
c.JupyterHub.load_roles.append({{"name": "localhub-admin", "services": [{admin!r}],
                                "scopes": ["admin:users", "admin:servers", "list:users", "tokens",
                                           "read:users", "read:groups", "list:services"]}})
'''

SPAWNERS = {
    "shared": '''c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = {homes!r} + "/{{username}}"
''',
    "os-users": '''c.JupyterHub.spawner_class = "tapeschool.course.hubspawners.OSUserSpawner"
''',
    "pods": '''c.JupyterHub.spawner_class = "tapeschool.course.hubspawners.PodSpawner"
c.PodSpawner.account_name = {account!r}
c.PodSpawner.home_dir_template = {homes!r} + "/{{username}}"
c.PodSpawner.hidden = [{workdir!r}]
c.PodSpawner.shown = [{workdir!r} + "/student-config"]
''',
}

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


def ngshare_url():
    """An address for a loopback hub's ngshare service on a free port, to make a course with
    (``init_course(..., ngshare_url=ngshare_url())``) before its hub starts."""
    return f"http://127.0.0.1:{free_port()}/services/ngshare"


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
        deployment: ``"pods"``, ``"os-users"`` or ``"shared"`` (module docstring).
        pod_account: the OS account of every server in ``"pods"`` (created if missing).
    """

    def __init__(self, workdir, course, students, instructors, password=None, grader_home=None,
                 spawn_timeout=120, lab_settings=None, deployment="shared",
                 pod_account="tapeschool-pod"):
        if deployment not in DEPLOYMENTS:
            raise ValueError(f"no deployment {deployment!r}: one of {', '.join(DEPLOYMENTS)}")
        if deployment == "pods" and not isinstance(course.exchange, ServiceExchange):
            raise ValueError("a hub of pods shares no folder: its course's exchange must be "
                             "the ngshare service (init_course(..., ngshare_url=...))")
        self.deployment, self.pod_account = deployment, pod_account
        self._made_accounts = []
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
        self._prepare_accounts()
        plan = HubPlan(self.course, self.students, self.instructors, grader_home=self.grader_home,
                       service_port=free_port(), service_args=SERVER_ARGS,
                       ngshare_storage=self.workdir / "ngshare")
        path = write_hub_config(self.workdir, plan)
        spawner = SPAWNERS[self.deployment].format(
            homes=str(self.workdir / "home"), account=self.pod_account, workdir=str(self.workdir))
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
                admin_token=self.admin_token, spawner=spawner))
        return path

    def _prepare_accounts(self):
        """The OS accounts a deployment runs servers as, and their homes (theirs, 0700);
        the formgrader's folder (the course, the gradebook) closed to them."""
        if self.deployment == "shared":
            return
        from .hubspawners import ensure_account, give_home

        if os.geteuid() != 0:
            raise PermissionError(f"a {self.deployment!r} hub starts servers as other OS "
                                  "accounts: run it as root")
        if self.deployment == "os-users":
            closed = [f for f in [self.workdir, *self.workdir.parents]
                      if not os.stat(f).st_mode & 0o001]
            if closed:
                raise PermissionError(f"{closed[0]} is closed to other accounts: the students' "
                                      f"accounts could not reach their homes or the exchange")
            for user in self.students + self.instructors:
                if ensure_account(user, self.home(user)):
                    self._made_accounts.append(user)
                give_home(self.home(user), user)
        else:
            if ensure_account(self.pod_account, self.workdir / "home"):
                self._made_accounts.append(self.pod_account)
            for user in self.students + self.instructors:
                give_home(self.home(user), self.pod_account)
        self.grader_home.mkdir(parents=True, exist_ok=True)
        self.grader_home.chmod(0o700)

    def token(self, user, seconds=3600):
        """A new API token of the hub user ``user`` (what their server holds), valid for
        ``seconds``: ngshare knows a user by it (``JUPYTERHUB_API_TOKEN``)."""
        status, body = self.api("POST", f"/users/{user}/tokens",
                                {"note": "tapeschool localhub", "expires_in": seconds})
        if status != 201:
            raise RuntimeError(f"the hub gave no token for {user!r} (HTTP {status})")
        return body["token"]

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
                if self.api("GET", "/", token=None, timeout=2)[0] == 200 and self._service_up():
                    return self
            except OSError:
                pass
            if self.process.poll() is not None or time.monotonic() > deadline:
                log_tail = self.log_path.read_text(errors="replace")[-4000:]
                code = self.process.poll()
                self.stop()
                raise RuntimeError(f"JupyterHub did not start on {self.url} "
                                   f"(exit code {code}):\n{log_tail}")
            time.sleep(0.5)

    def _service_up(self):
        """The course's ngshare service answers through the proxy (or there is none): the
        hub says it runs before the service listens."""
        if not isinstance(self.course.exchange, ServiceExchange):
            return True
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        try:
            with opener.open(f"{self.url}/services/ngshare/healthz", timeout=2) as response:
                return response.status == 200
        except OSError:
            return False

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
            self._remove_accounts()
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
        self._remove_accounts()

    def _remove_accounts(self):
        if self._made_accounts:
            from .hubspawners import remove_account

            for account in self._made_accounts:
                remove_account(account)
            self._made_accounts = []

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
