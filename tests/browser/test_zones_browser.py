"""The seat-zone editor in a real browser: a corner dragged is where the zones file puts it."""

from __future__ import annotations

import json

import pytest
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

from kiosk_testing import ACCOUNTS

pytestmark = pytest.mark.browser


def test_dragging_a_corner_moves_it_in_the_zones_to_download(browser, live_kiosk, shots):
    driver, service = browser, live_kiosk.service
    driver.get(live_kiosk.url + "auth/login")
    driver.find_element(By.ID, "username").send_keys("admin1")
    driver.find_element(By.ID, "password").send_keys(ACCOUNTS["admin1"][1])
    driver.find_element(By.ID, "login").click()
    WebDriverWait(driver, 5).until(EC.element_to_be_clickable((By.LINK_TEXT, "Seat zones"))).click()
    WebDriverWait(driver, 5).until(EC.presence_of_element_located((By.CSS_SELECTOR, ".zone-corner")))
    layer = driver.find_element(By.ID, "zone-layer")
    handles = driver.find_elements(By.CSS_SELECTOR, '.zone-corner[data-seat="1"]')
    assert len(handles) == len(service.config.zone("1").polygon)
    before = json.loads(driver.find_element(By.ID, "zones-field").get_attribute("value"))
    box = layer.rect
    ActionChains(driver).click_and_hold(handles[0]).move_by_offset(box["width"] * 0.05, box["height"] * 0.10) \
        .release().perform()
    after = json.loads(driver.find_element(By.ID, "zones-field").get_attribute("value"))
    (x0, y0), (x1, y1) = before["1"][0], after["1"][0]
    assert x1 - x0 == pytest.approx(0.05, abs=0.01) and y1 - y0 == pytest.approx(0.10, abs=0.01)
    assert {k: v for k, v in after.items() if k != "1"} == {k: v for k, v in before.items() if k != "1"}
    assert after["1"][1:] == before["1"][1:]
    assert f"({x1:.4f}, {y1:.4f})" in driver.find_element(By.ID, "zones-preview").text
    shots(driver, "zones-editor")
    driver.find_element(By.ID, "zones-reset").click()
    assert json.loads(driver.find_element(By.ID, "zones-field").get_attribute("value")) == before
