"""Calibrating again with kept zones keeps their picture as the aim reference (QA 48 review F7).

`niuniu calibrate --source ... --force` over a table file keeps its fitted zones.  It used to
write the camera's new picture as ``table.view.jpg``, the picture the kiosk checks the
camera's aim against: after a camera moved, the kept zones no longer lay over the seats and
the "camera moved" alarm, now comparing the camera with its own new picture, said nothing.
Now the picture the zones were fitted on stays (turned over with them by --mirror), so the
alarm stands until the zones are fitted to the new picture on the Seat zones page and saved
with --from-json, which writes the new picture.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision.aim import CameraAimWatch, load_view, save_view, view_path
from vision.mirror import mirror_image
from vision.table import load_table_config

# The CLI tests' runner, and their autouse fixture that keeps calibrate from opening a window.
from test_vision_cli import headless, run  # noqa: E402,F401

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "datasets" / "demo"
EXAMPLE = REPO / "deploy" / "table.example.yaml"


def moved(image: np.ndarray, dx: float) -> np.ndarray:
    """The picture a camera shifted ``dx`` pixels sideways takes."""
    turn = np.float32([[1, 0, dx], [0, 1, 0]])
    return cv2.warpAffine(image, turn, (image.shape[1], image.shape[0]), borderMode=cv2.BORDER_REFLECT)


def same_picture(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal but for JPEG's re-encoding."""
    return a.shape == b.shape and float(np.abs(a.astype(np.int16) - b.astype(np.int16)).mean()) < 2.0


def aim_after_three_checks(table: Path, image: np.ndarray) -> str:
    """What the kiosk's aim watch says of ``image`` with this table file's zones and picture."""
    config = load_table_config(table)
    watch = CameraAimWatch([z.polygon for z in config.seats], config.camera.move_limit, load_view(view_path(table)))
    for i in range(3):
        watch.check(image, 10.0 * i, cards_on_table=False)
    return watch.state


@pytest.fixture
def table(tmp_path):
    """A table whose zones were fitted on the demo's empty table, with that picture beside it."""
    out = tmp_path / "etc" / "table.yaml"
    out.parent.mkdir()
    shutil.copy(DEMO / "table.yaml", out)
    save_view(cv2.imread(str(DEMO / "frames" / "000000.jpg")), view_path(out))
    return out


@pytest.fixture
def fitted(table):
    return load_view(view_path(table))


@pytest.fixture
def moved_png(tmp_path, fitted):
    """The camera's picture after it was moved 5% of the picture's width."""
    path = tmp_path / "moved.png"
    cv2.imwrite(str(path), moved(fitted, 64))
    return path


def test_kept_zones_keep_the_picture_they_were_fitted_on_so_the_moved_alarm_stands(table, fitted, moved_png,
                                                                                capsys):
    before = view_path(table).read_bytes()
    assert aim_after_three_checks(table, cv2.imread(str(moved_png))) == "moved"
    code, stdout, err = run(capsys, "calibrate", "--source", moved_png, "--out", table, "--force")
    assert code == 0, err
    assert view_path(table).read_bytes() == before          # not rebased onto the moved camera's picture
    assert aim_after_three_checks(table, cv2.imread(str(moved_png))) == "moved"
    line = next(x for x in stdout.splitlines() if x.startswith(f"kept {view_path(table)}"))
    assert "the picture the zones were fitted on, not the camera's new one" in line
    assert "Seat zones" in line and f"--source {moved_png} --from-json zones.json --out {table} --force" in line
    assert f"wrote {view_path(table)}" not in stdout


def test_zones_fitted_to_the_new_picture_bring_it_as_the_reference(table, moved_png, tmp_path, capsys):
    """The Seat zones page's file, saved as the kept picture's line says, ends the alarm."""
    assert run(capsys, "calibrate", "--source", moved_png, "--out", table, "--force")[0] == 0
    zones = {z.name: [[min(1.0, x + 0.05), y] for x, y in z.polygon] for z in load_table_config(table).seats}
    (tmp_path / "zones.json").write_text(json.dumps(zones))
    code, stdout, err = run(capsys, "calibrate", "--source", moved_png, "--from-json", tmp_path / "zones.json",
                            "--out", table, "--force")
    assert code == 0, err
    assert same_picture(load_view(view_path(table)), cv2.imread(str(moved_png)))
    assert aim_after_three_checks(table, cv2.imread(str(moved_png))) == "aimed"
    assert f"wrote {view_path(table)}: the picture the zones were marked on" in stdout


@pytest.mark.parametrize(("dx", "aim"), [(64, "moved"), (0, "aimed")])
def test_mirror_turns_the_kept_picture_over_with_the_kept_zones(table, fitted, tmp_path, capsys, dx, aim):
    """The camera saves mirror images (the zones were fitted on them): --mirror turns every
    frame back, the kept zones over with it, and the picture they were fitted on too, so the
    aim is checked as before: a camera also moved still shows, one that did not, does not."""
    camera = tmp_path / "camera.png"
    cv2.imwrite(str(camera), moved(fitted, dx))
    code, stdout, err = run(capsys, "calibrate", "--source", camera, "--out", table, "--force", "--mirror")
    assert code == 0, err
    assert same_picture(load_view(view_path(table)), mirror_image(fitted))
    assert f"turned {view_path(table)} over with the zones" in stdout
    assert aim_after_three_checks(table, mirror_image(cv2.imread(str(camera)))) == aim


def test_without_a_picture_to_keep_the_new_one_is_written_and_said_not_fitted(tmp_path, capsys):
    """The installer's example file has zones but no picture: the first calibration's is the
    reference from then on, and the output says the zones still need fitting."""
    out = tmp_path / "table.yaml"
    shutil.copy(EXAMPLE, out)
    frame = tmp_path / "frame.png"
    cv2.imwrite(str(frame), cv2.imread(str(DEMO / "frames" / "000000.jpg")))
    code, stdout, err = run(capsys, "calibrate", "--source", frame, "--out", out, "--force")
    assert code == 0, err
    assert same_picture(load_view(view_path(out)), cv2.imread(str(frame)))
    assert (f"wrote {view_path(out)}: the camera's new picture (the kept zones were not fitted on it: fit them on "
            "the Seat zones page)") in stdout


@pytest.mark.parametrize("old", ["unreadable", "other shape"])
def test_a_picture_that_cannot_be_compared_with_is_replaced(table, moved_png, old, capsys):
    if old == "unreadable":
        view_path(table).write_bytes(b"not a picture")
    else:
        save_view(np.full((480, 640, 3), 90, np.uint8), view_path(table))
    code, stdout, err = run(capsys, "calibrate", "--source", moved_png, "--out", table, "--force")
    assert code == 0, err
    assert same_picture(load_view(view_path(table)), cv2.imread(str(moved_png)))
    assert "the kept zones were not fitted on it" in stdout
