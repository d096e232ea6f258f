"""``niuniu demo`` as a newcomer sees it: log in with a printed account, watch a round get settled."""

from __future__ import annotations

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as EC
from selenium.webdriver.support.ui import WebDriverWait

from kiosk_testing import KioskProcess, write_demo

pytestmark = pytest.mark.browser

ROUND = {"banker": "4S 6H QD 9C 9H", "1": "KS QS JS 10S 10H", "2": "AS 2S 3D 4D 5C"}


def text_in(driver, css, text, timeout=20):
    WebDriverWait(driver, timeout).until(EC.text_to_be_present_in_element((By.CSS_SELECTOR, css), text))


def test_demo_round_appears_scored_and_settled(browser, tmp_path, shots):
    demo = tmp_path / "demo"
    write_demo(demo, [ROUND], empty=4, dealt=200)
    kiosk = KioskProcess(demo, tmp_path / "data", pause=1.5)
    try:
        account = kiosk.accounts["demo-dealer"]
        browser.get(kiosk.url)
        browser.find_element(By.ID, "username").send_keys("demo-dealer")
        browser.find_element(By.ID, "password").send_keys(account["password"])
        browser.find_element(By.ID, "login").click()
        text_in(browser, '.seat[data-seat="1"] .category', "Niu Niu")
        text_in(browser, '.seat[data-seat="banker"] .category', "Bull 8")
        text_in(browser, '.seat[data-seat="2"] .category', "Bull 5")
        text_in(browser, "#round-state", "SETTLED")
        one = browser.find_element(By.CSS_SELECTOR, '.seat[data-seat="1"]')
        two = browser.find_element(By.CSS_SELECTOR, '.seat[data-seat="2"]')
        assert one.find_element(By.CSS_SELECTOR, ".outcome").text == "WIN"
        assert one.find_element(By.CSS_SELECTOR, ".money .amount").text == "PAY 95.00 USD"   # 100 equal, 5% commission
        assert two.find_element(By.CSS_SELECTOR, ".money .amount").text == "COLLECT 200.00 USD"  # 100 double x2
        text_in(browser, "#camera-pill", "CAMERA ONLINE")
        assert "scripted-detector" in browser.find_element(By.ID, "model-pill").text
        browser.find_element(By.ID, "camera-toggle").click()
        WebDriverWait(browser, 10).until(lambda d: d.execute_script(
            "const i = document.getElementById('camera-view'); return i.complete && i.naturalWidth > 0;"))
        shots(browser, "demo-1280x800-settled")
    finally:
        assert kiosk.terminate() == 0
