"""The process that runs PAC scripts for one worker (engine/outbound/pac.py starts it).

A PAC file is JavaScript from a user: it may loop forever or call ``dnsResolve`` (a blocking DNS
lookup). Run in the worker, either would stop the worker's event loop; run here, the worker waits
for an answer with a time limit and kills this process when it runs out.

Protocol: one JSON object per line on stdin, ``{"pac": text or null, "url", "host"}`` (``pac`` only
when it changed); one per line on stdout, ``{"answer": "PROXY a:1; DIRECT"}`` or ``{"error": text}``.
"""

from __future__ import annotations

import json
import signal
import sys

from pypac.parser import PACFile

from simproxy.engine.execution.lifeline import die_with_parent


def serve() -> None:
    pac: PACFile | None = None
    for line in sys.stdin:
        request = json.loads(line)
        try:
            if request.get("pac") is not None:
                pac = None
                pac = PACFile(request["pac"])
            if pac is None:
                raise ValueError("no PAC file")
            reply = {"answer": str(pac.find_proxy_for_url(request["url"], request["host"]))}
        except Exception as exc:  # a script that does not parse or fails: its message goes back
            reply = {"error": str(exc) or type(exc).__name__}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    # a script looping forever never reads the end of stdin: die with the worker, however it dies
    die_with_parent(signal.SIGKILL, int(sys.argv[1]) if len(sys.argv) > 1 else None)
    serve()
