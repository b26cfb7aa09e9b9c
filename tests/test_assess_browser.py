"""The assessors' page in headless Chromium against the real server: an assessor signs in, judges
three pairs with the number keys, undoes with u and Backspace, writes a note (whose keys grade nothing),
reloads (signed in still, the note being typed kept, the pair's claim renewed by the open page), and
finds the labels in the page and in the store; a hostile passage shows as text and runs nothing.
A screenshot is left in the test's tmp folder (printed).

Skips when Chromium or chromedriver is missing, unless EXAMPP_REQUIRE_BROWSER=1 (CI), where that fails
(tests/chromium.py)."""
from __future__ import annotations

import base64
import time

import pytest

from assess_pages import HOSTILE, NARRATIVE, make_workspace
from chromium import WIDTH
from exampp.stores.assessments import AssessmentStore
from test_assess_serve import call, served

WAIT = 30  # seconds for the page to show what a key did (a loaded machine is slow)


@pytest.mark.slow
def test_an_assessor_judges_with_the_keyboard_and_reloads(browser, tmp_path):
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    def text(element_id: str) -> str:
        return browser.execute_script(f"return document.getElementById('{element_id}').textContent")

    def shown(key: str) -> None:
        """Wait until the page shows the pair ``key``."""
        WebDriverWait(browser, WAIT).until(lambda _: text("pair-ids").endswith(f" {key}"),
                                           f"pair {key} not shown: {text('pair-ids')!r} ({text('status')!r})")

    def press(*keys: str) -> None:
        ActionChains(browser).send_keys(*keys).perform()

    ws, sample = make_workspace(tmp_path / "ws")
    with served(ws, sample, "--claim-minutes", "0.1") as (_, url):  # claims of 6 s, renewed every 2 s
        browser.get(url)
        WebDriverWait(browser, WAIT).until(lambda _: browser.find_element(By.ID, "name").is_displayed())
        browser.find_element(By.ID, "name").send_keys("alice", Keys.ENTER)
        shown("d-Q1-001")
        assert text("query") == "coral reef bleaching"
        assert text("progress-text") == "0 / 6 pairs judged · you: 0"

        press("2")
        shown("d-evil")  # hostile texts are shown as they are, nothing of them runs or renders
        assert text("text") == f"Coral bleaching. {HOSTILE}" and text("narrative") == NARRATIVE
        assert browser.execute_script("return window.pwned === undefined && document.querySelectorAll("
                                      "'#text *, #narrative *, img').length === 0")
        press("0")
        shown("d-Q1-002")
        press("3")
        shown("d-Q2-001")
        press("u")  # undo the 3: its pair comes back, the grade it had marked
        shown("d-Q1-002")
        assert browser.find_element(By.CSS_SELECTOR, ".grade.was").get_attribute("data-grade") == "3"
        press("n")  # to the note: its keys are text, not grades or undo
        press("numbers 1 2 and u are text here", Keys.ESCAPE)
        assert text("pair-ids").endswith(" d-Q1-002")
        press("1")
        shown("d-Q2-001")
        press(Keys.BACKSPACE)  # undo again: the pair comes back with its note, graded again as it was
        shown("d-Q1-002")
        assert browser.find_element(By.ID, "note").get_attribute("value") == "numbers 1 2 and u are text here"
        press("1")
        shown("d-Q2-001")
        press("n", "a draft survives a reload", Keys.ESCAPE)

        browser.refresh()
        shown("d-Q2-001")  # signed in still, on the pair they hold
        WebDriverWait(browser, WAIT).until(lambda _: len(browser.find_elements(By.CSS_SELECTOR, "#recent li")) == 3)
        recent = browser.execute_script(
            "return [...document.querySelectorAll('#recent li')].map(li => [li.dataset.queryId, li.dataset.key, "
            "li.dataset.grade, li.querySelector('.given').textContent])")
        assert recent == [["Q1", "d-Q1-002", "1", "1 related"], ["Q1", "d-evil", "0", "0 irrelevant"],
                          ["Q1", "d-Q1-001", "2", "2 highly relevant"]]
        assert "numbers 1 2 and u are text here" in text("recent")
        assert browser.find_element(By.ID, "note").get_attribute("value") == "a draft survives a reload"
        assert text("progress-text") == "3 / 6 pairs judged · you: 3" and text("who-name") == "alice"
        time.sleep(7)  # past a claim's life: the open page has renewed its pair's, so bob gets the next one
        assert call(url, "api/next", {"assessor": "bob"})[1]["pair"]["key"] == "d-Q2-002"

        height = browser.execute_script("return document.documentElement.scrollHeight")
        shot = browser.execute_cdp_cmd("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": WIDTH, "height": height, "scale": 1}})
        (tmp_path / "assess-page.png").write_bytes(base64.b64decode(shot["data"]))
        print(f"\nscreenshot: {tmp_path / 'assess-page.png'}")
        assert browser.execute_script("return document.documentElement.scrollWidth") <= WIDTH

    with AssessmentStore(ws / "assessments.sqlite") as store:
        assert store.labels()[["query_id", "key", "assessor", "grade", "note"]].values.tolist() == [
            ["Q1", "d-Q1-001", "alice", 2, ""], ["Q1", "d-evil", "alice", 0, ""],
            ["Q1", "d-Q1-002", "alice", 1, "numbers 1 2 and u are text here"]]
        history = store.history()  # the undone labels are kept, marked undone
        assert history["grade"].tolist() == [2, 0, 3, 1, 1]
        assert history["undone"].notna().tolist() == [False, False, True, True, False]
