"""``simproxy fleet N [flags]``: a Redis and N simproxy instances on one machine, one proxy port.

What a Kubernetes deployment does with pods, on one machine, to try the fleet without a cluster:
every instance gets the same flags, the same ``-pp`` (the kernel spreads new connections over every
worker of every instance: they all listen with SO_REUSEPORT, which ``SIMPROXY_SHARE_PROXY_PORT``
asks of an instance even with one worker) and its own admin port (``-ap``,
``-ap``+1, ...), and all of them share one store: a private redis-server unless ``-redis-url`` is
given. Any instance's admin API shows and changes the whole fleet. SIGTERM or Ctrl-C stops them
all; if the fleet process dies, even by SIGKILL, so do the instances and the Redis.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from types import FrameType

from simproxy.admin.command import COMMAND
from simproxy.admin.process.arguments import parse_args
from simproxy.admin.process.flags import HINT, PROGRAM, UsageError, report
from simproxy.admin.process.redisserver import RedisServer
from simproxy.engine.execution.lifeline import die_with_parent

USAGE = f"usage: {PROGRAM} fleet N [flags]   (N instances sharing one store and the proxy port)"
HELP_WORDS = ("-h", "-help", "--help", "--h")


def run_fleet(args: Sequence[str], env: Mapping[str, str]) -> int:
    """Start the fleet and wait; the exit status is 0 after a stop, 1 when an instance failed."""
    if args and args[0] in HELP_WORDS:
        print(f"{USAGE}\n{HINT}", file=sys.stderr)
        return 0
    if not args or not args[0].isdigit() or int(args[0]) < 1:
        print(f"{USAGE}\n{HINT}", file=sys.stderr)
        return 2
    count, flags = int(args[0]), list(args[1:])
    try:
        settings = parse_args(flags, env)  # the flags are checked once, before anything starts
    except UsageError as error:
        return report(error)
    private = None if settings.redis_url else RedisServer().start()
    redis_url = settings.redis_url or (private.url if private else "")
    instances: list[subprocess.Popen[bytes]] = []
    stopping = False

    def stop(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        stopping = True

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        for i in range(count):
            argv = [*flags, "-ap", str(settings.admin_port + i), "-pp", str(settings.proxy_port)]
            if not settings.redis_url:
                argv += ["-redis-url", redis_url]
            instances.append(
                subprocess.Popen(
                    [*COMMAND, *argv],
                    env={**env, "SIMPROXY_SHARE_PROXY_PORT": "1"},
                    preexec_fn=die_with_parent,
                )
            )
            print(
                f"{PROGRAM} fleet: instance {i + 1}/{count}: admin 127.0.0.1:{settings.admin_port + i}, "
                f"proxy {settings.listen_on_host}:{settings.proxy_port}",
                file=sys.stderr,
            )
        while not stopping and all(p.poll() is None for p in instances):
            time.sleep(0.2)
        failed = [p.returncode for p in instances if p.poll() not in (None, 0)]
    finally:
        for process in instances:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in instances:
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=15)
            if process.poll() is None:
                process.kill()
                process.wait()
        if private is not None:
            private.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 1 if failed and not stopping else 0
