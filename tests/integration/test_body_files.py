"""bodyFile: read once at import from the allowed folder or allowed origins, never from elsewhere."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import Simproxy, simulation
from tests.serving import serving


class _Files(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b'{"from": "the upstream server"}' if self.path == "/remote.json" else b"gone"
        self.send_response(200 if self.path == "/remote.json" else 404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_: Any) -> None:
        return None


@pytest.fixture(scope="module")
def origin() -> Iterator[str]:
    with serving(_Files) as base:
        yield f"{base}/"


@pytest.fixture
def files(tmp_path: Path) -> Path:
    (tmp_path / "bodies").mkdir()
    (tmp_path / "bodies" / "local.json").write_text('{"from": "a file"}')
    (tmp_path / "bodies" / "image.b64").write_text(base64.b64encode(b"\x89PNG binary").decode())
    (tmp_path / "secret.txt").write_text("must never be served")
    return tmp_path / "bodies"


def _with_body_file(path: str, body_file: str, **response: Any) -> dict[str, Any]:
    return {
        "request": {"path": [{"matcher": "exact", "value": path}]},
        "response": {"status": 200, "bodyFile": body_file, **response},
    }


def test_body_files_from_the_folder_and_allowed_origins(simproxy_factory: Any, files: Path, origin: str) -> None:
    sp: Simproxy = simproxy_factory(
        "-response-body-files-path", str(files), "-response-body-files-allow-origin", origin
    )
    doc = simulation(
        _with_body_file("/local", "local.json"),
        _with_body_file("/remote", f"{origin}remote.json"),
        _with_body_file("/missing-remote", f"{origin}missing.json"),
        _with_body_file("/image", "image.b64", encodedBody=True),
    )
    assert sp.admin_json("PUT", "/api/v2/simulation", doc)[0] == 200
    assert sp.proxy("http://h/local")[2] == b'{"from": "a file"}'
    assert sp.proxy("http://h/remote")[2] == b'{"from": "the upstream server"}'
    assert sp.proxy("http://h/missing-remote")[2] == b"gone"  # any status is accepted, as in Hoverfly
    assert sp.proxy("http://h/image")[2] == b"\x89PNG binary"
    exported = sp.admin_json("GET", "/api/v2/simulation")[1]["data"]["pairs"][0]["response"]
    assert exported["bodyFile"] == "local.json" and exported["body"] == '{"from": "a file"}'


@pytest.mark.parametrize(
    ("body_file", "message"),
    [
        ("../secret.txt", "relative path is invalid as it attempts to backtrack"),
        ("/etc/hostname", "bodyFile contains absolute path (/etc/hostname). only relative is supported"),
        ("https://elsewhere.example.com/x.json", "is not allowed"),
        ("nothing-here.json", "nothing-here.json"),
    ],
)
def test_forbidden_or_missing_body_files_fail_the_import(
    simproxy_factory: Any, files: Path, body_file: str, message: str
) -> None:
    sp: Simproxy = simproxy_factory("-response-body-files-path", str(files))
    sp.admin_json(
        "PUT",
        "/api/v2/simulation",
        simulation(
            {"request": {"path": [{"matcher": "exact", "value": "/kept"}]}, "response": {"status": 200, "body": "kept"}}
        ),
    )
    status, body = sp.admin_json("PUT", "/api/v2/simulation", simulation(_with_body_file("/x", body_file)))
    assert status == 500
    assert body["error"].startswith("An error occurred: data.pairs[0].response ") and message in body["error"]
    assert sp.proxy("http://h/kept")[2] == b"kept"  # nothing changed
