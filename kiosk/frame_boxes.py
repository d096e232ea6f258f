"""Key frames with what the camera read drawn on them, for the round page and the evidence
package alike (one drawing, so a boxed frame in a package is the frame the page showed)."""

from __future__ import annotations

import json
from pathlib import Path

from vision.record import META, read_jsonl
from vision.table import TableConfig


class FrameBoxes:
    """A recording's key frames with what the camera read drawn on them: each detection's
    box, card and confidence, and the seat zones, drawn by the live view's overlay
    (``vision.pipeline.draw_overlay``), so a boxed key frame reads like the screen the dealer saw.

    The zones are those the recording's own meta.json names (the ones the tracker placed
    cards by when it was recorded), else ``config``'s.  A detection in none of them is drawn as
    the live view draws one its tracker did not count, dashed and labelled "(no seat)": with
    every box green, a key frame could not say which detections counted (QA53 M2).  The review
    page and the evidence package draw with this one class, so a boxed frame in a package is
    the frame the round page showed; detections.jsonl is read once for all the frames of a
    package."""

    def __init__(self, folder: Path, config: TableConfig | None = None, quality: int | None = None) -> None:
        self.quality = quality            # JPEG quality of the drawn copy; None: OpenCV's (95)
        self.lines: dict[int, dict] = {}
        try:
            for line in read_jsonl(folder / "detections.jsonl"):
                if isinstance(line, dict) and isinstance(line.get("frame_no"), int):
                    self.lines.setdefault(line["frame_no"], line)
        except Exception:  # a damaged recording still shows its raw frames
            self.lines = {}
        recorded = _recorded_table(folder)
        self.config = recorded or config
        # Where the zones drawn come from, for whoever reads the frames: "recorded", "given" or None.
        self.zones = "recorded" if recorded else "given" if config else None

    def draw(self, frame_no: int, jpeg: bytes) -> bytes | None:
        """The frame with its boxes, or None where it cannot be drawn on (not an image, no
        detections line names it): the raw frame still stands."""
        import cv2
        import numpy as np

        from vision.corners import Detection
        from vision.pipeline import draw_overlay

        line = self.lines.get(frame_no)
        image = cv2.imdecode(np.frombuffer(jpeg, np.uint8), cv2.IMREAD_COLOR) if line is not None else None
        if image is None:
            return None
        try:
            detections = [Detection.from_json(d) for d in line.get("detections", [])]
        except (KeyError, TypeError, ValueError):
            return None
        config = self.config or TableConfig.model_construct(seats=[])     # the boxes alone
        params = [cv2.IMWRITE_JPEG_QUALITY, self.quality] if self.quality else []
        ok, buf = cv2.imencode(".jpg", draw_overlay(image, config, detections), params)
        return buf.tobytes() if ok else None


def with_boxes(folder: Path, frame_no: int, jpeg: bytes, config: TableConfig | None = None) -> bytes | None:
    """One key frame with its boxes (:class:`FrameBoxes`), or None."""
    return FrameBoxes(folder, config).draw(frame_no, jpeg)


def _recorded_table(folder: Path) -> TableConfig | None:
    try:
        return TableConfig.model_validate(json.loads((folder / META).read_text(encoding="utf-8"))["table"])
    except (OSError, ValueError, KeyError, TypeError):
        return None

