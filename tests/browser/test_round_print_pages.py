"""QA49 watch L2, in a real browser: the printed round's key frames are the page's width (at
48 % the disputed card could not be read on paper), it ends with a block to sign, and each
sheet's foot names the round and the page ("Round 1 · page 2 of 3")."""

from __future__ import annotations

import base64

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from printed_pdf import page_texts
from test_dealer_screen import log_in
from test_review_print import corrected_round_with_frames, shown

pytestmark = pytest.mark.browser


def test_a_printed_round_has_wide_frames_a_sign_off_block_and_page_numbers(browser, live_kiosk):

    driver = browser
    corrected_round_with_frames(live_kiosk, 5)

    log_in(driver, live_kiosk.url, "watch1")
    WebDriverWait(driver, 5).until(lambda d: d.find_elements(By.ID, "round-list"))
    driver.get(live_kiosk.url + "review/round/1")
    WebDriverWait(driver, 5).until(lambda d: shown(d, "#timeline"))
    assert not shown(driver, "#sign-off")                      # on the screen: nothing to sign

    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
    [sign_off] = shown(driver, "#sign-off")
    for field in ("Case number", "Reviewed by", "Date", "Signature"):
        assert field in sign_off.text
    kept = shown(driver, ".frames figure")
    page_width = driver.execute_script("return document.querySelector('main').getBoundingClientRect().width")
    assert kept and all(f.size["width"] >= 0.9 * page_width for f in kept), [f.size for f in kept]   # was 48 %
    # What the paper shows (QA50 review L3: the test read the stylesheet, which holds the rule
    # whether or not a sheet's foot is printed): each sheet's foot names the round and the page,
    # and the last sheet has the block to sign.
    printed = driver.execute_cdp_cmd("Page.printToPDF", {"printBackground": False, "paperWidth": 8.27,
                                                          "paperHeight": 11.69})
    sheets = page_texts(base64.b64decode(printed["data"]))
    assert 2 <= len(sheets) <= 4, sheets
    for number, text in enumerate(sheets, 1):
        assert f"Round 1 · table t1 · page {number} of {len(sheets)}" in text.splitlines(), text
    assert "Reviewed by" in sheets[-1] and "Signature" in sheets[-1], sheets[-1]
