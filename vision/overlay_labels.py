"""Where a detection's label goes on a drawn frame, for the live view's overlay and the boxed key
frames of the round page and the evidence package alike.

One placement for both: the key frames' labels were moved apart on a fanned hand (QA49 watch
L4) while the live view, drawing its own, still ran them together, so the dealer and the
officer read one hand two ways.  ``kiosk`` draws its frames through
:func:`vision.pipeline.draw_overlay`, and ``vision`` never imports ``kiosk``: the placement
lives here, beside the drawing.
"""

from __future__ import annotations

import cv2
import numpy as np

# BGR.  Counted and not counted differ in lightness as well as hue (green L* 80, violet L* 54), so
# they stay apart under deuteranopia and protanopia (Machado 2009: Delta E 136 and 165; the red
# used before, 9 under deuteranopia: QA53 M2), and an uncounted box says so in words and dashes.
BOX_COLOUR = (0, 230, 0)        # a detection inside a seat zone (or any, where no zones are known)
OUTSIDE_COLOUR = (255, 0, 220)  # a detection in no seat zone: the tracker places it nowhere
NO_SEAT = "(no seat)"           # the word an uncounted detection's label ends with
LABEL_GAP = 2                   # pixels kept clear between two labels, so each reads on its own
FONT = cv2.FONT_HERSHEY_SIMPLEX


def drawing_scale(width: int, height: int) -> float:
    """How much larger than at 900 pixels a frame's lines and text are drawn, so a 4K frame's
    labels read as a 720p frame's do."""
    return max(0.4, min(width, height) / 900.0)


def label_text(detection, seated: bool = True) -> str:
    """The card and confidence; a detection no seat counts says so, for a dealer who cannot tell
    the two box colours apart (QA53 M2: "4 of 5 cards", the fifth boxed just outside the zone)."""
    text = f"{detection.card.code} {detection.conf:.2f}"
    return text if seated else f"{text} {NO_SEAT}"


def label_font(width: int, height: int) -> tuple[float, int]:
    """The labels' font size and stroke on a frame of this size."""
    scale = drawing_scale(width, height)
    return 0.5 * scale, max(1, int(scale))


def label_places(detections: list, width: int, height: int,
                 seated: list[bool] | None = None) -> list[tuple[int, int, int, int]]:
    """Where each detection's label goes, as (left, top, right, bottom) of its text, in order.

    A fanned hand's boxes lie a few pixels apart, and labels each put above its own box ran
    into one another ("2S 0.83QH 0.76 10D 0.7 JC 0.81", QA49 watch L4): the card a label
    names could not be read.  Each label keeps its box's left edge (so it stays over its
    card) and takes the first row, above the box and then below it, nearer rows first, that
    clears every label placed before it and lies inside the frame.  ``seated``: whether each
    detection lies in a seat zone (all, where None), for the longer label of one that does not."""
    size, thickness = label_font(width, height)
    placed: list[tuple[int, int, int, int]] = []
    for det, in_seat in zip(detections, seated or [True] * len(detections)):
        x1, y1, x2, y2 = (int(round(v)) for v in det.box)
        (w, h), base = cv2.getTextSize(label_text(det, in_seat), FONT, size, thickness)
        left = min(max(0, x1), max(0, width - w))
        row = h + base + LABEL_GAP
        above = [y1 - 4 - k * row for k in range(len(detections))]          # the text's baseline
        below = [y2 + 4 + h + k * row for k in range(len(detections))]
        slots = [y for pair in zip(above, below) for y in pair]
        rects = [(left, y - h, left + w, y + base) for y in slots]
        inside = [r for r in rects if r[1] >= 0 and r[3] <= height] or rects
        clear = (r for r in inside if not any(_meet(r, other) for other in placed))   # the first only
        placed.append(next(clear, inside[0]))
    return placed


def draw_labelled_boxes(image, detections: list, seated: list[bool] | None = None):
    """Each detection's box and its label (card and confidence) drawn on ``image``: in a seat zone
    (``seated``, one per detection; all where None) a solid :data:`BOX_COLOUR` box, in none a
    dashed :data:`OUTSIDE_COLOUR` one labelled :data:`NO_SEAT`.  Every box first, then the labels
    where :func:`label_places` put them, so a later box is never drawn over a label and no label
    covers another."""
    height, width = image.shape[:2]
    seated = seated or [True] * len(detections)
    size, thickness = label_font(width, height)
    scale = drawing_scale(width, height)
    line = max(1, int(2 * scale))
    for det, in_seat in zip(detections, seated):
        x1, y1, x2, y2 = (int(round(v)) for v in det.box)
        if in_seat:
            cv2.rectangle(image, (x1, y1), (x2, y2), BOX_COLOUR, line)
        else:
            dashes = _dashes((x1, y1, x2, y2), max(4, int(8 * scale)))
            cv2.polylines(image, dashes, False, OUTSIDE_COLOUR, line)
    for det, in_seat, place in zip(detections, seated, label_places(detections, width, height, seated)):
        text = label_text(det, in_seat)
        (_, h), _ = cv2.getTextSize(text, FONT, size, thickness)
        colour = BOX_COLOUR if in_seat else OUTSIDE_COLOUR
        cv2.putText(image, text, (place[0], place[1] + h), FONT, size, colour, thickness, cv2.LINE_AA)
    return image


def _dashes(box: tuple[int, int, int, int], dash: int) -> np.ndarray:
    """A dashed box's dashes, as 2-point lines for one ``cv2.polylines`` call (the live view draws
    every frame, so plain arithmetic, one array at the end): each side begins and ends with a
    dash, so its corners still show where the box is."""
    x1, y1, x2, y2 = box
    lines = []
    for (ax, ay), (bx, by) in (((x1, y1), (x2, y1)), ((x2, y1), (x2, y2)), ((x2, y2), (x1, y2)), ((x1, y2), (x1, y1))):
        length = max(abs(bx - ax), abs(by - ay), 1)
        count = max(2, round((length + dash) / (2 * dash)))          # dashes as long as the gaps
        step = max(0, length - dash) / (count - 1)
        dx, dy = (bx - ax) / length, (by - ay) / length
        for start in (k * step for k in range(count)):
            end = min(length, start + dash)
            lines.append(((ax + dx * start, ay + dy * start), (ax + dx * end, ay + dy * end)))
    return np.rint(lines).astype(np.int32)


def _meet(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> bool:
    """Whether two label rectangles touch or come within :data:`LABEL_GAP` of each other."""
    return a[0] < b[2] + LABEL_GAP and b[0] < a[2] + LABEL_GAP and a[1] < b[3] + LABEL_GAP and b[1] < a[3] + LABEL_GAP
