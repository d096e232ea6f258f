"""The seat-zone editor: the admin marks zones in a browser and takes them to the console."""

from __future__ import annotations

import html
import json
import re

from kiosk_testing import login
from vision.table import load_table_config


def page_zones(page: str) -> dict:
    """The zones the editor starts from (the admin's own after a refused download)."""
    return json.loads(html.unescape(re.search(r'id="zones-field" value="([^"]*)"', page).group(1)))


def undo_zones(page: str) -> dict:
    """The zones "Undo my changes" goes back to."""
    return json.loads(html.unescape(re.search(r'data-zones="([^"]*)"', page).group(1)))


def table_zones(service) -> dict:
    return {seat.name: [list(p) for p in seat.polygon] for seat in service.config.seats}


def refused(client, token, zones, raw: str | None = None) -> tuple[str, str]:
    """Post zones that must be refused: the error shown and the page."""
    response = client.post("/admin/zones/zones.json",
                           data={"zones": raw if raw is not None else json.dumps(zones), "csrf_token": token})
    page = response.get_data(as_text=True)
    assert response.status_code == 400, page
    return html.unescape(re.search(r'id="zones-error" role="alert">(.*?)</p>', page, re.S).group(1)), page


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
    assert "the edited zones: seat 2's zone: point 1 (1.3, 0.5) is outside 0..1" in html.unescape(page)
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


def test_a_zone_whose_outline_crosses_itself_is_refused(client, service):
    token = login(client, "admin1")
    zones = table_zones(service)
    (x0, y0), (x1, _), (_, y2) = zones["1"][:3]
    zones["1"] = [[x0, y0], [x1, y2], [x1, y0], [x0 + 0.03, y2]]     # corner 2 dragged past corner 3
    error, page = refused(client, token, zones)
    assert "seat 1's zone crosses itself" in error and "corner 1 to 2" in error and "corner 3 to 4" in error
    assert page_zones(page)["1"] == zones["1"]
    zones["1"] = [[x0, y0], [x1, y0], [x1, y0], [x0, y2]]             # two corners on one spot: a triangle
    assert client.post("/admin/zones/zones.json", data={"zones": json.dumps(zones), "csrf_token": token}
                       ).status_code == 200


def test_zones_overlapping_by_half_are_refused_naming_both_seats(client, service):
    token = login(client, "admin1")
    zones = table_zones(service)
    zones["1"] = [list(p) for p in zones["banker"]]
    error, _ = refused(client, token, zones)
    assert error.startswith("the edited zones: the zones of the banker and seat 1 overlap")
    assert "table file" not in error and "seats[" not in error


def test_true_and_false_are_not_corners(client, service):
    token = login(client, "admin1")
    zones = table_zones(service)
    zones["1"][0] = [True, False]                                      # would read as the corner (1, 0)
    error, _ = refused(client, token, zones)
    assert error == "seat 1: each corner must be a pair of numbers"


def test_undo_after_a_refused_download_goes_back_to_the_tables_zones(client, service):
    token = login(client, "admin1")
    zones = table_zones(service)
    zones["1"][0] = [-0.2, 0.1]
    _, page = refused(client, token, zones)
    assert page_zones(page)["1"][0] == [-0.2, 0.1]                     # the admin's edit, to fix
    assert undo_zones(page) == table_zones(service)                    # not the refused zones


def test_a_refused_post_that_is_not_zones_puts_the_tables_back_where_it_cannot_be_drawn(client, service):
    token = login(client, "admin1")
    zones = table_zones(service)
    zones["banker"] = "<script>alert(1)</script>"
    zones["1"] = [[0.3, "x"]]
    zones["9"] = [[0, 0], [1, 0], [1, 1]]
    _, page = refused(client, token, zones)
    assert page_zones(page) == table_zones(service)                    # the editor can draw it
    assert "<script>alert" not in page


def test_the_page_says_when_the_camera_is_offline(client, service, monkeypatch):
    login(client, "admin1")

    class Camera:
        def latest_jpeg(self, draw_boxes=True):
            return None

        def status(self):
            return {"camera": "offline", "camera_reason": "stream cannot be opened"}

    monkeypatch.setattr(service, "pipeline", Camera())
    page = html.unescape(client.get("/admin/zones/").get_data(as_text=True))
    assert 'id="camera-state"' in page and "The camera is offline (stream cannot be opened)" in page
    assert 'id="zones-no-frame"' in page
    assert client.get("/admin/zones/frame.jpg").status_code == 404
