"""One synthetic table photograph with exact labels.

A scene is laid out on the *table plane* (cards, chips, printed markings, a
dealer's hand) and every object is warped straight into the camera image through
one homography — the camera's tilt, rotation and distance — so each face is
resampled once, as a real lens would.  An id mask records which object owns each
pixel; a corner index is labelled only where enough of it is really visible,
which is what makes fanned and overlapped hands honest training data.

Photometric effects (colour temperature, uneven light, glare, shadow, blur,
noise, JPEG) are applied after composition, in camera space, where a real camera
adds them.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from scoring.cards import Card
from vision.orientation import up_angle
from vision.synth.faces import available_fonts, cached_font

INDEX_CLASS = 0
CARD_CLASS = 1
CLASS_NAMES = ("index", "card")

# A corner index counts as visible when this share of it is unoccluded and in frame.
MIN_INDEX_VISIBLE = 0.6
# A whole card gets a box when this share of its area is visible.
MIN_CARD_VISIBLE = 0.55
PRINTED_PAGE_SHARE = 0.15  # scenes with a newspaper or book page under the cards
# Training scenes under light the camera did not white-balance (generator 7).  The mild
# temperature range every scene gets left the detector blind to a tungsten-lit photo:
# poker4's test photos with blue x0.65 lost 10% of their indices.
COLOUR_CAST_SHARE = 0.25


@dataclass
class SceneLabel:
    """One labelled object: class, card code, box (x1, y1, x2, y2) in image pixels."""

    cls: int
    code: str
    box: tuple[float, float, float, float]
    visible: float
    quad: np.ndarray | None = None  # the index or card outline in image pixels (4x2)
    # An index's angle: the image direction its top faces, degrees (vision.orientation.up_angle).
    up: float | None = None


@dataclass
class Scene:
    image: np.ndarray                       # BGR uint8, after all effects
    labels: list[SceneLabel] = field(default_factory=list)
    jpeg_quality: int = 90
    # Every printed index of every face-up card (4x2 quads in image pixels), hidden or not:
    # where an index may show at all, so no "not an index" crop is cut there.
    index_quads: list[np.ndarray] = field(default_factory=list)
    card_quads: list[np.ndarray] = field(default_factory=list)
    # The code of every face-up card placed, shown or hidden: a reader that names a card
    # whose index is too hidden to be labelled has still read a card that is there.
    face_up: list[str] = field(default_factory=list)


# ----------------------------------------------------------------------------------------
# Geometry

def _camera_homography(rng: np.random.Generator, w: int, h: int, max_tilt: float) -> np.ndarray:
    """Table plane -> image.  The image shows a trapezoid of the table: the far edge
    wider, as a camera tilted by up to ~35 degrees from overhead sees it."""
    tilt = rng.uniform(0.0, max_tilt)          # 0.35 ~ 35 degrees of keystone
    angle = rng.uniform(-math.pi, math.pi) if rng.random() < 0.5 else rng.normal(0, 0.15)
    cx, cy = w / 2, h / 2
    hw, hh = w / 2, h / 2
    # Trapezoid in table coordinates: far (top) edge widened by the tilt.
    far = 1.0 + tilt
    pts = np.array([[-hw * far, -hh * (1 + tilt * 0.5)], [hw * far, -hh * (1 + tilt * 0.5)],
                    [hw, hh], [-hw, hh]], dtype=np.float64)
    pts += rng.normal(0, 0.02, size=pts.shape) * np.array([w, h])
    rot = np.array([[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]])
    pts = pts @ rot.T + np.array([cx, cy])
    dst = np.array([[0, 0], [w, 0], [w, h], [0, h]], dtype=np.float64)
    return cv2.getPerspectiveTransform(pts.astype(np.float32), dst.astype(np.float32))


def _squeezed(squeeze: tuple[float, float], w: int, h: int) -> np.ndarray:
    """Image -> the same image resized to another aspect and kept in its frame.

    Photo sets are often exported stretched to a square (a 4:3 phone photo to 640 x 640,
    a 16:9 webcam frame to 416 x 416): every index is then narrower, or shorter, than any
    camera draws it.  Real poker4 photos squeezed to 0.75 of their width lost 12% of the
    indices the detector found (models/README.md, "Twenty-sixth session").  Scaling the
    camera's picture about its centre draws such a photo while every face is still
    resampled once, and the labels follow through the same homography."""
    sx, sy = squeeze
    cx, cy = w / 2, h / 2
    return np.array([[sx, 0.0, cx * (1 - sx)], [0.0, sy, cy * (1 - sy)], [0.0, 0.0, 1.0]])


def _affine3(center: tuple[float, float], angle_deg: float, scale: float, size: tuple[int, int]) -> np.ndarray:
    """Patch pixel -> table plane: rotate about the patch centre and scale."""
    pw, ph = size
    a = math.radians(angle_deg)
    c, s = math.cos(a) * scale, math.sin(a) * scale
    m = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
    t0 = np.array([[1, 0, -pw / 2], [0, 1, -ph / 2], [0, 0, 1.0]])
    t1 = np.array([[1, 0, center[0]], [0, 1, center[1]], [0, 0, 1.0]])
    return t1 @ m @ t0


def _project(hmat: np.ndarray, pts: np.ndarray) -> np.ndarray:
    p = np.hstack([pts, np.ones((len(pts), 1))]) @ hmat.T
    return p[:, :2] / p[:, 2:3]


def _paste(out: np.ndarray, owner: np.ndarray, patch: np.ndarray, hmat: np.ndarray, obj_id: int) -> None:
    """Warp an RGBA patch into the image through ``hmat`` and alpha-blend it.

    Only the patch's bounding rectangle is warped, which keeps a 40-card scene fast.
    """
    ph, pw = patch.shape[:2]
    corners = _project(hmat, np.array([[0, 0], [pw, 0], [pw, ph], [0, ph]], dtype=np.float64))
    shrink = math.sqrt(abs(cv2.contourArea(corners.astype(np.float32))) / max(pw * ph, 1))
    if shrink < 0.6:
        # Area-average down to about the final size first: a lens integrates light over
        # each pixel, a bilinear warp of a 10x larger face would alias into jagged ink.
        f = min(1.0, shrink * 1.25)
        nw, nh = max(2, int(round(pw * f))), max(2, int(round(ph * f)))
        patch = cv2.resize(patch, (nw, nh), interpolation=cv2.INTER_AREA)
        hmat = hmat @ np.diag([pw / nw, ph / nh, 1.0])
        ph, pw = nh, nw
    h, w = out.shape[:2]
    x0, y0 = np.floor(corners.min(axis=0)).astype(int)
    x1, y1 = np.ceil(corners.max(axis=0)).astype(int)
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
    if x1 <= x0 or y1 <= y0:
        return
    shift = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1.0]])
    warped = cv2.warpPerspective(patch, shift @ hmat, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR,
                                 borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0, 0))
    alpha = warped[..., 3:4].astype(np.float32) / 255.0
    roi = out[y0:y1, x0:x1]
    roi[:] = (warped[..., :3].astype(np.float32) * alpha + roi.astype(np.float32) * (1 - alpha)).astype(np.uint8)
    owner[y0:y1, x0:x1][warped[..., 3] > 127] = obj_id


def _visible_share(owner: np.ndarray, quad: np.ndarray, obj_id: int) -> float:
    """Share of a quad's area (in the image) owned by ``obj_id``; off-image counts as hidden."""
    area = abs(cv2.contourArea(quad.astype(np.float32)))
    if area < 1:
        return 0.0
    h, w = owner.shape
    x0, y0 = np.floor(quad.min(axis=0)).astype(int)
    x1, y1 = np.ceil(quad.max(axis=0)).astype(int)
    cx0, cy0, cx1, cy1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
    if cx1 <= cx0 or cy1 <= cy0:
        return 0.0
    mask = np.zeros((cy1 - cy0, cx1 - cx0), np.uint8)
    cv2.fillPoly(mask, [np.round(quad - [cx0, cy0]).astype(np.int32)], 1)
    inside = mask.sum()
    if inside == 0:
        return 0.0
    mine = np.count_nonzero((owner[cy0:cy1, cx0:cx1] == obj_id) & (mask > 0))
    return float(mine) / max(area, float(inside))


# ----------------------------------------------------------------------------------------
# Surfaces and props

_FELTS = [(30, 110, 40), (20, 90, 60), (25, 60, 120), (110, 25, 30), (20, 20, 25), (70, 30, 90),
          (15, 75, 85), (120, 90, 40), (40, 40, 40)]  # RGB


# Photographed textures (wood, fabric, leather, stone, paper) from GIMP's pattern library,
# Debian package gimp-data (datasets/install-card-art.sh).  Real photos put cards on
# carpet and wood grain, which the drawn surfaces below never showed the model: those
# were where it read indices that were not there.
TEXTURE_DIR = Path("/usr/share/gimp/2.0/patterns")


@functools.lru_cache(maxsize=1)
def available_textures() -> tuple[Path, ...]:
    return tuple(sorted(TEXTURE_DIR.rglob("*.pat"))) if TEXTURE_DIR.is_dir() else ()


@functools.lru_cache(maxsize=None)
def read_pattern(path: Path) -> np.ndarray:
    """A GIMP ``.pat`` file as a BGR image: a big-endian header (its size, version, width,
    height, bytes per pixel, "GPAT", name) followed by the raw pixels."""
    data = path.read_bytes()
    header, _version, width, height, depth = np.frombuffer(data[:20], ">u4")
    if data[20:24] != b"GPAT" or depth not in (1, 2, 3, 4) or len(data) < header + width * height * depth:
        raise ValueError(f"{path} is not a GIMP pattern")
    px = np.frombuffer(data[header:header + width * height * depth], np.uint8).reshape(height, width, depth)
    rgb = np.repeat(px[..., :1], 3, axis=2) if depth in (1, 2) else px[..., :3]
    return np.ascontiguousarray(rgb[..., ::-1])


def _texture(rng: np.random.Generator, w: int, h: int) -> np.ndarray | None:
    paths = available_textures()
    if not paths:
        return None
    try:
        tile = read_pattern(paths[int(rng.integers(len(paths)))])
    except (OSError, ValueError):
        return None
    scale = rng.uniform(0.4, 2.5)
    tile = cv2.resize(tile, (max(4, int(tile.shape[1] * scale)), max(4, int(tile.shape[0] * scale))))
    tile = np.rot90(tile, int(rng.integers(4)))
    reps = (h // tile.shape[0] + 2, w // tile.shape[1] + 2, 1)
    big = np.tile(tile, reps)
    y0, x0 = int(rng.integers(tile.shape[0])), int(rng.integers(tile.shape[1]))
    out = big[y0:y0 + h, x0:x0 + w].astype(np.float32)
    return out * rng.uniform(0.6, 1.2, 3).astype(np.float32)  # tint and brightness


def _surface(rng: np.random.Generator, w: int, h: int) -> np.ndarray:
    """A table top: casino felt most of the time, otherwise wood, a light table, glass,
    cloth or a photographed texture (carpet-like fabric, wood, stone) where installed."""
    kind = rng.choice(["felt", "felt", "felt", "wood", "plain", "glass", "cloth", "texture", "texture"])
    if kind == "texture":
        img = _texture(rng, w, h)
        if img is not None:
            grain = rng.normal(0, rng.uniform(1, 5), (h, w)).astype(np.float32)
            return np.clip(img + grain[..., None], 0, 255).astype(np.uint8)
        kind = "cloth"
    if kind == "felt":
        base = np.array(_FELTS[int(rng.integers(len(_FELTS)))], np.float32) * rng.uniform(0.7, 1.25)
    elif kind == "wood":
        base = np.array([rng.uniform(110, 190), rng.uniform(70, 120), rng.uniform(30, 70)], np.float32)
    elif kind == "plain":
        base = np.full(3, rng.uniform(170, 250), np.float32) - rng.uniform(0, 25, 3).astype(np.float32)
    elif kind == "glass":
        base = np.full(3, rng.uniform(5, 40), np.float32)
    else:
        base = rng.uniform(40, 220, 3).astype(np.float32)
    img = np.empty((h, w, 3), np.float32)
    img[:] = base[::-1]  # to BGR
    grain = rng.normal(0, rng.uniform(2, 9), (h // 2 + 1, w // 2 + 1)).astype(np.float32)
    grain = cv2.resize(cv2.GaussianBlur(grain, (0, 0), 0.8), (w, h))
    img += grain[..., None]
    if kind == "wood":
        y = np.arange(h, dtype=np.float32)[:, None]
        x = np.arange(w, dtype=np.float32)[None, :]
        f = rng.uniform(0.02, 0.08)
        stripes = np.sin((y + 8 * np.sin(x * 0.01 + rng.uniform(0, 6))) * f) * rng.uniform(8, 25)
        img += stripes[..., None]
    elif kind == "cloth":
        pil = Image.new("RGB", (w, h))
        draw = ImageDraw.Draw(pil)
        for _ in range(int(rng.integers(20, 80))):
            x, y, r = rng.uniform(0, w), rng.uniform(0, h), rng.uniform(5, 60)
            col = tuple(int(v) for v in rng.integers(0, 255, 3))
            if rng.random() < 0.5:
                draw.ellipse((x - r, y - r, x + r, y + r), fill=col)
            else:
                draw.rectangle((x - r, y - r / 2, x + r, y + r / 2), fill=col)
        pattern = np.asarray(pil, np.float32)[..., ::-1]
        mix = rng.uniform(0.2, 0.6)
        img = img * (1 - mix) + pattern * mix
    return np.clip(img, 0, 255).astype(np.uint8)


_MARKING_WORDS = ["BANKER", "PLAYER", "EQUAL", "DOUBLE", "NIU NIU", "BULL BULL", "PAYS 1 TO 1",
                  "5% COMMISSION", "MIN 10 MAX 1000", "TIE", "1", "2", "3", "4", "5", "6", "7", "8"]


def _markings(rng: np.random.Generator, w: int, h: int) -> np.ndarray:
    """Printed layout lines, seat boxes and words (RGBA, table plane).

    Words with letters and digits are deliberate: the model must learn that a
    printed "8" on the felt is not a card.
    """
    pil = Image.new("RGBA", (w, h), (0, 0, 0, 0))
    draw = ImageDraw.Draw(pil)
    colour = tuple(int(v) for v in rng.choice([(230, 200, 90), (240, 240, 230), (200, 170, 60), (250, 220, 120)]))
    alpha = int(rng.integers(110, 230))
    ink = colour + (alpha,)
    lw = max(1, int(rng.integers(1, 5)))
    for _ in range(int(rng.integers(0, 4))):
        cx, cy = rng.uniform(0, w), rng.uniform(-h, h * 2)
        r = rng.uniform(0.3, 1.5) * max(w, h)
        draw.ellipse((cx - r, cy - r * 0.6, cx + r, cy + r * 0.6), outline=ink, width=lw)
    for _ in range(int(rng.integers(0, 7))):
        x, y = rng.uniform(0, w), rng.uniform(0, h)
        bw, bh = rng.uniform(40, 180), rng.uniform(30, 120)
        if rng.random() < 0.5:
            draw.rounded_rectangle((x, y, x + bw, y + bh), radius=int(bh * 0.2), outline=ink, width=lw)
        else:
            draw.ellipse((x, y, x + bh, y + bh), outline=ink, width=lw)
    fonts = available_fonts()
    for _ in range(int(rng.integers(0, 6))):
        font = ImageFont.truetype(fonts[int(rng.integers(len(fonts)))], size=int(rng.integers(12, 48)))
        word = _MARKING_WORDS[int(rng.integers(len(_MARKING_WORDS)))]
        draw.text((rng.uniform(0, w), rng.uniform(0, h)), word, font=font, fill=ink)
    return np.asarray(pil).copy()


_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _pseudo_word(rng: np.random.Generator) -> str:
    """A word-shaped string: mostly letters, sometimes a number or a price."""
    roll = rng.random()
    if roll < 0.12:
        return str(int(rng.integers(1, 2100)))
    if roll < 0.16:
        return f"${int(rng.integers(1, 500))}.{int(rng.integers(0, 100)):02d}"
    word = "".join(_LETTERS[int(i)] for i in rng.integers(0, 26, int(rng.integers(1, 11))))
    return word.capitalize() if rng.random() < 0.25 else word.upper() if rng.random() < 0.08 else word


def _printed_page(rng: np.random.Generator, w: int, h: int) -> np.ndarray:
    """A sheet of print lying on the table (newspaper, magazine, menu, receipt), RGBA.

    Real photos put cards on newspapers and books; their letters and digits are the
    index-shaped false positives the model made most on the real `edje` photos
    (dense print read as a 10 or a Q).  Seen here, they become "not an index" crops.
    """
    paper = np.array([rng.uniform(215, 252)] * 3) - np.array([0, rng.uniform(0, 12), rng.uniform(0, 30)])
    if rng.random() < 0.15:  # a coloured advert or magazine page
        paper = rng.uniform(60, 250, 3)
    pil = Image.new("RGBA", (w, h), tuple(int(v) for v in paper) + (255,))
    draw = ImageDraw.Draw(pil)
    ink_level = int(rng.integers(10, 70))
    ink = (ink_level, ink_level, ink_level, 255)
    if rng.random() < 0.2:
        ink = tuple(int(v) for v in rng.uniform(0, 200, 3)) + (255,)
    fonts = available_fonts()
    y = rng.uniform(0.02, 0.1) * h
    columns = int(rng.integers(1, 4))
    col_w = w / columns
    while y < h * 0.97:
        headline = rng.random() < 0.12
        size = max(6, int(w * (rng.uniform(0.05, 0.12) if headline else rng.uniform(0.015, 0.04))))
        font = cached_font(fonts[int(rng.integers(len(fonts)))], size)
        span = w if headline else col_w
        for col in range(1 if headline else columns):
            x, line = col * col_w + 0.03 * span, _pseudo_word(rng)
            while True:
                longer = f"{line} {_pseudo_word(rng)}"
                if font.getlength(longer) > span * 0.92:
                    break
                line = longer
            draw.text((x, y), line, font=font, fill=ink)
        y += size * rng.uniform(1.15, 1.6)
    return np.asarray(pil).copy()


def _chip(rng: np.random.Generator, diameter: int) -> np.ndarray:
    d = max(8, diameter)
    pil = Image.new("RGBA", (d, d), (0, 0, 0, 0))
    draw = ImageDraw.Draw(pil)
    col = tuple(int(v) for v in rng.choice([(200, 30, 30), (30, 30, 30), (30, 80, 200), (30, 150, 60),
                                             (230, 230, 230), (120, 40, 160), (240, 160, 30)]))
    draw.ellipse((0, 0, d - 1, d - 1), fill=col + (255,))
    stripes = int(rng.integers(4, 9))
    for k in range(stripes):
        a0 = 360 * k / stripes
        draw.pieslice((0, 0, d - 1, d - 1), a0, a0 + 360 / stripes / 3, fill=(245, 245, 245, 255))
    inner = d * 0.18
    draw.ellipse((inner, inner, d - inner, d - inner), fill=col + (255,), outline=(240, 240, 240, 255))
    return np.asarray(pil)[..., [2, 1, 0, 3]].copy()


def _dealer_hand(rng: np.random.Generator, size: int) -> np.ndarray:
    """A hand reaching in: a palm and fingers in a skin tone, sometimes in a sleeve."""
    s = max(16, size)
    pil = Image.new("RGBA", (s, int(s * 1.6)), (0, 0, 0, 0))
    draw = ImageDraw.Draw(pil)
    tone = [(255, 220, 190), (230, 180, 140), (190, 140, 100), (140, 95, 60), (95, 65, 45)]
    col = tuple(int(c * rng.uniform(0.85, 1.05)) for c in tone[int(rng.integers(len(tone)))])
    draw.ellipse((s * 0.1, s * 0.55, s * 0.9, s * 1.25), fill=col + (255,))
    for k in range(4):
        x = s * (0.18 + 0.19 * k)
        top = s * rng.uniform(0.02, 0.25)
        draw.rounded_rectangle((x, top, x + s * 0.15, s * 0.8), radius=int(s * 0.07), fill=col + (255,))
    draw.rounded_rectangle((0, s * 0.75, s * 0.3, s * 0.95), radius=int(s * 0.08), fill=col + (255,))
    if rng.random() < 0.6:
        sleeve = tuple(int(v) for v in rng.choice([(20, 20, 20), (240, 240, 240), (120, 20, 30)]))
        draw.rectangle((s * 0.05, s * 1.15, s * 0.95, s * 1.6), fill=sleeve + (255,))
    return np.asarray(pil)[..., [2, 1, 0, 3]].copy()


# ----------------------------------------------------------------------------------------
# Photometric effects (camera space)

def _colour_cast(rng: np.random.Generator) -> np.ndarray:
    """BGR gains of light nobody white-balanced: tungsten (most casino light), cold
    daylight or LED, or a fluorescent green."""
    kind = rng.random()
    if kind < 0.6:
        return np.array([rng.uniform(0.55, 0.8), rng.uniform(0.85, 1.0), rng.uniform(1.0, 1.15)], np.float32)
    if kind < 0.85:
        return np.array([rng.uniform(1.0, 1.15), rng.uniform(0.95, 1.05), rng.uniform(0.65, 0.85)], np.float32)
    return np.array([rng.uniform(0.75, 0.9), rng.uniform(1.05, 1.15), rng.uniform(0.75, 0.9)], np.float32)


def _lighting(img: np.ndarray, rng: np.random.Generator, cast: np.ndarray | None = None,
              exposure: float = 1.0) -> np.ndarray:
    h, w = img.shape[:2]
    f = img.astype(np.float32)
    # colour temperature: tungsten casino light to cold LED, mostly white-balanced
    gains = np.array([rng.uniform(0.86, 1.12), rng.uniform(0.95, 1.04), rng.uniform(0.86, 1.12)], np.float32)
    f *= gains if cast is None else gains * cast
    # uneven light: a tilted plane times a vignette
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    gx, gy = rng.uniform(-0.4, 0.4, 2)
    plane = 1.0 + gx * (xx / w - 0.5) + gy * (yy / h - 0.5)
    r2 = ((xx / w - 0.5) ** 2 + (yy / h - 0.5) ** 2)
    vign = 1.0 - rng.uniform(0, 0.6) * r2
    f *= (plane * vign * rng.uniform(0.65, 1.25) * exposure)[..., None]
    if rng.random() < 0.35:  # glare: a soft bright blob
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
        sx = rng.uniform(0.05, 0.3) * w
        sy = sx * rng.uniform(0.3, 1.0)
        blob = np.exp(-(((xx - cx) / sx) ** 2 + ((yy - cy) / sy) ** 2))
        f += (blob * rng.uniform(40, 170))[..., None]
    if rng.random() < 0.3:  # a shadow of an arm or a chip rack
        mask = np.zeros((h, w), np.float32)
        pts = np.stack([rng.uniform(-0.2, 1.2, 5) * w, rng.uniform(-0.2, 1.2, 5) * h], axis=1).astype(np.int32)
        cv2.fillPoly(mask, [cv2.convexHull(pts)], 1.0)
        mask = cv2.GaussianBlur(mask, (0, 0), rng.uniform(5, 30))
        f *= (1.0 - mask * rng.uniform(0.2, 0.55))[..., None]
    gamma = rng.uniform(0.75, 1.3)
    f = 255.0 * (np.clip(f, 0, 255) / 255.0) ** gamma
    return np.clip(f, 0, 255).astype(np.uint8)


def _optics(img: np.ndarray, rng: np.random.Generator, blurred: bool = False) -> np.ndarray:
    # ``blurred``: the top of the usual blur range, on purpose (a training set weighted
    # to where the detector loses indices); the same draws otherwise.
    if blurred or rng.random() < 0.2:  # motion blur: a hand or the camera moved
        k = int(rng.integers(6, 10) if blurred else rng.integers(3, 10))
        kernel = np.zeros((k, k), np.float32)
        kernel[k // 2, :] = 1.0 / k
        rot = cv2.getRotationMatrix2D((k / 2 - 0.5, k / 2 - 0.5), rng.uniform(0, 180), 1.0)
        kernel = cv2.warpAffine(kernel, rot, (k, k))
        kernel /= max(kernel.sum(), 1e-6)
        img = cv2.filter2D(img, -1, kernel)
    if rng.random() < 0.35:  # defocus
        img = cv2.GaussianBlur(img, (0, 0), rng.uniform(1.0, 1.6) if blurred else rng.uniform(0.4, 1.6))
    if rng.random() < 0.7:  # sensor noise
        noise = rng.normal(0, rng.uniform(1, 8), img.shape).astype(np.float32)
        img = np.clip(img.astype(np.float32) + noise, 0, 255).astype(np.uint8)
    return img


# ----------------------------------------------------------------------------------------
# Layout

@dataclass
class _Placed:
    obj_id: int
    code: str
    hmat: np.ndarray          # face pixel -> image
    size: tuple[int, int]     # face (w, h)
    index_boxes: tuple


def _hand_positions(rng, k, card_w, card_h, center, theta):
    """Card centres and angles for one seat's hand: a row, an overlapped row or a fan."""
    style = rng.choice(["tight", "overlap", "spread", "fan"], p=[0.3, 0.3, 0.2, 0.2])
    spacing = {"tight": rng.uniform(0.2, 0.38), "overlap": rng.uniform(0.38, 0.85),
               "spread": rng.uniform(0.95, 1.3), "fan": rng.uniform(0.18, 0.5)}[style] * card_w
    u = np.array([math.cos(math.radians(theta)), math.sin(math.radians(theta))])
    v = np.array([-u[1], u[0]])
    out = []
    for i in range(k):
        off = (i - (k - 1) / 2) * spacing
        pos = np.array(center) + u * off + v * rng.normal(0, 0.04 * card_h)
        ang = theta + rng.normal(0, 3.0)
        if style == "fan":
            fan = rng.uniform(6, 16)
            ang = theta + (i - (k - 1) / 2) * fan
            pos = pos + v * (abs(i - (k - 1) / 2) ** 2) * 0.02 * card_h
        out.append((pos, ang))
    if rng.random() < 0.5:
        out.reverse()  # dealt the other way: the other edge of each card shows
    return out


def _held_fan(rng: np.random.Generator, k: int, card_w: float, card_h: float, centre) -> list:
    """The draw-order items of ``k`` cards fanned in a player's hand, then of the hand itself.

    Why: a photo of a hand of cards, the way players hold and show them, turns each card
    about one point near the lower corners, so each lower card shows a wedge that is
    widest at its top and holds only its top index; the table layouts spread cards along
    a line and never draw that wedge, nor a thumb over the cards' lower half.  Cards go
    on top of each other turning clockwise (the upper-left indices show), or for one hand
    in five the other way (only a four-corner design then shows an index on each card).
    """
    theta = rng.normal(0, 25) if rng.random() < 0.7 else rng.uniform(0, 360)
    step = rng.uniform(9, 22) * (1 if rng.random() < 0.8 else -1)
    reach = card_h * rng.uniform(0.3, 0.48)          # pivot to card centre
    down = np.array([-math.sin(math.radians(theta)), math.cos(math.radians(theta))])   # towards the cards' lower edge
    pivot = np.array(centre) + reach * 0.5 * down
    items = []
    for i in range(k):
        ang = theta + (i - (k - 1) / 2) * step + rng.normal(0, 1.0)
        r = math.radians(ang)
        pos = pivot + (reach + rng.normal(0, 0.01) * card_h) * np.array([math.sin(r), -math.cos(r)])
        items.append(("card", (tuple(pos), ang)))
    if rng.random() < 0.75:  # the holding hand over the pivot (its thumb on the lower cards)
        # fingertips about the cards' middle, the palm below
        grip = pivot + down * card_h * rng.uniform(0.25, 0.45) + rng.normal(0, 0.05, 2) * card_h
        items.append(("grip", (tuple(grip), theta + rng.normal(0, 20))))
    return items


def render_scene(rng: np.random.Generator, deck, *, size: tuple[int, int] = (640, 480),
                 kind: str | None = None, max_tilt: float = 0.45, seats: int | None = None,
                 hand_size: int | None = None, colour_casts: float = 0.0, courts_first: bool = False,
                 blurred: bool = False, squeeze: tuple[float, float] = (1.0, 1.0),
                 exposure: float = 1.0, min_index_visible: float = MIN_INDEX_VISIBLE) -> Scene:
    """Compose one labelled scene from ``deck`` (a :class:`vision.synth.decks.Deck`).

    ``kind``: "table" (many seats, small cards, as a whole-table camera sees them),
    "hands" (one to three seats filling the frame, as a seat-zone crop sees them) or
    "closeup" (a few large cards, as a phone photo) or "held" (one hand of cards fanned
    about a point near their lower corners, as a player holds them up to a phone: only an
    index strip of each lower card shows; see :func:`_held_fan`).  Random when ``None``,
    among the first three only: "held" is asked for (a data set's ``--held-share``), so a
    seed draws the same scenes it always drew.
    ``seats`` and ``hand_size`` fix the layout (used to measure whole-hand accuracy).
    ``colour_casts``: the share of scenes under a strong uncorrected cast (training sets);
    the cast draws from a side stream, so the scene is otherwise the same.
    ``courts_first`` deals the deck's jacks, queens and kings before its other cards and
    ``blurred`` draws the strongest blur of the usual range: a training set weighted to
    the indices the detector misses most (court indices beside busy art, blur).  Both
    default to off, and off they change no draw: the scene is drawn as before.
    ``squeeze`` scales the picture by ``(x, y)`` about its centre, as a photo resized to
    another aspect is (:func:`_squeezed`); ``(1, 1)`` changes nothing.
    ``exposure`` multiplies the light before the camera clips it: over 1, the card's white
    and its pale ink clip to the same white, as an overexposed camera (or a photo set's
    brightness augmentation) leaves them; 1 changes nothing.
    ``min_index_visible``: the share of a corner index that must show for it to be labelled
    (a detector training set may label less visible ones; what counts as dealt in a measured
    hand stays at ``MIN_INDEX_VISIBLE``).  It changes labels only, never a draw.
    """
    w, h = size
    kind = kind or str(rng.choice(["table", "hands", "closeup"], p=[0.4, 0.4, 0.2]))
    cam = _camera_homography(rng, w, h, max_tilt if kind not in ("closeup", "held") else max_tilt * 0.6)
    if tuple(squeeze) != (1.0, 1.0):
        cam = _squeezed(squeeze, w, h) @ cam
    out = _surface(rng, w, h)
    owner = np.zeros((h, w), np.int32)
    if rng.random() < 0.7:
        marks = _markings(rng, w, h)
        _paste(out, owner, marks[..., [2, 1, 0, 3]].copy(), cam, 0)
        owner[:] = 0
    # The page (and the colour cast) draw from their own stream: with or without them, the
    # cards fall the same.
    page_rng, page_roll = np.random.default_rng(int(rng.integers(2**63))), rng.random()
    if page_roll < PRINTED_PAGE_SHARE:
        pw = int(w * page_rng.uniform(0.3, 0.9))
        page = _printed_page(page_rng, pw, int(pw * page_rng.uniform(0.6, 1.5)))
        where = (page_rng.uniform(0, w), page_rng.uniform(0, h))
        _paste(out, owner, page[..., [2, 1, 0, 3]].copy(),
               cam @ _affine3(where, page_rng.uniform(0, 360), 1.0, (page.shape[1], page.shape[0])), 0)
        owner[:] = 0

    codes = list(deck.faces)
    rng.shuffle(codes)
    if courts_first:
        codes.sort(key=lambda code: not Card.parse(code).is_face)   # stable: the shuffle stays within each group
    next_code = iter(codes)
    placed: list[_Placed] = []
    obj_id = 1
    any_face = next(iter(deck.faces.values()))
    face_h, face_w = any_face.image.shape[:2]

    if kind == "table":
        card_h = h * rng.uniform(0.09, 0.24)
        seats = seats or int(rng.integers(1, 9))
    elif kind == "hands":
        card_h = h * rng.uniform(0.22, 0.48)
        seats = seats or int(rng.integers(1, 4))
    elif kind == "held":
        card_h = h * rng.uniform(0.35, 0.7)   # the whole fan, about 1.2 card heights across, in frame
        seats = 1
    else:
        card_h = h * rng.uniform(0.35, 0.8)
        seats = 1
    scale = card_h / face_h
    card_w = face_w * scale

    # seat centres spread over the frame (table plane ~ image around the centre)
    centres = []
    for _ in range(seats * 4):
        c = (rng.uniform(0.12, 0.88) * w, rng.uniform(0.15, 0.85) * h)
        if all(math.dist(c, o) > card_w * 2.2 for o in centres):
            centres.append(c)
        if len(centres) == seats:
            break

    items = []  # (kind, payload) in draw order
    if kind == "held":   # one fan near the middle; the spread drawn above goes unused (synth-v40's draws)
        centre = (w * rng.uniform(0.4, 0.6), h * rng.uniform(0.42, 0.58))
        items, centres = _held_fan(rng, hand_size or int(rng.integers(2, 8)), card_w, card_h, centre), []
    for c in centres:
        if kind == "closeup":
            k = int(rng.integers(1, 6))
            for _ in range(k):
                pos = (c[0] + rng.normal(0, 0.6) * card_w, c[1] + rng.normal(0, 0.35) * card_h)
                items.append(("card", (pos, rng.uniform(0, 360))))
            continue
        k = hand_size or int(rng.choice([5, 5, 5, 4, 3, 2, 1]))
        theta = rng.uniform(0, 360) if rng.random() < 0.5 else rng.normal(0, 12)
        for pos, ang in _hand_positions(rng, k, card_w, card_h, c, theta):
            items.append(("card", (tuple(pos), ang)))
    for _ in range(int(rng.integers(0, 3)) if kind != "held" else 0):  # stray cards, some face down
        pos = (rng.uniform(0, w), rng.uniform(0, h))
        items.append(("back" if rng.random() < 0.6 else "card", (pos, rng.uniform(0, 360))))
    for _ in range(int(rng.integers(0, 7)) if kind not in ("closeup", "held") else 0):
        pos = (rng.uniform(0, w), rng.uniform(0, h))
        items.insert(int(rng.integers(0, len(items) + 1)), ("chip", pos))
    if kind != "held" and rng.random() < 0.2 and items:   # a held fan has its own hand
        target = items[int(rng.integers(len(items)))][1]
        pos = target[0] if isinstance(target[0], tuple) else target
        items.append(("hand", (pos, rng.uniform(0, 360))))

    for what, payload in items:
        if what == "card":
            code = next(next_code, None)
            if code is None:
                continue
            face = deck.faces[code]
            pos, ang = payload
            patch = _shade_card(face.image, rng)
            hmat = cam @ _affine3(pos, ang, scale, (patch.shape[1], patch.shape[0]))
            _paste(out, owner, patch, hmat, obj_id)
            placed.append(_Placed(obj_id, code, hmat, (patch.shape[1], patch.shape[0]), face.index_boxes))
        elif what == "back" and deck.back is not None:
            pos, ang = payload
            back = cv2.resize(deck.back, (int(face_w), int(face_h)))[..., [2, 1, 0, 3]]
            _paste(out, owner, back, cam @ _affine3(pos, ang, scale, (back.shape[1], back.shape[0])), obj_id)
        elif what == "chip":
            chip = _chip(rng, int(card_w * rng.uniform(0.5, 0.8)))
            _paste(out, owner, chip, cam @ _affine3(payload, 0, 1.0, (chip.shape[1], chip.shape[0])), obj_id)
        elif what in ("hand", "grip"):  # a dealer's hand near a card, or the hand holding a fan (_held_fan's place)
            pos, ang = payload
            hand = _dealer_hand(rng, int(card_w * (rng.uniform(0.7, 1.4) if what == "hand" else rng.uniform(0.9, 1.3))))
            if what == "hand":
                pos = (pos[0] + rng.normal(0, 0.4) * card_w, pos[1] + rng.normal(0, 0.4) * card_h)
            _paste(out, owner, hand, cam @ _affine3(pos, ang, 1.0, (hand.shape[1], hand.shape[0])), obj_id)
        obj_id += 1

    labels = _labels(owner, placed, w, h, min_index_visible)
    cast = _colour_cast(page_rng) if page_rng.random() < colour_casts else None
    img = _optics(_lighting(out, rng, cast, exposure), rng, blurred)
    index_quads, card_quads = _quads(placed)
    return Scene(image=img, labels=labels, jpeg_quality=int(rng.integers(40, 96)),
                 index_quads=index_quads, card_quads=card_quads, face_up=[p.code for p in placed])


def _shade_card(face_rgba: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """RGB->BGR, plus the card's own light: a slightly brighter or darker, sheened face."""
    patch = face_rgba[..., [2, 1, 0, 3]].astype(np.float32)
    gain = rng.uniform(0.8, 1.05)
    if rng.random() < 0.3:  # plastic sheen across the card
        h, w = patch.shape[:2]
        t = np.linspace(-1, 1, w)[None, :] * rng.uniform(-1, 1) + np.linspace(-1, 1, h)[:, None] * rng.uniform(-1, 1)
        sheen = np.exp(-((t - rng.uniform(-1, 1)) ** 2) / 0.05) * rng.uniform(20, 70)
        patch[..., :3] += sheen[..., None]
    patch[..., :3] *= gain
    return np.clip(patch, 0, 255).astype(np.uint8)


def _labels(owner: np.ndarray, placed: list[_Placed], w: int, h: int,
            min_index_visible: float = MIN_INDEX_VISIBLE) -> list[SceneLabel]:
    labels: list[SceneLabel] = []
    for p in placed:
        fw, fh = p.size
        card_quad = _project(p.hmat, np.array([[0, 0], [fw, 0], [fw, fh], [0, fh]], np.float64))
        for bx0, by0, bx1, by1 in p.index_boxes:
            quad = _project(p.hmat, np.array([[bx0 * fw, by0 * fh], [bx1 * fw, by0 * fh],
                                              [bx1 * fw, by1 * fh], [bx0 * fw, by1 * fh]]))
            share = _visible_share(owner, quad, p.obj_id)
            if share < min_index_visible:
                continue
            box = _clip_box(quad, w, h)
            if box is None or (box[3] - box[1]) < 5 or (box[2] - box[0]) < 3:
                continue
            # The index in the face's lower half is printed turned half round.
            labels.append(SceneLabel(INDEX_CLASS, p.code, box, share, quad, up_angle(quad, (by0 + by1) / 2 > 0.5)))
        share = _visible_share(owner, card_quad, p.obj_id)
        if share >= MIN_CARD_VISIBLE:
            box = _clip_box(card_quad, w, h)
            if box is not None:
                labels.append(SceneLabel(CARD_CLASS, p.code, box, share, card_quad))
    return labels


def _quads(placed: list[_Placed]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    indices, cards = [], []
    for p in placed:
        fw, fh = p.size
        cards.append(_project(p.hmat, np.array([[0, 0], [fw, 0], [fw, fh], [0, fh]], np.float64)))
        for bx0, by0, bx1, by1 in p.index_boxes:
            indices.append(_project(p.hmat, np.array([[bx0 * fw, by0 * fh], [bx1 * fw, by0 * fh],
                                                      [bx1 * fw, by1 * fh], [bx0 * fw, by1 * fh]])))
    return indices, cards


def _clip_box(quad: np.ndarray, w: int, h: int):
    x0, y0 = quad.min(axis=0)
    x1, y1 = quad.max(axis=0)
    full = max((x1 - x0) * (y1 - y0), 1e-6)
    cx0, cy0, cx1, cy1 = max(x0, 0), max(y0, 0), min(x1, w), min(y1, h)
    if cx1 <= cx0 or cy1 <= cy0 or (cx1 - cx0) * (cy1 - cy0) / full < 0.6:
        return None
    return (float(cx0), float(cy0), float(cx1), float(cy1))
