"""The dealer sees a round being played with no recording (QA51 H4): the recorder's error stands on the
screen, beside DATA DISK LOW, until a recording starts again; what a round dropped to a slow disk,
until the next round."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

from test_dealer_screen import log_in

pytestmark = pytest.mark.browser

ERROR = ("cannot start recording in /var/lib/niuniu/recordings/t1/20261207T144018Z-round-0001: "
         "[Errno 13] Permission denied")


def test_the_dealer_sees_that_rounds_are_not_recorded(browser, live_kiosk):
    driver, service = browser, live_kiosk.service
    log_in(driver, live_kiosk.url, "dealer1")
    WebDriverWait(driver, 5).until(EC.visibility_of_element_located((By.ID, "settle-btn")))
    service.status = lambda: {"camera": "online", "fps": 4.2, "model": "test", "recording_error": ERROR}
    WebDriverWait(driver, 5).until(EC.visibility_of_element_located((By.ID, "recording-warning")))
    text = driver.find_element(By.ID, "recording-warning").text
    assert "NOT RECORDING" in text and "call the supervisor" in text and "Permission denied" in text

    service.status = lambda: {"camera": "online", "fps": 4.2, "model": "test",
                              "recording_warning": "3 key frame(s) of round 2 dropped, the last 812"}
    WebDriverWait(driver, 5).until(
        lambda d: "RECORDING INCOMPLETE" in d.find_element(By.ID, "recording-warning").text)

    service.status = lambda: {"camera": "online", "fps": 4.2, "model": "test"}    # recording again
    WebDriverWait(driver, 5).until(EC.invisibility_of_element_located((By.ID, "recording-warning")))
