"""HTTP load from `wrk` (C, Debian package `wrk`) for the benchmarks: a Python client would share the two
cores with the API and become the bottleneck (bench/README.md).

- `ensure_wrk()`: the binary, installed with apt-get when missing and we are root, else a clear stop.
- `start_wrk(...)`: one wrk run in the background from a generated Lua script: POSTs that cycle through
  given JSON bodies (or make a distinct event per request), optionally paced by a fixed delay per
  connection, counting answers by status; `WrkRun.result()` waits and returns wrk's summary (latency
  percentiles in ms, requests, statuses) with the client's CPU.
"""
from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from common import log

# Globals (not locals) so `done` can read each thread's counters. `%(bodies)s` is a Lua list of strings;
# `%(event_content)s`, when not empty, replaces the bodies by a distinct StoreEvent body per request.
LUA = r"""
local threads = {}
local bodies = {%(bodies)s}
local event_content = "%(event_content)s"
-- rate > 0: requests start on a schedule of `rate` per second for all threads together (each thread its
-- share), whatever the answers' latency, as long as a connection is free: "poisson" gaps at random around
-- their mean (independent agents), "even" gaps all alike. (A fixed pause after each answer, as before,
-- let the rate fall with the latency and kept connections that start together in step.) rate 0: each
-- connection sends its next request on the answer.
local rate = %(rate).6f
local arrivals = "%(arrivals)s"
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } athena_timespec;
int clock_gettime(int clk_id, athena_timespec *tp);
]]
local ts = ffi.new("athena_timespec")
local function now_ms()
  ffi.C.clock_gettime(1, ts)  -- CLOCK_MONOTONIC
  return tonumber(ts.tv_sec) * 1000 + tonumber(ts.tv_nsec) / 1e6
end
local next_ms = nil
local nthreads = %(threads)d

function setup(thread)
  table.insert(threads, thread)
  thread:set("tid", #threads)
end

function init(args)
  counter = 0
  s2xx = 0; s429 = 0; s503 = 0; sother = 0
  wrk.headers["Content-Type"] = "application/json"
end

function request()
  counter = counter + 1
  local body
  if event_content ~= "" then
    body = '{"role":"user","type":"message","content":"' .. event_content .. ' #' .. tid .. '-' .. counter ..
           '","metadata":{"bench":"load"}}'
  else
    body = bodies[((counter - 1) * nthreads + tid - 1) %% #bodies + 1]
  end
  return wrk.format("POST", "%(path)s", nil, body)
end

-- wrk asks before every request, the first ones included
function delay()
  if rate <= 0 then return 0 end
  local period = 1000 * nthreads / rate
  local t = now_ms()
  if next_ms == nil then
    math.randomseed(tid * 7919 + math.floor(t) %% 100000)
    next_ms = t
  elseif next_ms < t - 4 * period then
    next_ms = t  -- far behind (no connection was free): go on from now, not in a burst to catch up
  end
  local gap = period
  if arrivals == "poisson" then gap = -math.log(1 - math.random()) * period end
  next_ms = next_ms + gap
  return math.max(0, math.floor(next_ms - t))
end

function response(status, headers, body)
  if status >= 200 and status < 300 then s2xx = s2xx + 1
  elseif status == 429 then s429 = s429 + 1
  elseif status == 503 then s503 = s503 + 1
  else sother = sother + 1 end
end

function done(summary, latency, requests)
  local t = {s2xx = 0, s429 = 0, s503 = 0, sother = 0}
  for _, thread in ipairs(threads) do
    for k, _ in pairs(t) do t[k] = t[k] + (thread:get(k) or 0) end
  end
  local e = summary.errors
  io.write(string.format(
    'ATHENA_WRK {"requests":%%d,"duration_us":%%d,"connect":%%d,"read":%%d,"write":%%d,"timeout":%%d,' ..
    '"p50_us":%%d,"p95_us":%%d,"p99_us":%%d,"max_us":%%d,"s2xx":%%d,"s429":%%d,"s503":%%d,"sother":%%d}\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.timeout,
    latency:percentile(50), latency:percentile(95), latency:percentile(99), latency.max,
    t.s2xx, t.s429, t.s503, t.sother))
end
"""


def ensure_wrk() -> str:
    """The wrk binary; installed with apt-get when missing and we are root, else a clear stop."""
    found = shutil.which("wrk")
    if found:
        return found
    if os.geteuid() == 0 and shutil.which("apt-get"):
        log("wrk not found: apt-get install -y wrk")
        subprocess.run(["apt-get", "install", "-y", "wrk"], check=False, stdout=subprocess.DEVNULL)
        found = shutil.which("wrk")
        if found:
            return found
    raise SystemExit("this benchmark needs wrk: `sudo apt-get install -y wrk` (Debian package)")


def _lua_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


@dataclass
class WrkRun:
    process: subprocess.Popen
    started: float
    duration_s: float

    def result(self) -> dict:
        """Waits for wrk; its summary with latencies in ms and the client CPU of all wrk runs so far."""
        out, err = self.process.communicate(timeout=self.duration_s + 120)
        line = next((ln for ln in out.splitlines() if ln.startswith("ATHENA_WRK ")), None)
        if line is None:
            raise RuntimeError(f"wrk gave no summary (exit {self.process.returncode}): {out[-500:]} {err[-500:]}")
        stats = json.loads(line[len("ATHENA_WRK "):])
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        seconds = stats["duration_us"] / 1e6
        return {
            "requests": stats["requests"], "seconds": round(seconds, 3),
            "requests_per_s": round(stats["requests"] / seconds, 1) if seconds else None,
            **{f"{q}_ms": round(stats[f"{q}_us"] / 1000.0, 3) for q in ("p50", "p95", "p99", "max")},
            "status_2xx": stats["s2xx"], "status_429": stats["s429"], "status_503": stats["s503"],
            "status_other": stats["sother"],
            "transport_errors": {k: stats[k] for k in ("connect", "read", "write", "timeout")},
            "client_cpu_s_cumulative": round(usage.ru_utime + usage.ru_stime, 2),
        }


def start_wrk(wrk: str, base_url: str, path: str, *, connections: int, duration_s: float, out_dir: Path,
              name: str, bodies: list[dict] | None = None, event_content: str = "", rate_per_s: float = 0.0,
              arrivals: str = "even") -> WrkRun:
    """wrk in the background: `connections` connections on up to 2 threads for `duration_s`, POSTing to
    `path` either `bodies` in turn or (with `event_content`) a distinct event per request, each connection
    sending its next request on the answer; the achieved rate is in the result. With `rate_per_s`, requests
    start on a schedule of that many per second instead, `arrivals` "even" or "poisson" (independent
    agents; see the script); the connections must be enough for rate × latency requests in flight."""
    if arrivals not in ("even", "poisson"):
        raise ValueError(f"arrivals must be even or poisson, not {arrivals!r}")
    out_dir.mkdir(parents=True, exist_ok=True)
    script = out_dir / f"{name}.lua"
    threads = max(1, min(2, connections))
    script.write_text(LUA % {
        "bodies": ",".join(_lua_string(json.dumps(b)) for b in (bodies or [{}])),
        "event_content": event_content.replace('"', ""), "path": path, "threads": threads,
        "rate": rate_per_s, "arrivals": arrivals})
    process = subprocess.Popen(
        [wrk, "-t", str(threads), "-c", str(connections), "-d", f"{max(1, round(duration_s))}s", "--timeout", "10s",
         "-s", str(script), base_url],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return WrkRun(process, time.perf_counter(), duration_s)
