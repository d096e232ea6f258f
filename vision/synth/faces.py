"""Procedurally drawn card faces: the "casino" designs no Debian deck looks like.

Real casino decks have jumbo indices, plain pips, 4-colour suits and bold sans
fonts; the Debian SVG decks are mostly ornate.  Drawing faces here, with a random
font, index size, index layout, colours and court-card artwork per style, widens
what the model sees so it reads the *index*, not one artist's style.  Because we
draw them, every index box is known exactly.
"""

from __future__ import annotations

import glob
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from scoring.cards import CARD_CODES, Card, Suit

# Fonts a Debian machine carries (fonts-dejavu-core, fonts-liberation, fonts-urw-base35).
# Only upright, bold-ish faces: a card index is never italic.
_FONT_PATTERNS = (
    "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf",
    "/usr/share/fonts/truetype/dejavu/DejaVuSansCondensed-Bold.ttf",
    "/usr/share/fonts/truetype/dejavu/DejaVuSerif-Bold.ttf",
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Bold.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSansNarrow-Bold.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSerif-Bold.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/opentype/urw-base35/NimbusSans-Bold.otf",
    "/usr/share/fonts/opentype/urw-base35/NimbusSansNarrow-Bold.otf",
    "/usr/share/fonts/opentype/urw-base35/NimbusRoman-Bold.otf",
    "/usr/share/fonts/opentype/urw-base35/C059-Bold.otf",
    "/usr/share/fonts/opentype/urw-base35/P052-Bold.otf",
    "/usr/share/fonts/opentype/urw-base35/URWGothic-Demi.otf",
    "/usr/share/fonts/opentype/urw-base35/URWBookman-Demi.otf",
    "/usr/share/fonts/truetype/noto/NotoSansMono-Bold.ttf",
    # Generator 2: many more index typefaces (datasets/install-card-art.sh installs them).
    # Real decks print their indices in every kind of face, and a classifier that saw four
    # fonts reads a fifth poorly.
    "/usr/share/fonts/truetype/freefont/FreeSansBold.ttf",
    "/usr/share/fonts/truetype/freefont/FreeSerifBold.ttf",
    "/usr/share/texmf/fonts/opentype/public/tex-gyre/texgyreheros-bold.otf",
    "/usr/share/texmf/fonts/opentype/public/tex-gyre/texgyreheroscn-bold.otf",
    "/usr/share/texmf/fonts/opentype/public/tex-gyre/texgyretermes-bold.otf",
    "/usr/share/texmf/fonts/opentype/public/tex-gyre/texgyrepagella-bold.otf",
    "/usr/share/texmf/fonts/opentype/public/tex-gyre/texgyreschola-bold.otf",
    "/usr/share/texmf/fonts/opentype/public/tex-gyre/texgyrebonum-bold.otf",
    "/usr/share/texmf/fonts/opentype/public/tex-gyre/texgyreadventor-bold.otf",
    "/usr/share/fonts/truetype/crosextra/Carlito-Bold.ttf",
    "/usr/share/fonts/truetype/crosextra/Caladea-Bold.ttf",
    "/usr/share/fonts/opentype/linux-libertine/LinLibertine_RB.otf",
    "/usr/share/fonts/opentype/linux-libertine/LinBiolinum_RB.otf",
    "/usr/share/fonts/truetype/open-sans/OpenSans-Bold.ttf",
    "/usr/share/fonts/truetype/open-sans/OpenSans-CondBold.ttf",
    "/usr/share/fonts/truetype/roboto/unhinted/RobotoTTF/Roboto-Bold.ttf",
    "/usr/share/fonts/truetype/roboto/unhinted/RobotoCondensed-Bold.ttf",
    "/usr/share/fonts/truetype/lato/Lato-Black.ttf",
    "/usr/share/fonts/truetype/lato/Lato-Bold.ttf",
    "/usr/share/fonts/opentype/ebgaramond/EBGaramond12-Bold.otf",
    "/usr/share/fonts/truetype/liberation/LiberationMono-Bold.ttf",
)

# Fonts whose suit symbols (U+2660 ...) differ from the drawn ones: fat hearts, thin
# spades, trefoil or three-ball clubs.  Real decks differ in their pips as much as in
# their rank glyphs.
_PIP_FONT_PATTERNS = (
    "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf",
    "/usr/share/fonts/truetype/freefont/FreeSansBold.ttf",
    "/usr/share/fonts/truetype/freefont/FreeSerifBold.ttf",
    "/usr/share/fonts/opentype/linux-libertine/LinLibertine_RB.otf",
    "/usr/share/fonts/truetype/noto/NotoSansSymbols2-Regular.ttf",
)
_SUIT_GLYPH = {Suit.SPADES: "\u2660", Suit.CLUBS: "\u2663", Suit.HEARTS: "\u2665", Suit.DIAMONDS: "\u2666"}
# FreeSerif (Debian fonts-freefont-ttf) draws U+2660 BLACK SPADE SUIT as a club and U+2663
# BLACK CLUB SUIT as a spade (seen on a contact sheet of every pip font): its decks taught
# "a club is a spade" to a tenth of the procedural designs until generator 8.
# tests/vision/test_synth.py checks that every pip font's spade is pointed and its club round.
_SPADE_CLUB_SWAPPED = frozenset({"FreeSerifBold.ttf"})


def suit_glyph(font_path: str, suit: Suit) -> str:
    """The character that draws ``suit`` in this font (not always the one Unicode names)."""
    if Path(font_path).name in _SPADE_CLUB_SWAPPED and suit in (Suit.SPADES, Suit.CLUBS):
        suit = Suit.CLUBS if suit is Suit.SPADES else Suit.SPADES
    return _SUIT_GLYPH[suit]


# Procedural designs 0..399 train; 100000..100039 are held out (validation, hands).
# Held-out designs borrow court art only from held-out Debian decks, so validation
# never shows artwork the model trained beside.
PROCEDURAL_TRAIN_SEEDS = range(0, 400)   # the default; a data set may draw from more (never 100_000 on)
PROCEDURAL_HOLDOUT_SEEDS = range(100_000, 100_040)


@lru_cache(maxsize=1)
def available_fonts() -> tuple[str, ...]:
    """The index fonts present here, in a fixed order (so a seed means the same font)."""
    found = tuple(p for p in _FONT_PATTERNS if glob.glob(p))
    if not found:
        found = tuple(sorted(glob.glob("/usr/share/fonts/**/*.ttf", recursive=True)))[:4]
    return found


@lru_cache(maxsize=1)
def available_pip_fonts() -> tuple[str, ...]:
    """Fonts here whose suit glyphs can be drawn as pips, in a fixed order."""
    return tuple(p for p in _PIP_FONT_PATTERNS if glob.glob(p))


# Four-colour conventions real decks print (suit -> ink; a suit left out keeps the deck's
# red or black).  They disagree: blue is diamonds on poker-room decks and spades on
# others (Debian's anglo_modern_4_color, neoclassical_4_color), green is clubs or spades.
# Drawing from all of them, and sometimes from none (any ink per suit), keeps the
# classifier from naming a suit by its colour: with one convention only (generator 5) it
# read the held-out neoclassical_4_color deck's blue spades as diamonds.
FOUR_COLOUR_SCHEMES = (
    {Suit.DIAMONDS: (20, 70, 190), Suit.CLUBS: (20, 130, 40)},                           # poker room
    {Suit.SPADES: (40, 60, 170), Suit.DIAMONDS: (225, 165, 20), Suit.CLUBS: (20, 130, 40)},  # anglo
    {Suit.SPADES: (30, 130, 50), Suit.DIAMONDS: (235, 140, 20)},                         # German bridge
)


def _four_colour_inks(rng: np.random.Generator) -> tuple[tuple[str, tuple[int, int, int]], ...]:
    """One deck's four-colour inks as ``((suit, rgb), ...)``: a real convention, or
    (one deck in four) a saturated ink of any hue for every suit."""
    pick = int(rng.integers(len(FOUR_COLOUR_SCHEMES) + 1))
    if pick < len(FOUR_COLOUR_SCHEMES):
        return tuple((suit.value, ink) for suit, ink in FOUR_COLOUR_SCHEMES[pick].items())
    inks = []
    for suit in Suit:
        hue = rng.uniform(0, 6)
        ramp = [max(0.0, min(1.0, abs((hue + k) % 6 - 3) - 1)) for k in (0, 4, 2)]   # hue -> RGB
        inks.append((suit.value, tuple(int(30 + 190 * v) for v in ramp)))
    return tuple(inks)


@dataclass(frozen=True)
class FaceStyle:
    """Everything that varies between procedural deck designs."""

    font: str
    aspect: float              # width / height: 0.714 poker, 0.64 bridge
    index_height: float        # rank glyph height as a fraction of card height
    pip_scale: float           # index suit pip size relative to the rank glyph
    pip_beside: bool           # pip to the right of the rank instead of below it
    four_corners: bool         # indices in all four corners (many casino decks)
    margin: float              # index inset from the card edge, fraction of width
    paper: tuple[int, int, int]
    four_colour: tuple[tuple[str, tuple[int, int, int]], ...]   # () for red and black: see _four_colour_inks
    red: tuple[int, int, int]
    black: tuple[int, int, int]
    court_colours: tuple[tuple[int, int, int], ...]
    border: bool
    ten_as_t: bool = False     # a few real decks print the ten as "T"
    pip_font: str | None = None  # suit symbols from this font instead of the drawn shapes
    court_art: str | None = None  # Debian deck whose court artwork fills the court cards
    jumbo: bool = False        # drawn as a jumbo index (_jumbo): tall rank, small pip, two corners
    condense: float = 1.0      # rank glyphs squeezed to this share of their width (jumbo designs)

    @classmethod
    def random(cls, rng: np.random.Generator, art_decks: tuple[str, ...] = ()) -> "FaceStyle":
        fonts = available_fonts()
        paper = tuple(int(v) for v in rng.integers(228, 256, size=3))
        warm = rng.random() < 0.4
        if warm:
            paper = (paper[0], paper[1], max(200, paper[2] - int(rng.integers(5, 30))))
        return cls(
            font=fonts[int(rng.integers(len(fonts)))],
            aspect=float(rng.choice([0.714, 0.714, 0.64, 0.69])),
            index_height=float(rng.uniform(0.085, 0.2)),
            pip_scale=float(rng.uniform(0.55, 0.95)),
            pip_beside=bool(rng.random() < 0.12),
            four_corners=bool(rng.random() < 0.3),
            margin=float(rng.uniform(0.03, 0.09)),
            paper=paper,
            four_colour=_four_colour_inks(rng) if rng.random() < 0.25 else (),
            red=(int(rng.integers(170, 235)), int(rng.integers(0, 40)), int(rng.integers(0, 50))),
            black=tuple(int(v) for v in rng.integers(0, 45, size=3)),
            court_colours=tuple(tuple(int(v) for v in rng.integers(0, 230, size=3)) for _ in range(3)),
            border=bool(rng.random() < 0.35),
            ten_as_t=bool(rng.random() < 0.05),
            pip_font=_pick(rng, available_pip_fonts(), 0.5),
            court_art=_pick(rng, art_decks, 0.6),
        )

    def ink(self, suit: Suit) -> tuple[int, int, int]:
        for code, ink in self.four_colour:
            if code == suit.value:
                return ink
        return self.red if suit.is_red else self.black


def _pick(rng: np.random.Generator, options: tuple[str, ...], share: float) -> str | None:
    """One of ``options`` with probability ``share`` (always drawing, so a seed stays a seed)."""
    use, k = rng.random() < share, int(rng.integers(max(1, len(options))))
    return options[k] if use and options else None


@lru_cache(maxsize=512)
def cached_font(path: str, size: int) -> ImageFont.FreeTypeFont:
    """A font file at one size, read from disk once: a deck draws ~600 pips and indices
    in a handful of sizes."""
    return ImageFont.truetype(path, size=size)


def _pip(img: Image.Image, style: FaceStyle, suit: Suit, cx: float, cy: float, size: float,
         fill: tuple[int, int, int], flip: bool = False) -> tuple[float, float, float, float]:
    """One suit pip of height ``size`` centred at (cx, cy), in the style's own shapes."""
    if style.pip_font is None:
        return draw_suit(ImageDraw.Draw(img), suit, cx, cy, size, fill, flip)
    glyph = suit_glyph(style.pip_font, suit)
    l, t, r, b = cached_font(style.pip_font, 100).getbbox(glyph)
    font = cached_font(style.pip_font, max(6, int(round(100 * size / max(1, b - t)))))
    l, t, r, b = font.getbbox(glyph)
    mask = Image.new("L", (r - l + 2, b - t + 2), 0)
    ImageDraw.Draw(mask).text((1 - l, 1 - t), glyph, font=font, fill=255)
    if flip:
        mask = mask.rotate(180)
    x0, y0 = int(round(cx - mask.width / 2)), int(round(cy - mask.height / 2))
    img.paste(Image.new("RGB", mask.size, fill), (x0, y0), mask)
    return (x0 + 1, y0 + 1, x0 + mask.width - 1, y0 + mask.height - 1)


def draw_suit(draw: ImageDraw.ImageDraw, suit: Suit, cx: float, cy: float, size: float,
              fill: tuple[int, int, int], flip: bool = False) -> tuple[float, float, float, float]:
    """Draw one suit symbol of height ``size`` centred at (cx, cy); return its box.

    Drawn from circles and polygons rather than a font glyph so every machine
    draws the same shape, and so we know its exact extent.
    """
    h = size
    w = size * (0.78 if suit is Suit.DIAMONDS else 0.95)
    sgn = -1.0 if flip else 1.0

    def pt(dx: float, dy: float) -> tuple[float, float]:
        return (cx + dx * w, cy + sgn * dy * h)

    def circle(dx: float, dy: float, r: float) -> None:
        x, y = pt(dx, dy)
        rr = r * w
        draw.ellipse((x - rr, y - rr, x + rr, y + rr), fill=fill)

    if suit is Suit.DIAMONDS:
        draw.polygon([pt(0, -0.5), pt(0.5, 0), pt(0, 0.5), pt(-0.5, 0)], fill=fill)
    elif suit is Suit.HEARTS:
        circle(-0.24, -0.22, 0.26)
        circle(0.24, -0.22, 0.26)
        draw.polygon([pt(-0.49, -0.14), pt(0.49, -0.14), pt(0, 0.5)], fill=fill)
    elif suit is Suit.SPADES:
        circle(-0.24, 0.1, 0.26)
        circle(0.24, 0.1, 0.26)
        draw.polygon([pt(-0.49, 0.02), pt(0.49, 0.02), pt(0, -0.5)], fill=fill)
        draw.polygon([pt(0, 0.15), pt(0.2, 0.5), pt(-0.2, 0.5)], fill=fill)
    else:  # clubs
        circle(0, -0.26, 0.24)
        circle(-0.26, 0.08, 0.24)
        circle(0.26, 0.08, 0.24)
        draw.polygon([pt(0, 0.0), pt(0.18, 0.5), pt(-0.18, 0.5)], fill=fill)
    return (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)


# Pip positions (x, y) in a unit box for ranks 2..10; ace is one big pip.
_PIPS = {
    2: [(0.5, 0), (0.5, 1)],
    3: [(0.5, 0), (0.5, 0.5), (0.5, 1)],
    4: [(0, 0), (1, 0), (0, 1), (1, 1)],
    5: [(0, 0), (1, 0), (0.5, 0.5), (0, 1), (1, 1)],
    6: [(0, 0), (1, 0), (0, 0.5), (1, 0.5), (0, 1), (1, 1)],
    7: [(0, 0), (1, 0), (0.5, 0.25), (0, 0.5), (1, 0.5), (0, 1), (1, 1)],
    8: [(0, 0), (1, 0), (0.5, 0.25), (0, 0.5), (1, 0.5), (0.5, 0.75), (0, 1), (1, 1)],
    9: [(0, 0), (1, 0), (0, 1 / 3), (1, 1 / 3), (0.5, 0.5), (0, 2 / 3), (1, 2 / 3), (0, 1), (1, 1)],
    10: [(0, 0), (1, 0), (0.5, 1 / 6), (0, 1 / 3), (1, 1 / 3), (0, 2 / 3), (1, 2 / 3), (0.5, 5 / 6), (0, 1), (1, 1)],
}


def _rank_text(card: Card, style: FaceStyle) -> str:
    if card.rank == 10 and style.ten_as_t:
        return "T"
    return {1: "A", 11: "J", 12: "Q", 13: "K"}.get(card.rank, str(card.rank))


def _draw_index(img: Image.Image, card: Card, style: FaceStyle, height: int) -> tuple[float, float, float, float]:
    """Draw the top-left index (rank over pip) and return its tight box in pixels."""
    draw = ImageDraw.Draw(img)
    ink = style.ink(card.suit)
    width = img.width
    glyph_h = style.index_height * height
    text = _rank_text(card, style)
    font = cached_font(style.font, max(8, int(round(glyph_h * 1.35))))
    x0 = style.margin * width
    y0 = style.margin * width * 0.9
    # Measure the ink of the text, then shift so its top-left sits at (x0, y0).
    l, t, r, b = draw.textbbox((0, 0), text, font=font)
    if text == "10" and (r - l) * style.condense > 0.32 * width:  # narrow the 10 so it fits the margin column
        font = cached_font(style.font, max(8, int(round(glyph_h * 1.35 * 0.32 * width / ((r - l) * style.condense)))))
        l, t, r, b = draw.textbbox((0, 0), text, font=font)
    squeezed = style.condense != 1.0
    if squeezed:
        rank_box = _draw_condensed(img, text, font, style.condense, x0, y0, ink)
    else:  # drawn straight on the face, so unsqueezed designs keep their bytes
        draw.text((x0 - l, y0 - t), text, font=font, fill=ink)
        rank_box = (x0, y0, x0 + (r - l), y0 + (b - t))
    pip_size = (b - t) * style.pip_scale
    if style.pip_beside:
        cx = rank_box[2] + pip_size * 0.15 + pip_size * 0.5
        cy = (rank_box[1] + rank_box[3]) / 2
    else:
        cx = (rank_box[0] + rank_box[2]) / 2
        if squeezed:  # a squeezed rank can be narrower than its pip: keep the pip off the edge
            cx = max(cx, x0 + pip_size / 2)
        cy = rank_box[3] + pip_size * 0.12 + pip_size * 0.5
    pip_box = _pip(img, style, card.suit, cx, cy, pip_size, ink)
    return (min(rank_box[0], pip_box[0]), min(rank_box[1], pip_box[1]),
            max(rank_box[2], pip_box[2]), max(rank_box[3], pip_box[3]))


def _draw_condensed(img: Image.Image, text: str, font: ImageFont.FreeTypeFont, condense: float,
                    x0: float, y0: float, ink: tuple[int, int, int]) -> tuple[float, float, float, float]:
    """Draw ``text`` squeezed to ``condense`` of its width with its ink's top-left at (x0, y0).

    Real jumbo indices are set in condensed type: a rank a quarter of the card high but
    narrow enough to leave the picture its room.  Few installed fonts are condensed, so
    any face is squeezed instead: its upright strokes thin as a condensed cut's do, though
    a real cut keeps its curves rounder.
    """
    l, t, r, b = font.getbbox(text)
    mask = Image.new("L", (r - l + 2, b - t + 2), 0)
    ImageDraw.Draw(mask).text((1 - l, 1 - t), text, font=font, fill=255)
    mask = mask.resize((max(2, int(round(mask.width * condense))), mask.height), Image.LANCZOS)
    ox, oy = int(round(x0)) - 1, int(round(y0)) - 1
    img.paste(Image.new("RGB", mask.size, ink), (ox, oy), mask)
    # The label box is measured on the squeezed ink, not on the glyph's box: a serif's
    # hairline squeezed to a fraction of a pixel no longer shows, and a box that kept it
    # would stand up to two pixels off the rank a camera sees.
    bx0, by0, bx1, by1 = mask.point(lambda v: 255 if v >= 128 else 0).getbbox() or (0, 0, *mask.size)
    return (ox + bx0, oy + by0, ox + bx1, oy + by1)


def _draw_centre(img: Image.Image, card: Card, style: FaceStyle, index_box: tuple, rng: np.random.Generator) -> None:
    draw = ImageDraw.Draw(img)
    w, h = img.size
    ink = style.ink(card.suit)
    left = min(max(index_box[2] + 0.04 * w, 0.2 * w), 0.36 * w)
    area = (left, 0.1 * h, w - left, 0.9 * h)
    aw, ah = area[2] - area[0], area[3] - area[1]
    if card.rank == 1:
        _pip(img, style, card.suit, w / 2, h / 2, min(aw, ah) * 0.55, ink)
    elif card.rank <= 10:
        pip = min(aw / 2.3, ah / 5.2)
        for px, py in _PIPS[card.rank]:
            cx = area[0] + pip * 0.5 + px * (aw - pip)
            cy = area[1] + pip * 0.5 + py * (ah - pip)
            _pip(img, style, card.suit, cx, cy, pip, ink, flip=py > 0.5)
    elif style.court_art is not None:
        _paste_court_art(img, card, style, area)
    else:
        # Court: a framed panel with a big letter and coloured bands: real court art
        # varies too much to imitate; what matters is that the corner index is what
        # identifies the card.
        c1, c2, c3 = style.court_colours
        draw.rectangle(area, outline=ink, width=max(1, int(w * 0.012)))
        bands = int(rng.integers(3, 8))
        for i in range(bands):
            y = area[1] + (i + 0.5) * ah / bands
            colour = (c1, c2, c3)[i % 3]
            draw.rectangle((area[0] + aw * 0.08, y - ah / bands * 0.3, area[2] - aw * 0.08, y + ah / bands * 0.3),
                           fill=colour)
        font = cached_font(style.font, max(8, int(ah * 0.35)))
        letter = {11: "J", 12: "Q", 13: "K"}[card.rank]
        l, t, r, b = draw.textbbox((0, 0), letter, font=font)
        draw.text((w / 2 - (l + r) / 2, h / 2 - (t + b) / 2), letter, font=font, fill=ink,
                  stroke_width=max(1, int(w * 0.01)), stroke_fill=style.paper)


def _paste_court_art(img: Image.Image, card: Card, style: FaceStyle, area: tuple) -> None:
    """Fill a court card's middle with a real deck's court artwork.

    Busy, colourful art right beside the index is what real court cards look like and
    what drawn bands do not teach; the Debian face's own corner indices are cut away
    (only its middle is used) so the procedural index stays the only one."""
    box = tuple(int(round(v)) for v in area)
    middle = _court_middles(style.court_art)[card.code]
    img.paste(middle.resize((max(1, box[2] - box[0]), max(1, box[3] - box[1]))), box[:2])
    ImageDraw.Draw(img).rectangle(box, outline=style.ink(card.suit), width=max(1, int(img.width * 0.01)))


@lru_cache(maxsize=8)
def _court_middles(deck: str) -> dict[str, Image.Image]:
    """The middles of one Debian deck's twelve court faces, loaded once per process
    (every procedural design that borrows the deck's art draws all twelve)."""
    from vision.synth.decks import load_deck

    faces = load_deck(deck).faces
    out = {}
    for code in CARD_CODES:
        if Card.parse(code).rank > 10:
            face = faces[code].image
            fh, fw = face.shape[:2]
            out[code] = Image.fromarray(face[int(fh * 0.16):int(fh * 0.84), int(fw * 0.24):int(fw * 0.76), :3])
    return out


def draw_face(card: Card, style: FaceStyle, height: int, rng: np.random.Generator):
    """Render one face; return (RGBA array, index boxes as fractions)."""
    width = int(round(height * style.aspect))
    img = Image.new("RGB", (width, height), style.paper)
    index_box = _draw_index(img, card, style, height)
    _draw_centre(img, card, style, index_box, rng)
    if style.border:
        ImageDraw.Draw(img).rounded_rectangle(
            (width * 0.025, width * 0.025, width * 0.975, height - width * 0.025),
            radius=width * 0.04, outline=style.black, width=max(1, int(width * 0.006)))
    # The bottom-right index is the top-left one turned half round: paste the rotated
    # top-left corner so both are identical, as on a printed card.
    pad = 2
    box = tuple(int(v) for v in (max(0, index_box[0] - pad), max(0, index_box[1] - pad),
                                 min(width, index_box[2] + pad), min(height, index_box[3] + pad)))
    corner = img.crop(box).rotate(180)
    img.paste(corner, (width - box[2], height - box[3]))
    boxes = [index_box, (width - index_box[2], height - index_box[3], width - index_box[0], height - index_box[1])]
    if style.four_corners:
        mirrored_tr = (width - index_box[2], index_box[1], width - index_box[0], index_box[3])
        img.paste(img.crop(box), (width - box[2], box[1]))
        corner_bl = img.crop(box).rotate(180)
        img.paste(corner_bl, (box[0], height - box[3]))
        boxes += [mirrored_tr, (index_box[0], height - index_box[3], index_box[2], height - index_box[1])]
    rgba = np.dstack([np.asarray(img), np.full((height, width), 255, np.uint8)])
    round_corners(rgba, radius=int(width * 0.055))
    fractions = tuple((b[0] / width, b[1] / height, b[2] / width, b[3] / height) for b in boxes)
    return rgba, fractions


def round_corners(rgba: np.ndarray, radius: int) -> None:
    """Make the corners outside a quarter circle transparent, as a printed card is cut."""
    h, w = rgba.shape[:2]
    if radius < 2:
        return
    yy, xx = np.mgrid[0:radius, 0:radius]
    outside = (xx - radius + 0.5) ** 2 + (yy - radius + 0.5) ** 2 > radius ** 2
    a = rgba[..., 3]
    a[:radius, :radius][outside] = 0
    a[:radius, w - radius:][outside[:, ::-1]] = 0
    a[h - radius:, :radius][outside[::-1, :]] = 0
    a[h - radius:, w - radius:][outside[::-1, ::-1]] = 0


def draw_back(style: FaceStyle, height: int, rng: np.random.Generator) -> np.ndarray:
    """A card back (solid casino colour with a border and a lattice) as RGBA."""
    width = int(round(height * style.aspect))
    colour = tuple(int(v) for v in rng.choice([(150, 20, 30), (20, 40, 140), (20, 20, 20), (170, 140, 40),
                                                (30, 100, 50), (90, 20, 110)]))
    img = Image.new("RGB", (width, height), (245, 245, 245))
    draw = ImageDraw.Draw(img)
    m = int(width * 0.06)
    draw.rectangle((m, m, width - m, height - m), fill=colour)
    step = max(4, int(width * rng.uniform(0.05, 0.12)))
    light = tuple(min(255, c + 60) for c in colour)
    for k in range(-height, width + height, step):
        draw.line((m + k, m, m + k + height, m + height), fill=light, width=1)
        draw.line((m + k, m + height, m + k + height, m), fill=light, width=1)
    draw.rectangle((0, 0, width - 1, height - 1), outline=(245, 245, 245), width=m)
    rgba = np.dstack([np.asarray(img), np.full((height, width), 255, np.uint8)])
    round_corners(rgba, radius=int(width * 0.055))
    return rgba


# Generator 10: this share of the training designs print jumbo indices (the casino decks'
# tall rank with a small pip under it).  In a fanned hand the next card covers part of such
# an index, and v12, which had seen few, read the covered jumbo ranks of an unseen family as
# Q or J (models/README.md, "Jumbo indices in a fan").  Generator 11 squeezes their ranks
# (``FaceStyle.condense``) so they reach a real jumbo height, a fifth to a quarter of the
# card, instead of the 0.15-0.19 that the width of unsqueezed type allowed.  Drawn on the
# design's own side stream, so every other design keeps its look and the held-out designs,
# which never change, are not touched.
JUMBO_SHARE = 0.3


def _jumbo(style: FaceStyle, seed: int) -> FaceStyle:
    """``style`` with a jumbo index, for a share of the designs (two corners only: four
    jumbo indices leave no room for the picture)."""
    rng = np.random.default_rng([seed, 10])
    if rng.random() >= JUMBO_SHARE:
        return style
    height = float(rng.uniform(0.19, 0.26))
    pip_scale, margin = float(rng.uniform(0.4, 0.7)), float(rng.uniform(0.025, 0.06))
    condense = float(rng.uniform(0.5, 0.85))
    # Even squeezed, a heavy font's Q or K at that height could run into the picture: the
    # widest rank (the ten is narrowed when drawn) stays within 0.27 of the card's width,
    # and the pip goes under it (beside it, the index would take half the card).
    font = cached_font(style.font, int(round(1000 * height * 1.35)))
    widest = condense * max(right - left for left, _, right, _ in map(font.getbbox, "A23456789JQK"))
    height *= min(1.0, 0.27 * 1000 * style.aspect / widest)
    return replace(style, index_height=height, pip_scale=pip_scale, pip_beside=False, margin=margin,
                   four_corners=False, jumbo=True, condense=condense)


def procedural_style(rng: np.random.Generator, seed: int) -> FaceStyle:
    """The style of design ``seed``; held-out designs take court art only from held-out decks."""
    from vision.synth.decks import deck_names

    if seed in PROCEDURAL_HOLDOUT_SEEDS:
        return FaceStyle.random(rng, art_decks=tuple(deck_names("holdout")))
    return _jumbo(FaceStyle.random(rng, art_decks=tuple(deck_names("train"))), seed)


def procedural_deck(seed: int, height: int = 400):
    """One whole procedural design: 52 faces sharing a style, plus a back.

    Returns a :class:`vision.synth.decks.Deck` so scenes treat it like any deck.
    """
    from vision.synth.decks import CardFace, Deck  # same records as the SVG decks

    rng = np.random.default_rng(seed)
    style = procedural_style(rng, seed)
    faces = {}
    for code in CARD_CODES:
        image, boxes = draw_face(Card.parse(code), style, height, rng)
        faces[code] = CardFace(code=code, image=image, index_boxes=boxes)
    return Deck(name=f"procedural-{seed}", split="train", faces=faces, back=draw_back(style, height, rng))
