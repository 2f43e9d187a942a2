"""``Http2Connection``'s sending under the client's windows: a window the client drives below
zero (it lowers ``SETTINGS_INITIAL_WINDOW_SIZE`` after DATA went out, RFC 9113 §6.9.2) holds the
stream's DATA until a ``WINDOW_UPDATE`` brings it above zero again, and never the worker."""

from __future__ import annotations

import asyncio
import threading

import h2.config
import h2.connection
import h2.events
import h2.settings

from tests.engine.server.test_http2_checks import _Dispatcher, h2_server

PATH = "/" + "p" * 33  # the test dispatcher answers with the path: a body of 34 bytes


def _negative_window() -> list[int]:
    """The sizes of the DATA frames the client got: with a window of 3, then of -1, then of 1."""

    async def main() -> list[int]:
        server, transport = h2_server(_Dispatcher())
        client = h2.connection.H2Connection(h2.config.H2Configuration(header_encoding=None))
        client.local_settings = h2.settings.Settings(
            client=True, initial_values={h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 3}
        )
        client.initiate_connection()
        server.start(client.data_to_send())
        sizes: list[int] = []

        def exchange() -> None:
            server.send(client.data_to_send())
            for event in client.receive_data(b"".join(transport.out)):
                if isinstance(event, h2.events.DataReceived):
                    sizes.append(len(event.data))
            transport.out.clear()

        exchange()
        client.send_headers(1, [(":method", "GET"), (":path", PATH), (":scheme", "http"), (":authority", "h")], True)
        exchange()  # 3 bytes of the 34: the window is spent
        client.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: 2})  # the window is -1 now
        exchange()
        client.increment_flow_control_window(2, 1)  # back to 1
        exchange()
        return sizes

    return asyncio.run(main())


def test_a_negative_window_holds_the_stream_and_not_the_worker() -> None:
    result: list[list[int]] = []
    worker = threading.Thread(target=lambda: result.append(_negative_window()), daemon=True)
    worker.start()
    worker.join(10)
    assert not worker.is_alive(), "sending under a negative window never returned"
    assert result == [[3, 1]]
