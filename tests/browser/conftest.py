"""A real headless Chromium (Debian's, driven by Selenium through Debian's chromedriver)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service

from tests.integration.conftest import simproxy_factory  # noqa: F401  (the fixture, for these tests too)
from tests.system import system_tool


@pytest.fixture(scope="session")
def chromium() -> tuple[str, str]:
    """(chromium, chromedriver): the two come from one Debian version, so they always match."""
    return system_tool("chromium", "chromium"), system_tool("chromedriver", "chromium-driver")


@pytest.fixture
def browser(chromium: tuple[str, str], tmp_path: Any) -> Iterator[webdriver.Chrome]:
    binary, driver = chromium
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,1300",
                     "--disable-dev-shm-usage", f"--user-data-dir={tmp_path / 'profile'}"):  # fmt: skip
        options.add_argument(argument)
    options.add_experimental_option("prefs", {"download.default_directory": str(tmp_path / "downloads")})
    chrome = webdriver.Chrome(service=Service(executable_path=driver), options=options)
    chrome.set_page_load_timeout(30)
    try:
        yield chrome
    finally:
        chrome.quit()
