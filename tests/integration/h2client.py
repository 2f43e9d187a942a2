"""A small blocking HTTP/2 client over a real socket, built on the h2 library, for the tests that
look at frames: streams on one connection, their timing, resets and GOAWAY, a tiny window."""

from __future__ import annotations

import socket
import time
from dataclasses import dataclass, field
from typing import Any

import h2.config
import h2.connection
import h2.events
import h2.settings


@dataclass
class Answer:
    """What came on one stream."""

    headers: dict[str, str] = field(default_factory=dict)
    body: bytearray = field(default_factory=bytearray)
    done_at: float | None = None
    """``time.monotonic()`` when the stream ended (or was reset)."""
    reset: int | None = None
    """The error code of the server's ``RST_STREAM``, if it sent one."""
    frames: list[int] = field(default_factory=list)
    """The size of each DATA frame."""
    trailers: dict[str, str] = field(default_factory=dict)

    @property
    def status(self) -> int:
        return int(self.headers[":status"])


class H2Client:
    """One HTTP/2 connection with prior knowledge to 127.0.0.1:``port``."""

    def __init__(self, port: int, window: int | None = None, timeout: float = 10.0) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
        if window is not None:
            self.conn.local_settings = h2.settings.Settings(
                client=True, initial_values={h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: window}
            )
        self.conn.initiate_connection()
        self.flush()
        self.answers: dict[int, Answer] = {}
        self.goaway: h2.events.ConnectionTerminated | None = None
        self.closed = False

    def flush(self) -> None:
        data = self.conn.data_to_send()
        if data:
            self.sock.sendall(data)

    def request(
        self, path: str, authority: str = "h2.test", method: str = "GET", reset: bool = False, end: bool = True
    ) -> int:
        """Open a stream for ``path`` (``reset``: and reset it at once, in the same write; ``end``
        False: a body follows, ``body``); its id."""
        sid: int = self.conn.get_next_available_stream_id()
        headers = [(":method", method), (":path", path), (":scheme", "http"), (":authority", authority)]
        self.conn.send_headers(sid, headers, end_stream=end)
        if reset:
            self.conn.reset_stream(sid)
        self.answers[sid] = Answer()
        self.flush()
        return sid

    def body(self, sid: int, data: bytes, end: bool) -> None:
        """Send ``data`` on stream ``sid`` (within the windows), ending it when ``end``."""
        frame = self.conn.max_outbound_frame_size
        for start in range(0, len(data), frame):
            self.conn.send_data(sid, data[start : start + frame], end_stream=end and start + frame >= len(data))
        if end and not data:
            self.conn.end_stream(sid)
        self.flush()

    def read(self, until: Any, timeout: float = 10.0) -> None:
        """Read and handle frames until ``until()`` is true, the connection ends, or ``timeout``."""
        deadline = time.monotonic() + timeout
        while not until() and not self.closed and time.monotonic() < deadline:
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                data = self.sock.recv(65536)
            except TimeoutError:
                break
            except ConnectionError:
                self.closed = True
                break
            if not data:
                self.closed = True
                break
            self.handle(self.conn.receive_data(data))

    def handle(self, events: list[Any]) -> None:
        for event in events:
            if isinstance(event, h2.events.ResponseReceived):
                self.answers[event.stream_id].headers = dict(event.headers)
            elif isinstance(event, h2.events.DataReceived):
                answer = self.answers[event.stream_id]
                answer.body += event.data
                answer.frames.append(len(event.data))
                self.conn.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, h2.events.TrailersReceived):
                self.answers[event.stream_id].trailers = dict(event.headers)
            elif isinstance(event, h2.events.StreamEnded):
                self.answers[event.stream_id].done_at = time.monotonic()
            elif isinstance(event, h2.events.StreamReset):
                answer = self.answers[event.stream_id]
                answer.reset, answer.done_at = event.error_code, time.monotonic()
            elif isinstance(event, h2.events.ConnectionTerminated):
                self.goaway = event
        self.flush()

    def done(self, *sids: int) -> bool:
        return all(self.answers[sid].done_at is not None for sid in sids)

    def close(self) -> None:
        self.sock.close()
