"""The bundled demo: a fixed camera filming complete rounds at one table, with the truth.

``datasets/demo/`` is what a newcomer plays first (``niuniu demo``) and what the speed
figures and the end-to-end test are measured on, so it must look like a table camera,
not like a training scene: one felt with a printed layout, one camera that never moves,
cards that arrive one at a time under the dealer's hand, rows overlapped so only each
card's corner index stays readable, the dealer's arm crossing cards already dealt, and
the table swept empty between rounds.  Every round uses one held-out deck design (never
trained on), a different one each round, so the demo measures the model, not its memory.

Output (``write_demo``)::

    OUT/frames/NNNNNN.jpg   the camera, in name order, at table.yaml's camera.fps
    OUT/table.yaml          the table: cambodia rules, banker + seats 1-5 and their zones
    OUT/truth.json          [{"round": 1, "seats": {"banker": [...], "1": [...]}, "results": {...}}]
    OUT/labels.jsonl.gz     per frame, what a perfect card reader reports (checks without the model)
    OUT/manifest.json       seed, decks, frame ranges, sizes: how to make the same bytes again

The timing follows what reads it: a card must be seen in ``k`` of ``n`` frames to count,
an accepted card survives ``remove_after_s`` of being covered, so the table stays empty
longer than that between rounds (or the round would never clear), and for the same
reason a complete round is still "complete" to the machine until seconds after the
sweep, long enough for the kiosk demo dealer (who settles after 4 s) to settle it before
any card counts as removed.  Seats list their cards in dealing order, which is the
order the tracker accepts them in.

Everything is a pure function of the seed: the same seed gives the same bytes.
"""

from __future__ import annotations

import gzip
import io
import json
import math
import re
import sys
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, replace
from pathlib import Path

import cv2
import numpy as np
import yaml
from PIL import Image, ImageDraw, ImageFont

from scoring.cards import CARD_CODES, Card
from scoring.errors import NiuniuError
from scoring.rules import load_preset
from vision.corners import Detection
from vision.replay import hand_results
from vision.synth.decks import Deck, deck_names, load_deck, load_manifest
from vision.synth.faces import available_fonts
from vision.synth.scene import (CARD_CLASS, INDEX_CLASS, _FELTS, SceneLabel, _affine3, _chip, _dealer_hand,
                                 _labels, _paste, _Placed, _project, _shade_card)
from vision.table import PLAYER_SEATS, TableConfig, load_table_config, table_config_from_dict

GENERATOR_VERSION = "1"
RULES = "cambodia"
PLAYERS = PLAYER_SEATS[:5]
DEAL_ORDER = PLAYERS + ("banker",)
"""One card at a time round the table, from seat 1 to the banker, five times."""
HAND = 5

# The table is laid out in design units: pixels of a 1280x720 frame at the table's near
# edge.  Other widths scale everything, so the normalised zones are the same at any size.
DESIGN_W, DESIGN_H = 1280, 720
CARD_H = 104.0            # 14.4% of the frame height where the camera is closest
SPACING = (0.42, 0.58)    # row overlap in card widths: every top-left index stays in view
TRANSIT = 0.30            # an arriving card lies this many card heights short of its place
ARC = (640.0, -60.0, 635.0, 645.0)   # player seats on an ellipse (cx, cy, rx, ry) round the dealer
SEAT_ANGLES = (58.0, 29.0, 0.0, -29.0, -58.0)  # seats 1..5 on that arc, degrees from straight down
BANKER_CENTRE = (640.0, 205.0)
ZONE_MARGIN = 0.20        # zones reach this many card heights beyond the furthest index centre
CARD_W_MAX = 0.75 * CARD_H   # decks differ in shape (0.64 to 0.74 of the height): zones fit the widest
JPEG_QUALITY = 64
MAX_BYTES = 20_000_000   # the bundled demo travels in git: at most ~20 MB
LABELS = "labels.jsonl.gz"


class DemoError(NiuniuError):
    """The demo cannot be written as asked; the message says what to change."""


@dataclass(frozen=True)
class DemoTiming:
    """How long each part of a round lasts on camera (the frame folder plays at ``fps``)."""

    fps: float = 6.0
    frames_per_card: int = 3   # arriving under the hand, placed as the hand withdraws, in the clear
    bets_s: float = 1.0        # chips on the table before the first card
    complete_s: float = 3.5    # the whole table on view before the sweep
    sweep_frames: int = 2      # per seat: the hand over the cards, then the seat empty
    empty_s: float = 2.6       # with bets_s: more than thresholds.remove_after_s (3 s) without a card

    def frames(self, seconds: float) -> int:
        return max(1, int(round(seconds * self.fps)))


# ---------------------------------------------------------------------------------- geometry


@dataclass(frozen=True)
class SeatGeometry:
    """Where one seat's row of cards lies on the table plane (design units)."""

    name: str
    centre: tuple[float, float]
    angle: float        # degrees; the row runs along (cos, sin), card tops point to the dealer

    @property
    def along(self) -> np.ndarray:
        a = math.radians(self.angle)
        return np.array([math.cos(a), math.sin(a)])

    @property
    def up(self) -> np.ndarray:
        """From the cards towards the dealer (the top of each card)."""
        a = math.radians(self.angle)
        return np.array([math.sin(a), -math.cos(a)])

    def point(self, u: float, v: float) -> np.ndarray:
        return np.asarray(self.centre) + self.along * u + self.up * v


def table_layout() -> dict[str, SeatGeometry]:
    """The banker in front of the dealer; players 1..5 round the arc, left to right."""
    cx, cy, rx, ry = ARC
    seats = {"banker": SeatGeometry("banker", BANKER_CENTRE, 0.0)}
    for name, phi in zip(PLAYERS, SEAT_ANGLES):
        p = math.radians(phi)
        centre = (cx - rx * math.sin(p), cy + ry * math.cos(p))
        # cards face the dealer: their tops point at the arc's centre
        angle = math.degrees(math.atan2(rx * math.sin(p), ry * math.cos(p)))
        seats[name] = SeatGeometry(name, centre, angle)
    return seats


def demo_camera(width: int = DESIGN_W) -> np.ndarray:
    """Table plane (design units) -> image pixels: a fixed camera, mildly tilted and turned.

    The far (dealer's) side of the table shows about 11% smaller than the near side, as a
    camera on a pole behind the players sees it.
    """
    w, h = DESIGN_W, DESIGN_H
    seen = np.array([[-0.056 * w, -0.045 * h], [1.056 * w, -0.045 * h], [w, h], [0, h]], np.float64)
    turn = math.radians(1.2)
    rot = np.array([[math.cos(turn), -math.sin(turn)], [math.sin(turn), math.cos(turn)]])
    seen = (seen - [w / 2, h / 2]) @ rot.T + [w / 2, h / 2]
    image = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float64)
    cam = cv2.getPerspectiveTransform(seen.astype(np.float32), image.astype(np.float32))
    scale = width / DESIGN_W
    return np.diag([scale, scale, 1.0]) @ cam


def frame_size(width: int) -> tuple[int, int]:
    if not isinstance(width, int) or not 320 <= width <= 3840:
        raise DemoError(f"width {width!r} must be a whole number of pixels from 320 to 3840")
    return width, int(round(width * DESIGN_H / DESIGN_W))


def seat_zone(seat: SeatGeometry, card_w_max: float) -> list[tuple[float, float]]:
    """The seat's zone in normalised image coordinates.

    The tracker gives a detection to the zone holding its box centre, so the zone must
    hold every corner index and card centre a row can have (widest deck, widest spacing),
    including a card still short of its place under the dealer's hand, plus a margin, and
    no more: seats on a curve converge towards the dealer and their zones must not meet.
    (A card short of its place has its far half, and so its top index, under the hand.)
    """
    m = ZONE_MARGIN * CARD_H
    half = 2 * SPACING[1] * card_w_max + 0.42 * card_w_max + m
    near, far = -(0.40 * CARD_H + m), max(0.42, TRANSIT + 0.05) * CARD_H + m
    corners = np.array([seat.point(-half, near), seat.point(half, near), seat.point(half, far),
                        seat.point(-half, far)])
    image = _project(demo_camera(), corners)
    return [(round(float(x) / DESIGN_W, 4), round(float(y) / DESIGN_H, 4)) for x, y in image]


def demo_table_config(timing: DemoTiming, size: tuple[int, int]) -> TableConfig:
    layout = table_layout()
    seats = [{"name": name, "polygon": seat_zone(layout[name], CARD_W_MAX)} for name in ("banker",) + PLAYERS]
    data = {"table_id": "demo", "rules": RULES, "currency": "USD", "seats": seats,
            "camera": {"width": size[0], "height": size[1], "fps": timing.fps}}
    return table_config_from_dict(data, "demo table")


# ---------------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class Placement:
    """One dealt card: which, to which seat, and where on the table plane it comes to rest."""

    code: str
    seat: str
    position: int                 # 0..4 in the seat's row, the dealing order
    centre: tuple[float, float]   # design units, where it comes to rest
    angle: float


@dataclass(frozen=True)
class RoundPlan:
    number: int
    deck: str
    deal: tuple[Placement, ...]   # in dealing order
    chips: tuple[tuple[str, int], ...]   # (seat, bet spot 0 equal / 1 double)

    @property
    def seats(self) -> dict[str, list[str]]:
        out = {seat: [] for seat in ("banker",) + PLAYERS}
        for p in self.deal:
            out[p.seat].append(p.code)
        return out


def plan_round(number: int, deck: Deck, rng: np.random.Generator) -> RoundPlan:
    """Thirty distinct cards of one deck, dealt round the table in rows of five."""
    face = next(iter(deck.faces.values())).image
    card_w = CARD_H * face.shape[1] / face.shape[0]
    codes = [CARD_CODES[i] for i in rng.permutation(len(CARD_CODES))[: HAND * len(DEAL_ORDER)]]
    layout = table_layout()
    rows = {}
    for name, seat in layout.items():
        spacing = rng.uniform(*SPACING) * card_w
        shift = rng.normal(0, 0.05 * CARD_H, 2)
        rows[name] = (seat, spacing, shift)
    deal = []
    for k, code in enumerate(codes):
        name = DEAL_ORDER[k % len(DEAL_ORDER)]
        position = k // len(DEAL_ORDER)
        seat, spacing, shift = rows[name]
        u = (position - (HAND - 1) / 2) * spacing + shift[0] + rng.normal(0, 0.015 * CARD_H)
        v = shift[1] + rng.normal(0, 0.02 * CARD_H)
        centre = seat.point(u, v)
        deal.append(Placement(code, name, position, (float(centre[0]), float(centre[1])),
                              seat.angle + float(rng.normal(0, 2.0))))
    chips = tuple((name, int(rng.integers(2))) for name in PLAYERS)
    return RoundPlan(number, deck.name, tuple(deal), chips)


@dataclass(frozen=True)
class Pose:
    """The dealer's hand: fingertips at ``tip`` pointing along ``towards`` (design units)."""

    tip: tuple[float, float]
    towards: tuple[float, float]
    blur: int = 0           # motion blur length along the arm, design pixels


@dataclass(frozen=True)
class FrameSpec:
    """What the camera sees in one frame."""

    round_index: int | None          # which plan's cards and chips are on the table
    placed: int = 0                  # how many of its dealt cards lie in place
    transit: int | None = None       # a card still under the hand, short of its place
    swept: frozenset[str] = frozenset()   # seats already cleared
    chips: bool = False
    pose: Pose | None = None
    phase: str = "empty"             # bets, deal, complete, sweep or empty (for people reading specs)


def _towards(seat: SeatGeometry) -> tuple[float, float]:
    d = -seat.up
    return float(d[0]), float(d[1])


def plan_frames(plans: Sequence[RoundPlan], timing: DemoTiming) -> list[FrameSpec]:
    """The whole film: per round bets, the deal, the complete table, the sweep, the empty table."""
    layout = table_layout()
    frames: list[FrameSpec] = []
    for r, plan in enumerate(plans):
        frames += [FrameSpec(r, chips=True, phase="bets")] * timing.frames(timing.bets_s)
        for k, card in enumerate(plan.deal):
            seat = layout[card.seat]
            towards = _towards(seat)
            up = seat.up
            arriving = np.asarray(card.centre) + up * (TRANSIT * CARD_H + 0.05 * CARD_H)
            leaving = np.asarray(card.centre) + up * (0.62 * CARD_H)
            steps = [FrameSpec(r, k, transit=k, chips=True, phase="deal",
                               pose=Pose((float(arriving[0]), float(arriving[1])), towards, blur=9)),
                     FrameSpec(r, k + 1, chips=True, phase="deal",
                               pose=Pose((float(leaving[0]), float(leaving[1])), towards, blur=5))]
            steps += [FrameSpec(r, k + 1, chips=True, phase="deal")] * max(0, timing.frames_per_card - 2)
            frames += steps[: max(1, timing.frames_per_card)]
        done = len(plan.deal)
        frames += [FrameSpec(r, done, chips=True, phase="complete")] * timing.frames(timing.complete_s)
        swept: set[str] = set()
        for name in reversed(DEAL_ORDER):  # banker first, then back round the table
            seat = layout[name]
            over = seat.point(0.0, 0.1 * CARD_H)
            pose = Pose((float(over[0]), float(over[1])), _towards(seat), blur=7)
            frames.append(FrameSpec(r, done, swept=frozenset(swept), chips=True, pose=pose, phase="sweep"))
            swept.add(name)
            away = seat.point(0.0, 0.9 * CARD_H)
            pose = Pose((float(away[0]), float(away[1])), _towards(seat), blur=7)
            frames += [FrameSpec(r, done, swept=frozenset(swept), chips=True, pose=pose,
                                 phase="sweep")] * max(1, timing.sweep_frames - 1)
        frames += [FrameSpec(None)] * timing.frames(timing.empty_s)
    frames += [FrameSpec(None)] * timing.frames(timing.bets_s)  # the last round clears too
    return frames


# ---------------------------------------------------------------------------------- drawing


def _font(size: int) -> ImageFont.FreeTypeFont:
    fonts = available_fonts()
    bold = [f for f in fonts if "Bold" in f and "Serif" in f] or list(fonts)
    return ImageFont.truetype(bold[0], size=size)


def _text_patch(text: str, size: int, ink: tuple[int, int, int, int]) -> np.ndarray:
    font = _font(size)
    left, top, right, bottom = font.getbbox(text)
    pil = Image.new("RGBA", (right - left + 8, bottom - top + 8), (0, 0, 0, 0))
    ImageDraw.Draw(pil).text((4 - left, 4 - top), text, font=font, fill=ink)
    return np.asarray(pil).copy()


class _PlaneCanvas:
    """The printed table top, drawn on the table plane in design units (RGBA, RGB order)."""

    def __init__(self) -> None:
        self.ox, self.oy = -140.0, -110.0           # plane origin inside the canvas
        self.w, self.h = 1560, 900
        self.rgba = np.zeros((self.h, self.w, 4), np.float32)

    def to_canvas(self) -> np.ndarray:
        """Canvas pixel -> plane."""
        return np.array([[1, 0, self.ox], [0, 1, self.oy], [0, 0, 1.0]])

    def stamp(self, patch: np.ndarray, centre: tuple[float, float], angle: float) -> None:
        """Alpha-blend an RGBA patch (1 patch pixel = 1 design unit) centred and turned on the plane.

        On a transparent canvas the colour ends up premultiplied by alpha, which is what
        blurring and compositing the ink layer need.
        """
        ph, pw = patch.shape[:2]
        m = np.linalg.inv(self.to_canvas()) @ _affine3(centre, angle, 1.0, (pw, ph))
        corners = _project(m, np.array([[0, 0], [pw, 0], [pw, ph], [0, ph]], np.float64))
        x0, y0 = np.maximum(np.floor(corners.min(axis=0)).astype(int) - 1, 0)
        x1, y1 = np.minimum(np.ceil(corners.max(axis=0)).astype(int) + 1, (self.w, self.h))
        if x1 <= x0 or y1 <= y0:
            return
        shift = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1.0]])
        warped = cv2.warpAffine(patch.astype(np.float32), (shift @ m)[:2], (int(x1 - x0), int(y1 - y0)),
                                flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0, 0))
        region = self.rgba[y0:y1, x0:x1]
        a = warped[..., 3:4] / 255.0
        region[..., :3] = warped[..., :3] * a + region[..., :3] * (1 - a)
        region[..., 3:4] = np.maximum(region[..., 3:4], warped[..., 3:4])


GOLD = (222, 188, 100, 150)   # printed ink: faint from the camera's distance
SPOT_R = 24


def bet_spot(seat: SeatGeometry, spot: int) -> np.ndarray:
    """Centre of a player's EQUAL (0) or DOUBLE (1) bet spot: on the rail side of the card box."""
    return seat.point((spot - 0.5) * 2 * (SPOT_R + 34), -(CARD_H / 2 + 16 + SPOT_R))


def _seat_markings(seat: SeatGeometry, number: str | None) -> list[tuple[np.ndarray, tuple, float]]:
    """A seat's printed card box, its two bet spots and its number, as (patch, centre, angle)."""
    typical_w = 0.7 * CARD_H
    half = typical_w * (1 + (HAND - 1) * sum(SPACING) / 2) / 2 + 8   # a typical row, with room
    box_w, box_h = int(2 * half), int(CARD_H + 20)
    pil = Image.new("RGBA", (box_w + 8, box_h + 8), (0, 0, 0, 0))
    draw = ImageDraw.Draw(pil)
    arm = 26   # only the box's corners are printed: the cards cover the rest anyway
    x0, y0, x1, y1 = 4, 4, box_w + 3, box_h + 3
    for cx, cy, sx, sy in ((x0, y0, 1, 1), (x1, y0, -1, 1), (x1, y1, -1, -1), (x0, y1, 1, -1)):
        draw.line([(cx, cy + sy * arm), (cx, cy), (cx + sx * arm, cy)], fill=GOLD, width=2, joint="curve")
    out = [(np.asarray(pil).copy(), tuple(seat.point(0, 0)), seat.angle)]
    if number is None:
        out.append((_text_patch("BANKER", 28, GOLD), tuple(seat.point(0, CARD_H / 2 + 34)), seat.angle))
        return out
    for spot, word in enumerate(("EQUAL", "DOUBLE")):
        d = 2 * SPOT_R + 8
        pil = Image.new("RGBA", (d, d), (0, 0, 0, 0))
        ImageDraw.Draw(pil).ellipse((4, 4, d - 5, d - 5), outline=GOLD, width=2)
        patch = np.asarray(pil).copy()
        text = _text_patch(word, 9, GOLD)
        y0, x0 = (d - text.shape[0]) // 2, (d - text.shape[1]) // 2
        region = patch[y0:y0 + text.shape[0], x0:x0 + text.shape[1]]
        region[:] = np.maximum(region, text)
        out.append((patch, tuple(bet_spot(seat, spot)), seat.angle))
    badge = 34
    pil = Image.new("RGBA", (badge, badge), (0, 0, 0, 0))
    draw = ImageDraw.Draw(pil)
    draw.ellipse((2, 2, badge - 3, badge - 3), fill=GOLD[:3] + (190,))
    font = _font(20)
    left, top, right, bottom = font.getbbox(number)
    draw.text(((badge - (right - left)) / 2 - left, (badge - (bottom - top)) / 2 - top), number, font=font,
              fill=(24, 70, 40, 255))
    out.append((np.asarray(pil).copy(), tuple(seat.point(0, -(CARD_H / 2 + 16 + SPOT_R))), seat.angle))
    return out


def _felt_plane(canvas: _PlaneCanvas, rng: np.random.Generator) -> None:
    """Green felt inside the table's curve, the padded rail, the floor beyond; then the print."""
    h, w = canvas.h, canvas.w
    felt = np.array(_FELTS[1], np.float32) * 1.05
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    px, py = xx + canvas.ox, yy + canvas.oy
    cx, cy, rx, ry = ARC
    r = np.sqrt(((px - cx) / (rx + 250)) ** 2 + (np.maximum(py - cy, 0) / (ry + 175)) ** 2)
    rgb = np.empty((h, w, 3), np.float32)
    rgb[:] = felt
    # At this distance a 720p camera cannot resolve the felt's fibres, only a faint mottle
    # of worn and brushed patches (and the sensor's noise, added per frame).
    mottle = rng.normal(0, 1.0, (h // 8 + 1, w // 8 + 1)).astype(np.float32)
    mottle = cv2.resize(cv2.GaussianBlur(mottle, (0, 0), 1.5), (w, h), interpolation=cv2.INTER_CUBIC)
    rgb *= (1.0 + 0.012 * mottle / max(float(mottle.std()), 1e-6))[..., None]
    rail = (r >= 1.0) & (r < 1.085)
    shade = np.clip(1.0 - np.abs((r - 1.042) / 0.043), 0, 1)[..., None]
    leather = np.array([62, 34, 22], np.float32) * (0.6 + 0.6 * shade)
    rgb = np.where(rail[..., None], leather, rgb)
    rgb = np.where((r >= 1.085)[..., None], np.array([22, 20, 24], np.float32), rgb)
    canvas.rgba[..., :3] = np.clip(rgb, 0, 255)
    canvas.rgba[..., 3] = 255.0

    # The printed layout, on its own layer: ink soaks into felt, so its edges are soft.
    ink = _PlaneCanvas()
    pil = Image.new("RGBA", (w, h), (0, 0, 0, 0))
    erx, ery = rx * 0.66, ry * 0.62
    box = (cx - erx - canvas.ox, cy - ery - canvas.oy, cx + erx - canvas.ox, cy + ery - canvas.oy)
    ImageDraw.Draw(pil).arc(box, 28, 152, fill=GOLD, width=2)
    ink.stamp(np.asarray(pil).copy(), (canvas.ox + w / 2, canvas.oy + h / 2), 0.0)
    ink.stamp(_text_patch("NIU NIU", 44, GOLD), (640.0, 408.0), 0.0)
    for name, seat in table_layout().items():
        for patch, centre, angle in _seat_markings(seat, None if name == "banker" else name):
            ink.stamp(patch, centre, angle)
    premultiplied = cv2.GaussianBlur(ink.rgba, (0, 0), 0.9)   # colour * alpha, and alpha
    a = premultiplied[..., 3:4] / 255.0
    canvas.rgba[..., :3] = premultiplied[..., :3] + canvas.rgba[..., :3] * (1 - a)


def _light_map(size: tuple[int, int]) -> np.ndarray:
    """Fixed lighting: a warm lamp over the middle of the table, the corners darker."""
    w, h = size
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    x, y = xx / w - 0.5, yy / h - 0.45
    spot = np.exp(-((x / 0.55) ** 2 + (y / 0.5) ** 2))
    gain = 0.74 + 0.36 * spot
    colour = np.array([0.92, 1.0, 1.08], np.float32)  # BGR: a warm, tungsten-ish lamp
    return gain[..., None] * colour


def _arm_patch(length: int, wrist_w: float, shoulder_w: float, colour: tuple[int, int, int]) -> np.ndarray:
    """A shirt sleeve seen from above (RGBA, BGR order): shoulder at the top row, wrist at
    the bottom, tapering, shaded as a cylinder lit from above, with a cuff."""
    width = int(math.ceil(shoulder_w)) + 4
    t = (np.arange(length, dtype=np.float32) / max(length - 1, 1))[:, None]
    half = shoulder_w / 2 + (wrist_w / 2 - shoulder_w / 2) * t ** 0.8
    x = np.arange(width, dtype=np.float32)[None, :] - (width - 1) / 2
    alpha = np.clip(half - np.abs(x) + 0.5, 0.0, 1.0)
    across = np.clip(np.abs(x) / half, 0.0, 1.0)
    shade = 0.58 + 0.42 * np.sqrt(1.0 - across ** 2)
    cuff = length - np.arange(length)[:, None] < 0.14 * wrist_w
    shade = np.where(cuff, shade * 0.9, shade)
    img = np.empty((length, width, 4), np.float32)
    img[..., :3] = np.array(colour, np.float32) * shade[..., None]
    img[..., 3] = alpha * 255.0
    return np.clip(img, 0, 255).astype(np.uint8)


def _shade_hand(hand: np.ndarray) -> np.ndarray:
    """Round the flat hand drawing: darker towards its outline, softened like the lens would."""
    alpha = (hand[..., 3] > 127).astype(np.uint8)
    dist = cv2.distanceTransform(alpha, cv2.DIST_L2, 3)
    shade = 0.72 + 0.28 * np.clip(dist / (0.08 * hand.shape[1]), 0.0, 1.0)
    out = hand.astype(np.float32)
    out[..., :3] *= shade[..., None]
    return cv2.GaussianBlur(np.clip(out, 0, 255).astype(np.uint8), (0, 0), 1.0)


def _blur_along(patch: np.ndarray, length: int) -> np.ndarray:
    """Motion blur along the patch's vertical (the arm's direction of travel)."""
    if length < 2:
        return patch
    return cv2.blur(patch, (1, length), borderType=cv2.BORDER_CONSTANT)


def _shadow(patch: np.ndarray, sigma: float, strength: float) -> np.ndarray:
    """A soft dark copy of the patch's outline, padded so the blur is not cut off."""
    pad = int(3 * sigma) + 1
    alpha = np.pad(patch[..., 3], pad).astype(np.float32)
    alpha = cv2.GaussianBlur(alpha, (0, 0), sigma) * strength
    out = np.zeros(alpha.shape + (4,), np.uint8)
    out[..., 3] = np.clip(alpha, 0, 255).astype(np.uint8)
    return out


@dataclass
class _CardArt:
    code: str
    patch: np.ndarray          # the shaded face (BGRA)
    shadow: np.ndarray
    index_boxes: tuple         # the face's corner indices, fractions of its size
    hmat: np.ndarray           # face pixel -> image, in its place
    shadow_hmat: np.ndarray
    transit_hmat: np.ndarray   # ... and short of it, under the dealer's hand
    transit_shadow_hmat: np.ndarray


HAND_ID = 10_000   # owner-mask id of the dealer's arm and hand (cards are 1..30)


class DemoRenderer:
    """Draws :class:`FrameSpec` s: a fixed background, the round's cards, the dealer's arm.

    :meth:`labels` says what a perfect reader would see in the same frame: each card's
    corner indices that are at least 60% in view (the training data's rule), so the demo's
    truth can be checked frame by frame without the model.
    """

    def __init__(self, plans: Sequence[RoundPlan], decks: dict[str, Deck], width: int, seed: int) -> None:
        self.size = frame_size(width)
        self.cam = demo_camera(width)
        self.seed = seed
        self.plans = list(plans)
        w, h = self.size
        plane = _PlaneCanvas()
        _felt_plane(plane, np.random.default_rng([seed, 7]))
        self.background = np.zeros((h, w, 3), np.uint8)
        self._owner = np.zeros((h, w), np.int32)   # scratch: the picture does not need ownership
        bgra = np.clip(plane.rgba, 0, 255).astype(np.uint8)[..., [2, 1, 0, 3]].copy()
        _paste(self.background, self._owner, bgra, self.cam @ plane.to_canvas(), 0)
        self.light = _light_map(self.size)
        self.cards = [self._card_art(plan, decks[plan.deck], np.random.default_rng([seed, 11, r]))
                      for r, plan in enumerate(plans)]
        self.chips = [self._chips(plan, np.random.default_rng([seed, 13, r])) for r, plan in enumerate(plans)]
        self.hand_size = int(0.95 * CARD_H)
        hand = _dealer_hand(np.random.default_rng([seed, 17]), self.hand_size)[: int(1.2 * self.hand_size)]
        # that drawing is stubby; a real hand is about twice as long as it is wide
        hand = cv2.resize(hand, (hand.shape[1], int(hand.shape[0] * 1.4)), interpolation=cv2.INTER_LINEAR)
        self.hand = np.rot90(_shade_hand(hand), 2).copy()   # fingers down: reaching away from the dealer
        self._cache_key: tuple | None = None
        self._cache_img: np.ndarray | None = None

    # -- per round art

    def _card_art(self, plan: RoundPlan, deck: Deck, rng: np.random.Generator) -> list[_CardArt]:
        layout = table_layout()
        arts = []
        for p in plan.deal:
            face = deck.faces[p.code]
            patch = _shade_card(face.image, rng)
            scale = CARD_H / patch.shape[0]
            size = (patch.shape[1], patch.shape[0])
            shadow = _shadow(patch, sigma=3.0 / scale, strength=0.45)
            s_size = (shadow.shape[1], shadow.shape[0])
            off = np.array([1.5, 2.5])      # the lamp is above and behind the camera
            centre = np.asarray(p.centre)
            transit = centre + layout[p.seat].up * (TRANSIT * CARD_H)
            twist = p.angle + float(rng.normal(0, 4.0))
            arts.append(_CardArt(
                p.code, patch, shadow, face.index_boxes,
                self.cam @ _affine3(p.centre, p.angle, scale, size),
                self.cam @ _affine3(tuple(centre + off), p.angle, scale, s_size),
                self.cam @ _affine3(tuple(transit), twist, scale, size),
                self.cam @ _affine3(tuple(transit + off * 2.5), twist, scale, s_size),
            ))
        return arts

    def _chips(self, plan: RoundPlan, rng: np.random.Generator) -> list[tuple[str, np.ndarray, np.ndarray]]:
        """A small stack of chips on each player's chosen bet spot."""
        out = []
        layout = table_layout()
        for name, spot in plan.chips:
            seat = layout[name]
            centre = bet_spot(seat, spot)
            for k in range(int(rng.integers(1, 5))):
                chip = _chip(rng, 2 * SPOT_R - 6)
                pos = centre + rng.normal(0, 1.5, 2) + seat.up * 2.2 * k
                out.append((name, chip, self.cam @ _affine3(tuple(pos), float(rng.uniform(0, 360)), 1.0,
                                                             (chip.shape[1], chip.shape[0]))))
        return out

    # -- what lies where

    def _cards_in_view(self, spec: FrameSpec, start: int = 0) -> list[tuple[int, _CardArt, bool]]:
        """(id, art, in transit) bottom to top: cards in place in dealing order, then the arriving one."""
        if spec.round_index is None:
            return []
        plan, arts = self.plans[spec.round_index], self.cards[spec.round_index]
        out = [(k + 1, arts[k], False) for k in range(start, spec.placed) if plan.deal[k].seat not in spec.swept]
        if spec.transit is not None:
            out.append((spec.transit + 1, arts[spec.transit], True))
        return out

    def _dealer_patches(self, pose: Pose) -> list[tuple[np.ndarray, np.ndarray]]:
        """(patch, face pixel -> image) for the sleeve and the hand, fingertips at the pose."""
        d = np.asarray(pose.towards, np.float64)
        d /= np.linalg.norm(d)
        s = self.hand_size
        hand_h = self.hand.shape[0]
        tip = np.asarray(pose.tip)
        centre = tip - d * (hand_h / 2 - 0.06 * s)
        wrist = tip - d * (hand_h - 0.1 * s)
        shoulder = np.array([640.0 + 0.3 * (tip[0] - 640.0), -160.0])
        along = wrist - shoulder
        length = float(np.linalg.norm(along))
        arm = _arm_patch(int(length + 0.12 * s), 0.62 * s, 1.12 * s, (232, 232, 228))
        arm_centre = shoulder + along / length * (arm.shape[0] / 2)
        hand = _blur_along(self.hand, pose.blur)
        out = []
        for patch, c, direction in ((arm, arm_centre, along / length), (hand, centre, d)):
            angle = math.degrees(math.atan2(-direction[0], direction[1]))   # patch "down" along direction
            out.append((patch, self.cam @ _affine3(tuple(c), angle, 1.0, (patch.shape[1], patch.shape[0]))))
        return out

    # -- frames

    def _table(self, spec: FrameSpec) -> np.ndarray:
        """Background, chips and every card in place (cached: most frames add at most one card)."""
        key = (spec.round_index, spec.placed, spec.swept, spec.chips)
        prev = self._cache_key
        if prev is not None and prev[0] == key[0] and prev[2:] == key[2:] and prev[1] <= key[1]:
            img, start = self._cache_img, prev[1]
        else:
            img, start = self.background.copy(), 0
            if spec.round_index is not None and spec.chips:
                for name, chip, hmat in self.chips[spec.round_index]:
                    if name not in spec.swept:
                        _paste(img, self._owner, chip, hmat, 1)
        for _, art, _ in self._cards_in_view(replace(spec, transit=None), start):
            _paste(img, self._owner, art.shadow, art.shadow_hmat, 1)
            _paste(img, self._owner, art.patch, art.hmat, 1)
        self._cache_key, self._cache_img = key, img
        return img.copy()

    def render(self, spec: FrameSpec, frame_no: int) -> np.ndarray:
        img = self._table(spec)
        if spec.transit is not None and spec.round_index is not None:
            art = self.cards[spec.round_index][spec.transit]
            _paste(img, self._owner, art.shadow, art.transit_shadow_hmat, 1)
            _paste(img, self._owner, art.patch, art.transit_hmat, 1)
        if spec.pose is not None:
            patches = self._dealer_patches(spec.pose)
            shift = np.array([[1, 0, 10.0], [0, 1, 16.0], [0, 0, 1]])  # shadows fall away from the lamp
            for patch, hmat in patches:
                shadow = _shadow(patch, sigma=6.0, strength=0.35)
                pad = (shadow.shape[0] - patch.shape[0]) / 2
                to_patch = np.array([[1, 0, -pad], [0, 1, -pad], [0, 0, 1]])
                _paste(img, self._owner, shadow, self.cam @ shift @ np.linalg.inv(self.cam) @ hmat @ to_patch, 1)
            for patch, hmat in patches:
                _paste(img, self._owner, patch, hmat, 1)
        rng = np.random.default_rng([self.seed, 19, frame_no])
        f = img.astype(np.float32) * self.light
        f += rng.normal(0, 0.8, f.shape[:2] + (1,)).astype(np.float32)   # the sensor's noise
        return np.clip(f, 0, 255).astype(np.uint8)

    def labels(self, spec: FrameSpec) -> list[SceneLabel]:
        """The corner indices and whole cards in view, by the training data's visibility rules."""
        w, h = self.size
        owner = np.zeros((h, w), np.int32)
        scratch = np.zeros((h, w, 3), np.uint8)
        placed = []
        for obj_id, art, transit in self._cards_in_view(spec):
            hmat = art.transit_hmat if transit else art.hmat
            _paste(scratch, owner, art.patch, hmat, obj_id)
            size = (art.patch.shape[1], art.patch.shape[0])
            placed.append(_Placed(obj_id, art.code, hmat, size, art.index_boxes))
        if spec.pose is not None:
            for patch, hmat in self._dealer_patches(spec.pose):
                _paste(scratch, owner, patch, hmat, HAND_ID)
        return _labels(owner, placed, w, h)


def perfect_detections(labels: Sequence[SceneLabel], conf: float = 0.95) -> list[Detection]:
    """What a detector that never errs reports: one Detection per card with an index in view,
    boxed as the whole card when enough of it shows, else as the union of its visible indices."""
    by_code: dict[str, list[SceneLabel]] = {}
    for label in labels:
        by_code.setdefault(label.code, []).append(label)
    out = []
    for code, found in by_code.items():
        indices = [lab.box for lab in found if lab.cls == INDEX_CLASS]
        if not indices:
            continue  # a card with no readable corner is not a reading
        cards = [lab.box for lab in found if lab.cls == CARD_CLASS]
        if cards:
            box = cards[0]
        else:
            xs0, ys0, xs1, ys1 = zip(*indices)
            box = (min(xs0), min(ys0), max(xs1), max(ys1))
        out.append(Detection(Card.parse(code), conf, tuple(round(float(v), 1) for v in box)))
    out.sort(key=lambda d: (d.box[1], d.box[0]))
    return out


# ---------------------------------------------------------------------------------- writing


def choose_decks(seed: int, rounds: int, decks: Sequence[str | Deck] | None) -> list[str | Deck]:
    """One held-out design per round, a different one each round, and a different design
    family (decks redrawn from the same art) for as many rounds as there are families."""
    if decks is None:
        entries = load_manifest().deck
        names = deck_names("holdout")
        if not names:
            raise DemoError("datasets/decks.toml lists no holdout deck; the demo is rendered only from "
                            "held-out designs")
        rng = np.random.default_rng([seed, 3])
        families: dict[str, list[str]] = {}
        for name in names:
            families.setdefault(entries[name].family, []).append(name)
        groups = [families[f] for f in sorted(families)]
        shuffled = (groups[int(j)] for j in rng.permutation(len(groups)))
        groups = [[g[int(i)] for i in rng.permutation(len(g))] for g in shuffled]
        decks = [g[k] for k in range(max(map(len, groups))) for g in groups if k < len(g)]
    else:
        holdout = set(deck_names("holdout"))
        for d in decks:
            if isinstance(d, str) and d not in holdout:
                raise DemoError(f"deck {d!r} is not a holdout deck ({', '.join(sorted(holdout))}): "
                                "the demo must show designs the model never trained on")
        if not decks:
            raise DemoError("no decks given; pass at least one holdout deck name")
    return [decks[r % len(decks)] for r in range(rounds)]


def check_timing(timing: DemoTiming, config: TableConfig) -> None:
    """Refuse timings the pipeline would read wrongly: a card never placed, a round never cleared."""
    if timing.frames_per_card < 2:
        raise DemoError("frames_per_card must be at least 2: the card arriving under the hand, then in its place")
    if timing.sweep_frames < 2:
        raise DemoError("sweep_frames must be at least 2: the hand over a seat's cards, then the seat empty")
    gap = (timing.frames(timing.empty_s) + timing.frames(timing.bets_s)) / timing.fps
    if gap <= config.thresholds.remove_after_s:
        raise DemoError(f"the table is empty for only {gap:.2f} s between rounds; make empty_s + bets_s longer than "
                        f"thresholds.remove_after_s ({config.thresholds.remove_after_s} s) or the round never clears")


def _remove_old_frames(folder: Path) -> None:
    if folder.is_dir():
        for p in folder.iterdir():
            if p.is_file() and re.fullmatch(r"\d{6}\.jpg", p.name):
                p.unlink()


def write_demo(out: Path, seed: int = 0, rounds: int = 3, *, width: int = DESIGN_W,
               timing: DemoTiming | None = None, quality: int = JPEG_QUALITY,
               decks: Sequence[str | Deck] | None = None, labels: bool = True, progress: bool = False) -> dict:
    """Render the demo recording into ``out``; returns its manifest (also written as manifest.json).

    ``decks``: holdout deck names (default: every holdout deck, in a seeded order), or
    :class:`Deck` objects for tests that must not depend on the installed art.
    ``labels``: write ``labels.jsonl.gz``, per frame the detections a perfect card
    reader would report (``{"frame_no", "detections": [Detection.to_json()]}``), to
    check the truth, the zones and the timing without the model, or to score the model.
    """
    out = Path(out)
    timing = timing or DemoTiming()
    if not isinstance(rounds, int) or not 1 <= rounds <= 50:
        raise DemoError(f"rounds {rounds!r} must be a whole number from 1 to 50")
    if not 30 <= quality <= 100:
        raise DemoError(f"JPEG quality {quality} must be from 30 to 100")
    size = frame_size(width)
    config = demo_table_config(timing, size)
    check_timing(timing, config)
    chosen = choose_decks(seed, rounds, decks)
    loaded: dict[str, Deck] = {}
    for d in chosen:
        deck = d if isinstance(d, Deck) else loaded.get(d) or load_deck(d)
        loaded[deck.name] = deck
    plans = [plan_round(r + 1, loaded[d if isinstance(d, str) else d.name], np.random.default_rng([seed, 5, r]))
             for r, d in enumerate(chosen)]
    specs = plan_frames(plans, timing)

    try:
        (out / "frames").mkdir(parents=True, exist_ok=True)
        _remove_old_frames(out / "frames")
        renderer = DemoRenderer(plans, loaded, width, seed)
        written = _write_frames(out, specs, renderer, quality, labels, progress)
        _write_table(out / "table.yaml", config, seed, rounds)
        truth = truth_rounds(plans)
        (out / "truth.json").write_text(json.dumps(truth, indent=1) + "\n", encoding="utf-8")
    except OSError as exc:
        raise DemoError(f"cannot write the demo to {out}: {exc}; choose a folder you can write to") from None
    load_table_config(out / "table.yaml")  # what we wrote must be what replay reads
    manifest = {
        "generator": f"vision.synth.demo v{GENERATOR_VERSION}",
        "seed": seed,
        "rounds": rounds,
        "size": list(renderer.size),
        "fps": timing.fps,
        "jpeg_quality": quality,
        "frames": len(specs),
        "frames_bytes": written["bytes"],
        "decks": [p.deck for p in plans],
        # per round: [first frame (chips down), last frame (swept)]
        "round_frames": [written["spans"].get(r) for r in range(len(plans))],
        # per round: the frame in which the last of its 30 cards first shows (for latency figures)
        "last_card_visible": written["last_card"] if labels else None,
        "timing": {k: getattr(timing, k) for k in timing.__dataclass_fields__},
        "labels": LABELS if labels else None,
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return manifest


def _write_frames(out: Path, specs: list[FrameSpec], renderer: DemoRenderer, quality: int, labels: bool,
                  progress: bool) -> dict:
    """Every frame as JPEG, and (``labels``) what a perfect reader sees in it."""
    params = [cv2.IMWRITE_JPEG_QUALITY, int(quality), cv2.IMWRITE_JPEG_PROGRESSIVE, 1]
    total = 0
    spans: dict[int, list[int]] = {}
    seen: dict[int, set[str]] = {}
    last_card: list[int | None] = [None] * len(renderer.plans)
    label_path = out / LABELS
    label_path.unlink(missing_ok=True)
    partial = label_path.with_name(label_path.name + ".tmp")
    with ExitStack() as stack:
        label_file = None
        if labels:  # gzip without a timestamp, so the same seed still gives the same bytes
            raw = stack.enter_context(gzip.GzipFile(partial, "wb", mtime=0))
            label_file = stack.enter_context(io.TextIOWrapper(raw, encoding="utf-8"))
        for i, spec in enumerate(specs):
            ok, buf = cv2.imencode(".jpg", renderer.render(spec, i), params)
            if not ok:
                raise DemoError(f"frame {i} could not be encoded as JPEG")
            (out / "frames" / f"{i:06d}.jpg").write_bytes(buf.tobytes())
            total += len(buf)
            r = spec.round_index
            if r is not None:
                spans.setdefault(r, [i, i])[1] = i
            if label_file is not None:
                found = perfect_detections(renderer.labels(spec))
                label_file.write(json.dumps({"frame_no": i, "detections": [d.to_json() for d in found]}) + "\n")
                if r is not None:
                    cards = seen.setdefault(r, set())
                    cards.update(d.card.code for d in found)
                    if last_card[r] is None and len(cards) == len(renderer.plans[r].deal):
                        last_card[r] = i
            if progress and (i % 50 == 0 or i == len(specs) - 1):
                print(f"\rframe {i + 1}/{len(specs)}  {total / 1e6:.1f} MB", end="", file=sys.stderr, flush=True)
    if progress:
        print(file=sys.stderr)
    if labels:
        partial.replace(label_path)
    return {"bytes": total, "spans": spans, "last_card": last_card}


def truth_rounds(plans: Sequence[RoundPlan]) -> list[dict]:
    """Replay's shape: each round's seats in dealing order, and each hand scored as replay scores it."""
    preset = load_preset(RULES)
    return [{"round": p.number, "seats": p.seats, "results": hand_results(p.seats, preset)} for p in plans]


def _write_table(path: Path, config: TableConfig, seed: int, rounds: int) -> None:
    data = config.model_dump(mode="json", exclude_none=True)
    head = (f"# The demo table, written by vision.synth.demo (seed {seed}, {rounds} rounds): banker +\n"
            "# seats 1-5 under a fixed camera.  Each zone holds every corner index and card centre\n"
            "# its row of five can show (also a card still under the dealer's hand), plus a margin.\n"
            "# camera.fps is also the timing of the frames/ folder.\n")
    body = yaml.safe_dump(data, sort_keys=False, default_flow_style=None)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(head + body, encoding="utf-8")
    tmp.replace(path)
