"""Test-only spawners for the loopback hub: users' servers as the two deployments run them.

A course meets two kinds of hub, and each keeps students apart by different means;
``localhub.LocalHub`` runs either on one machine, as root, so that tests/hub can try
one student's kernel against another's work (bubblewrap and setpriv, Debian's
``bubblewrap`` and ``util-linux``, do the separating)::

    OSUserSpawner   one OS account per hub user, named like them (JupyterHub's
                    LocalProcessSpawner, The Littlest JupyterHub): the server runs with the
                    account's uid, gid and groups on the machine's own file system, so the
                    owners and modes of homes and of nbgrader's exchange folder decide.
    PodSpawner      every server as one unprivileged OS account, each in a container of
                    its own (Zero to JupyterHub: every pod is ``jovyan``): a read-only view
                    of the machine, the hub's folder hidden, its own home writable, its own
                    process tree and /tmp. Nothing on disk is shared between servers, so the
                    exchange must be a service (ngshare.py).

Both start the server through bubblewrap as root, then drop to the account with
``setpriv`` before anything of the server runs; both give the server a process tree of
its own (so stopping it ends its kernels too). Where the Python that runs the servers
lies under a folder other accounts cannot enter (CI's interpreter is in root's private
home), that folder is replaced by an empty one holding only the Python environment,
read-only: the one change the OS-user deployment gets beyond a real machine's.

What it must not do: run anything of the server as root, or serve anyone but the hub's
users (``localhub.py`` binds loopback only). Not for production.
"""

import os
import pwd
import subprocess
import sys
from pathlib import Path

from jupyterhub.spawner import LocalProcessSpawner
from traitlets import List, Unicode

from .sandbox import package_folders

BWRAP, SETPRIV = "/usr/bin/bwrap", "/usr/bin/setpriv"


def python_mounts(hidden=()):
    """bubblewrap arguments that make this Python's environment, and the packages the lessons
    import (an editable install's checkout may lie in a folder only root can enter, such as
    a fresh clone under ``mktemp -d``), reachable by any account: each outermost folder above
    them that others cannot enter becomes an empty one, with them bound read-only inside
    (none where every folder can be entered).

    ``hidden``: folders the sandbox has already replaced by empty ones (a pod's own ``/tmp``);
    a package inside one (a checkout in ``/tmp/course``) is bound into it again, read-only.
    """
    prefixes = sorted({Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve(),
                       *(Path(root) for root in package_folders())})
    closed = {folder for prefix in prefixes for folder in reversed(prefix.parents)
              if folder != Path("/") and not os.stat(folder).st_mode & 0o001}
    tops = sorted(folder for folder in closed if not any(
        other in folder.parents for other in closed))
    hidden = [Path(folder) for folder in hidden]
    args = [arg for top in tops for arg in ("--tmpfs", str(top))]
    for prefix in prefixes:
        if any(top in prefix.parents for top in tops) or \
                any(folder == prefix or folder in prefix.parents for folder in hidden):
            args += folders_to(prefix) + ["--ro-bind", str(prefix), str(prefix)]
    return args


def folders_to(path):
    """bubblewrap arguments that make every folder above ``path`` enterable (0755) where a
    mount made it anew (bubblewrap would make them 0700, closed to the server's account);
    a folder that exists already keeps its mode."""
    return [arg for folder in reversed(Path(path).parents) if folder != Path("/")
            for arg in ("--perms", "0755", "--dir", str(folder))]


def ensure_account(name, home):
    """Creates the OS account ``name`` (its own group, home ``home``, not created) if it
    does not exist. Returns True when it was created here."""
    try:
        pwd.getpwnam(name)
        return False
    except KeyError:
        subprocess.run(["useradd", "--no-create-home", "--home-dir", str(home), "--shell",
                        "/bin/bash", "--user-group", name], check=True, capture_output=True)
        return True


def remove_account(name):
    """Removes an OS account that ``ensure_account`` created (its files stay)."""
    subprocess.run(["userdel", name], check=False, capture_output=True)


def give_home(home, account):
    """``home`` (made if needed) and everything in it to ``account``, mode 0700."""
    entry = pwd.getpwnam(account)
    home = Path(home)
    home.mkdir(parents=True, exist_ok=True)
    for folder, folders, files in os.walk(home):
        for name in [folder] + [os.path.join(folder, n) for n in folders + files]:
            os.chown(name, entry.pw_uid, entry.pw_gid, follow_symlinks=False)
    home.chmod(0o700)


class _Bubblewrapped(LocalProcessSpawner):
    """LocalProcessSpawner whose command runs inside bubblewrap, then as ``account()``."""

    def account(self):
        raise NotImplementedError

    def mounts(self):
        raise NotImplementedError

    def home(self):
        return pwd.getpwnam(self.account()).pw_dir

    def make_preexec_fn(self, name):
        return None   # root until bubblewrap has built the view; setpriv then drops

    async def start(self):
        if not hasattr(self, "_server_cmd"):
            self._server_cmd = list(self.cmd)
        self.cmd = [BWRAP, *self.mounts(), "--unshare-pid", "--unshare-ipc", "--die-with-parent",
                    "--chdir", self.home(), "--", SETPRIV, f"--reuid={self.account()}",
                    f"--regid={pwd.getpwnam(self.account()).pw_gid}", *self.groups(), "--",
                    *self._server_cmd]
        return await super().start()

    def groups(self):
        return ["--init-groups"]


class OSUserSpawner(_Bubblewrapped):
    """The server of hub user ``ada`` runs as the OS account ``ada`` (which must exist),
    on the machine's own file system (see the module docstring)."""

    def account(self):
        return self.user.name

    def mounts(self):
        return ["--dev-bind", "/", "/", "--proc", "/proc", *python_mounts()]


class PodSpawner(_Bubblewrapped):
    """Every server as the OS account ``account``, each in a container of its own (see the
    module docstring): home ``home_dir_template`` (``{username}``), the ``hidden`` folders
    replaced by empty ones but for the ``shown`` ones inside them, read-only."""

    account_name = Unicode("jovyan", config=True, help="the OS account every server runs as")
    home_dir_template = Unicode(config=True, help="a user's home, {username} expanded")
    hidden = List(Unicode(), config=True, help="folders no server may see (the hub's)")
    shown = List(Unicode(), config=True,
                 help="folders inside the hidden ones that every server reads (its settings, "
                      "as a pod has /etc/jupyter)")

    def account(self):
        return self.account_name

    def home(self):
        return self.home_dir_template.format(username=self.user.name)

    def groups(self):
        return ["--clear-groups"]

    def user_env(self, env):
        env.update(USER=self.user.name, HOME=self.home(), SHELL="/bin/bash")
        return env

    def mounts(self):
        args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
                "--perms", "1777", "--tmpfs", "/tmp", "--perms", "1777", "--tmpfs", "/dev/shm"]
        for folder in self.hidden:
            args += folders_to(folder) + ["--tmpfs", folder]
        for folder in self.shown:
            args += folders_to(folder) + ["--ro-bind", folder, folder]
        home = self.home()
        return args + python_mounts(hidden=["/tmp", "/dev/shm", *self.hidden]) + \
            folders_to(home) + ["--bind", home, home]
