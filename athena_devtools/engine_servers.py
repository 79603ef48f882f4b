"""Private servers of the production engines, started as local processes without Docker (issue 17).

- **Milvus standalone 2.3.5**, from the `milvus` PyPI wheel (installed with `--no-deps`, see the Makefile):
  the real server binary, unpacked once into a shared cache and run on a fresh data directory. Every port
  it listens on is chosen free here, including the embedded etcd's client and peer ports (which the
  wheel's own launcher leaves at 2379/2380): `ETCD_CONFIG_PATH` points the embedded etcd at a config
  file naming them. Only etcd binds loopback; the other Milvus ports bind every interface (Milvus 2.3
  has no listen-address option), so they are picked free rather than fixed. Its `common.gracefulTime`
  (Bounded consistency's staleness bound) is set to 1000 ms instead of 2.3's 5000 (SPEC S2 freshness).
- **SecantusDB 0.7.0b3** (`secantusd-py`, GPL-2.0, beta): a MongoDB-wire server on WiredTiger. It is
  *not* MongoDB; it has no text indexes.
- **redis-server** (Redis 7 from apt) on a private port, for restarts in fault tests: the machine's own
  Redis on 6379 is shared and never restarted.

Each server keeps its ports across `stop()`/`start()`, so clients reconnect to the same address after a
restart. A server that cannot start raises `EngineStartError` with the reason and its log's tail: the
suites that need it fail with that reason, they never skip.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

MILVUS_VERSION = "2.3.5"
SECANTUS_NAME = "SecantusDB 0.7.0b3 (MongoDB-wire server, GPL-2.0, beta; not MongoDB)"


class EngineStartError(RuntimeError):
    """A private server did not come up; the message says why and shows the end of its log."""


_HANDED_OUT: set[int] = set()


def free_port() -> int:
    """A TCP port free on loopback now (the OS picks it), never one this process handed out before: the OS
    may give the same port to two binds in a row once the first socket is closed, and a Milvus server
    configured so in CI put its management HTTP server on its gRPC port (every client call then failed)."""
    for _ in range(100):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("127.0.0.1", 0))
            port = int(sock.getsockname()[1])
        if port not in _HANDED_OUT:
            _HANDED_OUT.add(port)
            return port
    raise OSError("no loopback port left that this process has not handed out already")


def _log_tail(path: Path, chars: int = 2000) -> str:
    return path.read_text(errors="replace")[-chars:] if path.exists() else "(no log)"


def _stop(proc: subprocess.Popen | None, timeout_s: float = 10.0) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


def _kill(proc: subprocess.Popen | None) -> None:
    """SIGKILL a server that is still running and reap it (a fault test's crash, no clean shutdown)."""
    if proc is not None and proc.poll() is None:
        proc.kill()
        proc.wait(10)


def _script(name: str) -> str:
    """A console script of this interpreter's environment (the venv's bin), else from PATH."""
    beside = Path(sys.executable).with_name(name)
    if beside.exists():
        return str(beside)
    found = shutil.which(name)
    if found is None:
        raise EngineStartError(f"{name} not found beside {sys.executable} or on PATH: install the `test` extra "
                               f"(make test does)")
    return found


# -- Milvus ---------------------------------------------------------------------------------------------
def milvus_binary_dir(cache_dir: Path | None = None) -> Path:
    """The server binary and its libraries, unpacked from the wheel once per machine (246 MB)."""
    try:
        import milvus
    except ImportError as exc:
        raise EngineStartError("the `milvus` package (Milvus server 2.3.5 wheel) is not installed: "
                               "`pip install --no-deps milvus==2.3.5` (the Makefile does)") from exc
    if getattr(milvus, "__version__", MILVUS_VERSION) != MILVUS_VERSION:
        raise EngineStartError(f"milvus {milvus.__version__} installed, {MILVUS_VERSION} expected")
    root = cache_dir or Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / f"athena-milvus-{MILVUS_VERSION}"
    root.mkdir(parents=True, exist_ok=True)
    lock = root / ".unpacking"
    deadline = time.monotonic() + 300
    while True:  # one process unpacks; the others wait (pytest-xdist, two harnesses at once)
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            break
        except FileExistsError:
            if time.monotonic() > deadline:
                raise EngineStartError(f"{lock} stayed for 300 s: remove it if no unpack is running")
            time.sleep(0.5)
    try:
        milvus._initialize_data_files(str(root))  # skips files whose md5 stamp matches
    finally:
        os.close(fd)
        lock.unlink(missing_ok=True)
    return root / "bin"


_MILVUS_PORT_KEYS = ("proxy_port", "proxy_internal_port", "root_coord_port", "query_coord_port",
                     "query_node_port", "index_coord_port", "index_node_port", "data_coord_port",
                     "data_node_port")


# Bounded consistency serves rows older than `common.gracefulTime` for sure (5000 ms in 2.3's milvus.yaml).
# SearchMemory reads at Bounded (milvus_vectors.py); 1000 ms keeps its vector part inside SPEC S2's 2 s.
BOUNDED_STALENESS_MS = 1000
# Each component keeps an etcd lease (`common.session.ttl`, 30 s in 2.3) and the server shuts itself down
# when a keepalive misses it. On 2 cores, seeding 1.5M vectors while the server built their HNSW indexes
# starved the keepalives for 30 s and the server exited mid-run: bench/reads.py --vector-store milvus
# asks for this TTL. Not the default: a server SIGKILLed and restarted serves again only once its old
# sessions' leases expire (at 300 s the restart fault test's pipeline did not drain within its 180 s).
BENCH_SESSION_TTL_S = 300


def _set_config_key(config_path: Path, key: str, value: int) -> None:
    """Set the integer `key` in a resolved milvus.yaml (a key found exactly once in 2.3's template)."""
    text = config_path.read_text()
    updated, count = re.subn(rf"(?m)^(\s+{key}:)[ \t]*\d+", rf"\g<1> {int(value)}", text)
    if count != 1:
        raise EngineStartError(f"{config_path}: expected one {key} key, found {count}")
    config_path.write_text(updated)


@dataclass
class MilvusServerProcess:
    """One Milvus standalone server on `data_dir` (fresh unless you reuse it), ports chosen free."""

    data_dir: Path
    ports: dict[str, int] = field(default_factory=dict)
    proc: subprocess.Popen | None = None
    session_ttl_s: int | None = None  # `common.session.ttl`; None keeps the server's 30 s
    start_timeout_s: float = 90.0
    _env: dict[str, str] = field(default_factory=dict, repr=False)

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.ports['proxy_port']}"

    @property
    def log_path(self) -> Path:
        return self.data_dir / "logs" / "milvus-stdout.log"

    def _configure(self) -> dict[str, str]:
        """Write the config once; a restart reuses it (its ports may sit in TIME_WAIT, which the
        launcher's own bind check would refuse)."""
        from milvus import MilvusServerConfig

        if self._env:
            return self._env
        if not self.ports:
            self.ports = {key: free_port() for key in (*_MILVUS_PORT_KEYS, "etcd_port", "etcd_peer_port",
                                                       "metrics_port")}
        self.data_dir.mkdir(parents=True, exist_ok=True)
        config = MilvusServerConfig(data_dir=str(self.data_dir))
        config.resolve_storage()
        config.update(**{k: self.ports[k] for k in (*_MILVUS_PORT_KEYS, "etcd_port")})
        config.resolve()  # writes <data_dir>/configs/milvus.yaml with these ports
        _set_config_key(self.data_dir / "configs" / "milvus.yaml", "gracefulTime", BOUNDED_STALENESS_MS)
        if self.session_ttl_s is not None:
            _set_config_key(self.data_dir / "configs" / "milvus.yaml", "ttl", self.session_ttl_s)
        etcd_conf = self.data_dir / "configs" / "embedEtcd.yaml"
        client, peer = self.ports["etcd_port"], self.ports["etcd_peer_port"]
        etcd_conf.write_text(
            "name: athena\n"
            f"data-dir: {self.data_dir / 'data' / 'etcd.data'}\n"
            f"listen-client-urls: http://127.0.0.1:{client}\nadvertise-client-urls: http://127.0.0.1:{client}\n"
            f"listen-peer-urls: http://127.0.0.1:{peer}\ninitial-advertise-peer-urls: http://127.0.0.1:{peer}\n"
            f"initial-cluster: athena=http://127.0.0.1:{peer}\n"
        )
        bin_dir = milvus_binary_dir()
        env = {**os.environ, "DEPLOY_MODE": "STANDALONE", "METRICS_PORT": str(self.ports["metrics_port"]),
               "MILVUS_RUN_DIR": str(self.data_dir / "run"), "ETCD_CONFIG_PATH": str(etcd_conf),
               "MILVUSCONF": str(self.data_dir / "configs"),
               "LD_LIBRARY_PATH": f"{bin_dir}:{os.environ.get('LD_LIBRARY_PATH', '')}"}
        self._env = env
        return env

    def start(self) -> "MilvusServerProcess":
        if self.proc is not None and self.proc.poll() is None:
            return self
        env = self._configure()
        (self.data_dir / "logs").mkdir(parents=True, exist_ok=True)
        with open(self.log_path, "ab") as out:
            self.proc = subprocess.Popen([str(milvus_binary_dir() / "milvus"), "run", "standalone"],
                                         cwd=self.data_dir, env=env, stdout=out, stderr=subprocess.STDOUT,
                                         start_new_session=True)
        self._wait_healthy()
        return self

    def _wait_healthy(self) -> None:
        import urllib.error
        import urllib.request

        deadline = time.monotonic() + self.start_timeout_s
        url = f"http://127.0.0.1:{self.ports['metrics_port']}/healthz"
        while time.monotonic() < deadline:
            if self.proc is None or self.proc.poll() is not None:
                code = None if self.proc is None else self.proc.returncode
                raise EngineStartError(f"Milvus server exited with {code} while starting:\n{_log_tail(self.log_path)}")
            try:
                with urllib.request.urlopen(url, timeout=2) as resp:
                    if b"OK" in resp.read():
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.2)
        self.stop()
        raise EngineStartError(f"Milvus server not healthy within {self.start_timeout_s} s:\n{_log_tail(self.log_path)}")

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after 5 s (2.3.5 often takes longer than that to stop; its WAL in the
        embedded etcd and rocksmq makes a kill safe, and restarts after one are tested)."""
        _stop(self.proc, timeout_s=5.0)
        self.proc = None

    def kill(self) -> None:
        _kill(self.proc)
        self.proc = None


# -- SecantusDB (MongoDB wire protocol) ------------------------------------------------------------
@dataclass
class SecantusServerProcess:
    """`secantusd-py` on a free loopback port and a fresh WiredTiger directory."""

    data_dir: Path
    port: int = 0
    proc: subprocess.Popen | None = None
    start_timeout_s: float = 30.0

    @property
    def url(self) -> str:
        return f"mongodb://127.0.0.1:{self.port}/?directConnection=true"

    @property
    def log_path(self) -> Path:
        return self.data_dir / "secantusd.log"

    def start(self) -> "SecantusServerProcess":
        if self.proc is not None and self.proc.poll() is None:
            return self
        self.port = self.port or free_port()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        config = self.data_dir / "secantusd.toml"  # an explicit (empty) config: no auto-discovered one applies
        config.touch()
        with open(self.log_path, "ab") as out:
            self.proc = subprocess.Popen(
                [_script("secantusd-py"), "--config", str(config), "--host", "127.0.0.1", "--port", str(self.port),
                 "--storage-path", str(self.data_dir / "wt"), "--log-level", "WARNING", "--cache-size", "256M"],
                stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            )
        self._wait_ready()
        return self

    def _wait_ready(self) -> None:
        from pymongo import MongoClient
        from pymongo.errors import PyMongoError

        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            if self.proc is None or self.proc.poll() is not None:
                code = None if self.proc is None else self.proc.returncode
                raise EngineStartError(f"secantusd-py exited with {code} while starting:\n{_log_tail(self.log_path)}")
            client = MongoClient(self.url, serverSelectionTimeoutMS=300, connectTimeoutMS=300)
            try:
                client.admin.command("ping")
                return
            except PyMongoError:
                time.sleep(0.1)
            finally:
                client.close()
        self.stop()
        raise EngineStartError(f"secantusd-py did not answer within {self.start_timeout_s} s:\n{_log_tail(self.log_path)}")

    def stop(self) -> None:
        _stop(self.proc)
        self.proc = None

    def kill(self) -> None:
        _kill(self.proc)
        self.proc = None


# -- Redis 7 ---------------------------------------------------------------------------------------
@dataclass
class RedisServerProcess:
    """A private `redis-server` on a free loopback port (append-only file on, as compose runs it)."""

    data_dir: Path
    port: int = 0
    proc: subprocess.Popen | None = None
    start_timeout_s: float = 15.0

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> "RedisServerProcess":
        if self.proc is not None and self.proc.poll() is None:
            return self
        binary = shutil.which("redis-server")
        if binary is None:
            raise EngineStartError("redis-server not found on PATH (apt-get install redis-server)")
        self.port = self.port or free_port()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        log = self.data_dir / "redis.log"
        self.proc = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.data_dir),
             "--appendonly", "yes", "--save", "", "--logfile", str(log)],
            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, start_new_session=True,
        )
        import redis

        deadline = time.monotonic() + self.start_timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise EngineStartError(f"redis-server exited with {self.proc.returncode}:\n{_log_tail(log)}")
            try:
                if redis.Redis(port=self.port, socket_connect_timeout=0.3).ping():
                    return self
            except redis.RedisError:
                time.sleep(0.05)
        self.stop()
        raise EngineStartError(f"redis-server did not answer within {self.start_timeout_s} s:\n{_log_tail(log)}")

    def stop(self) -> None:
        _stop(self.proc)
        self.proc = None

    def kill(self, forget_data: bool = False) -> None:
        """SIGKILL (no final AOF write). `forget_data` also removes the append-only files, so the next start
        comes back empty: a Redis whose data is gone (no volume), which the STM must rebuild from the log."""
        _kill(self.proc)
        self.proc = None
        if forget_data:
            shutil.rmtree(self.data_dir / "appendonlydir", ignore_errors=True)
            (self.data_dir / "appendonly.aof").unlink(missing_ok=True)
