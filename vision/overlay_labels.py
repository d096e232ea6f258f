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

BOX_COLOUR = (0, 200, 0)        # a detection inside a seat zone (or any, where no zones are known)
LABEL_GAP = 2                   # pixels kept clear between two labels, so each reads on its own
FONT = cv2.FONT_HERSHEY_SIMPLEX


def drawing_scale(width: int, height: int) -> float:
    """How much larger than at 900 pixels a frame's lines and text are drawn, so a 4K frame's
    labels read as a 720p frame's do."""
    return max(0.4, min(width, height) / 900.0)


def label_text(detection) -> str:
    return f"{detection.card.code} {detection.conf:.2f}"


def label_font(width: int, height: int) -> tuple[float, int]:
    """The labels' font size and stroke on a frame of this size."""
    scale = drawing_scale(width, height)
    return 0.5 * scale, max(1, int(scale))


def label_places(detections: list, width: int, height: int) -> list[tuple[int, int, int, int]]:
    """Where each detection's label goes, as (left, top, right, bottom) of its text, in order.

    A fanned hand's boxes lie a few pixels apart, and labels each put above its own box ran
    into one another ("2S 0.83QH 0.76 10D 0.7 JC 0.81", QA49 watch L4): the card a label
    names could not be read.  Each label keeps its box's left edge (so it stays over its
    card) and takes the first row, above the box and then below it, nearer rows first, that
    clears every label placed before it and lies inside the frame."""
    size, thickness = label_font(width, height)
    placed: list[tuple[int, int, int, int]] = []
    for det in detections:
        x1, y1, x2, y2 = (int(round(v)) for v in det.box)
        (w, h), base = cv2.getTextSize(label_text(det), FONT, size, thickness)
        left = min(max(0, x1), max(0, width - w))
        row = h + base + LABEL_GAP
        above = [y1 - 4 - k * row for k in range(len(detections))]          # the text's baseline
        below = [y2 + 4 + h + k * row for k in range(len(detections))]
        slots = [y for pair in zip(above, below) for y in pair]
        rects = [(left, y - h, left + w, y + base) for y in slots]
        inside = [r for r in rects if r[1] >= 0 and r[3] <= height] or rects
        clear = [r for r in inside if not any(_meet(r, other) for other in placed)]
        placed.append(clear[0] if clear else inside[0])
    return placed


def draw_labelled_boxes(image, detections: list, colours: list | None = None):
    """Each detection's box and its label (card and confidence) drawn on ``image`` in its colour
    (``colours``, one per detection; :data:`BOX_COLOUR` for all where None): every box first,
    then the labels where :func:`label_places` put them, so a later box is never drawn over a
    label and no label covers another."""
    height, width = image.shape[:2]
    colours = colours or [BOX_COLOUR] * len(detections)
    size, thickness = label_font(width, height)
    line = max(1, int(2 * drawing_scale(width, height)))
    for det, colour in zip(detections, colours):
        x1, y1, x2, y2 = (int(round(v)) for v in det.box)
        cv2.rectangle(image, (x1, y1), (x2, y2), colour, line)
    for det, colour, place in zip(detections, colours, label_places(detections, width, height)):
        (_, h), _ = cv2.getTextSize(label_text(det), FONT, size, thickness)
        cv2.putText(image, label_text(det), (place[0], place[1] + h), FONT, size, colour, thickness, cv2.LINE_AA)
    return image


def _meet(a: tuple[int, int, int, int], b: tuple[int, int, int, int]) -> bool:
    """Whether two label rectangles touch or come within :data:`LABEL_GAP` of each other."""
    return a[0] < b[2] + LABEL_GAP and b[0] < a[2] + LABEL_GAP and a[1] < b[3] + LABEL_GAP and b[1] < a[3] + LABEL_GAP
