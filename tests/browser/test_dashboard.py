"""The dashboard in a real browser: it shows the fleet live and changes it through the admin API."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from tests.integration.conftest import Simproxy, pair, simulation

pytestmark = pytest.mark.slow

USER, PASSWORD = "ops", "correct horse"


def _text(browser: webdriver.Chrome, element_id: str) -> str:
    return str(browser.execute_script("return document.getElementById(arguments[0]).textContent", element_id))


def _until(browser: webdriver.Chrome, check: Any, timeout: float = 15) -> Any:
    # the page redraws its tables every 2 seconds: an element read a moment ago may be gone
    wait = WebDriverWait(browser, timeout, poll_frequency=0.1, ignored_exceptions=(StaleElementReferenceException,))
    return wait.until(lambda _: check())


def _rows(browser: webdriver.Chrome, table: str) -> list[list[str]]:
    """The cells of a table's body, read in one go (a redraw cannot split the read)."""
    script = (
        "return [...document.querySelectorAll(`#${arguments[0]} tbody tr`)]"
        ".map(row => [...row.cells].map(cell => cell.textContent))"
    )
    return list(browser.execute_script(script, table))


def test_the_page_shows_the_fleet_live_and_changes_it(
    browser: webdriver.Chrome, simproxy_factory: Any, tmp_path: Path
) -> None:
    sp: Simproxy = simproxy_factory("-workers", "2")
    browser.get(f"http://127.0.0.1:{sp.admin_port}/")
    _until(browser, lambda: _text(browser, "mode-current") == "simulate")
    assert _text(browser, "live") == "2 workers"

    # upload a simulation from a file
    sim = tmp_path / "orders.json"
    sim.write_text(json.dumps(simulation(pair("/orders", "[]"), pair("/health", "ok", status=204))))
    browser.find_element(By.ID, "sim-file").send_keys(str(sim))
    browser.find_element(By.ID, "sim-upload").click()
    _until(browser, lambda: [row[3] for row in _rows(browser, "pairs")] == ["/orders", "/health"])
    assert [
        p["request"]["path"][0]["value"] for p in sp.admin_json("GET", "/api/v2/simulation")[1]["data"]["pairs"]
    ] == [
        "/orders",
        "/health",
    ]

    # download: the export, as a file
    downloads = tmp_path / "downloads"
    browser.execute_cdp_cmd("Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)})
    browser.find_element(By.ID, "sim-download").click()
    exported = downloads / "simulation.json"
    _until(browser, lambda: exported.exists() and exported.stat().st_size > 0)
    assert [p["response"]["body"] for p in json.loads(exported.read_text())["data"]["pairs"]] == ["[]", "ok"]

    # traffic through the proxy: counters, hit ratio, journal and unmatched requests follow
    for _ in range(10):
        assert sp.proxy("http://shop.test/orders")[0] == 200
    for _ in range(3):
        assert sp.proxy("http://shop.test/ordres", method="POST", body=b"{}")[0] == 502
    _until(browser, lambda: _text(browser, "usage-simulate") == "13")
    _until(browser, lambda: _text(browser, "hit-ratio") == "76.9%")
    _until(browser, lambda: len(_rows(browser, "journal")) == 13)
    unmatched = _rows(browser, "unmatched")
    assert unmatched[0][:2] == ["3", "POST shop.test/ordres"] and "path" in unmatched[0][2]
    assert "simulate" in _text(browser, "traffic-legend")

    # filter the journal, open an entry
    browser.find_element(By.ID, "filter-path").send_keys("ordres")
    _until(browser, lambda: {row[4] for row in _rows(browser, "journal")} == {"/ordres"})
    assert len(_rows(browser, "journal")) == 3
    Select(browser.find_element(By.ID, "filter-method")).select_by_visible_text("GET")
    _until(browser, lambda: _rows(browser, "journal") == [])
    browser.find_element(By.ID, "filter-path").clear()
    _until(browser, lambda: len(_rows(browser, "journal")) == 10)
    browser.execute_script("document.querySelector('#journal tbody tr').click()")
    detail = json.loads(browser.find_element(By.ID, "journal-detail").text)
    assert (detail["request"]["path"], detail["response"]["status"]) == ("/orders", 200)

    # switch the mode, with arguments, and back
    Select(browser.find_element(By.ID, "mode-select")).select_by_visible_text("capture")
    browser.find_element(By.ID, "mode-stateful").click()
    browser.find_element(By.ID, "mode-headers").send_keys("X-Trace")
    browser.find_element(By.ID, "mode-apply").click()
    _until(browser, lambda: _text(browser, "mode-current") == "capture")
    mode = sp.admin_json("GET", "/api/v2/hoverfly/mode")[1]
    assert mode["mode"] == "capture" and mode["arguments"]["stateful"] is True
    assert mode["arguments"]["headersWhitelist"] == ["X-Trace"]
    Select(browser.find_element(By.ID, "mode-select")).select_by_visible_text("simulate")
    browser.find_element(By.ID, "mode-apply").click()
    _until(browser, lambda: sp.admin_json("GET", "/api/v2/hoverfly/mode")[1]["mode"] == "simulate")

    # the state map: set a key in the page, see one set through the API
    browser.find_element(By.ID, "state-key").send_keys("stage")
    browser.find_element(By.ID, "state-value").send_keys("checkout")
    browser.find_element(By.ID, "state-set").click()
    _until(browser, lambda: sp.admin_json("GET", "/api/v2/state")[1]["state"] == {"stage": "checkout"})
    sp.admin_json("PATCH", "/api/v2/state", {"state": {"user": "ann"}})
    _until(browser, lambda: [row[0] for row in _rows(browser, "state")] == ["stage", "user"])

    browser.save_screenshot(str(tmp_path / "dashboard.png"))
    assert (tmp_path / "dashboard.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_with_auth_the_page_asks_for_a_login_and_shows_nothing_before(
    browser: webdriver.Chrome, simproxy_factory: Any
) -> None:
    sp: Simproxy = simproxy_factory("-auth", "-username", USER, "-password", PASSWORD)
    assert sp.admin_json("GET", "/api/v2/state")[0] == 401  # no data without a token
    browser.get(f"http://127.0.0.1:{sp.admin_port}/dashboard")
    _until(browser, lambda: browser.find_element(By.ID, "login").is_displayed())
    assert not browser.find_element(By.ID, "main").is_displayed()
    assert _text(browser, "mode-current") == "\u2013" and _rows(browser, "state") == []  # the placeholder dash

    browser.find_element(By.ID, "login-user").send_keys(USER)
    browser.find_element(By.ID, "login-password").send_keys("wrong")
    browser.find_element(By.ID, "login-submit").click()
    _until(browser, lambda: _text(browser, "login-error") != "")
    assert not browser.find_element(By.ID, "main").is_displayed()

    browser.find_element(By.ID, "login-password").clear()
    browser.find_element(By.ID, "login-password").send_keys(PASSWORD)
    browser.find_element(By.ID, "login-submit").click()
    _until(browser, lambda: _text(browser, "mode-current") == "simulate")
    assert (
        browser.find_element(By.ID, "main").is_displayed() and not browser.find_element(By.ID, "login").is_displayed()
    )
    assert _text(browser, "live") == "1 worker"

    browser.find_element(By.ID, "logout").click()
    _until(browser, lambda: browser.find_element(By.ID, "login").is_displayed())
    assert not browser.find_element(By.ID, "main").is_displayed()


_ENTRY_ROW = (
    "[...document.querySelectorAll('#journal tbody tr')].find(row => row.cells[4].textContent === arguments[0])"
)
"""A script's expression for the journal table's row of the path given as the script's first argument."""


def test_a_faulted_request_shows_its_fault_next_to_the_status_it_did_not_get(
    browser: webdriver.Chrome, simproxy_factory: Any
) -> None:
    sp: Simproxy = simproxy_factory()
    doc = simulation(pair("/orders", "[]"), pair("/flaky", "ok"), pair("/slow", "slow"), pair("/rare", "ok"))
    faults = [{"type": "connectionReset"}, {"type": "dribble", "chunks": 2, "durationMs": 20}]
    faults.append({"type": "emptyResponse", "fraction": 0.25})
    for at, fault in enumerate(faults, start=1):
        doc["data"]["pairs"][at]["response"]["fault"] = fault
    assert sp.admin("PUT", "/api/v2/simulation", doc)[0] == 200
    assert sp.proxy("http://shop.test/orders")[0] == 200
    with pytest.raises(ConnectionError):  # reset: no status line at all
        sp.proxy("http://shop.test/flaky")
    assert sp.proxy("http://shop.test/slow")[2] == b"slow"

    browser.get(f"http://127.0.0.1:{sp.admin_port}/")
    _until(browser, lambda: len(_rows(browser, "journal")) == 3)
    statuses = {row[4]: row[5] for row in _rows(browser, "journal")}
    assert statuses == {"/orders": "200", "/flaky": "200 connectionReset", "/slow": "200 dribble"}
    script = (
        f"const cell = {_ENTRY_ROW}.cells[5]; const tag = cell.querySelector('.fault');"
        "return [cell.querySelector('s') && cell.querySelector('s').textContent, tag && tag.textContent,"
        " tag && getComputedStyle(tag).color, cell.title];"
    )
    # the reset's 200 struck out (never sent), its fault in the error colour; the dribble's 200 was sent
    assert browser.execute_script(script, "/flaky") == [
        "200", "connectionReset", "rgb(194, 53, 43)", "the simulation chose 200; the connection was reset instead"
    ]  # fmt: skip
    assert browser.execute_script(script, "/slow")[:3] == [None, "dribble", "rgb(194, 53, 43)"]
    assert browser.execute_script(script, "/orders")[:2] == [None, None]

    browser.find_element(By.ID, "filter-status").send_keys("reset")
    _until(browser, lambda: [row[4] for row in _rows(browser, "journal")] == ["/flaky"])
    browser.find_element(By.ID, "filter-status").clear()
    browser.execute_script(f"{_ENTRY_ROW}.click()", "/flaky")
    detail = json.loads(browser.find_element(By.ID, "journal-detail").text)
    assert detail["response"]["fault"] == {"type": "connectionReset"} and detail["response"]["status"] == 200

    # the pairs: each with the fault it asks for, and the share of requests that get it
    _until(browser, lambda: len(_rows(browser, "pairs")) == 4)
    assert [row[4] for row in _rows(browser, "pairs")] == [
        "200",
        "200 connectionReset",
        "200 dribble",
        "200 emptyResponse 25%",
    ]
