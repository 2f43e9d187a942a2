"""The ceiling of the machine: a server that answers every request with one fixed response.

uvloop + httptools and nothing else, as design.md §2 measured it: whatever simproxy does per
request costs the gap between this and simproxy's figure. Run::

    python -m benchmarks.ceiling PORT
"""

from __future__ import annotations

import asyncio
import sys

import httptools
import uvloop

BODY = b'{"hello": "world"}'
RESPONSE = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(BODY), BODY)


class Constant(asyncio.Protocol):
    def __init__(self) -> None:
        self.parser = httptools.HttpRequestParser(self)
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError:
            if self.transport is not None:
                self.transport.close()

    def on_message_complete(self) -> None:
        if self.transport is not None:
            self.transport.write(RESPONSE)


async def serve(port: int) -> None:
    loop = asyncio.get_running_loop()
    server = await loop.create_server(Constant, "127.0.0.1", port, backlog=2048)
    async with server:
        await server.serve_forever()


def main(argv: list[str]) -> int:
    uvloop.run(serve(int(argv[0])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
