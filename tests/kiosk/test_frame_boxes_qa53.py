"""QA53 M2: the round page's and the evidence package's boxed key frames were drawn with no zones
to hold a box to, so every box was green: the frame could not say which detections counted.
Now a card in no zone of the table the round was played under is marked as the dealer's view
marks it: another colour, and "(no seat)" after its card and confidence."""

from __future__ import annotations

import json

import cv2
import numpy as np

from kiosk.frame_boxes import FrameBoxes
from kiosk_testing import make_table
from vision.table import table_config_from_dict

# On the test table (kiosk_testing.zone: banker, 1, 2, 3 across the top 5-45 % of the frame) a
# card in the banker's zone and one on the empty bottom half, in no zone.
IN_SEAT = {"card": "KH", "conf": 0.97, "box": [60, 100, 150, 230]}
NO_SEAT = {"card": "7S", "conf": 0.91, "box": [600, 480, 690, 610]}
RAW = np.full((720, 1280, 3), 40, np.uint8)


def recording(folder, boxes, table=None):
    """A round's recording with one key frame (frame 7) and its detections; ``table``: the
    table config its meta.json names, as the pipeline records it."""
    (folder / "frames").mkdir(parents=True)
    meta = {"round_no": 1, **({"table": table.model_dump(mode="json")} if table else {})}
    (folder / "meta.json").write_text(json.dumps(meta))
    cv2.imwrite(str(folder / "frames" / "00000007.jpg"), RAW, [cv2.IMWRITE_JPEG_QUALITY, 100])
    (folder / "detections.jsonl").write_text(json.dumps(
        {"frame_no": 7, "ts": 1.0, "size": [1280, 720], "detections": boxes}) + "\n")
    return (folder / "frames" / "00000007.jpg").read_bytes()


def edge_colour(drawn: np.ndarray, box: list[int]) -> np.ndarray:
    """The mean colour (BGR) of the ink along a box's left edge."""
    column = drawn[box[1]:box[3] + 1, box[0]].astype(float)
    return column[np.abs(column - 40).max(axis=1) > 40].mean(axis=0)


def label_width(drawn: np.ndarray, box: list[int]) -> int:
    """How many columns of the band above a box carry its label's ink: "(no seat)" doubles it."""
    x1, y1 = box[0], box[1]
    band = cv2.cvtColor(drawn[y1 - 20:y1 - 2, x1:x1 + 200], cv2.COLOR_BGR2GRAY).astype(int)
    return int((np.abs(band - 40) > 30).any(axis=0).sum())


def test_the_review_rounds_key_frame_marks_a_card_outside_every_zone(played, app):
    folder = app.extensions["niuniu"].data_dir / "recordings" / "t1" / "20240101T000000Z-round-0001"
    recording(folder, [IN_SEAT, NO_SEAT])
    boxed = played.get("/review/round/1/frame/7.jpg")
    assert boxed.status_code == 200
    drawn = cv2.imdecode(np.frombuffer(boxed.data, np.uint8), cv2.IMREAD_COLOR)
    assert label_width(drawn, NO_SEAT["box"]) > 1.6 * label_width(drawn, IN_SEAT["box"])   # was 31 and 31
    apart = np.abs(edge_colour(drawn, NO_SEAT["box"]) - edge_colour(drawn, IN_SEAT["box"])).max()
    assert apart > 100, apart                                                  # was both green


def test_a_key_frame_holds_its_boxes_to_the_zones_its_round_was_played_under(tmp_path):
    """The table was recalibrated since: the round's own zones (its meta.json) decide, not today's."""
    then = table_config_from_dict({"table_id": "t1", "rules": "cambodia", "seats": [
        {"name": "banker", "polygon": [[0, 0], [0.3, 0], [0.3, 0.5], [0, 0.5]]},
        {"name": "1", "polygon": [[0.6, 0.6], [0.9, 0.6], [0.9, 1], [0.6, 1]]}]})     # 7S is in neither
    moved = {**NO_SEAT, "box": [820, 480, 910, 610]}                   # in "1" then, in no zone today
    jpeg = recording(tmp_path / "rec", [IN_SEAT, NO_SEAT, moved], table=then)
    boxed = FrameBoxes(tmp_path / "rec", make_table(), quality=100).draw(7, jpeg)
    drawn = cv2.imdecode(np.frombuffer(boxed, np.uint8), cv2.IMREAD_COLOR)
    counted = label_width(drawn, IN_SEAT["box"])
    assert label_width(drawn, NO_SEAT["box"]) > 1.6 * counted
    assert label_width(drawn, moved["box"]) < 1.2 * counted
    assert np.abs(edge_colour(drawn, moved["box"]) - edge_colour(drawn, IN_SEAT["box"])).max() < 40
