"""HTTP/2 against HTTP/1.1 on one simproxy webserver: W1's stub, Debian's ``h2load`` (package
``nghttp2-client``) as the client both ways, in the same run.

``h2load -m 10`` sends ten concurrent streams on each connection (h2c with prior knowledge);
``h2load --h1`` sends HTTP/1.1 on keep-alive connections, one request at a time each (``-m 1``),
as wrk does in W1. Both ask the same server, one worker, so each rate is that of one core.
Every request must be answered ``200``: a failed or errored one is printed and the run fails.
The server's own CPU time (user + system) per request is printed too: the rate one core would
reach if it did nothing else, steadier than the rates when other work shares the machine.

    python -m benchmarks.h2load                      # 20,000 requests each way, 4 connections
    python -m benchmarks.h2load --requests 5000 --json out.json
    python -m benchmarks.h2load --workload W2r       # 500 stubs, 2,000 different requests in turn

``--workload W2r`` asks W2r's 500 stubs with 2,000 different requests (``/item/<i>?u=<n>``, h2load's
``-i``, each connection going through them in turn): each request a header list the connection
has not sent before, where W1 repeats one.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from benchmarks.procs import cpu_seconds
from benchmarks.servers import prepare, simproxy_server
from benchmarks.workloads import as_webserver, workloads

_RATE = re.compile(r"finished in [\d.]+m?s, ([\d.]+) req/s")
_REQUESTS = re.compile(
    r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored"
)
_STATUS = re.compile(r"status codes: (\d+) 2xx")


def run_h2load(
    h2load: str, url: str, requests: int, connections: int, streams: int, http1: bool, pid: int | None = None
) -> dict[str, Any]:
    """One h2load run: its rate, how many requests succeeded (2xx) of how many sent, and (``pid``:
    the server's process) the server's CPU microseconds per request. ``url`` starting ``@``: the
    file of URLs to ask in turn."""
    target = ["-i", url[1:]] if url.startswith("@") else [url]
    argv = [
        h2load,
        "-n",
        str(requests),
        "-c",
        str(connections),
        "-m",
        str(streams),
        *(["--h1"] if http1 else []),
        *target,
    ]
    cpu = cpu_seconds([pid]) if pid is not None else 0.0
    out = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=300).stdout
    cpu = cpu_seconds([pid]) - cpu if pid is not None else 0.0
    rate, counts, status = _RATE.search(out), _REQUESTS.search(out), _STATUS.search(out)
    if rate is None or counts is None or status is None:
        raise SystemExit(f"h2load said something unexpected:\n{out}")
    total, _, _, succeeded, failed, errored = (int(n) for n in counts.groups())
    return {
        "protocol": "HTTP/1.1" if http1 else "HTTP/2",
        "streams_per_connection": streams,
        "requests": total,
        "succeeded_2xx": int(status[1]),
        "failed": failed + errored + (total - succeeded),
        "req_per_s": float(rate[1]),
        "server_cpu_us_per_req": cpu * 1e6 / total if total else 0.0,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=20_000)
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--json", default="")
    parser.add_argument("--workload", choices=("W1", "W2r"), default="W1")
    args = parser.parse_args(argv)
    h2load = shutil.which("h2load")
    if h2load is None:
        raise SystemExit("h2load is not on PATH: install Debian's nghttp2-client")
    workload = as_webserver(workloads()[args.workload])
    server = simproxy_server(1, ["-webserver"], "")
    prepare(server, workload)
    scratch = tempfile.TemporaryDirectory(prefix="simproxy-h2load-")
    try:
        base = f"http://127.0.0.1:{server.proxy}"
        if len(workload.requests) > 1:  # every request a new one: a file of them, asked in turn
            paths = [workload.requests[n % len(workload.requests)].path.format(n=n) for n in range(2000)]
            uris = Path(scratch.name) / "uris.txt"
            uris.write_text("".join(f"{base}{path}\n" for path in paths))
            url = f"@{uris}"
        else:
            url = f"{base}{workload.requests[0].path}"
        pid = server.process.pid if server.process is not None else None
        rows = [
            run_h2load(h2load, url, args.requests, args.connections, 1, http1=True, pid=pid),
            run_h2load(h2load, url, args.requests, args.connections, 10, http1=False, pid=pid),
        ]
    finally:
        server.stop()
        scratch.cleanup()
    print(f"workload {workload.name}: {workload.title}")
    print(f"{'protocol':<10} {'streams/conn':>12} {'requests':>9} {'2xx':>7} {'failed':>7} {'req/s':>9}")
    for row in rows:
        print(
            f"{row['protocol']:<10} {row['streams_per_connection']:>12} {row['requests']:>9} "
            f"{row['succeeded_2xx']:>7} {row['failed']:>7} {row['req_per_s']:>9.0f}"
        )
    print(f"HTTP/2 / HTTP/1.1: {rows[1]['req_per_s'] / rows[0]['req_per_s']:.2f}x")
    h1_cpu, h2_cpu = rows[0]["server_cpu_us_per_req"], rows[1]["server_cpu_us_per_req"]
    if h1_cpu and h2_cpu:
        print(
            f"server CPU per request: HTTP/1.1 {h1_cpu:.1f} us, HTTP/2 {h2_cpu:.1f} us; "
            f"per core HTTP/2 / HTTP/1.1: {h1_cpu / h2_cpu:.2f}x"
        )
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(rows, handle, indent=2)
    if any(row["failed"] or row["succeeded_2xx"] != row["requests"] for row in rows):
        raise SystemExit("not every request was answered 200")


if __name__ == "__main__":
    main()
