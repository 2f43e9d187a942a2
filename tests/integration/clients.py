"""Two small admin clients that talk to simproxy the way Hoverfly's own tools do.

``Hoverctl`` behaves like hoverctl: no ``Content-Type`` on its bodies, Go's user agent and
``Accept-Encoding: gzip``, a bearer token from ``POST /api/token-auth``, and exactly ``200`` taken as
success (any other status is an error whose message comes from ``{"error": ...}``), except for the
state and diff calls, whose status it never looks at.

``JavaClient`` behaves like hoverfly-java's OkHttp client: JSON bodies sent as
``application/json; charset=utf-8``, any 2xx taken as success, and the strict parts of its
Jackson views checked as Jackson would check them (it fails on keys it does not know there).
"""

from __future__ import annotations

import datetime
import gzip
import json
from typing import Any
from urllib.parse import quote

from tests.integration.conftest import call


class ClientError(Exception):
    """What the tool would print and exit with: the server's ``error`` message, or the raw body."""


def _exchange(port: int, method: str, path: str, body: bytes | None, headers: dict[str, str]) -> tuple[int, bytes]:
    """One request on a new connection; a gzip body comes back decoded, as both tools' HTTP stacks do."""
    status, response_headers, payload = call(port, method, path, body, {"Accept-Encoding": "gzip", **headers})
    if response_headers.get("content-encoding") == "gzip":
        payload = gzip.decompress(payload)
    return status, payload


class Hoverctl:
    def __init__(self, port: int) -> None:
        self.port = port
        self.token = ""

    def _do(self, method: str, path: str, body: bytes | None = None, accept: str = "") -> tuple[int, bytes]:
        headers = {"User-Agent": "Go-http-client/1.1"}
        if accept:
            headers["Accept"] = accept
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        status, payload = _exchange(self.port, method, path, body, headers)
        if status == 401:
            raise ClientError("Hoverfly requires authentication")
        return status, payload

    def _ok(self, method: str, path: str, body: bytes | None = None, accept: str = "") -> Any:
        status, payload = self._do(method, path, body, accept)
        if status != 200:
            try:
                message = json.loads(payload)["error"]
            except (ValueError, KeyError, TypeError):
                message = payload.decode(errors="replace")
            raise ClientError(message)
        return payload

    def _json(self, method: str, path: str, doc: Any = None) -> Any:
        payload = self._ok(method, path, None if doc is None else json.dumps(doc).encode())
        return json.loads(payload) if payload else None

    def running(self) -> bool:
        """``CheckIfRunning``: any answer to the health check but a 401 means running."""
        try:
            self._do("GET", "/api/health")
        except OSError:
            return False
        return True

    def login(self, username: str, password: str) -> None:
        status, payload = self._do(
            "POST", "/api/token-auth", json.dumps({"username": username, "password": password}).encode()
        )
        if status == 429:
            raise ClientError("Too many failed login attempts, please wait 10 minutes")
        self.token = json.loads(payload)["token"]

    def get_mode(self) -> tuple[str, str]:
        view = self._json("GET", "/api/v2/hoverfly/mode")
        # hoverctl prints the matching strategy in simulate mode and dereferences it unchecked
        return view["mode"], view["arguments"]["matchingStrategy"] if view["mode"] == "simulate" else ""

    def set_mode(self, mode: str, **arguments: Any) -> str:
        args = {key: value for key, value in arguments.items() if value}  # Go's omitempty
        if mode in ("simulate", "spy"):
            args.setdefault("matchingStrategy", "strongest")
        return str(self._json("PUT", "/api/v2/hoverfly/mode", {"mode": mode, "arguments": args})["mode"])

    def import_file(self, raw: bytes) -> list[str]:
        view = json.loads(self._ok("PUT", "/api/v2/simulation", raw))
        return [warning["message"] for warning in view.get("warnings") or []]

    def export(self, url_pattern: str = "") -> dict[str, Any]:
        query = f"?urlPattern={quote(url_pattern, safe='')}" if url_pattern else ""
        return dict(self._json("GET", f"/api/v2/simulation{query}"))

    def delete_simulation(self) -> None:
        self._ok("DELETE", "/api/v2/simulation")

    def get_destination(self) -> str:
        return str(self._json("GET", "/api/v2/hoverfly/destination")["destination"])

    def set_destination(self, destination: str) -> str:
        return str(self._json("PUT", "/api/v2/hoverfly/destination", {"destination": destination})["destination"])

    def middleware(self) -> dict[str, str]:
        view = self._json("GET", "/api/v2/hoverfly/middleware")
        return {key: view[key] for key in ("binary", "script", "remote")}

    def status(self) -> dict[str, Any]:
        self.middleware()
        view = self._json("GET", "/api/v2/hoverfly")
        return {"mode": view["mode"], "webserver": view["isWebServer"], "cors": view["cors"]["enabled"]}

    def flush_cache(self) -> None:
        self._ok("DELETE", "/api/v2/cache")

    def logs(self, as_json: bool) -> list[Any]:
        payload = self._ok("GET", "/api/v2/logs", accept="application/json" if as_json else "text/plain")
        if as_json:
            return list(json.loads(payload)["logs"])
        return [line for line in payload.decode().split("\n") if line]

    def state(self) -> dict[str, str]:
        return dict(json.loads(self._do("GET", "/api/v2/state")[1])["state"])

    def set_state(self, key: str, value: str) -> None:
        self._do("PATCH", "/api/v2/state", json.dumps({"state": {key: value}}).encode())

    def delete_state(self) -> None:
        self._do("DELETE", "/api/v2/state")

    def diffs(self) -> list[Any]:
        return list(json.loads(self._do("GET", "/api/v2/diff")[1])["diff"])

    def journal_indexes(self) -> list[dict[str, Any]]:
        return list(self._json("GET", "/api/v2/journal/index"))

    def set_journal_index(self, name: str) -> None:
        self._ok("POST", "/api/v2/journal/index", json.dumps({"name": name}).encode())

    def delete_journal_index(self, name: str) -> None:
        self._ok("DELETE", f"/api/v2/journal/index/{name}")

    def set_csv(self, name: str, data: str) -> None:
        self._ok(
            "PUT", "/api/v2/hoverfly/templating-data-source/csv", json.dumps({"name": name, "data": data}).encode()
        )

    def csv_names(self) -> list[str]:
        view = self._json("GET", "/api/v2/hoverfly/templating-data-source/csv")
        return [source["name"] for source in view["csvDataSources"]]

    def delete_csv(self, name: str) -> None:
        self._ok("DELETE", f"/api/v2/hoverfly/templating-data-source/csv/{name}")

    def post_serve_actions(self) -> list[Any]:
        # Hoverfly leaves the key out when there are none; Go decodes that as an empty list
        return list(self._json("GET", "/api/v2/hoverfly/post-serve-action").get("actions") or [])

    def stop(self) -> None:
        self._ok("DELETE", "/api/v2/shutdown")


# -- hoverfly-java ---------------------------------------------------------------------------------

_INFO_USAGE_KEYS = {"counters"}
_INFO_MIDDLEWARE_KEYS = {"binary", "script", "remote"}
_DELAY_KEYS = {"urlPattern", "delay", "httpMethod"}
_INDEX_ENTRY_KEYS = {"key", "journalEntryId"}
_COUNTERS = ("capture", "modify", "simulate", "synthesize", "spy")


def _strict(where: str, value: Any, known: set[str]) -> None:
    unknown = set(value) - known
    if unknown:
        raise ClientError(f"Unrecognized field(s) {sorted(unknown)} in {where}")


class JavaClient:
    def __init__(self, port: int, token: str = "") -> None:
        self.port = port
        self.token = token  # HOVERFLY_AUTH_TOKEN

    def _call(self, method: str, path: str, doc: Any = None) -> Any:
        headers = {"User-Agent": "okhttp/4.12.0"}
        body = None
        if doc is not None:
            body = json.dumps(doc).encode()
            headers["Content-Type"] = "application/json; charset=utf-8"
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        status, payload = _exchange(self.port, method, path, body, headers)
        if not 200 <= status < 300:
            raise ClientError(f"Unexpected response (code={status}, message={payload.decode(errors='replace')})")
        return json.loads(payload) if payload.strip() else None

    def healthy(self) -> bool:
        try:
            self._call("GET", "/api/health")
        except (OSError, ClientError):
            return False
        return True

    def info(self) -> dict[str, Any]:
        view = self._call("GET", "/api/v2/hoverfly")
        _strict("usage", view["usage"], _INFO_USAGE_KEYS)
        for name in _COUNTERS:
            if not isinstance(view["usage"]["counters"].get(name, 0), int):
                raise ClientError(f"usage counter {name} is not an int")
        _strict("middleware", view["middleware"], _INFO_MIDDLEWARE_KEYS)
        return {key: view.get(key) for key in ("destination", "mode", "arguments", "usage", "middleware", "version")}

    def mode(self) -> str:
        mode = str(self.info()["mode"]).upper()
        if mode.lower() not in ("simulate", "capture", "spy", "synthesize", "modify", "diff"):
            raise ClientError(f"No enum constant HoverflyMode.{mode}")
        return mode

    def set_mode(self, mode: str, arguments: dict[str, Any] | None = None) -> None:
        self._call("PUT", "/api/v2/hoverfly/mode", {"mode": mode, **({"arguments": arguments} if arguments else {})})

    def set_destination(self, destination: str) -> None:
        self._call("PUT", "/api/v2/hoverfly/destination", {"destination": destination})

    def set_simulation(self, simulation: dict[str, Any]) -> None:
        self._call("PUT", "/api/v2/simulation", simulation)

    def simulation(self) -> dict[str, Any]:
        view = self._call("GET", "/api/v2/simulation")
        for delay in view["data"].get("globalActions", {}).get("delays") or []:
            _strict("delays", delay, _DELAY_KEYS)
        return dict(view)

    def delete_simulation(self) -> None:
        self._call("DELETE", "/api/v2/simulation")

    def _journal(self, view: Any) -> list[dict[str, Any]]:
        if view is None or view.get("journal") is None:
            raise ClientError("Failed to get journal for verification.")
        for entry in view["journal"]:
            # Jackson's ZonedDateTime: ISO 8601 with an offset, as Hoverfly writes it
            datetime.datetime.fromisoformat(entry["timeStarted"].replace("Z", "+00:00"))
            float(entry["latency"])
        return list(view["journal"])

    def journal(self, offset: int, limit: int, sort: str = "") -> list[dict[str, Any]]:
        query = f"?offset={offset}&limit={limit}" + (f"&sort={sort}" if sort else "")
        return self._journal(self._call("GET", f"/api/v2/journal{query}"))

    def search_journal(self, request: dict[str, Any]) -> list[dict[str, Any]]:
        return self._journal(self._call("POST", "/api/v2/journal", {"request": request}))

    def verify(self, method: str, path: str, times: int) -> None:
        """``hoverfly.verify(service(...).get(path), times(n))``: the DSL's request, its entries counted."""
        request = {
            "path": [{"matcher": "exact", "value": path}],
            "method": [{"matcher": "exact", "value": method}],
            "destination": [{"matcher": "regex", "value": ".*"}],
            "query": {},
            "body": [{"matcher": "exact", "value": ""}],
            "headers": {},
            "requiresState": {},
        }
        found = len(self.search_journal(request))
        if found != times:
            raise ClientError(f"Expected {times} request(s) to {method} {path}, found {found}")

    def delete_journal(self) -> None:
        self._call("DELETE", "/api/v2/journal")

    def state(self) -> dict[str, str]:
        return dict(self._call("GET", "/api/v2/state")["state"])

    def set_state(self, state: dict[str, str]) -> None:
        self._call("PUT", "/api/v2/state", {"state": state})

    def update_state(self, state: dict[str, str]) -> None:
        self._call("PATCH", "/api/v2/state", {"state": state})

    def delete_state(self) -> None:
        self._call("DELETE", "/api/v2/state")

    def diffs(self) -> list[dict[str, Any]]:
        return list(self._call("GET", "/api/v2/diff")["diff"])

    def index_entries(self) -> list[dict[str, Any]]:
        view = self._call("GET", "/api/v2/journal/index") or []
        for index in view:
            for entry in index.get("entries") or []:
                _strict("journal index entry", entry, _INDEX_ENTRY_KEYS)
        return list(view)

    def reset(self) -> None:
        self.delete_simulation()
        self.delete_journal()
        self.delete_state()
