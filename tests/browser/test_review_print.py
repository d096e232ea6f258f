"""A disputed round printed from the review page, and a case note added to it, in a real browser
(QA48 dispute M6, M7): Chromium's print of round 2 was 29 pages, almost all JSON and thumbnails."""

from __future__ import annotations

import base64
import re

import cv2
import numpy as np
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from kiosk_testing import hand
from test_dealer_screen import log_in

pytestmark = pytest.mark.browser


def pdf_pages(driver) -> int:
    printed = driver.execute_cdp_cmd("Page.printToPDF", {"printBackground": False, "paperWidth": 8.27,
                                                          "paperHeight": 11.69})
    return len(re.findall(rb"/Type\s*/Page(?!s)", base64.b64decode(printed["data"])))


def shown(driver, css: str) -> list:
    return [e for e in driver.find_elements(By.CSS_SELECTOR, css) if e.is_displayed()]


def corrected_round_with_frames(live_kiosk, count: int) -> None:
    """Round 1 settled and corrected after Settle, with ``count`` key frames at the camera's size."""
    from kiosk.table_service import Approval

    service = live_kiosk.service
    service.set_bet("1", "100", "equal", "dealer1")
    service.observe([hand("banker", "4S 6H QD 9C 9H"), hand("1", "AS 2S 3D 4D 5C")], 3)
    service.settle("dealer1")
    service.observe([], 4)
    service.correct("1", "AS", "AD", "dealer1", "player disputes: an ace of diamonds", Approval("dealer1", "super1"),
                    round_no=1)
    folder = live_kiosk.app.extensions["niuniu"].data_dir / "recordings" / "t1" / "20260101T000000Z-round-0001"
    (folder / "frames").mkdir(parents=True)
    (folder / "meta.json").write_text('{"round_no": 1}')
    for frame_no in range(1, count + 1):
        shade = 240 * frame_no // count
        cv2.imwrite(str(folder / "frames" / f"{frame_no:08d}.jpg"), np.full((720, 1280, 3), shade, np.uint8))


def test_a_printed_round_is_a_short_summary_and_a_note_is_added_from_its_page(browser, live_kiosk):

    driver = browser
    corrected_round_with_frames(live_kiosk, 30)    # a busy round's recording: thirty key frames

    log_in(driver, live_kiosk.url, "watch1")
    WebDriverWait(driver, 5).until(lambda d: d.find_elements(By.ID, "round-list"))     # logged in: the list
    driver.get(live_kiosk.url + "review/round/1")
    WebDriverWait(driver, 5).until(lambda d: shown(d, "#timeline"))
    assert len(shown(driver, ".frames figure")) == 30

    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    assert not shown(driver, "#timeline") and not shown(driver, "details.raw") and not shown(driver, "#note-form")
    kept = shown(driver, ".frames figure")
    assert 1 <= len(kept) <= 4 and "frame 3" in kept[0].text       # the frame that shows the corrected AS
    assert shown(driver, "#hands") and shown(driver, "#corrections") and shown(driver, "#paid-vs-corrected")
    assert shown(driver, "#printed")
    assert pdf_pages(driver) <= 3
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})

    box = driver.find_element(By.CSS_SELECTOR, "#note-form textarea")
    box.send_keys("Seat 1 complains; frame 3 shows the AS plainly. Case 118.")
    driver.find_element(By.CSS_SELECTOR, "#note-form button[type=submit]").click()
    # the form posts and the page comes back: wait for it, not for the click
    notes = WebDriverWait(driver, 10).until(lambda d: d.find_elements(By.ID, "note-list"))[0]
    assert "frame 3 shows the AS plainly. Case 118." in notes.text and "watch1 (surveillance)" in notes.text
