"""Frames and detections for driving the table pipeline without a card model.

A scripted detector answers from a list of per-frame detections; each test frame
carries its own index in two flat blocks of grey, so the detector (and a replay
that reads frames back through JPEG or a video codec) knows which frame it was given.
"""

from __future__ import annotations

import numpy as np

from scoring.cards import Card
from vision.corners import Detection

WIDTH, HEIGHT = 400, 300


def dealing(hands: dict[str, str], origin: dict[str, tuple[int, int]], frames_per_card: int = 3, hold: int = 4,
            tail: int = 35, conf: float = 0.93, dy: int = 0) -> list[list[Detection]]:
    """Per frame, the detections of a round-robin deal, each seat's cards in a row from its
    ``origin`` (``dy`` px lower); the last deal held ``hold`` frames, then the table swept."""
    seats = list(hands)
    codes = {seat: hands[seat].split() for seat in seats}
    placed, script = [], []
    for i in range(5):
        for seat in seats:
            placed.append((seat, i))
            frame = [Detection(Card.parse(codes[s][j]), conf, (origin[s][0] + 30 * j, origin[s][1] + dy,
                                                                origin[s][0] + 30 * j + 24, origin[s][1] + dy + 34))
                     for s, j in placed]
            script += [frame] * frames_per_card
    return script + [script[-1]] * hold + [[] for _ in range(tail)]


def coded_image(index: int) -> np.ndarray:
    """A frame that carries its script index in two flat blocks, readable through JPEG."""
    image = np.zeros((HEIGHT, WIDTH, 3), np.uint8)
    image[:, : WIDTH // 2] = (index // 16) * 16 + 8
    image[:, WIDTH // 2:] = (index % 16) * 16 + 8
    return image


def decode_index(image: np.ndarray) -> int:
    """The index ``coded_image`` painted, from a frame of any size."""
    h, w = image.shape[:2]
    high = int(image[h // 2, w // 4].mean()) // 16
    low = int(image[h // 2, 3 * w // 4].mean()) // 16
    return high * 16 + low
