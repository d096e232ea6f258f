"""Calibrating a table again after the camera moved (QA 47 docs F1, F2, F8, F12).

The README's "camera moved" step, `niuniu calibrate --source picamera2 --out
/etc/niuniu/table.yaml --force`, is run headless on the Pi (a sudo shell, SSH).  It used to
put every fitted seat zone on a generic even layout, so cards counted to the wrong seat, and
it opened the camera at picamera2's default 1920x1080 and wrote that over the table's
2304x1296 while saying the camera settings were kept.  Now the zones are kept (and the
output says so, and how to check them), resetting them takes --even, other seats without a
layout are refused, and the camera is opened at the table file's size.
"""

from __future__ import annotations

import json
import shutil
import sys
import types
from pathlib import Path

import cv2
import numpy as np
import pytest

from kiosk.cli import main
from vision.aim import view_path
from vision.calibrate import even_layout
from vision.table import load_table_config

# The CLI tests' runner, and their autouse fixture that keeps calibrate from opening a window.
from test_vision_cli import headless, run  # noqa: E402,F401

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "deploy" / "table.example.yaml"


def snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.fixture
def table(tmp_path):
    """The installed table file: fitted zones, a 2304x1296 camera at 10 fps."""
    out = tmp_path / "etc" / "table.yaml"
    out.parent.mkdir()
    shutil.copy(EXAMPLE, out)
    return out


@pytest.fixture
def frame_png(tmp_path):
    path = tmp_path / "frame.png"
    image = np.full((720, 1280, 3), 90, np.uint8)
    cv2.rectangle(image, (100, 100), (300, 250), (250, 250, 250), -1)
    cv2.imwrite(str(path), image)
    return path


class FakeCamera:
    """A stand-in picamera2 module (like QA's fake_picamera2.py): records the size and
    controls it is asked for, and delivers frames of ``gives`` (default: the size asked)."""

    def __init__(self, gives: tuple[int, int] | None = None):
        self.asked: list[tuple[tuple[int, int], dict]] = []
        self.gives = gives
        fake = self

        class Picamera2:
            def create_video_configuration(self, main, controls=None, buffer_count=2):
                fake.asked.append((tuple(main["size"]), dict(controls or {})))
                return {"main": main}

            def configure(self, config):
                self.size = fake.gives or tuple(config["main"]["size"])

            def start(self):
                pass

            def capture_array(self, name="main"):
                width, height = self.size
                image = np.full((height, width, 3), 90, np.uint8)
                cv2.rectangle(image, (width // 10, height // 10), (width // 4, height // 5), (250, 250, 250), -1)
                return image

            def stop(self):
                pass

            def close(self):
                pass

        self.module = types.ModuleType("picamera2")
        self.module.Picamera2 = Picamera2


@pytest.fixture
def camera(monkeypatch):
    fake = FakeCamera()
    monkeypatch.setitem(sys.modules, "picamera2", fake.module)
    return fake


# ------------------------------------------------------------------ F1: the fitted zones


def test_the_readme_camera_moved_command_keeps_the_fitted_zones_and_says_how_to_check_them(table, camera, capsys):
    fitted = load_table_config(table).seats
    code, stdout, err = run(capsys, "calibrate", "--source", "picamera2", "--out", table, "--force")
    assert code == 0, err
    again = load_table_config(table)
    assert again.seats == fitted                          # not an even layout
    assert view_path(table).is_file()                      # the new picture, to check the aim against
    zones_line = next(line for line in stdout.splitlines() if line.startswith("zones: "))
    assert f"kept as {table} had them" in zones_line and "on a new picture" in zones_line
    assert "--preview" in zones_line and "Seat zones" in zones_line and "--even" in zones_line
    assert "kept from the file it replaces: zones, seats, " in stdout


def test_a_preview_shows_the_kept_zones_on_the_new_picture(table, frame_png, capsys):
    preview = table.parent / "zones.jpg"
    code, stdout, err = run(capsys, "calibrate", "--source", frame_png, "--out", table, "--force",
                            "--preview", preview)
    assert code == 0, err
    assert f"check them in {preview}" in stdout and cv2.imread(str(preview)).shape == (720, 1280, 3)


def test_even_resets_the_zones_and_says_it_replaced_them(table, frame_png, capsys):
    code, stdout, err = run(capsys, "calibrate", "--source", frame_png, "--out", table, "--force", "--even")
    assert code == 0, err
    again = load_table_config(table)
    expected = even_layout(list(again.seat_names))
    assert {z.name: [tuple(p) for p in z.polygon] for z in again.seats} == expected
    assert f"these replace the zones {table} had" in stdout
    assert "kept from the file it replaces: seats, " in stdout      # the zones are not in the kept list


def test_other_seats_without_a_layout_are_refused_and_nothing_changes(table, frame_png, capsys):
    before = snapshot(table.parent)
    code, _, err = run(capsys, "calibrate", "--source", frame_png, "--out", table, "--force", "--players", 3)
    assert code == 2 and err.count("\n") == 1
    assert "--players 3 names the seats banker, 1, 2, 3" in err and "banker, 1, 2, 3, 4, 5" in err
    assert "--even" in err
    assert snapshot(table.parent) == before
    code, _, err = run(capsys, "calibrate", "--source", frame_png, "--out", table, "--force", "--players", 3,
                       "--even")
    assert code == 0, err
    assert load_table_config(table).seat_names == ("banker", "1", "2", "3")


def test_the_same_seats_named_again_keep_their_zones(table, frame_png, capsys):
    """The README's first-calibration command names --players 5: over a five-seat file it
    keeps that file's zones too."""
    fitted = load_table_config(table).seats
    code, _, err = run(capsys, "calibrate", "--source", frame_png, "--out", table, "--force", "--table-id", "vip-3",
                       "--rules", "cambodia", "--players", 5)
    assert code == 0, err
    assert load_table_config(table).seats == fitted


def test_zones_from_the_seat_zones_page_still_replace_them(table, frame_png, capsys, tmp_path):
    zones = {"banker": [[0.3, 0.05], [0.7, 0.05], [0.7, 0.3]], "1": [[0.0, 0.5], [0.2, 0.5], [0.2, 0.9]],
             "2": [[0.2, 0.5], [0.4, 0.5], [0.4, 0.9]], "3": [[0.4, 0.5], [0.6, 0.5], [0.6, 0.9]],
             "4": [[0.6, 0.5], [0.8, 0.5], [0.8, 0.9]], "5": [[0.8, 0.5], [1.0, 0.5], [1.0, 0.9]]}
    (tmp_path / "zones.json").write_text(json.dumps(zones))
    code, stdout, err = run(capsys, "calibrate", "--source", frame_png, "--from-json", tmp_path / "zones.json",
                            "--out", table, "--force")
    assert code == 0, err
    assert load_table_config(table).zone("banker").polygon[0] == (0.3, 0.05)
    assert f"these replace the zones {table} had" in stdout


def test_mirror_turns_the_kept_zones_over_with_the_picture(table, frame_png, capsys):
    """--mirror mirrors every frame back: each seat's cards move to the other side of the
    picture, and its kept zone must go with them."""
    seat1 = load_table_config(table).zone("1").polygon
    code, stdout, err = run(capsys, "calibrate", "--source", frame_png, "--out", table, "--force", "--mirror")
    assert code == 0, err
    again = load_table_config(table)
    assert again.camera.mirror and list(again.zone("1").polygon) == [(round(1 - x, 4), y) for x, y in seat1]
    assert "mirrored with the picture" in stdout and "mirror now on" in stdout


def test_settings_only_recalibration_keeps_the_zones_and_their_picture(table, frame_png, capsys):
    assert run(capsys, "calibrate", "--source", frame_png, "--out", table, "--force")[0] == 0
    picture = view_path(table).read_bytes()
    fitted = load_table_config(table).seats
    code, stdout, err = run(capsys, "calibrate", "--out", table, "--force", "--table-id", "vip-4")
    assert code == 0, err
    again = load_table_config(table)
    assert again.table_id == "vip-4" and again.seats == fitted and view_path(table).read_bytes() == picture
    assert f"zones: kept as {table} had them" in stdout


# ------------------------------------------------------------------ F2: the camera's size


@pytest.mark.parametrize("extra", [[], ["--table-id", "vip-3", "--rules", "cambodia", "--players", "5"],
                                   ["--from-json", "zones.json"]])
def test_the_pi_camera_is_opened_at_the_table_files_size_and_it_is_kept(table, camera, capsys, tmp_path,
                                                                      monkeypatch, extra):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "zones.json").write_text(json.dumps(
        {z.name: [list(p) for p in z.polygon] for z in load_table_config(table).seats}))
    code, stdout, err = run(capsys, "calibrate", "--source", "picamera2", "--out", table, "--force", *extra)
    assert code == 0, err
    assert camera.asked == [((2304, 1296), {"FrameRate": 10.0})]
    cam = load_table_config(table).camera
    assert (cam.width, cam.height, cam.fps) == (2304, 1296, 10.0)
    assert cv2.imread(str(view_path(table))).shape == (1296, 2304, 3)
    assert "camera settings" in stdout.splitlines()[-1] and "camera:" not in stdout


def test_a_camera_that_gives_another_size_is_said_not_called_kept(table, monkeypatch, capsys):
    fake = FakeCamera(gives=(1920, 1080))
    monkeypatch.setitem(sys.modules, "picamera2", fake.module)
    code, stdout, err = run(capsys, "calibrate", "--source", "picamera2", "--out", table, "--force")
    assert code == 0, err
    assert fake.asked[0][0] == (2304, 1296)
    cam = load_table_config(table).camera
    assert (cam.width, cam.height) == (1920, 1080)         # what the camera gives, as the picture
    assert "the other camera settings" in stdout
    assert "camera: size now 1920x1080, the size of the source's frames (was 2304x1296)" in stdout


def test_without_a_table_file_the_camera_uses_its_own_size(tmp_path, camera, capsys):
    out = tmp_path / "table.yaml"
    code, _, err = run(capsys, "calibrate", "--source", "picamera2", "--out", out)
    assert code == 0, err
    assert camera.asked == [((1920, 1080), {})]
    assert (load_table_config(out).camera.width, load_table_config(out).camera.height) == (1920, 1080)


# ------------------------------------------------------------------ F12, F8: what the help and the example say


def test_help_says_a_recalibration_keeps_the_files_seats(capsys):
    with pytest.raises(SystemExit):
        main(["calibrate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "default: the replaced file's seats, else 5" in text
    assert "default 5" not in text


def test_the_example_table_files_steps_stop_the_kiosk_before_calibrating():
    header = [line for line in EXAMPLE.read_text().splitlines() if line.startswith("#")]
    steps = [line for line in header if "systemctl" in line or "niuniu calibrate" in line]
    assert "systemctl stop niuniu" in steps[0] and "niuniu calibrate" in steps[1]
    assert "systemctl start niuniu" in steps[-1]
