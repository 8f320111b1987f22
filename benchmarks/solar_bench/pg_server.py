"""A throwaway PostgreSQL server for the tests.

``start_postgres()`` returns ``(url, reason)``. The URL is a libpq URL that psycopg 3 accepts,
e.g. ``postgresql://solar@/solar_test?host=/tmp/solar-pg-k3v9q2ab&port=41237``; it is ``None`` when
no server could be had, and then ``reason`` says why (tests skip with it).

If ``SOLAR_POSTGRES_URL`` is set, that server is used as is. Otherwise the server binaries
(``/usr/lib/postgresql/*/bin``, then ``PATH``; ``scripts/install_postgres.sh`` installs them)
build a cluster in a temporary directory that listens on a unix socket only (no TCP port, so
nothing clashes with another server on the machine), with trust authentication for the superuser
``solar`` and a database ``solar_test``. As root, the server runs as the ``postgres`` OS user
(``initdb`` refuses root), which is created if missing. The server is started once per process;
an ``atexit`` hook stops it and removes its directories.
"""

from __future__ import annotations

import atexit
import contextlib
import glob
import grp
import os
import pwd
import re
import shlex
import shutil
import socket
import subprocess
import tempfile
import threading
from collections.abc import Sequence

URL_ENV = "SOLAR_POSTGRES_URL"
DATABASE = "solar_test"
SUPERUSER = "solar"
OS_USER = "postgres"

_lock = threading.Lock()
_result: tuple[str | None, str] | None = None


class _StartError(Exception):
    """A step of starting the server failed; the message is the reason handed to the tests."""


def start_postgres() -> tuple[str | None, str]:
    """Return ``(url, reason)`` for a PostgreSQL server the tests may use, starting one if needed.

    ``url`` is ``None`` when no server is available; ``reason`` then says why (including the
    tail of the failing command's output). The first call decides: later calls in the same
    process return the same result (and the same server) without starting anything.
    """
    global _result
    with _lock:
        if _result is None:
            _result = _start()
        return _result


def _start() -> tuple[str | None, str]:
    """Do the work of :func:`start_postgres` once."""
    url = os.environ.get(URL_ENV)
    if url:
        return url, f"from ${URL_ENV}"
    try:
        bindir = _find_bindir()
    except _StartError as exc:
        return None, str(exc)
    try:
        server = _Server(bindir)
    except OSError as exc:
        return None, f"could not prepare a temporary PostgreSQL directory: {exc}"
    try:
        url = server.start()
    except _StartError as exc:
        server.stop()
        return None, str(exc)
    except (OSError, subprocess.SubprocessError) as exc:
        server.stop()
        return None, f"could not start PostgreSQL from {bindir}: {exc}"
    atexit.register(server.stop)
    return url, f"temporary PostgreSQL server from {bindir}, data in {server.base}"


def _find_bindir() -> str:
    """The directory holding ``initdb``, ``pg_ctl`` and ``createdb``: the highest version first."""
    needed = ("initdb", "pg_ctl", "createdb")

    def version(bindir: str) -> tuple[int, ...]:
        name = os.path.basename(os.path.dirname(bindir))
        return tuple(int(part) for part in re.findall(r"\d+", name))

    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=version, reverse=True)
    for bindir in candidates:
        if all(os.access(os.path.join(bindir, tool), os.X_OK) for tool in needed):
            return bindir
    initdb = shutil.which("initdb")
    if initdb is not None:
        bindir = os.path.dirname(os.path.realpath(initdb))
        if all(os.access(os.path.join(bindir, tool), os.X_OK) for tool in needed):
            return bindir
    raise _StartError(
        "PostgreSQL server binaries (initdb, pg_ctl, createdb) not found in "
        "/usr/lib/postgresql/*/bin or on PATH; run scripts/install_postgres.sh"
    )


def _tail(text: str | bytes | None, lines: int = 15) -> str:
    """The last ``lines`` lines of a command's output, for an error message."""
    if text is None:
        return ""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    return "\n".join(text.strip().splitlines()[-lines:])


def _free_port() -> int:
    """A port number no one is listening on locally (it only names the socket file)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _ensure_os_user() -> None:
    """Create the ``postgres`` OS user (a system account) if this machine has none."""
    with contextlib.suppress(KeyError):  # no such user: create it below
        pwd.getpwnam(OS_USER)
        return
    cmd = ["useradd", "--system", "--no-create-home", "--shell", "/bin/sh"]
    try:
        grp.getgrnam(OS_USER)
        cmd += ["--gid", OS_USER]
    except KeyError:
        cmd += ["--user-group"]
    proc = subprocess.run([*cmd, OS_USER], capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        raise _StartError(
            f"{shlex.join(cmd)} {OS_USER} exited {proc.returncode}: {_tail(proc.stderr)}"
        )


class _Server:
    """One temporary cluster: its directories, and the commands that start and stop it."""

    def __init__(self, bindir: str) -> None:
        self.bindir = bindir
        self.as_root = os.geteuid() == 0
        # Short base under /tmp: the socket path (base/.s.PGSQL.<port>) must fit in ~107 bytes.
        parent = "/tmp" if os.path.isdir("/tmp") else None
        self.base = tempfile.mkdtemp(prefix="solar-pg-", dir=parent)
        self.data = os.path.join(self.base, "data")
        self.log = os.path.join(self.base, "server.log")
        self.port = _free_port()
        self.owner_pid = os.getpid()  # a forked child that exits normally must not stop it
        self.started = False
        self.stopped = False

    def _run(self, args: Sequence[str], *, as_server_user: bool, timeout: float) -> str:
        """Run a command (as the server's OS user if asked and we are root); its stdout."""
        cmd = list(args)
        if as_server_user and self.as_root:
            if shutil.which("runuser"):
                cmd = ["runuser", "-u", OS_USER, "--", *cmd]
            else:
                cmd = ["su", OS_USER, "-s", "/bin/sh", "-c", shlex.join(cmd)]
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env["LC_ALL"] = "C"
        try:
            proc = subprocess.run(
                cmd,
                capture_output=True,
                text=True,
                timeout=timeout,
                cwd=self.base,
                env=env,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired as exc:
            raise _StartError(
                f"{shlex.join(cmd)} timed out after {timeout:.0f} s: "
                f"{_tail(exc.stderr) or _tail(exc.stdout)}"
            ) from exc
        if proc.returncode != 0:
            output = _tail(proc.stderr) or _tail(proc.stdout)
            raise _StartError(f"{shlex.join(cmd)} exited {proc.returncode}: {output}")
        return proc.stdout

    def start(self) -> str:
        """Create, start and fill the cluster; return its URL."""

        def tool(name: str) -> str:
            return os.path.join(self.bindir, name)

        if self.as_root:
            _ensure_os_user()
            shutil.chown(self.base, user=OS_USER, group=pwd.getpwnam(OS_USER).pw_gid)
        self._run(
            [
                tool("initdb"),
                "-D",
                self.data,
                "--auth=trust",
                "-U",
                SUPERUSER,
                "--encoding=UTF8",
                "--locale=C",
                "--no-sync",
            ],
            as_server_user=True,
            timeout=180,
        )
        # fsync=off only for speed: the crash tests kill the *client*, never the server, and the
        # cluster is thrown away at exit, so the server's own durability does not matter.
        options = (
            f"-c listen_addresses='' -k {self.base} -p {self.port} "
            "-c fsync=off -c max_connections=100"
        )
        self.started = True  # from here on, stop() must try pg_ctl stop
        try:
            self._run(
                [tool("pg_ctl"), "-D", self.data, "-l", self.log, "-o", options, "-w", "-t", "60"]
                + ["start"],
                as_server_user=True,
                timeout=90,
            )
        except _StartError as exc:
            log = ""
            with (
                contextlib.suppress(OSError),
                open(self.log, encoding="utf-8", errors="replace") as f,
            ):
                log = _tail(f.read())  # (no log: the server never started writing one)
            raise _StartError(f"{exc}\nserver log ({self.log}):\n{log}") from exc
        self._run(
            [tool("createdb"), "-h", self.base, "-p", str(self.port), "-U", SUPERUSER, DATABASE],
            as_server_user=False,
            timeout=60,
        )
        return f"postgresql://{SUPERUSER}@/{DATABASE}?host={self.base}&port={self.port}"

    def stop(self) -> None:
        """Stop the server at once (no checkpoint) and remove its directories; idempotent.

        Does nothing in a process forked from the one that started the server.
        """
        if self.stopped or os.getpid() != self.owner_pid:
            return
        self.stopped = True
        if self.started:
            # not running (the start failed early) or already gone: nothing to stop
            with contextlib.suppress(_StartError, OSError, subprocess.SubprocessError):
                self._run(
                    [os.path.join(self.bindir, "pg_ctl"), "-D", self.data, "-m", "immediate"]
                    + ["-w", "-t", "30", "stop"],
                    as_server_user=True,
                    timeout=60,
                )
        shutil.rmtree(self.base, ignore_errors=True)
