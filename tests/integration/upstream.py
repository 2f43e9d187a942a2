"""A real HTTP server for the forwarding modes to talk to: the "real service" of a test.

Routes (any method):
  /echo...        200 JSON of what arrived: method, path, query, headers, body
  /gzip           a gzip-compressed JSON body when the client accepts gzip (else plain JSON)
  /binary         256 bytes 0x00..0xff as application/octet-stream
  /count          text/plain body counting the calls to /count: "1", "2", ...
  /chunked        a chunked text body with two chunks
  /status/<n>     status n with body "status <n>"
  /reset          closes the connection without answering
  /slow           answers after 0.3 s
  /middleware     a remote middleware: sets the response to 200 "remote saw <request path>"
  anything else   200 text/plain "real <path>", header X-Real: yes
Every request is kept in ``requests`` (method, path with query, headers, body).
"""

from __future__ import annotations

import gzip
import json
import socket
import ssl
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

BINARY = bytes(range(256))
GZIP_DOC = {"compressed": True, "items": list(range(20))}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024
    """socketserver listens with a backlog of 5: 500 post-serve actions connecting at once lost
    SYNs, and the kernel's retransmissions (1, 2, 4, 8 s) held some callbacks up to 20 s."""


@dataclass
class Seen:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Upstream:
    server: ThreadingHTTPServer
    thread: threading.Thread
    requests: list[Seen] = field(default_factory=list)
    count: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    @property
    def host(self) -> str:
        return f"127.0.0.1:{self.port}"

    def url(self, path: str) -> str:
        return f"http://{self.host}{path}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(5)


def start_upstream(tls: ssl.SSLContext | None = None) -> Upstream:
    """The server on a free loopback port; HTTPS when given a server ``tls`` context."""
    state: dict[str, Upstream] = {}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def _body(self) -> bytes:
            length = int(self.headers.get("Content-Length") or 0)
            return self.rfile.read(length) if length else b""

        def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            if status not in (204, 304):
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def handle_one(self) -> None:
            up = state["up"]
            body = self._body()
            with up.lock:
                up.requests.append(Seen(self.command, self.path, dict(self.headers.items()), body))
            path = self.path.split("?")[0]
            if path.startswith("/echo"):
                doc = {
                    "method": self.command,
                    "path": self.path,
                    "headers": {k: v for k, v in self.headers.items()},
                    "body": body.decode("utf-8", "replace"),
                }
                self._send(200, json.dumps(doc).encode(), {"Content-Type": "application/json"})
            elif path == "/gzip":
                plain = json.dumps(GZIP_DOC).encode()
                if "gzip" in (self.headers.get("Accept-Encoding") or ""):
                    headers = {"Content-Type": "application/json", "Content-Encoding": "gzip"}
                    self._send(200, gzip.compress(plain), headers)
                else:
                    self._send(200, plain, {"Content-Type": "application/json"})
            elif path == "/binary":
                self._send(200, BINARY, {"Content-Type": "application/octet-stream"})
            elif path == "/count":
                with up.lock:
                    up.count += 1
                    n = up.count
                self._send(200, str(n).encode(), {"Content-Type": "text/plain"})
            elif path == "/chunked":
                self.send_response(200)
                self.send_header("Transfer-Encoding", "chunked")
                self.send_header("Content-Type", "text/plain")
                self.end_headers()
                for chunk in (b"first,", b"second"):
                    self.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                self.wfile.write(b"0\r\n\r\n")
            elif path.startswith("/status/"):
                code = int(path.rsplit("/", 1)[1])
                self._send(code, f"status {code}".encode(), {"Content-Type": "text/plain"})
            elif path == "/reset":
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
                self.close_connection = True
                self.connection.close()
            elif path == "/middleware":
                pair = json.loads(body)
                pair["response"] = {
                    "status": 200,
                    "body": f"remote saw {pair['request']['path']}",
                    "encodedBody": False,
                }
                self._send(200, json.dumps(pair).encode(), {"Content-Type": "application/json"})
            elif path == "/slow":
                time.sleep(0.3)
                self._send(200, b"slow", {"Content-Type": "text/plain"})
            else:
                self._send(200, f"real {path}".encode(), {"Content-Type": "text/plain", "X-Real": "yes"})

        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = handle_one

    server = _Server(("127.0.0.1", 0), Handler)
    if tls is not None:
        server.socket = tls.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    up = Upstream(server, thread)
    state["up"] = up
    thread.start()
    return up
