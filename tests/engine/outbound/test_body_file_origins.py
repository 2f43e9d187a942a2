"""bodyFile paths and URLs may only reach what the flags allow: no escape from the folder, no
look-alike origin, no redirect elsewhere."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from simproxy.engine.outbound.bodyfiles import download_body_files
from simproxy.engine.simulation.importing import origin_allowed
from tests.engine.conftest import pair, simulation
from tests.engine.simulation.test_simulation import failure
from tests.serving import serving


@pytest.mark.parametrize(
    ("url", "allowed"),
    [
        ("http://files.test", True),
        ("http://files.test/a.json", True),
        ("http://files.test?x=1", True),
        ("http://files.test.evil.net/a.json", False),
        ("http://files.test@evil.net/a.json", False),
        ("http://files.test:8080/a.json", False),
        ("https://files.test/a.json", False),
        ("http://cdn.test/bodies/a.json", True),
        ("http://cdn.test/bodies-other/a.json", False),
        ("http://cdn.test/a.json", False),
    ],
)
def test_an_origin_allows_what_lies_under_it_only(url: str, allowed: bool) -> None:
    assert origin_allowed(url, ("http://files.test", "http://cdn.test/bodies/")) is allowed


def test_no_origin_allows_nothing() -> None:
    assert origin_allowed("http://files.test/a", ()) is False


def test_a_symlink_out_of_the_folder_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "secret.txt").write_text("secret")
    (root / "link.txt").symlink_to(tmp_path / "secret.txt")
    message = failure(None, simulation(pair(bodyFile="link.txt")), body_files_root=root)
    assert message == "data.pairs[0].response relative path is invalid as it attempts to backtrack"


class _Files(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        if self.path == "/ok/body":
            self._answer(200, b"the body")
        elif self.path == "/ok/moved":
            self._answer(302, b"", location="/ok/body")
        elif self.path == "/ok/away":
            self._answer(302, b"", location="/private/token")
        else:
            self._answer(200, b"private")

    def _answer(self, status: int, body: bytes, location: str = "") -> None:
        self.send_response(status)
        if location:
            self.send_header("Location", location)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        return None


@pytest.fixture
def files_server() -> Iterator[str]:
    with serving(_Files) as base:
        yield base


def test_a_redirect_is_followed_only_to_an_allowed_url(files_server: str) -> None:
    allowed = (f"{files_server}/ok/",)
    urls = {f"{files_server}/ok/body", f"{files_server}/ok/moved", f"{files_server}/ok/away"}
    got = asyncio.run(download_body_files(urls, allowed))
    assert got[f"{files_server}/ok/body"] == b"the body"
    assert got[f"{files_server}/ok/moved"] == b"the body"
    reason = got[f"{files_server}/ok/away"]
    assert isinstance(reason, str) and "not an allowed origin" in reason
