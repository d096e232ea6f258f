"""The dealer's MODEL pill says, in words, that the reader has no orientation model (QA52): the
cards are then read without being turned upright and misread more, and the supervisor at the
table is told whom to call.  The status is the kiosk's own (``TableService.status``), not a
stand-in: the same ``detector_info`` that ``niuniu kiosk`` fills from its reader."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

from test_dealer_screen import log_in

pytestmark = pytest.mark.browser

MISSING = "/opt/niuniu/models/card-orientation.pt"


def pill(driver):
    return driver.find_element(By.ID, "model-pill")


def test_the_model_pill_says_the_orientation_model_is_missing(browser, live_kiosk):
    driver, service = browser, live_kiosk.service
    log_in(driver, live_kiosk.url, "dealer1")
    WebDriverWait(driver, 5).until(EC.visibility_of_element_located((By.ID, "settle-btn")))
    WebDriverWait(driver, 5).until(lambda d: pill(d).text.startswith("MODEL ") and "…" not in pill(d).text)
    assert "orientation" not in pill(driver).text        # a reader with its orientation model: as before

    service.detector_info["orientation_missing"] = MISSING
    WebDriverWait(driver, 5).until(lambda d: "no orientation model" in pill(d).text)
    assert pill(driver).text.endswith("— no orientation model: call the technician"), pill(driver).text
    assert MISSING in pill(driver).get_attribute("title") and "misread more" in pill(driver).get_attribute("title")
    assert "warn" in pill(driver).get_attribute("class")

    del service.detector_info["orientation_missing"]     # restored, the kiosk restarted: as before
    WebDriverWait(driver, 5).until(lambda d: "orientation" not in pill(d).text)
