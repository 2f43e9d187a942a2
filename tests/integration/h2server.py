"""A real HTTPS service that speaks HTTP/2 only (ALPN ``h2``), on the h2 library, in a thread of its
own: the real service of the tests that capture or spy over HTTP/2. It answers every request
``200`` with ``served over h2: <method> <path>`` and the trailer ``grpc-status: 0``, and records
the requests it was sent."""

from __future__ import annotations

import asyncio
import ssl
import threading
from dataclasses import dataclass, field
from typing import Any

import h2.config
import h2.connection
import h2.events


@dataclass
class Http2Service:
    port: int = 0
    seen: list[dict[str, str]] = field(default_factory=list)
    """The header block of each request (pseudo-headers included)."""
    loop: asyncio.AbstractEventLoop | None = None
    thread: threading.Thread | None = None
    server: asyncio.Server | None = None

    def stop(self) -> None:
        if self.loop is not None and self.server is not None:
            self.loop.call_soon_threadsafe(self.server.close)
            self.loop.call_soon_threadsafe(self.loop.stop)
        if self.thread is not None:
            self.thread.join(10)


class _Serve(asyncio.Protocol):
    def __init__(self, service: Http2Service) -> None:
        self.service = service
        self.conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False, header_encoding="utf-8"))
        self.transport: Any = None
        self.heads: dict[int, dict[str, str]] = {}

    def connection_made(self, transport: Any) -> None:
        self.transport = transport
        tls = transport.get_extra_info("ssl_object")
        if tls is None or tls.selected_alpn_protocol() != "h2":
            transport.close()  # HTTP/2 only: a client that did not pick it is not served
            return
        self.conn.initiate_connection()
        transport.write(self.conn.data_to_send())

    def data_received(self, data: bytes) -> None:
        for event in self.conn.receive_data(data):
            if isinstance(event, h2.events.RequestReceived):
                self.heads[event.stream_id] = dict(event.headers or ())
            elif isinstance(event, h2.events.DataReceived):
                self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, h2.events.StreamEnded):
                head = self.heads.pop(event.stream_id)
                self.service.seen.append(head)
                body = f"served over h2: {head[':method']} {head[':path']}".encode()
                headers = [(":status", "200"), ("content-type", "text/plain"), ("x-upstream", "h2")]
                self.conn.send_headers(event.stream_id, headers)
                self.conn.send_data(event.stream_id, body)
                self.conn.send_headers(event.stream_id, [("grpc-status", "0")], end_stream=True)  # trailers
        self.transport.write(self.conn.data_to_send())


def start_http2_service(context: ssl.SSLContext) -> Http2Service:
    """The service on a free loopback port, TLS with ``context`` (its ALPN set to ``h2`` here)."""
    context.set_alpn_protocols(["h2"])
    service = Http2Service()
    ready = threading.Event()

    def run() -> None:
        loop = asyncio.new_event_loop()
        service.loop = loop
        service.server = loop.run_until_complete(
            loop.create_server(lambda: _Serve(service), "127.0.0.1", 0, ssl=context)
        )
        service.port = service.server.sockets[0].getsockname()[1]
        ready.set()
        loop.run_forever()
        loop.close()

    service.thread = threading.Thread(target=run, name="h2-service", daemon=True)
    service.thread.start()
    ready.wait(10)
    return service
