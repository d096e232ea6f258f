"""A real browser (Debian's headless Chromium via selenium) against a real kiosk server."""

from __future__ import annotations

import os
import shutil
import sys
import threading
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "kiosk"))

from kiosk_testing import FAST_HASH, create_accounts, make_table  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


def pytest_collection_modifyitems(config, items):
    missing = not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists())
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing = True
    if missing:
        skip = pytest.mark.skip(reason="needs Debian chromium + chromium-driver and selenium")
        for item in items:
            if "browser" in item.keywords:
                item.add_marker(skip)


@pytest.fixture
def browser(tmp_path):
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    options = Options()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
                 "--hide-scrollbars", f"--user-data-dir={tmp_path / 'chromium-profile'}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.viewport = lambda w, h: driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride", {"width": w, "height": h, "deviceScaleFactor": 1, "mobile": False})
    driver.viewport(1280, 800)  # the dealer's touch panel, exactly (window size would include browser chrome)
    yield driver
    driver.quit()


@pytest.fixture
def shots(tmp_path):
    """Where screenshots go: the test's temp folder, copied to $NIUNIU_SCREENSHOTS if set."""
    folder = tmp_path / "screenshots"
    folder.mkdir()
    saved: list[Path] = []

    def save(driver, name: str) -> Path:
        path = folder / f"{name}.png"
        assert driver.save_screenshot(str(path)), "screenshot failed"
        saved.append(path)
        return path

    yield save
    target = os.environ.get("NIUNIU_SCREENSHOTS")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        for path in saved:
            shutil.copy(path, Path(target) / path.name)


@pytest.fixture
def live_kiosk(tmp_path, request):
    """The kiosk app served on 127.0.0.1 by a real threaded server in this process
    (parametrize indirectly with the seat names, or make_table's keywords, for another table)."""
    from werkzeug.serving import make_server

    from kiosk.app import create_app

    spec = getattr(request, "param", ("banker", "1", "2", "3"))
    table = make_table(**spec) if isinstance(spec, dict) else make_table(spec)
    app = create_app({"DATA_DIR": str(tmp_path / "data"), "TABLE": table, "PASSWORD_HASH_METHOD": FAST_HASH})
    create_accounts(app)
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    service = app.extensions["niuniu"].service

    class Live:
        url = f"http://127.0.0.1:{server.server_port}/"

    Live.app, Live.service = app, service
    yield Live
    server.shutdown()
    server.server_close()
    service.stop()
