"""The table file install.sh puts in /etc/niuniu is one the kiosk accepts as it is.

A first install starts the service with this file before anyone calibrates; if it did
not validate, the service would fail its start limit on a brand-new device.
"""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def test_example_table_file_validates():
    table = pytest.importorskip("vision.table", reason="vision.table is not built yet")
    config = table.load_table_config(REPO / "deploy/table.example.yaml")
    assert config.seat_names[0] == "banker" and len(config.player_seats) >= 1
    assert config.camera.source == "picamera2"
    # The reconnect back-off must stay well inside the unit's WatchdogSec=30.
    assert config.camera.reconnect_max_s <= 15
