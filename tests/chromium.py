"""Headless Chromium through chromedriver (Debian's chromium and chromium-driver) for the tests that
render a page: the fixture ``browser``, a selenium driver with a 1280 x 900 CSS px viewport.

It skips the test when Chromium, chromedriver or selenium is missing, unless EXAMPP_REQUIRE_BROWSER=1
(CI), where that fails."""
from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import pytest

WIDTH = 1280
HEIGHT = 900
CHROMIUM = os.environ.get("EXAMPP_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("EXAMPP_CHROMEDRIVER", "/usr/bin/chromedriver")


def _missing() -> str | None:
    for path in (CHROMIUM, CHROMEDRIVER):
        if not (Path(path).is_file() or shutil.which(path)):
            return f"{path} not found (Debian packages chromium and chromium-driver)"
    if importlib.util.find_spec("selenium") is None:
        return "selenium is not installed (pip install exampp[test])"
    return None


@pytest.fixture
def browser(tmp_path):
    why = _missing()
    if why:
        if os.environ.get("EXAMPP_REQUIRE_BROWSER") == "1":
            pytest.fail(f"EXAMPP_REQUIRE_BROWSER=1 but {why}")
        pytest.skip(why)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--disable-dev-shm-usage", f"--user-data-dir={tmp_path / 'chromium-profile'}",
                 f"--window-size={WIDTH},{HEIGHT}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    # The layout viewport exactly 1280 CSS px wide, whatever the window decorations take.
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": WIDTH, "height": HEIGHT, "deviceScaleFactor": 1, "mobile": False})
    try:
        yield driver
    finally:
        driver.quit()
