"""Card faces from the Debian deck art, each with the exact box of its printed corner indices.

The model learns to read the *corner index* (rank glyph plus the small suit pip under it),
because that is what stays visible when cards overlap in a fanned hand.  So the scene
generator needs, for every face it pastes, where those indices are printed.  They are found
here from the rendered pixels rather than from the SVG structure, because the 40-odd decks
were drawn by different people in different tools and share no element naming below the
card level.

Why whole-sheet rendering: ``rsvg-convert --export-id`` silently renders empty or sliver
court cards for many decks (see ``shared/data/DECKS.md``), so each sheet is rendered once
and every card cut out by the bounding box Inkscape reports for its element.  Decks that
come as one SVG file per card (``ids = "files"``: the npm package that
``datasets/install-npm-decks.sh`` installs) are rendered a file at a time instead.

Which decks are used, how their ids are spelled and which are held out from training is
data, in ``datasets/decks.toml``; nothing here is specific to one deck.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import cv2
import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from scoring.cards import CARD_CODES, Card, Suit
from scoring.errors import NiuniuError
from vision.synth.faces import round_corners

MANIFEST_PATH = Path(__file__).resolve().parents[2] / "datasets" / "decks.toml"
INSTALL_HINT = "run `sudo datasets/install-card-art.sh` to install the card art"
ANALYSIS_HEIGHT = 400

Box = tuple[float, float, float, float]


class DeckError(NiuniuError):
    """A deck that cannot be loaded: unknown name, excluded design, or art not installed."""


@dataclass(frozen=True)
class CardFace:
    """One rendered face; ``index_boxes`` are fractions of the face size, so they survive resizing."""

    code: str
    image: np.ndarray
    index_boxes: tuple[Box, ...]

    @property
    def card(self) -> Card:
        return Card.parse(self.code)


@dataclass(frozen=True)
class Deck:
    name: str
    split: str
    faces: dict[str, CardFace]
    back: np.ndarray | None


# --------------------------------------------------------------------------- manifest

class DeckEntry(BaseModel):
    """One ``[deck.NAME]`` table of ``datasets/decks.toml``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # The SVG sheet; with ``ids = "files"`` a path with ``{rank}`` and ``{suit}`` in it, one file a card.
    file: str
    package: Literal["gnome-cards-data", "kdegames-card-data-kf5", "npm:@heruka_urgyen/react-playing-cards",
                     "npm:@younestouati/playing-cards-standard-deck"]
    ids: Literal["aisleriot", "kde", "files"]
    # How a "files" deck spells the ranks ace to king and the suits clubs, diamonds, hearts, spades.
    rank_names: tuple[str, ...] = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
    suit_names: tuple[str, str, str, str] = ("C", "D", "H", "S")
    back: str | None = None   # a "files" deck's back, if it has one
    # A "files" deck whose SVGs draw only the ink, no card: the card is this colour ("#rrggbb"),
    # the whole SVG document, with rounded corners.
    paper: str | None = Field(default=None, pattern=r"^#[0-9a-fA-F]{6}$")
    split: Literal["train", "holdout", "excluded"]
    # Decks redrawn from the same artwork share a family; a family is never split between
    # train and holdout, or the holdout would measure memory instead of generalisation.
    family: str
    notes: str = ""
    # How many printed corner indices each face has: 2 (top-left, bottom-right) or 4.
    corners: Literal[2, 4] = 2
    # The corner window searched for an index, as fractions of face width and height.
    corner_window: tuple[float, float] = (0.30, 0.36)
    # Ink is any opaque pixel this far (max channel difference, 0-255) from the paper colour.
    ink_threshold: int = Field(default=70, ge=10, le=250)

    @model_validator(mode="after")
    def _one_file_a_card(self) -> "DeckEntry":
        if self.ids == "files":
            if "{rank}" not in self.file or "{suit}" not in self.file:
                raise ValueError(f"ids 'files' needs {{rank}} and {{suit}} in file, not {self.file!r}")
            if len(self.rank_names) != 13 or len(set(self.rank_names)) != 13:
                raise ValueError(f"rank_names must spell 13 different ranks, ace to king: {self.rank_names}")
        return self

    def card_file(self, code: str) -> Path:
        """The SVG of one card of a "files" deck."""
        card = Card.parse(code)
        suit = self.suit_names[(Suit.CLUBS, Suit.DIAMONDS, Suit.HEARTS, Suit.SPADES).index(card.suit)]
        return Path(self.file.format(rank=self.rank_names[card.rank - 1], suit=suit))

    def art_files(self) -> list[Path]:
        """Every file the deck is drawn from: its sheet, or one SVG per card (and the back)."""
        if self.ids != "files":
            return [Path(self.file)]
        return [self.card_file(code) for code in CARD_CODES] + ([Path(self.back)] if self.back else [])

    def missing_art(self) -> Path | None:
        """The first art file not installed, or None when the deck can be drawn."""
        return next((p for p in self.art_files() if not p.is_file()), None)


class Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    deck: dict[str, DeckEntry]


def load_manifest(path: Path = MANIFEST_PATH) -> Manifest:
    try:
        with open(path, "rb") as fh:
            return Manifest.model_validate(tomllib.load(fh))
    except FileNotFoundError:
        raise DeckError(f"deck manifest {path} is missing; restore it from git") from None
    except (tomllib.TOMLDecodeError, ValidationError) as exc:
        first = str(exc).splitlines()[0:3]
        raise DeckError(f"deck manifest {path} is invalid: {' '.join(first)}; fix the file") from None


def deck_names(split: str | None = None) -> list[str]:
    """Usable decks (``split`` None: train and holdout), sorted, excluded designs never listed."""
    if split not in (None, "train", "holdout"):
        raise DeckError(f"split {split!r} is not 'train' or 'holdout'")
    decks = load_manifest().deck
    return sorted(n for n, e in decks.items() if e.split != "excluded" and split in (None, e.split))


# --------------------------------------------------------------------------- element ids

_SUIT_WORDS = {Suit.CLUBS: "club", Suit.DIAMONDS: "diamond", Suit.HEARTS: "heart", Suit.SPADES: "spade"}
_RANK_WORDS = {11: "jack", 12: "queen", 13: "king"}


def element_id(code: str, scheme: str) -> str:
    """The SVG element id of a card: ``club_jack`` (aisleriot) or ``jack_club`` (KDE)."""
    card = Card.parse(code)
    rank = _RANK_WORDS.get(card.rank, str(card.rank))
    suit = _SUIT_WORDS[card.suit]
    return f"{suit}_{rank}" if scheme == "aisleriot" else f"{rank}_{suit}"


# --------------------------------------------------------------------------- rendering

def _require_tools(*tools: str) -> None:
    for tool in tools:
        if shutil.which(tool) is None:
            raise DeckError(f"{tool} is not installed; {INSTALL_HINT}")


def query_element_boxes(svg: Path) -> dict[str, tuple[float, float, float, float]]:
    """Every element's visual box ``(x, y, w, h)`` in document pixels, from ``inkscape --query-all``."""
    try:
        out = subprocess.run(["inkscape", "--query-all", str(svg)], capture_output=True,
                             text=True, timeout=300, check=True).stdout
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        raise DeckError(f"inkscape could not read {svg}: {exc}; reinstall the art ({INSTALL_HINT})") from None
    boxes = {}
    for line in out.splitlines():
        parts = line.rsplit(",", 4)
        if len(parts) == 5:
            try:
                boxes[parts[0]] = tuple(float(v) for v in parts[1:])
            except ValueError:
                continue
    return boxes


def render_sheet(svg: Path, zoom: float = 1.0, height: int | None = None) -> np.ndarray:
    """The whole SVG as RGBA at ``zoom`` times its document pixel size, or ``height`` rows tall."""
    size = ["--height", str(height), "--keep-aspect-ratio"] if height else ["--zoom", f"{zoom:.6f}"]
    with tempfile.TemporaryDirectory(prefix="niuniu-deck-") as tmp:
        png = Path(tmp) / "sheet.png"
        try:
            subprocess.run(["rsvg-convert", *size, "--background-color", "none",
                            "-o", str(png), str(svg)], capture_output=True, timeout=600, check=True)
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
            raise DeckError(f"rsvg-convert could not render {svg}: {exc}; {INSTALL_HINT}") from None
        bgra = cv2.imread(str(png), cv2.IMREAD_UNCHANGED)
    if bgra is None or bgra.ndim != 3 or bgra.shape[2] != 4:
        raise DeckError(f"rsvg-convert gave no RGBA image for {svg}; {INSTALL_HINT}")
    return cv2.cvtColor(bgra, cv2.COLOR_BGRA2RGBA)


def cut_card(sheet: np.ndarray, box: tuple[float, float, float, float], zoom: float,
             height: int) -> np.ndarray:
    """Cut one card from the sheet, trim to its opaque outline, scale to ``height`` rows."""
    x, y, w, h = (v * zoom for v in box)
    x0, y0 = max(0, int(np.floor(x))), max(0, int(np.floor(y)))
    x1, y1 = min(sheet.shape[1], int(np.ceil(x + w))), min(sheet.shape[0], int(np.ceil(y + h)))
    crop = sheet[y0:y1, x0:x1]
    opaque = np.argwhere(crop[..., 3] > 32)
    if opaque.size == 0:
        return crop[:0, :0]
    (ty0, tx0), (ty1, tx1) = opaque.min(0), opaque.max(0) + 1
    crop = crop[ty0:ty1, tx0:tx1]
    width = max(1, round(crop.shape[1] * height / crop.shape[0]))
    return _resize_rgba(crop, width, height)


def _scale_to_height(img: np.ndarray, height: int) -> np.ndarray:
    if img.shape[0] == height:
        return img
    return _resize_rgba(img, max(1, round(img.shape[1] * height / img.shape[0])), height)


def _resize_rgba(img: np.ndarray, width: int, height: int) -> np.ndarray:
    """Resize with premultiplied alpha, so transparent pixels do not bleed dark fringes."""
    f = img.astype(np.float32)
    a = f[..., 3:4] / 255.0
    pre = np.concatenate([f[..., :3] * a, f[..., 3:4]], axis=2)
    interp = cv2.INTER_AREA if height < img.shape[0] else cv2.INTER_CUBIC
    out = cv2.resize(pre, (width, height), interpolation=interp)
    alpha = np.clip(out[..., 3:4], 0, 255)
    rgb = np.where(alpha > 0.5, out[..., :3] * 255.0 / np.maximum(alpha, 1e-3), 0)
    return np.concatenate([np.clip(rgb, 0, 255), alpha], axis=2).round().astype(np.uint8)


# --------------------------------------------------------------------------- corner indices

def _ink_mask(face: np.ndarray, threshold: int) -> np.ndarray:
    """Opaque pixels clearly unlike the paper, minus the card's own outline stroke."""
    h, w = face.shape[:2]
    opaque = (face[..., 3] > 200).astype(np.uint8)
    k = max(3, round(0.03 * w)) | 1
    inner = cv2.erode(opaque, np.ones((k, k), np.uint8)) > 0
    rgb = face[..., :3].astype(np.int16)
    corner = inner[: h // 3, : w // 3]
    paper = np.median(rgb[: h // 3, : w // 3][corner], axis=0) if corner.any() else np.array([255, 255, 255])
    diff = np.abs(rgb - paper.astype(np.int16)).max(axis=2)
    return inner & (diff > threshold)


def _components(mask: np.ndarray, wx: int, wy: int, min_area: int) -> list[tuple[int, int, int, int]]:
    """Boxes of the ink blobs lying wholly inside the corner window (others are picture or pips)."""
    n, _, stats, _ = cv2.connectedComponentsWithStats(mask[:wy, :wx].astype(np.uint8), connectivity=8)
    comps = []
    for i in range(1, n):
        x, y, cw, ch, area = stats[i]
        if area >= min_area and x + cw < wx and y + ch < wy:
            comps.append((int(x), int(y), int(x + cw), int(y + ch)))
    return comps


def _top_left_index(ink: np.ndarray, rgb: np.ndarray, window: tuple[float, float]) -> Box | None:
    """The printed index nearest the top-left corner: rank glyph, then the suit pip under it.

    Components that leave the corner window belong to the picture, frame or pips, not to
    the index; the rank is the ink nearest the corner, and the pip is the first ink below
    it that overlaps it horizontally.
    """
    h, w = ink.shape
    wx, wy = round(window[0] * w), round(window[1] * h)
    comps = _components(ink, wx, wy, max(4, round(2e-5 * h * w)))
    # A rank glyph is never tiny: this skips specks of dust and copyright lines in the corner.
    glyphs = [b for b in comps if b[3] - b[1] >= 0.035 * h]
    if not glyphs:
        return None
    seed = min(glyphs, key=lambda b: np.hypot(b[0], b[1]) + 0.5 * np.hypot(b[2], b[3]))
    seed_h = seed[3] - seed[1]
    if not any(_pip_below(seed, [c], seed_h) for c in comps):
        # The pip may touch the court picture (a sceptre, a sleeve): keep only ink of the
        # rank's own colour, which the index pip shares, and look again.
        sx0, sy0, sx1, sy1 = seed
        glyph = ink[sy0:sy1, sx0:sx1]
        colour = np.median(rgb[sy0:sy1, sx0:sx1][glyph], axis=0).astype(np.int16)
        same = ink & (np.abs(rgb.astype(np.int16) - colour).max(axis=2) < 60)
        comps = comps + _components(same, wx, wy, max(4, round(2e-5 * h * w)))
    wide = _absorb_beside(seed, comps)
    pip = _pip_below(seed, comps, seed_h) or _pip_below(wide, comps, seed_h)
    rank = seed
    if wide != seed:
        # Ink level with the rank is either more of the rank (the "0" of "10") or a big suit
        # symbol drawn beside it on court cards; the index pip is centred under the real rank.
        if pip is None or abs(_cx(wide) - _cx(pip)) <= abs(_cx(seed) - _cx(pip)):
            rank = wide
        pip = _pip_below(rank, comps, seed_h) or pip
    box = rank
    if pip is not None:
        box = (min(rank[0], pip[0]), rank[1], max(rank[2], pip[2]), max(rank[3], pip[3]))
    return (box[0] / w, box[1] / h, box[2] / w, box[3] / h)


def _cx(b) -> float:
    return (b[0] + b[2]) / 2


def _pip_below(rank, comps, rank_h):
    """The suit pip printed under the rank: the first ink below it that overlaps it sideways."""
    below = [b for b in comps if b[1] >= rank[3] - 0.1 * rank_h
             and b[1] - rank[3] <= 0.8 * rank_h
             and min(b[2], rank[2]) - max(b[0], rank[0]) >= 0.3 * min(b[2] - b[0], rank[2] - rank[0])]
    if not below:
        return None
    pip = min(below, key=lambda b: b[1])
    return _absorb_beside(pip, [b for b in comps if b[1] >= rank[3] - 0.1 * rank_h])


def _absorb_beside(seed: tuple[int, int, int, int], comps) -> tuple[int, int, int, int]:
    """Grow a glyph box by the pieces level with it and close beside it (the '0' of '10')."""
    box = seed
    changed = True
    while changed:
        changed = False
        bh = box[3] - box[1]
        for b in comps:
            if b[0] >= box[0] and b[1] >= box[1] and b[2] <= box[2] and b[3] <= box[3]:
                continue
            v_overlap = min(b[3], box[3]) - max(b[1], box[1])
            gap = max(b[0] - box[2], box[0] - b[2])
            if v_overlap >= 0.5 * min(bh, b[3] - b[1]) and gap <= 0.25 * bh and b[3] - b[1] <= 1.3 * bh:
                merged = (min(box[0], b[0]), min(box[1], b[1]), max(box[2], b[2]), max(box[3], b[3]))
                if merged != box:
                    box, changed = merged, True
    return box


def find_index_boxes(face: np.ndarray, corners: int = 2, window: tuple[float, float] = (0.30, 0.36),
                     threshold: int = 70) -> tuple[Box, ...]:
    """Every printed corner index of an upright face, as fractional ``(x0, y0, x1, y1)``.

    Each corner is searched the same way by turning the face so that corner is top-left.
    """
    ink = _ink_mask(face, threshold)
    boxes: list[Box] = []
    rgb = face[..., :3]
    tl = _top_left_index(ink, rgb, window)
    if tl:
        boxes.append(tl)
    br = _top_left_index(ink[::-1, ::-1], rgb[::-1, ::-1], window)
    if br:
        boxes.append((1 - br[2], 1 - br[3], 1 - br[0], 1 - br[1]))
    if corners == 4:
        tr = _top_left_index(ink[:, ::-1], rgb[:, ::-1], window)
        if tr:
            boxes.append((1 - tr[2], tr[1], 1 - tr[0], tr[3]))
        bl = _top_left_index(ink[::-1, :], rgb[::-1, :], window)
        if bl:
            boxes.append((bl[0], 1 - bl[3], bl[2], 1 - bl[1]))
    return tuple(tuple(round(v, 5) for v in b) for b in boxes)


# --------------------------------------------------------------------------- loading

def default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "niuniu" / "decks"


def _entry(name: str) -> DeckEntry:
    decks = load_manifest().deck
    if name not in decks:
        usable = ", ".join(deck_names())
        raise DeckError(f"unknown deck {name!r}; choose one of: {usable} "
                        f"(their art is installed by `sudo datasets/install-card-art.sh`)")
    return decks[name]


def _fingerprint(entry: DeckEntry) -> str:
    """Changes when the art, its manifest entry or this renderer changes: a stale cache is rebuilt."""
    stats = [(st.st_size, int(st.st_mtime)) for st in (p.stat() for p in entry.art_files())]
    code = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()
    text = json.dumps([code, entry.model_dump(mode="json"), *stats])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def render_card_files(entry: DeckEntry, height: int) -> tuple[dict[str, np.ndarray], np.ndarray | None]:
    """Render a "files" deck: each card's own SVG at ``height`` rows, trimmed to its outline."""
    _require_tools("rsvg-convert")   # one file a card: no sheet for inkscape to map

    def one(svg: Path) -> np.ndarray:
        if entry.paper is not None:
            # The document is the card: trimming to the ink would cut the card to its print.
            return _on_paper(render_sheet(svg, height=height), entry.paper)
        # Rendered a little taller than asked, so trimming a margin still leaves `height` rows of card.
        image = render_sheet(svg, height=round(height * 1.05))
        return cut_card(image, (0, 0, image.shape[1], image.shape[0]), 1.0, height)

    faces = {code: one(entry.card_file(code)) for code in CARD_CODES}
    return faces, (one(Path(entry.back)) if entry.back else None)


def _on_paper(ink: np.ndarray, paper: str) -> np.ndarray:
    """Ink laid on an opaque card of colour ``paper`` (``#rrggbb``) with rounded corners."""
    colour = np.array([int(paper[k:k + 2], 16) for k in (1, 3, 5)], np.float32)
    a = ink[..., 3:4].astype(np.float32) / 255.0
    card = np.empty_like(ink)
    card[..., :3] = np.round(ink[..., :3] * a + colour * (1 - a)).astype(np.uint8)
    card[..., 3] = 255
    round_corners(card, radius=round(0.055 * card.shape[1]))
    return card


def render_deck(entry: DeckEntry, height: int) -> tuple[dict[str, np.ndarray], np.ndarray | None]:
    """Render all 52 faces (and the back) of a manifest entry at ``height`` rows."""
    if entry.ids == "files":
        return render_card_files(entry, height)
    _require_tools("rsvg-convert", "inkscape")
    svg = Path(entry.file)
    boxes = query_element_boxes(svg)
    ids = {code: element_id(code, entry.ids) for code in CARD_CODES}
    missing = [i for i in ids.values() if i not in boxes]
    if missing:
        raise DeckError(f"{svg} has no elements {', '.join(missing[:4])}...; its id scheme "
                        f"is not {entry.ids!r}: fix datasets/decks.toml")
    card_h = float(np.median([boxes[i][3] for i in ids.values()]))
    zoom = height / card_h
    sheet = render_sheet(svg, zoom)
    faces = {code: cut_card(sheet, boxes[i], zoom, height) for code, i in ids.items()}
    # Inkscape misreports some elements' boxes (clipped or hidden parts); such a cut shows
    # as a face of the wrong shape, and a wrong face under a label is worse than no deck.
    widths = np.array([f.shape[1] for f in faces.values()])
    odd = [c for c, f in faces.items() if abs(f.shape[1] - np.median(widths)) > 0.03 * np.median(widths)]
    if odd:
        raise DeckError(f"{svg}: cards {', '.join(odd[:6])} cut to the wrong shape; "
                        "exclude the deck in datasets/decks.toml")
    back = cut_card(sheet, boxes["back"], zoom, height) if "back" in boxes else None
    if back is not None and back.size == 0:
        back = None
    return faces, back


def load_deck(name: str, height: int = 400, cache_dir: Path | None = None) -> Deck:
    """All 52 faces of a usable deck at ``height`` pixels, rendered once then read from cache."""
    entry = _entry(name)
    if entry.split == "excluded":
        raise DeckError(f"deck {name!r} is excluded from use ({entry.notes}); choose one of: "
                        f"{', '.join(deck_names())}")
    if not isinstance(height, int) or not 32 <= height <= 4000:
        raise DeckError(f"deck height {height!r} must be a whole number of pixels from 32 to 4000")
    missing = entry.missing_art()
    if missing is not None:
        raise DeckError(f"deck {name!r}: {missing} is not installed (package {entry.package}); {INSTALL_HINT}")
    folder = Path(cache_dir or default_cache_dir()) / name / str(height)
    fingerprint = _fingerprint(entry)
    cached = _read_cache(folder, fingerprint, name, entry.split)
    if cached is not None:
        return cached
    # Indices are found at a fixed, generous resolution so the boxes do not depend on the
    # size asked for (thin strokes break apart in small renders); faces are then scaled down.
    analysis_h = max(height, ANALYSIS_HEIGHT)
    images, back = render_deck(entry, analysis_h)
    faces = {}
    for code in CARD_CODES:
        img = images[code]
        if img.size == 0:
            raise DeckError(f"deck {name!r}: card {code} rendered empty; exclude the deck in datasets/decks.toml")
        boxes = find_index_boxes(img, entry.corners, entry.corner_window, entry.ink_threshold)
        faces[code] = CardFace(code, _scale_to_height(img, height), boxes)
    back = None if back is None else _scale_to_height(back, height)
    deck = Deck(name, entry.split, faces, back)
    _write_cache(folder, fingerprint, deck)
    return deck


def _write_cache(folder: Path, fingerprint: str, deck: Deck) -> None:
    """PNGs plus one JSON, each written whole then renamed into place, the JSON last: a reader
    (another data-loader worker) never sees a half-written file or a JSON without its PNGs."""
    folder.mkdir(parents=True, exist_ok=True)
    meta_path = folder / "index.json"
    meta_path.unlink(missing_ok=True)
    for code, face in deck.faces.items():
        _write_png(folder / f"{code}.png", face.image)
    if deck.back is not None:
        _write_png(folder / "back.png", deck.back)
    meta = {"fingerprint": fingerprint, "name": deck.name, "back": deck.back is not None,
            "index_boxes": {code: [list(b) for b in f.index_boxes] for code, f in deck.faces.items()}}
    tmp = meta_path.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(meta, indent=1))
    tmp.replace(meta_path)


def _write_png(path: Path, rgba: np.ndarray) -> None:
    ok, data = cv2.imencode(".png", cv2.cvtColor(rgba, cv2.COLOR_RGBA2BGRA))
    tmp = path.with_suffix(f".{os.getpid()}.tmp")
    try:
        if not ok:
            raise OSError("PNG encoding failed")
        tmp.write_bytes(data.tobytes())
        tmp.replace(path)
    except OSError as exc:
        raise DeckError(f"could not write {path} ({exc}); check the cache folder is writable") from None


def _read_png(path: Path) -> np.ndarray | None:
    bgra = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
    if bgra is None or bgra.ndim != 3 or bgra.shape[2] != 4:
        return None
    return cv2.cvtColor(bgra, cv2.COLOR_BGRA2RGBA)


def _read_cache(folder: Path, fingerprint: str, name: str, split: str) -> Deck | None:
    """The cached deck, or None when absent, stale or damaged (then it is simply re-rendered)."""
    try:
        meta = json.loads((folder / "index.json").read_text())
    except (OSError, ValueError):
        return None
    if meta.get("fingerprint") != fingerprint:
        return None
    faces = {}
    for code in CARD_CODES:
        img = _read_png(folder / f"{code}.png")
        boxes = meta.get("index_boxes", {}).get(code)
        if img is None or boxes is None:
            return None
        faces[code] = CardFace(code, img, tuple(tuple(float(v) for v in b) for b in boxes))
    back = _read_png(folder / "back.png") if meta.get("back") else None
    return Deck(name, split, faces, back)
