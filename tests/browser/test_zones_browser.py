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
    _login_to_zones(driver, live_kiosk)
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


def _login_to_zones(driver, live_kiosk):
    driver.get(live_kiosk.url + "auth/login")
    driver.find_element(By.ID, "username").send_keys("admin1")
    driver.find_element(By.ID, "password").send_keys(ACCOUNTS["admin1"][1])
    driver.find_element(By.ID, "login").click()
    WebDriverWait(driver, 5).until(EC.element_to_be_clickable((By.LINK_TEXT, "Seat zones"))).click()
    WebDriverWait(driver, 5).until(EC.presence_of_element_located((By.CSS_SELECTOR, ".zone-corner")))


def test_no_picture_yet_is_said_and_new_picture_brings_it_back(browser, live_kiosk, shots, monkeypatch):
    """The camera offline when the page opened: the page says so, the zones stay editable,
    and New picture shows the table once the camera is back (it used to drop the picture
    for good)."""
    import cv2
    import numpy as np

    class Camera:
        jpeg = None

        def latest_jpeg(self, draw_boxes=True):
            return self.jpeg

        def status(self):
            return {"camera": "online" if self.jpeg else "offline"}

    camera = Camera()
    monkeypatch.setattr(live_kiosk.service, "pipeline", camera)
    driver = browser
    _login_to_zones(driver, live_kiosk)
    WebDriverWait(driver, 5).until(EC.visibility_of_element_located((By.ID, "zones-no-frame")))
    assert driver.find_element(By.ID, "camera-state").is_displayed()
    assert not driver.find_elements(By.ID, "zone-frame")
    assert driver.find_element(By.ID, "zone-layer").rect["height"] > 100     # the zones still show
    shots(driver, "zones-no-picture")
    camera.jpeg = cv2.imencode(".jpg", np.full((240, 320, 3), 90, np.uint8))[1].tobytes()
    driver.find_element(By.ID, "zones-refresh").click()
    WebDriverWait(driver, 5).until(EC.visibility_of_element_located((By.ID, "zone-frame")))
    assert not driver.find_element(By.ID, "zones-no-frame").is_displayed()
    assert driver.execute_script("return document.getElementById('zone-frame').naturalWidth") == 320
    layer = driver.find_element(By.ID, "zone-layer").rect
    assert layer["height"] / layer["width"] == pytest.approx(240 / 320, abs=0.01)


LEAVING = ("const e = new Event('beforeunload', {cancelable: true}); window.dispatchEvent(e); "
           "return e.defaultPrevented;")


def test_leaving_with_zones_not_downloaded_asks_first(browser, live_kiosk):
    driver = browser
    _login_to_zones(driver, live_kiosk)
    assert driver.execute_script(LEAVING) is False                            # nothing moved
    box = driver.find_element(By.ID, "zone-layer").rect

    def drag():   # the handles are drawn again after every move: find one each time
        handle = driver.find_elements(By.CSS_SELECTOR, '.zone-corner[data-seat="2"]')[0]
        ActionChains(driver).click_and_hold(handle).move_by_offset(box["width"] * 0.02, box["height"] * 0.02) \
            .release().perform()

    drag()
    assert driver.execute_script(LEAVING) is True                             # a reload would lose it
    driver.find_element(By.ID, "zones-reset").click()
    assert driver.execute_script(LEAVING) is False
    drag()
    driver.find_element(By.CSS_SELECTOR, "#zones-form button[type=submit]").click()   # downloaded
    assert driver.execute_script(LEAVING) is False
