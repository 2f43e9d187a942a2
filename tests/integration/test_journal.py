"""The journal, its indexes and the logs through the admin API, on one worker and on a fleet."""

from __future__ import annotations

import base64
import gzip
import http.client
import socket
import time
from collections import Counter
from typing import Any

import pytest

from tests.integration.conftest import Simproxy, pair, simulation
from tests.integration.test_workers import _burst


def _journal(sp: Simproxy, query: str = "") -> dict[str, Any]:
    status, body = sp.admin_json("GET", f"/api/v2/journal{query}")
    assert status == 200, body
    return dict(body)


@pytest.fixture
def fresh(simproxy: Simproxy) -> Simproxy:
    simproxy.admin("DELETE", "/api/v2/journal")
    simproxy.admin("DELETE", "/api/v2/cache")
    simproxy.admin_json("PUT", "/api/v2/simulation", simulation(pair("/a", "A"), pair("/b", "B")))
    return simproxy


def test_an_entry_is_readable_right_after_its_response(fresh: Simproxy) -> None:
    for i in range(20):
        assert fresh.proxy(f"http://h.test/a?n={i}")[0] == 200
        entries = _journal(fresh)["journal"]
        assert len(entries) == i + 1 and entries[-1]["request"]["query"] == f"n={i}"


def test_entry_shape(fresh: Simproxy) -> None:
    fresh.proxy("http://H.test:8080/b?x=1&x=0", method="POST", body=b"payload", headers={"X-A": "1"})
    (entry,) = _journal(fresh)["journal"]
    assert list(entry) == ["request", "response", "mode", "timeStarted", "latency", "id", "postServeAction"]
    assert entry["request"]["destination"] == "h.test:8080" and entry["request"]["query"] == "x=0&x=1"
    assert entry["request"]["body"] == "payload" and entry["request"]["headers"]["X-A"] == ["1"]
    assert entry["response"] == {"status": 200, "body": "B", "encodedBody": False}  # no headers: left out
    assert entry["mode"] == "simulate" and entry["postServeAction"] is None and entry["latency"] >= 0
    assert entry["timeStarted"][10] == "T"


def test_paging_sort_time_filters_and_search(fresh: Simproxy) -> None:
    for path in ("/a", "/b", "/a", "/missing"):
        fresh.proxy(f"http://h.test{path}")
    everything = _journal(fresh)
    assert everything["total"] == 4 and everything["offset"] == 0 and everything["limit"] == 500
    assert [e["request"]["path"] for e in everything["journal"]] == ["/a", "/b", "/a", "/missing"]
    page = _journal(fresh, "?limit=2&offset=1")
    assert [e["request"]["path"] for e in page["journal"]] == ["/b", "/a"] and page["total"] == 4
    assert _journal(fresh, "?offset=10") == {"journal": [], "indexes": [], "offset": 10, "limit": 500, "total": 0}
    by_latency = _journal(fresh, "?sort=latency:desc")["journal"]
    assert [e["latency"] for e in by_latency] == sorted((e["latency"] for e in by_latency), reverse=True)
    newest_first = _journal(fresh, "?sort=timestarted:desc")["journal"]
    assert [e["request"]["path"] for e in newest_first] == ["/missing", "/a", "/b", "/a"]
    assert fresh.admin_json("GET", "/api/v2/journal?sort=size")[0] == 400
    future = int(time.time()) + 3600
    assert _journal(fresh, f"?from={future}")["total"] == 0
    assert _journal(fresh, f"?to={future}")["total"] == 4
    assert _journal(fresh, "?from=2000-01-01T00:00:00Z")["total"] == 4
    status, found = fresh.admin_json(
        "POST", "/api/v2/journal", {"request": {"path": [{"matcher": "exact", "value": "/a"}]}}
    )
    assert status == 200 and [e["request"]["path"] for e in found["journal"]] == ["/a", "/a"]
    status, found = fresh.admin_json("POST", "/api/v2/journal", {"request": {"path": {"exactMatch": "/b"}}})
    assert status == 200 and [e["response"]["body"] for e in found["journal"]] == ["B"]
    assert fresh.admin_json("POST", "/api/v2/journal", {"nothing": 1}) == (
        400, {"error": 'No "request" object in search parameters'})  # fmt: skip


def _read_answers(sock: socket.socket, count: int) -> list[bytes]:
    """The bodies of ``count`` responses with a Content-Length, read off one connection."""
    data, bodies = b"", []
    while len(bodies) < count:
        head_end = data.find(b"\r\n\r\n")
        if head_end >= 0:
            length = int(data[:head_end].lower().split(b"content-length: ")[1].split(b"\r\n")[0])
            if len(data) >= head_end + 4 + length:
                bodies.append(data[head_end + 4 : head_end + 4 + length])
                data = data[head_end + 4 + length :]
                continue
        chunk = sock.recv(65536)
        assert chunk, "the proxy closed the connection"
        data += chunk
    return bodies


def test_requests_however_they_arrive_are_journaled_as_sent(fresh: Simproxy) -> None:
    """A read holding exactly one request is kept as it came; pipelined, split and chunked requests
    take the other path: the journal shows every one of them the same way."""
    zipped = gzip.compress(b"unzipped text")
    writes = [
        b"GET http://h.test/a?n=1 HTTP/1.1\r\nHost: h.test\r\nX-Case: one read\r\n\r\n",
        b"GET http://h.test/b?n=2 HTTP/1.1\r\nHost: h.test\r\nX-Case: first of two\r\n\r\n"
        b"POST http://h.test/a?n=3 HTTP/1.1\r\nHost: h.test\r\nContent-Type: application/x-www-form-urlencoded\r\n"
        b"Content-Length: 7\r\n\r\nf=1&g=2",
        b"PUT http://h.test/b?n=4 HTTP/1.1\r\nHost: h.test\r\nContent-Length: 10\r\n\r\nsplit ",
        b"body",
        b"POST http://h.test/a?n=5 HTTP/1.1\r\nHost: h.test\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n",
        b"POST http://h.test/b?n=6 HTTP/1.1\r\nHost: h.test\r\nContent-Encoding: gzip\r\n"
        b"Content-Length: %d\r\n\r\n%s" % (len(zipped), zipped),
    ]
    with socket.create_connection(("127.0.0.1", fresh.proxy_port), timeout=30) as sock:
        for data in writes:
            sock.sendall(data)
            time.sleep(0.2)  # separate reads on the proxy's side
        assert _read_answers(sock, 6) == [b"A", b"B", b"A", b"B", b"A", b"B"]
    entries = _journal(fresh)["journal"]
    requests = [e["request"] for e in entries]
    assert [r["query"] for r in requests] == [f"n={i}" for i in range(1, 7)]
    assert [r["method"] for r in requests] == ["GET", "GET", "POST", "PUT", "POST", "POST"]
    # a body sent with a Content-Encoding is shown decompressed, in base64 as Hoverfly shows it
    unzipped = base64.b64encode(b"unzipped text").decode()
    assert [r["body"] for r in requests] == ["", "", "f=1&g=2", "split body", "abcde", unzipped]
    assert requests[0]["headers"] == {"X-Case": ["one read"]}  # no Host: it is the destination
    assert requests[1]["headers"] == {"X-Case": ["first of two"]}
    assert requests[2]["formData"] == {"f": ["1"], "g": ["2"]}
    assert requests[5]["headers"]["Content-Encoding"] == ["gzip"]
    assert {(r["scheme"], r["destination"]) for r in requests} == {("http", "h.test")}
    assert [e["response"]["body"] for e in entries] == ["A", "B", "A", "B", "A", "B"]
    assert len({e["id"] for e in entries}) == 6


def test_indexes(fresh: Simproxy) -> None:
    fresh.proxy("http://h.test/a?id=1")
    assert fresh.admin_json("POST", "/api/v2/journal/index", {"name": "Request.QueryParam.id"})[0] == 200
    fresh.proxy("http://h.test/b?id=2")
    assert fresh.admin_json("GET", "/api/v2/journal/index")[0] == 200
    indexes = fresh.admin_json("GET", "/api/v2/journal/index")[1]
    (index,) = indexes
    assert index["name"] == "Request.QueryParam.id" and sorted(e["key"] for e in index["entries"]) == ["1", "2"]
    assert fresh.admin_json("POST", "/api/v2/journal/index", {"name": "Request.QueryParam.id"}) == (
        400, {"error": "index Request.QueryParam.id has been already set"})  # fmt: skip
    assert _journal(fresh)["indexes"][0]["name"] == "Request.QueryParam.id"
    assert fresh.admin_json("DELETE", "/api/v2/journal/index/Request.QueryParam.id") == (200, [])
    assert fresh.admin_json("DELETE", "/api/v2/journal/index/nope")[0] == 404


def test_delete_empties_the_journal_and_its_indexes(fresh: Simproxy) -> None:
    fresh.proxy("http://h.test/a?id=1")
    fresh.admin_json("POST", "/api/v2/journal/index", {"name": "Request.QueryParam.id"})
    assert fresh.admin_json("DELETE", "/api/v2/journal")[1]["journal"] == []
    assert _journal(fresh)["total"] == 0 and fresh.admin_json("GET", "/api/v2/journal/index") == (200, [])


def test_logs_json_and_text(fresh: Simproxy) -> None:
    fresh.proxy("http://h.test/missing")
    status, body = fresh.admin_json("GET", "/api/v2/logs?limit=2")
    assert status == 200 and len(body["logs"]) <= 2
    warning, error = body["logs"]  # Hoverfly's warning, then simulate mode's error
    assert warning["msg"] == "Failed to find matching request from simulation"
    assert warning["level"] == "warning" and warning["path"] == "/missing"
    assert (error["msg"], error["level"]) == ("There was an error when matching", "error")
    status, _, text = _text_logs(fresh)
    assert status == 200 and "Failed to find matching request from simulation" in text.decode()
    assert "\x1b[33mWARN\x1b[0m" in text.decode()
    future = int(time.time()) + 3600
    assert fresh.admin_json("GET", f"/api/v2/logs?from={future}")[1] == {"logs": []}


def _text_logs(sp: Simproxy) -> tuple[int, dict[str, str], bytes]:
    import contextlib
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", sp.admin_port, timeout=30)
    with contextlib.closing(conn):
        conn.request("GET", "/api/v2/logs", headers={"Accept": "text/plain"})
        resp = conn.getresponse()
        return resp.status, dict(resp.getheaders()), resp.read()


@pytest.mark.parametrize("size", [1, 2, 3])
def test_a_small_journal_of_requests_sent_again_keeps_the_newest_each_readable(
    simproxy_factory: Any, size: int
) -> None:
    """The same bytes again make a run of entries; a journal smaller than the run keeps its newest
    entries, each read on its own (a run cut down to one entry was once returned as the run)."""
    sp: Simproxy = simproxy_factory("-journal-size", str(size))
    assert sp.admin_json("PUT", "/api/v2/simulation", simulation(pair("/a", "A"), pair("/b", "B")))[0] == 200
    conn = http.client.HTTPConnection("127.0.0.1", sp.proxy_port, timeout=10)
    sent = ["/a"] * 5 + ["/b", "/a", "/a", "/a"]
    for path in sent:  # one connection, the same bytes for the same path, no read in between
        conn.request("GET", f"http://h.test{path}")
        assert conn.getresponse().read() == path[1:].upper().encode()
    conn.close()
    journal = _journal(sp)
    assert journal["total"] == size
    entries = journal["journal"]
    assert [e["request"]["path"] for e in entries] == sent[-size:]
    assert len({e["id"] for e in entries}) == size
    assert [e["timeStarted"] for e in entries] == sorted(e["timeStarted"] for e in entries)


def test_disabled_journal_and_logs(simproxy_factory: Any) -> None:
    sp: Simproxy = simproxy_factory("-journal-size", "0", "-logs-size", "0")
    for method in ("GET", "DELETE"):
        assert sp.admin_json(method, "/api/v2/journal") == (500, {"error": "Journal disabled"})
    assert sp.admin_json("POST", "/api/v2/journal", {"request": {}}) == (500, {"error": "Journal disabled"})
    assert sp.admin_json("GET", "/api/v2/logs") == (500, {"error": "Logs disabled"})


def test_journal_sample_keeps_one_request_in_n_and_counts_every_one(simproxy_factory: Any) -> None:
    sp: Simproxy = simproxy_factory("-journal-sample", "4")
    sp.admin_json("PUT", "/api/v2/simulation", simulation(pair("/s", "s")))
    paths = [f"/s?n={n}" for n in range(10)]
    assert [sp.proxy(f"http://h.test{path}")[2] for path in paths] == [b"s"] * 10
    entries = _journal(sp, "")["journal"]
    assert [e["request"]["query"] for e in entries] == ["n=0", "n=4", "n=8"]  # the first, then every 4th
    assert sp.admin_json("GET", "/api/v2/service/usage")[1]["usage"]["counters"]["simulate"] == 10


@pytest.mark.slow
def test_ten_thousand_requests_over_two_instances_are_all_journaled(simproxy_factory: Any, redis_server: Any) -> None:
    shared = (
        "-redis-url",
        redis_server.url,
        "-redis-prefix",
        "journal-fleet:",
        "-workers",
        "2",
        "-journal-size",
        "20000",
    )
    a: Simproxy = simproxy_factory(*shared)
    b: Simproxy = simproxy_factory(*shared)
    a.admin_json("PUT", "/api/v2/simulation", simulation(pair("/v", "v")))
    results = _burst(a, "/v", total=5000, per_connection=50) + _burst(b, "/v", total=5000, per_connection=50)
    assert results == Counter({(200, b"v"): 10000})
    for sp in (a, b):
        assert _journal(sp, "?limit=1")["total"] == 10000
        assert sp.admin_json("GET", "/api/v2/service/usage")[1]["usage"]["counters"]["simulate"] == 10000
    ids = {e["id"] for e in _journal(a, "?limit=10000")["journal"]}
    assert len(ids) == 10000
    # each instance's scrape counts its own workers' requests: the sum over both is every request
    assert _requests_counted(a) + _requests_counted(b) == 10000
    assert _requests_counted(a) > 0 and _requests_counted(b) > 0


def _requests_counted(sp: Simproxy) -> float:
    status, headers, body = sp.admin("GET", "/metrics")
    assert status == 200 and headers["content-type"].startswith("text/plain")
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in body.decode().splitlines()
        if line.startswith("simproxy_requests_total{")
    )


def test_metrics_count_requests_by_mode_outcome_and_pair(simproxy: Simproxy) -> None:
    before = _requests_counted(simproxy)
    doc = simulation(pair("/m", "m"))
    doc["data"]["pairs"][0]["labels"] = ["the-m-pair"]
    simproxy.admin_json("PUT", "/api/v2/simulation", doc)
    for _ in range(3):
        simproxy.proxy("http://h.test/m")
    simproxy.proxy("http://h.test/not-there")
    assert _requests_counted(simproxy) == before + 4
    text = simproxy.admin("GET", "/metrics")[2].decode()
    assert 'simproxy_pair_hits_total{pair="the-m-pair"} 3.0' in text
    assert 'simproxy_requests_total{mode="simulate",outcome="miss"}' in text
    assert "simproxy_request_duration_seconds_bucket" in text and "simproxy_journal_entries" in text


def test_start_up_indexes_and_the_body_size_limit(simproxy_factory: Any) -> None:
    sp: Simproxy = simproxy_factory("-journal-indexing-key", "Request.QueryParam.id", "-journal-body-size-limit", "8")
    sp.admin_json("PUT", "/api/v2/simulation", simulation(pair("/big", "0123456789abcdef")))
    sp.proxy("http://h.test/big?id=42", method="POST", body=b"request body longer than eight")
    (entry,) = _journal(sp)["journal"]
    assert entry["response"]["body"] == "01234..." and entry["request"]["body"] == "reque..."  # 8 bytes with the "..."
    (index,) = sp.admin_json("GET", "/api/v2/journal/index")[1]
    assert index == {"name": "Request.QueryParam.id", "entries": [{"key": "42", "journalEntryId": entry["id"]}]}


def test_bodies_are_kept_whole_up_to_1_mb_by_default_and_cut_beyond(simproxy_factory: Any) -> None:
    """The default -journal-body-size-limit: a journal of large bodies does not hold them whole
    (1,000 entries of 60 MB each would be 60 GB); small bodies are kept as they are."""
    sp: Simproxy = simproxy_factory()
    mb = 1024 * 1024
    sp.admin_json("PUT", "/api/v2/simulation", simulation(pair("/small", "short answer"), pair("/large", "y" * 3 * mb)))
    assert sp.proxy("http://h.test/small", method="POST", body=b"short question")[0] == 200
    status, _, body = sp.proxy("http://h.test/large", method="POST", body=b"x" * (2 * mb))
    assert status == 200 and len(body) == 3 * mb  # the answer itself is whole
    small, large = _journal(sp)["journal"]
    assert (small["request"]["body"], small["response"]["body"]) == ("short question", "short answer")
    assert large["request"]["body"] == "x" * (mb - 3) + "..."
    assert large["response"]["body"] == "y" * (mb - 3) + "..."
    # an empty value keeps bodies whole, as Hoverfly does by default
    whole: Simproxy = simproxy_factory("-journal-body-size-limit=")
    whole.admin_json("PUT", "/api/v2/simulation", simulation(pair("/large", "y" * 3 * mb)))
    whole.proxy("http://h.test/large", method="POST", body=b"x" * (2 * mb))
    (entry,) = _journal(whole)["journal"]
    assert len(entry["request"]["body"]) == 2 * mb and len(entry["response"]["body"]) == 3 * mb
