"""The seat-zone editor: the admin marks zones in a browser and takes them to the console."""

from __future__ import annotations

import html
import json
import re

from kiosk_testing import login
from vision.table import load_table_config


def page_zones(page: str) -> dict:
    return json.loads(html.unescape(re.search(r'data-zones="([^"]*)"', page).group(1)))


def test_the_admin_sees_the_tables_zones_and_the_command_to_apply_them(client, service):
    login(client, "admin1")
    page = client.get("/admin/zones/").get_data(as_text=True)
    zones = page_zones(page)
    assert sorted(zones) == sorted(service.config.seat_names)
    assert zones["1"] == [list(p) for p in service.config.zone("1").polygon]
    assert "niuniu calibrate --source picamera2 --from-json zones.json --out /etc/niuniu/table.yaml --force" in page
    assert "no camera attached" in page
    assert client.get("/admin/zones/frame.jpg").status_code == 404    # no camera, no picture


def test_edited_zones_download_as_a_file_niuniu_calibrate_takes(client, service, runner, tmp_path):
    token = login(client, "admin1")
    zones = {seat.name: [list(p) for p in seat.polygon] for seat in service.config.seats}
    zones["1"][0] = [0.123456, 0.654321]                       # one corner dragged
    response = client.post("/admin/zones/zones.json", data={"zones": json.dumps(zones), "csrf_token": token})
    assert response.status_code == 200
    assert response.headers["Content-Disposition"] == 'attachment; filename="zones.json"'
    downloaded = response.get_json()
    assert downloaded["1"][0] == [0.1235, 0.6543] and list(downloaded)[0] == "banker"
    (tmp_path / "zones.json").write_bytes(response.data)
    code, _, err = runner(["calibrate", "--from-json", str(tmp_path / "zones.json"), "--out", str(tmp_path / "t.yaml")])
    assert code == 0, err
    assert load_table_config(tmp_path / "t.yaml").zone("1").polygon[0] == (0.1235, 0.6543)


def test_zones_that_would_not_make_a_table_are_refused_and_the_edits_kept(client, service):
    token = login(client, "admin1")
    zones = {seat.name: [list(p) for p in seat.polygon] for seat in service.config.seats}
    zones["2"][1] = [1.3, 0.5]                                  # dragged off the picture (a hand edit)
    response = client.post("/admin/zones/zones.json", data={"zones": json.dumps(zones), "csrf_token": token})
    page = response.get_data(as_text=True)
    assert response.status_code == 400 and 'id="zones-error"' in page
    assert "seats[2].polygon" in html.unescape(page) and "outside 0..1" in page
    assert page_zones(page)["2"][1] == [1.3, 0.5]                # nothing the admin did is lost
    del zones["3"]
    response = client.post("/admin/zones/zones.json", data={"zones": json.dumps(zones), "csrf_token": token})
    assert response.status_code == 400 and "give a zone for each seat of this table" in response.get_data(as_text=True)
    response = client.post("/admin/zones/zones.json", data={"zones": "{not json", "csrf_token": token})
    assert response.status_code == 400 and page_zones(response.get_data(as_text=True))["1"]   # the table's, again


def test_the_calibration_picture_is_served_to_lay_over_the_live_one(client, app, tmp_path):
    login(client, "admin1")
    app.config["TABLE_FILE"] = str(tmp_path / "table.yaml")
    assert client.get("/admin/zones/view.jpg").status_code == 404
    (tmp_path / "table.view.jpg").write_bytes(b"\xff\xd8the picture the zones were marked on")
    response = client.get("/admin/zones/view.jpg")
    assert response.status_code == 200 and response.data.endswith(b"zones were marked on")
    assert f"--out {tmp_path / 'table.yaml'} --force" in client.get("/admin/zones/").get_data(as_text=True)
