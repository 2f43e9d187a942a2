"""HTTPS through the proxy: CONNECT intercepted with simproxy's CA, the CA kept and shared, blind
tunnels outside the destination, plain-HTTP tunnels, and upstream certificate verification."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

from simproxy.engine.modes.failures import PRODUCT
from simproxy.engine.server.certs import LeafCertificates, generate_ca
from tests.integration.conftest import Simproxy, simulation
from tests.integration.upstream import Upstream, start_upstream

UPSTREAM_CA = generate_ca("untrusted test CA", "tests")


@pytest.fixture(scope="module")
def secure_upstream() -> Iterator[Upstream]:
    """A real HTTPS service whose certificate comes from a CA nobody trusts (``UPSTREAM_CA``)."""
    leaves = LeafCertificates(UPSTREAM_CA)
    up = start_upstream(leaves.context("localhost"))
    yield up
    up.stop()


def ca_file(sp: Simproxy, folder: Path) -> Path:
    status, headers, pem = sp.admin("GET", "/api/v2/hoverfly/ca-cert")
    assert status == 200 and headers["content-type"] == "application/x-pem-file"
    assert pem.startswith(b"-----BEGIN CERTIFICATE-----")
    path = folder / "simproxy-ca.pem"
    path.write_bytes(pem)
    return path


def through(sp: Simproxy, url: str, ca: Path | bool, **kwargs: Any) -> requests.Response:
    proxy = f"http://127.0.0.1:{sp.proxy_port}"
    verify = str(ca) if isinstance(ca, Path) else ca
    return requests.get(url, proxies={"http": proxy, "https": proxy}, verify=verify, timeout=30, **kwargs)


def test_requests_trusting_the_ca_gets_a_simulated_https_answer(simproxy_factory: Any, tmp_path: Path) -> None:
    sp: Simproxy = simproxy_factory()
    pair = {
        "request": {"scheme": [{"matcher": "exact", "value": "https"}], "path": [{"matcher": "exact", "value": "/v1"}]},
        "response": {"status": 200, "body": "secret simulated", "headers": {"Content-Type": ["text/plain"]}},
    }
    assert sp.admin("PUT", "/api/v2/simulation", simulation(pair))[0] == 200
    ca = ca_file(sp, tmp_path)
    for _ in range(3):  # a keep-alive connection inside the tunnel, then new tunnels
        response = through(sp, "https://api.secure.test/v1", ca)
        assert (response.status_code, response.text) == (200, "secret simulated")
    with pytest.raises(requests.exceptions.SSLError):
        through(sp, "https://api.secure.test/v1", True)  # the system's CAs do not know simproxy's
    journal = sp.admin_json("GET", "/api/v2/journal")[1]["journal"]
    assert journal[0]["request"]["scheme"] == "https"
    assert journal[0]["request"]["destination"] == "api.secure.test"


def test_the_ca_is_kept_between_runs_and_shared_by_every_worker(
    simproxy_factory: Any, redis_server: Any, tmp_path: Path
) -> None:
    home = {"SIMPROXY_HOME": str(tmp_path / "home")}
    first: Simproxy = simproxy_factory(env=home)
    pem = first.admin("GET", "/api/v2/hoverfly/ca-cert")[2]
    first.stop()
    assert (tmp_path / "home" / "ca.pem").read_bytes() == pem
    again: Simproxy = simproxy_factory(env=home)
    assert again.admin("GET", "/api/v2/hoverfly/ca-cert")[2] == pem
    shared = ("-redis-url", redis_server.url, "-redis-prefix", "ca-fleet:", "-workers", "2")
    a: Simproxy = simproxy_factory(*shared, env={"SIMPROXY_HOME": str(tmp_path / "a")})
    b: Simproxy = simproxy_factory(*shared, env={"SIMPROXY_HOME": str(tmp_path / "b")})
    fleet_pem = a.admin("GET", "/api/v2/hoverfly/ca-cert")[2]
    assert b.admin("GET", "/api/v2/hoverfly/ca-cert")[2] == fleet_pem  # one CA for the fleet
    assert a.admin("PUT", "/api/v2/simulation", simulation({"request": {}, "response": {"body": "any"}}))[0] == 200
    ca = tmp_path / "fleet.pem"
    ca.write_bytes(fleet_pem)
    for sp in (a, b) * 4:  # every worker of both instances signs with it
        assert through(sp, "https://somewhere.test/", ca).text == "any"


def test_each_dialect_sharing_a_store_gets_its_own_ca(simproxy_factory: Any, redis_server: Any, tmp_path: Path) -> None:
    """A default instance and a ``-compat hoverfly`` one on one Redis: each signs with a CA named as
    its dialect names it, shared with the instances of its dialect."""
    from cryptography import x509

    def names(pem: bytes) -> tuple[str, str]:
        subject = {a.rfc4514_attribute_name: str(a.value) for a in x509.load_pem_x509_certificate(pem).subject}
        return subject["CN"], subject["O"]

    shared = ("-redis-url", redis_server.url, "-redis-prefix", "ca-dialects:")
    ours: Simproxy = simproxy_factory(*shared, env={"SIMPROXY_HOME": str(tmp_path / "a")})
    ours_pem = ours.admin("GET", "/api/v2/hoverfly/ca-cert")[2]
    hoverflys: Simproxy = simproxy_factory(*shared, "-compat", "hoverfly", env={"SIMPROXY_HOME": str(tmp_path / "b")})
    hoverflys_pem = hoverflys.admin("GET", "/api/v2/hoverfly/ca-cert")[2]
    assert (names(ours_pem), names(hoverflys_pem)) == (
        ("simproxy CA", "simproxy"),
        ("hoverfly.proxy", "Hoverfly Authority"),
    )
    again: Simproxy = simproxy_factory(*shared, "-compat", "hoverfly", env={"SIMPROXY_HOME": str(tmp_path / "c")})
    assert again.admin("GET", "/api/v2/hoverfly/ca-cert")[2] == hoverflys_pem
    assert ours.admin("GET", "/api/v2/hoverfly/ca-cert")[2] == ours_pem


def test_a_given_ca_signs(simproxy_factory: Any, tmp_path: Path) -> None:
    mine = generate_ca("my company CA", "me")
    (tmp_path / "cert.pem").write_bytes(mine.cert_pem)
    (tmp_path / "key.pem").write_bytes(mine.key_pem)
    sp: Simproxy = simproxy_factory("-cert", str(tmp_path / "cert.pem"), "-key", str(tmp_path / "key.pem"))
    assert sp.admin("GET", "/api/v2/hoverfly/ca-cert")[2] == mine.cert_pem
    assert sp.admin("PUT", "/api/v2/simulation", simulation({"request": {}, "response": {"body": "mine"}}))[0] == 200
    assert through(sp, "https://inside.test/", tmp_path / "cert.pem").text == "mine"


def test_capture_over_https_and_certificate_verification(
    simproxy_factory: Any, secure_upstream: Upstream, tmp_path: Path
) -> None:
    url = f"https://localhost:{secure_upstream.port}/hello"
    checking: Simproxy = simproxy_factory()
    assert checking.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "capture"})[0] == 200
    response = through(checking, url, ca_file(checking, tmp_path))
    assert response.status_code == 502  # the real service's certificate does not verify
    assert response.text.startswith(
        f"{PRODUCT} Error!\n\nThere was an error when forwarding the request to the intended destination"
    )
    # Go's words, which clients match on (issue 19, item 7)
    problem = f'Get "{url}": tls: failed to verify certificate: x509: certificate signed by unknown authority'
    assert response.text.endswith(f"Got error: {problem}")
    assert checking.admin_json("GET", "/api/v2/simulation")[1]["data"]["pairs"] == []

    trusting: Simproxy = simproxy_factory("-tls-verification=false")
    assert trusting.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "capture"})[0] == 200
    response = through(trusting, url, ca_file(trusting, tmp_path))
    assert (response.status_code, response.text) == (200, "real /hello")
    [pair] = trusting.admin_json("GET", "/api/v2/simulation")[1]["data"]["pairs"]
    assert pair["request"]["scheme"] == [{"matcher": "exact", "value": "https"}]
    assert pair["request"]["destination"] == [{"matcher": "exact", "value": f"localhost:{secure_upstream.port}"}]
    assert trusting.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "simulate"})[0] == 200
    served = len(secure_upstream.requests)
    assert through(trusting, url, ca_file(trusting, tmp_path)).text == "real /hello"
    assert len(secure_upstream.requests) == served  # replayed from the capture


def test_outside_the_destination_a_connect_is_a_blind_tunnel(
    simproxy_factory: Any, secure_upstream: Upstream, tmp_path: Path
) -> None:
    sp: Simproxy = simproxy_factory("-destination", "https://only.this.test")
    upstream_ca = tmp_path / "upstream-ca.pem"
    upstream_ca.write_bytes(UPSTREAM_CA.cert_pem)
    # trusting only the real service's CA works: simproxy is not in the middle
    response = through(sp, f"https://localhost:{secure_upstream.port}/untouched", upstream_ca)
    assert (response.status_code, response.text) == (200, "real /untouched")
    assert sp.admin_json("GET", "/api/v2/journal")[1]["journal"] == []  # not intercepted, not journaled
    with socket.create_connection(("127.0.0.1", sp.proxy_port), timeout=10) as raw:
        raw.sendall(b"CONNECT localhost:1 HTTP/1.1\r\n\r\n")  # nothing listens there
        assert raw.recv(4096).startswith(b"HTTP/1.0 502 Bad Gateway\r\n")


class SpeaksFirst:
    """A host that greets whoever connects before reading anything (SMTP, SSH), and may hang up."""

    def __init__(self, hang_up: bool) -> None:
        self.hang_up = hang_up
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.2)
        self.port = int(self.listener.getsockname()[1])
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        held: list[socket.socket] = []
        while not self.stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except TimeoutError:
                continue
            conn.sendall(b"220 greeting\r\n")
            if self.hang_up:
                conn.close()
            else:
                held.append(conn)
        for conn in held:
            conn.close()

    def close(self) -> None:
        self.stop.set()
        self.thread.join(timeout=5)
        self.listener.close()


@pytest.mark.parametrize("hang_up", [False, True], ids=["greets", "greets-and-hangs-up"])
def test_a_host_that_speaks_first_is_heard_after_the_connect_is_answered(simproxy_factory: Any, hang_up: bool) -> None:
    sp: Simproxy = simproxy_factory("-destination", "https://only.this.test")
    host = SpeaksFirst(hang_up)
    try:
        for _ in range(40):  # the greeting raced the answer: about one CONNECT in six came out wrong
            with socket.create_connection(("127.0.0.1", sp.proxy_port), timeout=10) as raw:
                raw.sendall(b"CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n" % host.port)
                got = b""
                while not got.endswith(b"greeting\r\n"):
                    data = raw.recv(4096)
                    assert data, f"closed after {got!r}"
                    got += data
                assert got == b"HTTP/1.0 200 Connection established\r\n\r\n220 greeting\r\n"
                if hang_up:
                    assert raw.recv(4096) == b""  # the host's close follows its greeting
    finally:
        host.close()


@pytest.mark.parametrize(
    ("target", "host"),
    [
        ("plain.test:8080", "plain.test:8080"),
        ("http://hoverfly.io/", "hoverfly.io"),  # Go's client through a proxy: an absolute URI (Hoverfly: 200)
    ],
)
def test_plain_http_tunneling(simproxy_factory: Any, target: str, host: str) -> None:
    sp: Simproxy = simproxy_factory("-plain-http-tunneling")
    assert sp.admin("PUT", "/api/v2/simulation", simulation({"request": {}, "response": {"body": "plain"}}))[0] == 200
    with socket.create_connection(("127.0.0.1", sp.proxy_port), timeout=10) as raw:
        raw.sendall(f"CONNECT {target} HTTP/1.1\r\n\r\n".encode())
        assert raw.recv(4096) == b"HTTP/1.0 200 OK\r\n\r\n"
        raw.sendall(f"GET /inside HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
        reply = raw.recv(4096)
    assert reply.startswith(b"HTTP/1.1 200 OK\r\n") and reply.endswith(b"plain")
    entry = sp.admin_json("GET", "/api/v2/journal")[1]["journal"][0]
    assert (entry["request"]["scheme"], entry["request"]["destination"]) == ("http", host)


@pytest.mark.parametrize("mode", ["spy", "modify", "diff"])
def test_forwarding_modes_over_https(
    simproxy_factory: Any, secure_upstream: Upstream, tmp_path: Path, mode: str
) -> None:
    sp: Simproxy = simproxy_factory("-tls-verification=false")
    url = f"https://localhost:{secure_upstream.port}/secure/{mode}"
    stub = {"request": {"path": [{"matcher": "exact", "value": f"/secure/{mode}"}]}, "response": {"body": "expected"}}
    assert sp.admin("PUT", "/api/v2/simulation", simulation(stub))[0] == 200
    assert sp.admin("PUT", "/api/v2/hoverfly/mode", {"mode": mode})[0] == 200
    ca = ca_file(sp, tmp_path)
    if mode == "spy":  # the hit is simulated, a miss goes to the real HTTPS service
        assert through(sp, url, ca).text == "expected"
        assert through(sp, url + "/other", ca).text == f"real /secure/{mode}/other"
    else:  # modify without middleware forwards; diff forwards and reports
        assert through(sp, url, ca).text == f"real /secure/{mode}"
    if mode == "diff":
        [group] = sp.admin_json("GET", "/api/v2/diff")[1]["diff"]
        assert group["request"]["host"] == f"localhost:{secure_upstream.port}"
        assert group["diffReports"][0]["diffEntries"][-1] == {
            "field": "body", "expected": "expected", "actual": f"real /secure/{mode}"
        }  # fmt: skip


def test_hoverflys_variable_turns_upstream_verification_off(
    simproxy_factory: Any, secure_upstream: Upstream, tmp_path: Path
) -> None:
    sp: Simproxy = simproxy_factory(env={"HoverflyTlsVerification": "false"})
    assert sp.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "capture"})[0] == 200
    response = through(sp, f"https://localhost:{secure_upstream.port}/hello", ca_file(sp, tmp_path))
    assert (response.status_code, response.text) == (200, "real /hello")


def test_generate_ca_cert_makes_the_ca_that_signs_and_leaves_it_in_the_working_directory(
    simproxy_factory: Any, tmp_path: Path
) -> None:
    sp: Simproxy = simproxy_factory("-generate-ca-cert", cwd=tmp_path)
    written = (tmp_path / "cert.pem").read_bytes()
    assert sp.admin("GET", "/api/v2/hoverfly/ca-cert")[2] == written  # the CA served is the one written
    pair = {"request": {"path": [{"matcher": "exact", "value": "/v1"}]}, "response": {"status": 200, "body": "ok"}}
    assert sp.admin("PUT", "/api/v2/simulation", simulation(pair))[0] == 200
    assert through(sp, "https://generated.test/v1", tmp_path / "cert.pem").text == "ok"  # it signs the hosts
    assert [e["msg"] for e in sp.admin_json("GET", "/api/v2/logs")[1]["logs"]][:2] == [
        "cert.pem created", "key.pem created."
    ]  # fmt: skip


def _client_identity(folder: Path) -> tuple[bytes, Path, Path]:
    """A CA (its PEM) and a client certificate and key it signs, written to ``folder``."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    def name(cn: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])

    now = datetime.datetime.now(datetime.UTC)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder().subject_name(name("client CA")).issuer_name(name("client CA"))
        .public_key(ca_key.public_key()).serial_number(1).not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True).sign(ca_key, hashes.SHA256())
    )  # fmt: skip
    client = (
        x509.CertificateBuilder().subject_name(name("simproxy client")).issuer_name(ca.subject)
        .public_key(key.public_key()).serial_number(2).not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )  # fmt: skip
    cert_file, key_file = folder / "client.pem", folder / "client-key.pem"
    cert_file.write_bytes(client.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return ca.public_bytes(serialization.Encoding.PEM), cert_file, key_file


def test_client_authentication_presents_a_certificate_to_the_hosts_it_names(
    simproxy_factory: Any, tmp_path: Path
) -> None:
    """Hoverfly's mutual TLS flags: a real service that requires a client certificate gets one."""
    import ssl

    client_ca, cert, key = _client_identity(tmp_path)
    context = LeafCertificates(UPSTREAM_CA).context("localhost")
    context.verify_mode = ssl.CERT_REQUIRED
    context.load_verify_locations(cadata=client_ca.decode())
    strict = start_upstream(context)
    upstream_ca = tmp_path / "upstream-ca.pem"
    upstream_ca.write_bytes(UPSTREAM_CA.cert_pem)
    url = f"https://localhost:{strict.port}/hello"
    try:
        mutual: Simproxy = simproxy_factory(
            "-client-authentication-destination", "localhost",
            "-client-authentication-client-cert", str(cert), "-client-authentication-client-key", str(key),
            "-client-authentication-ca-cert", str(upstream_ca),
        )  # fmt: skip
        assert mutual.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "capture"})[0] == 200
        response = through(mutual, url, ca_file(mutual, tmp_path))
        assert (response.status_code, response.text) == (200, "real /hello")

        plain: Simproxy = simproxy_factory("-tls-verification=false")  # no certificate to show: refused
        assert plain.admin("PUT", "/api/v2/hoverfly/mode", {"mode": "capture"})[0] == 200
        assert through(plain, url, ca_file(plain, tmp_path)).status_code == 502
    finally:
        strict.stop()


def test_the_same_bytes_through_two_tunnels_are_two_requests(simproxy_factory: Any) -> None:
    """A request without ``Host`` goes to its tunnel's host: the request a worker built from the same
    bytes in another tunnel (or outside any) is not the one it serves here."""
    sp: Simproxy = simproxy_factory("-plain-http-tunneling")
    pairs = [
        {"request": {"destination": [{"matcher": "exact", "value": f"{host}.test:8080"}]}, "response": {"body": host}}
        for host in ("one", "two")
    ]
    assert sp.admin("PUT", "/api/v2/simulation", simulation(*pairs))[0] == 200
    request = b"GET /same HTTP/1.1\r\n\r\n"
    for host in ("one", "two", "one"):
        with socket.create_connection(("127.0.0.1", sp.proxy_port), timeout=10) as raw:
            raw.sendall(f"CONNECT {host}.test:8080 HTTP/1.1\r\n\r\n".encode())
            assert raw.recv(4096) == b"HTTP/1.0 200 OK\r\n\r\n"
            for _ in range(3):  # the first time, the second (now known), the third (built before)
                raw.sendall(request)
                reply = raw.recv(4096)
                assert reply.startswith(b"HTTP/1.1 200 OK\r\n") and reply.endswith(host.encode()), reply
        with socket.create_connection(("127.0.0.1", sp.proxy_port), timeout=10) as raw:
            raw.sendall(request)  # outside a tunnel, a request without Host cannot be served
            assert raw.recv(4096).startswith(b"HTTP/1.1 400 ")
    journal = sp.admin_json("GET", "/api/v2/journal")[1]["journal"]
    assert [e["request"]["destination"] for e in journal] == ["one.test:8080"] * 3 + ["two.test:8080"] * 3 + [
        "one.test:8080"
    ] * 3
    assert len({e["id"] for e in journal}) == 9
