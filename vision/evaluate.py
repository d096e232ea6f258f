"""Measure the card model on labelled photos: what a user would call "read right".

Two label formats are understood, the ones of the real photo sets we measure on:

* YOLO folders with a ``data.yaml`` naming classes like ``'10 of clubs'`` and
  whole-card boxes (the poker4 set): full card identity;
* Pascal VOC XML beside each image, classes ``nine`` .. ``ace`` (the edje set):
  rank only.

A prediction is right when its card (or rank) equals a labelled card's and its
box centre lies inside that card's box; each labelled card is matched once.
Reported: precision, recall, and the share of images whose cards were all read
right with nothing extra.

``close_up`` measures the photos a phone held close takes instead: each labelled card (or
each rendered hand) cut out to fill a CLOSE_UP_SIDE-pixel frame, its indices far larger
than in the photo it came from.  ``grey`` reads each photo (or hand) turned black and white
first, as a monochrome camera or a set exported in greyscale shows it: the suit must then
come from the pip's shape alone.  ``mirror`` reads each photo (or hand) mirrored left-right,
as a set flipped for augmentation or a front camera shows it: the reader must un-mirror it.
``speckle`` sets that share of each photo's (or hand's) pixels black or white first, as a set
augmented with salt-and-pepper noise shows it (the same specks for a photo every run).
``blur`` blurs each photo (or hand) by a Gaussian of that sigma in pixels first (before the
specks), as a set augmented with blur or a camera out of focus shows it.  ``smear`` (length
in pixels, direction in degrees) draws a straight motion blur after it, as a hand or a camera
moving during the exposure does (``line_blur_kernel``).  ``gain`` multiplies every pixel
first, whites clipped, as an overexposed camera or a set augmented with brightness shows it.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field, replace
from pathlib import Path

import cv2
import numpy as np
import yaml

from scoring.cards import RANK_NAMES, Card
from scoring.errors import NiuniuError
from vision.blur import line_blur_kernel
from vision.mirror import mirror_box, mirror_image
from vision.speckle import add_specks

_RANK_WORDS = {"ace": 1, "jack": 11, "queen": 12, "king": 13, "ten": 10, "nine": 9, "eight": 8, "seven": 7,
               "six": 6, "five": 5, "four": 4, "three": 3, "two": 2}
_SUIT_WORDS = {"clubs": "C", "diamonds": "D", "hearts": "H", "spades": "S"}


def card_from_words(name: str) -> str:
    """'10 of clubs' / 'jack  of clubs' / 'ace of spades' -> '10C' / 'JC' / 'AS'; a card code
    ('AS', '10h', 'QD', as a set named by code has it) is read too.  :class:`NiuniuError`
    for a name that is no card."""
    card = _card_of_name(name)
    if card is None:
        raise NiuniuError(f"class name {name!r} is not a card; name cards like '10 of clubs', 'ace of spades' or AS")
    return card


def _card_of_name(name) -> str | None:
    """A YOLO class name as a card code, or ``None`` where it names no card."""
    words = str(name).lower().split()
    if len(words) >= 2 and words[-1] in _SUIT_WORDS:
        rank = _RANK_WORDS.get(words[0]) or (int(words[0]) if words[0].isascii() and words[0].isdigit() else None)
        if rank in RANK_NAMES:
            return RANK_NAMES[rank] + _SUIT_WORDS[words[-1]]
        return None
    try:
        return Card.parse(str(name)).code
    except NiuniuError:
        return None


# A close-up: the card or hand and CLOSE_UP_MARGIN of its size around it, enlarged (cubic)
# to CLOSE_UP_SIDE pixels on its long side.  A labelled card counts in a cut-out photo when
# CLOSE_UP_INSIDE of its box lies in it; a neighbour's sliver does not, and a sliver read
# scores as an extra card (so a close-up's precision understates: recall is its measure).
CLOSE_UP_MARGIN = 0.03
CLOSE_UP_SIDE = 1280
CLOSE_UP_INSIDE = 0.9


def cut_out(image, box) -> tuple:
    """``(photo, to_photo)``: the close-up of ``box`` in ``image``, and the function that
    takes a box in ``image``'s pixels to the close-up's."""
    h, w = image.shape[:2]
    mx, my = (box[2] - box[0]) * CLOSE_UP_MARGIN, (box[3] - box[1]) * CLOSE_UP_MARGIN
    x0, y0 = int(max(0, box[0] - mx)), int(max(0, box[1] - my))
    x1, y1 = int(min(w, box[2] + mx + 1)), int(min(h, box[3] + my + 1))
    cut = image[y0:y1, x0:x1]
    f = CLOSE_UP_SIDE / max(cut.shape[:2])
    photo = cv2.resize(cut, (max(1, round(cut.shape[1] * f)), max(1, round(cut.shape[0] * f))),
                       interpolation=cv2.INTER_CUBIC)

    def to_photo(b):
        return ((b[0] - x0) * f, (b[1] - y0) * f, (b[2] - x0) * f, (b[3] - y0) * f)
    return photo, to_photo


def greyed(image):
    """``image`` (BGR) as a black-and-white photo of it, still three channels."""
    return cv2.cvtColor(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)


def mirrored(image, truth) -> tuple:
    """``image`` mirrored left-right, and ``truth``'s ``(key, box)`` pairs moved with it."""
    w = image.shape[1]
    return mirror_image(image), [(key, mirror_box(b, w)) for key, b in truth]


def _close_ups(image, truth) -> list[tuple]:
    """One ``(photo, truth)`` per labelled card: the card cut out, and the labelled cards
    (nearly) whole in the cut, in its pixels."""
    out = []
    for _, box in truth:
        photo, to_photo = cut_out(image, box)
        ph, pw = photo.shape[:2]
        kept = []
        for key, b in truth:
            c = to_photo(b)
            inside = max(0.0, min(pw, c[2]) - max(0, c[0])) * max(0.0, min(ph, c[3]) - max(0, c[1]))
            if inside >= CLOSE_UP_INSIDE * (c[2] - c[0]) * (c[3] - c[1]):
                kept.append((key, c))
        out.append((photo, kept))
    return out


@dataclass
class LabelledImage:
    path: Path
    truth: list[tuple[str, tuple[float, float, float, float]]]  # (card code or rank name, box)


@dataclass
class Score:
    images: int = 0
    truth: int = 0
    predicted: int = 0
    correct: int = 0
    perfect_images: int = 0
    confusions: dict = field(default_factory=dict)

    @property
    def precision(self) -> float:
        return self.correct / self.predicted if self.predicted else 0.0

    @property
    def recall(self) -> float:
        return self.correct / self.truth if self.truth else 0.0

    def to_json(self) -> dict:
        worst = sorted(self.confusions.items(), key=lambda kv: -kv[1])[:15]
        return {"images": self.images, "truth": self.truth, "predicted": self.predicted, "correct": self.correct,
                "precision": round(self.precision, 4), "recall": round(self.recall, 4),
                "all_right_images": round(self.perfect_images / self.images, 4) if self.images else 0.0,
                "top_confusions": {k: v for k, v in worst}}


@dataclass
class PassedOver:
    """What loading a labelled set, or scoring it, passed over, each as one line naming the
    file, for the command to say: a silently shorter truth would be scored as if whole.

    ``skipped``: label lines of no box (too few fields), files in an image folder that are no
    image, labels without their image and images without labels (VOC).  ``damaged``: images
    that cannot be read whole (``vision.images.read_image``), left out of the score."""
    skipped: list[str] = field(default_factory=list)
    damaged: list[str] = field(default_factory=list)


def yolo_card_names(data_yaml: Path) -> list[str]:
    """The card code of each class of a YOLO ``data.yaml``, in class-id order.

    ``names`` comes as a list or, as ultralytics writes it, a mapping of class id to name
    (``{0: '10 of clubs', ...}``); each name is a card in words or a card code.  Anything
    else is one :class:`NiuniuError` naming the file, what is wrong and the fix."""
    if not data_yaml.is_file():
        what = "is a folder, not" if data_yaml.is_dir() else "is not"
        raise NiuniuError(f"{data_yaml} {what} a YOLO data file; give a set root whose data.yaml names its classes")
    try:
        data = yaml.safe_load(data_yaml.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or type(exc).__name__
        raise NiuniuError(f"{data_yaml} is not valid YAML ({problem}{where}); fix the file") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise NiuniuError(f"{data_yaml} cannot be read ({exc}); is it a YOLO data.yaml?") from exc
    example = "names: ['10 of clubs', '10 of diamonds', ...] or names: {0: 10C, 1: 10D, ...}"
    names = data.get("names") if isinstance(data, dict) else None
    if names is None:
        raise NiuniuError(f"{data_yaml} has no 'names' list of classes; add one, e.g. {example}")
    if isinstance(names, dict):
        ids = {int(k) if isinstance(k, str) and k.isascii() and k.isdigit() else k: v for k, v in names.items()}
        if sorted(ids, key=str) != sorted(range(len(ids)), key=str):
            raise NiuniuError(f"{data_yaml}: the class ids of 'names' must run 0, 1, 2, ... (got "
                              f"{sorted(map(str, names))[:6]}); e.g. {example}")
        names = [ids[i] for i in range(len(ids))]
    if not isinstance(names, list) or not names:
        raise NiuniuError(f"{data_yaml}: 'names' must list the classes; e.g. {example}")
    nc = data.get("nc")
    if nc is not None and nc != len(names):
        raise NiuniuError(f"{data_yaml}: nc is {nc} but 'names' lists {len(names)} classes; make them agree")
    cards = []
    for i, name in enumerate(names):
        card = _card_of_name(name)
        if card is None:
            raise NiuniuError(f"{data_yaml}: class {i} {name!r} is not a card; name each class as a card "
                              "('10 of clubs', 'ace of spades', or a code like 10C or AS)")
        cards.append(card)
    return cards


def yolo_split_folders(root: Path, split: str) -> tuple[Path, Path] | None:
    """``(images, labels)`` folders of a YOLO set's split, in either layout: Roboflow's
    ``ROOT/SPLIT/images`` or ultralytics' ``ROOT/images/SPLIT``; ``None`` for neither."""
    for images, labels in ((root / split / "images", root / split / "labels"),
                           (root / "images" / split, root / "labels" / split)):
        if images.is_dir():
            return images, labels
    return None


def yolo_splits(root: Path) -> list[str]:
    """The splits a YOLO set root holds (either layout), for an error that names them."""
    found = {p.name for p in root.iterdir() if (p / "images").is_dir()} if root.is_dir() else set()
    if (root / "images").is_dir():
        found |= {p.name for p in (root / "images").iterdir() if p.is_dir()}
    return sorted(found)


def _image_files(folder: Path, passed: PassedOver | None) -> list[Path]:
    """The images in ``folder`` (every suffix the photo readers take, in any case: sets come
    as .jpg, .jpeg, .png or .JPG), in name order; other files are said to be passed over."""
    from vision.sources import IMAGE_SUFFIXES

    files = sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))
    others = [p for p in files if p.suffix.lower() not in IMAGE_SUFFIXES]
    if others and passed is not None:
        shown = ", ".join(p.name for p in others[:3]) + (f" and {len(others) - 3} more" if len(others) > 3 else "")
        passed.skipped.append(f"{folder}: {len(others)} files are not images ({', '.join(IMAGE_SUFFIXES)}) "
                              f"and are not read: {shown}")
    return [p for p in files if p.suffix.lower() in IMAGE_SUFFIXES]


def _label_box(parts: list[str], where: str, names: list[str]) -> tuple[str, tuple[float, float, float, float]]:
    """One YOLO label line's class and box (fractions of the image): ``class cx cy w h``, or
    a polygon ``class x1 y1 x2 y2 ...`` (a segmentation set; its bounding box is taken, as
    ultralytics trains a detector on it).  :class:`NiuniuError` for a line that is no label."""
    fix = "a YOLO label line is: class x_center y_center width height, each a fraction 0 to 1"
    cls = parts[0]
    try:
        c = float(cls)
    except ValueError:
        c = float("nan")
    if not c.is_integer():
        raise NiuniuError(f"{where}: class {cls!r} is not a class number; {fix}")
    if not 0 <= c < len(names):
        raise NiuniuError(f"{where}: class {cls} is not in data.yaml's {len(names)} names (0 to {len(names) - 1}); "
                          "fix the label or data.yaml's names")
    try:
        xy = [float(v) for v in parts[1:]]
    except ValueError:
        bad = next(v for v in parts[1:] if not _is_number(v))
        raise NiuniuError(f"{where}: {bad!r} is not a number; {fix}") from None
    if not all(-0.01 <= v <= 1.01 for v in xy):   # NaN fails too; a little slack for rounding
        raise NiuniuError(f"{where}: coordinates {' '.join(parts[1:])} are not fractions 0 to 1 of the image "
                          f"(pixels?); {fix}")
    if len(xy) == 4:
        cx, cy, bw, bh = xy
        return names[int(c)], (cx - bw / 2, cy - bh / 2, cx + bw / 2, cy + bh / 2)
    xs, ys = xy[0::2], xy[1::2]
    return names[int(c)], (min(xs), min(ys), max(xs), max(ys))


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _read_labels(lab: Path, names: list[str], passed: PassedOver | None) -> list:
    """A YOLO label file's ``(card, box in fractions)``; a line with too few fields (or a
    pair missing from a polygon) is no box: passed over and said, with its line number."""
    try:
        text = lab.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise NiuniuError(f"{lab} cannot be read as a label file ({exc}); re-export the labels") from exc
    boxes = []
    for number, line in enumerate(text.splitlines(), 1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) == 5 or (len(parts) >= 7 and len(parts) % 2):
            boxes.append(_label_box(parts, f"{lab} line {number}", names))
        elif passed is not None:
            passed.skipped.append(f"{lab} line {number}: {len(parts)} fields, not 5 (class x_center y_center "
                                  f"width height); the line is left out of the truth: {line.strip()[:60]!r}")
    return boxes


def load_yolo_set(root: Path, split: str, passed: PassedOver | None = None) -> tuple[list[LabelledImage], str]:
    """A YOLO set's split as labelled images (boxes in pixels), class names read as cards.

    Bad data (data.yaml, a label line that names no class or no number) is one
    :class:`NiuniuError` naming the file and line.  With ``passed``, what is passed over is
    said there (short label lines, files that are no image) and an image that cannot be read
    whole is listed as damaged and left out; without it, such an image raises the error."""
    from vision.images import ImageError, read_image

    names = yolo_card_names(root / "data.yaml")
    folders = yolo_split_folders(root, split)
    if folders is None:
        return [], "card"
    images_dir, labels_dir = folders
    images = []
    for img in _image_files(images_dir, passed):
        labels = _read_labels(labels_dir / (img.stem + ".txt"), names, passed) \
            if (labels_dir / (img.stem + ".txt")).is_file() else []
        try:
            h, w = read_image(img).shape[:2]
        except ImageError as exc:
            if passed is None:
                raise
            passed.damaged.append(str(exc))
            continue
        truth = [(card, (b[0] * w, b[1] * h, b[2] * w, b[3] * h)) for card, b in labels]
        images.append(LabelledImage(img, truth))
    stems = {p.stem for p in images_dir.iterdir()}
    orphans = sorted(p.name for p in labels_dir.glob("*.txt") if p.stem not in stems) if labels_dir.is_dir() else []
    if orphans and passed is not None:
        passed.skipped.append(f"{labels_dir}: {len(orphans)} label files have no image in {images_dir} and are not "
                              f"read: {', '.join(orphans[:3])}" + (" ..." if len(orphans) > 3 else ""))
    return images, "card"


def load_voc_set(folder: Path, passed: PassedOver | None = None) -> tuple[list[LabelledImage], str]:
    """A folder of images with a Pascal VOC ``.xml`` beside each, as labelled images (ranks).

    An XML file that cannot be parsed, or an object without its name or box, is one
    :class:`NiuniuError` naming the file; an XML whose image is missing, and an image
    without XML, are passed over (said in ``passed``)."""
    from vision.sources import IMAGE_SUFFIXES

    images = []
    used = set()
    for xml in sorted(folder.glob("*.xml")):
        try:
            root = ET.parse(xml).getroot()
        except (ET.ParseError, OSError) as exc:
            raise NiuniuError(f"{xml} is not readable VOC XML ({exc}); re-export it or remove it") from exc
        fname = (root.findtext("filename") or "").strip()
        img = folder / fname if fname and (folder / fname).is_file() else None
        if img is None:
            matches = sorted(p for p in folder.glob(xml.stem + ".*") if p.suffix.lower() in IMAGE_SUFFIXES)
            if not matches:
                if passed is not None:
                    passed.skipped.append(f"{xml}: its image ({fname or xml.stem + '.*'}) is not in {folder}; "
                                          "its labels are left out")
                continue
            img = matches[0]
        truth = []
        for k, obj in enumerate(root.iter("object"), 1):
            name = (obj.findtext("name") or "").strip().lower()
            bb = obj.find("bndbox")
            try:
                box = tuple(float(bb.findtext(key)) for key in ("xmin", "ymin", "xmax", "ymax"))
            except (AttributeError, TypeError, ValueError):
                box = None
            if not name or box is None:
                raise NiuniuError(f"{xml}: object {k} has no <name> or no <bndbox> with numbers xmin, ymin, xmax, "
                                  "ymax; fix or remove the object")
            truth.append((name, box))
        used.add(img)
        images.append(LabelledImage(img, truth))
    unlabelled = [p for p in folder.iterdir() if p.suffix.lower() in IMAGE_SUFFIXES and p.is_file()
                  and p not in used and not p.name.startswith(".")] if images else []
    if unlabelled and passed is not None:
        passed.skipped.append(f"{folder}: {len(unlabelled)} images have no .xml labels and are not read: "
                              + ", ".join(p.name for p in sorted(unlabelled)[:3])
                              + (" ..." if len(unlabelled) > 3 else ""))
    return images, "rank"


def _key(card: Card, mode: str) -> str:
    if mode == "card":
        return card.code
    return {v: k for k, v in _RANK_WORDS.items()}[card.rank]


def evaluate(detector, images: list[LabelledImage], mode: str, limit: int | None = None,
             ignore_ranks: set[str] | None = None, stretch: tuple[float, float] = (1.0, 1.0),
             close_up: bool = False, grey: bool = False, mirror: bool = False, speckle: float = 0.0,
             blur: float = 0.0, smear: tuple[float, float] | None = None, gain: float = 1.0,
             passed: PassedOver | None = None) -> Score:
    """Score ``detector`` on labelled images.  In rank mode, predictions of ranks the
    set never labels (2..8 in edje) are ignored rather than counted as false.
    ``stretch`` resizes each photo by (across, down) first, its labels alike: many photo
    sets are exported stretched to a square, so an unseen set's indices may be narrower or
    shorter than any lens draws them.  ``close_up`` scores each labelled card cut out
    (``cut_out``) as a photo of its own: ``images`` counts the cut-out photos.
    An image that cannot be read whole (``vision.images.read_image``: a truncated JPEG
    would be read half grey, its lost cards scored as misses) is listed in ``passed`` and left
    out of the score; without ``passed`` it raises."""
    from vision.images import ImageError, read_image

    score = Score()
    labelled_ranks = {t for im in images for t, _ in im.truth} if mode == "rank" else None
    sx, sy = stretch
    for i, item in enumerate(images[:limit]):
        try:
            image = read_image(item.path)
        except ImageError as exc:
            if passed is None:
                raise
            passed.damaged.append(str(exc))
            continue
        truth = list(item.truth)
        if (sx, sy) != (1.0, 1.0):
            h, w = image.shape[:2]
            image = cv2.resize(image, (max(1, round(w * sx)), max(1, round(h * sy))), interpolation=cv2.INTER_AREA)
            truth = [(key, (b[0] * sx, b[1] * sy, b[2] * sx, b[3] * sy)) for key, b in truth]
        if grey:
            image = greyed(image)
        if mirror:
            image, truth = mirrored(image, truth)
        image = blurred(exposed(image, gain), blur, smear)
        if speckle:
            image = add_specks(image, speckle, np.random.default_rng([SPECKLE_SEED, i]))
        for photo, photo_truth in _close_ups(image, truth) if close_up else [(image, truth)]:
            _score(score, detector, photo, photo_truth, mode, labelled_ranks)
    return score


def _score(score: Score, detector, image, truth, mode: str, labelled_ranks) -> None:
    """One photo read and scored into ``score``."""
    preds = [(_key(d.card, mode), d.box) for d in detector.detect(image)]
    if labelled_ranks is not None:
        preds = [p for p in preds if p[0] in labelled_ranks]
    unmatched = list(truth)
    right = 0
    for key, box in preds:
        cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
        hit = next((t for t in unmatched if t[0] == key and t[1][0] <= cx <= t[1][2] and t[1][1] <= cy <= t[1][3]),
                   None)
        if hit is not None:
            unmatched.remove(hit)
            right += 1
        else:
            under = next((t for t in unmatched if t[1][0] <= cx <= t[1][2] and t[1][1] <= cy <= t[1][3]), None)
            pair = f"{under[0] if under else 'nothing'}->{key}"
            score.confusions[pair] = score.confusions.get(pair, 0) + 1
    score.images += 1
    score.truth += len(truth)
    score.predicted += len(preds)
    score.correct += right
    score.perfect_images += int(right == len(truth) == len(preds))


SPECKLE_SEED = 5   # the specks' own random stream (``speckle``)


def exposed(image: np.ndarray, gain: float = 1.0) -> np.ndarray:
    """``image`` with every pixel times ``gain``, clipped at white: pale ink fades first."""
    if gain == 1.0:
        return image
    return np.clip(image.astype(np.float32) * gain, 0, 255).round().astype(np.uint8)


def blurred(image: np.ndarray, blur: float = 0.0, smear: tuple[float, float] | None = None) -> np.ndarray:
    """``image`` as a lens out of focus (a Gaussian of ``blur`` pixels) and then a moving
    hand or camera (a straight ``smear`` of (length px, direction degrees)) would show it;
    one place, so photos and rendered hands are blurred alike."""
    if blur:
        image = cv2.GaussianBlur(image, (0, 0), blur)
    if smear:
        length, degrees = smear
        image = cv2.filter2D(image, -1, line_blur_kernel(length, np.deg2rad(degrees)))
    return image

# Why a dealt card was not read, in the order the two models meet it.
MISSED_CAUSES = ("no index boxed", "taken for no index", "misread", "read, then left out")


def synthetic_hands(detector, count: int, seed: int = 2026, kind: str = "hands",
                    decks: list[str] | None = None, close_up: bool = False, grey: bool = False,
                    mirror: bool = False, speckle: float = 0.0, blur: float = 0.0,
                    smear: tuple[float, float] | None = None, gain: float = 1.0) -> dict:
    """Whole-hand accuracy on held-out deck designs: one seat of five cards per scene
    (overlapped, fanned or spread, any rotation, with the usual light and lens effects);
    a hand is right when the five cards read are exactly the five dealt.  ``kind="held"``
    renders each hand held up in a player's fan instead (``render_scene``'s "held"), the
    photos of fanned hands a phone takes; the cards whose index is hidden by the fan or
    the hand are not counted as dealt, as on the table.

    ``decks`` deals from those decks in turn instead (no procedural designs): how a model
    reads a design before it is trained on, which is the closest this machine comes to
    the unseen decks of a real casino.

    ``close_up`` cuts each hand out to fill the frame (``cut_out``), as a phone held close
    photographs it: the same cards, their indices about twice the size.

    A card whose index shows too little to count as dealt is still on the table: reading
    it right is no error to a dealer, and a person labelling a photo may well have boxed it.
    So beside the strict count (``hands_right``: exactly the dealt cards read) comes a lenient
    one (``hands_right_lenient``: every dealt card read and no card read that is not face up
    in the scene); ``hidden_cards_read`` counts such hidden cards read, ``false_cards`` the
    cards read that are not there at all.

    ``missed`` says why each dealt card was not read (``why_missed``), so a model change
    can be told apart as a detector or a classifier change.  The model card's figures sum
    two seeds: ``--synthetic-hands 100 --seed 2026`` and ``--synthetic-hands 150 --seed 7``.
    """
    loaded = load_decks(decks)
    hands_right = cards_right = cards_total = lenient = hidden_read = false_cards = 0
    missed = dict.fromkeys(MISSED_CAUSES, 0)
    for i in range(count):
        scene = held_out_hand(seed, i, kind, loaded, procedural=not decks)
        if close_up:
            scene = cut_out_hand(scene)
        if grey:
            scene = replace(scene, image=greyed(scene.image))
        if mirror:
            scene = mirrored_scene(scene)
        scene = replace(scene, image=blurred(exposed(scene.image, gain), blur, smear))
        if speckle:   # on a stream of its own, so the hands dealt are the same with or without it
            specks = np.random.default_rng([seed, i, SPECKLE_SEED])
            scene = replace(scene, image=add_specks(scene.image, speckle, specks))
        dealt = {lab.code for lab in scene.labels if lab.cls == 0}  # cards with a readable index
        read = {d.card.code for d in detector.detect(scene.image)}
        cards_total += len(dealt)
        cards_right += len(read & dealt)
        hands_right += int(read == dealt)
        on_table = set(scene.face_up)   # holds every dealt card: an extra is hidden or not there
        hidden_read += len((read & on_table) - dealt)
        false_cards += len(read - on_table)
        lenient += int(dealt <= read <= on_table)
        if dealt - read:
            for cause in why_missed(detector, scene, dealt - read):
                missed[cause] += 1
    return {"hands": count, "kind": kind, "seed": seed, "decks": "held-out" if not decks else list(decks),
            "close_up": close_up, "grey": grey, "mirror": mirror, "speckle": speckle, "blur": blur,
            "smear": list(smear) if smear else None, "gain": gain, "hands_right": hands_right,
            "hands_all_right": round(hands_right / count, 4), "cards_dealt": cards_total, "cards_right": cards_right,
            "card_recall": round(cards_right / max(cards_total, 1), 4), "extra_cards": hidden_read + false_cards,
            "hands_right_lenient": lenient, "hidden_cards_read": hidden_read, "false_cards": false_cards,
            "missed": missed}


def load_decks(decks: list[str] | None = None) -> list:
    """The decks hands are dealt from in turn (``decks``, a name given twice dealt twice as
    often; else the held-out designs).  Loaded once (an unknown, excluded or missing deck fails
    here with its fix, not mid-run), not once a hand: each load reads 52 cached PNGs and
    fingerprints the art again."""
    from vision.synth.decks import deck_names, load_deck

    names = decks or deck_names("holdout")
    loaded: dict = {}
    for name in names:
        if name not in loaded:
            loaded[name] = load_deck(name)
    return [loaded[name] for name in names]


def held_out_hand(seed: int, i: int, kind: str, decks: list, procedural: bool = True):
    """Hand ``i`` of ``seed``: one seat of five cards at 640 x 480, dealt from ``decks`` in
    turn, every third from a held-out procedural design (``procedural``).  The one recipe behind
    the model card's hand counts, so a bench reading the same hands reads the same scenes."""
    from vision.synth.faces import PROCEDURAL_HOLDOUT_SEEDS, procedural_deck
    from vision.synth.scene import render_scene

    rng = np.random.default_rng([seed, i])
    if i % 3 == 2 and procedural:
        deck = procedural_deck(int(PROCEDURAL_HOLDOUT_SEEDS[i % len(PROCEDURAL_HOLDOUT_SEEDS)]))
    else:
        deck = decks[i % len(decks)]
    return render_scene(rng, deck, size=(640, 480), kind=kind, seats=1, hand_size=5, max_tilt=0.35)


def cut_out_hand(scene):
    """The scene's close-up: every labelled card and index together cut out, labels alike."""
    boxes = np.array([lab.box for lab in scene.labels])
    photo, to_photo = cut_out(scene.image, (*boxes[:, :2].min(axis=0), *boxes[:, 2:].max(axis=0)))

    def quad(q):
        return None if q is None else np.array([to_photo((x, y, x, y))[:2] for x, y in q])
    labels = [replace(lab, box=to_photo(lab.box), quad=quad(lab.quad)) for lab in scene.labels]
    return replace(scene, image=photo, labels=labels, index_quads=[], card_quads=[])


def mirrored_scene(scene):
    """The scene mirrored left-right, its labelled boxes and outlines alike."""
    w = scene.image.shape[1]

    def quad(q):
        return None if q is None else np.column_stack([w - q[:, 0], q[:, 1]])
    labels = [replace(lab, box=mirror_box(lab.box, w), quad=quad(lab.quad)) for lab in scene.labels]
    return replace(scene, image=mirror_image(scene.image), labels=labels,
                   index_quads=[quad(q) for q in scene.index_quads], card_quads=[quad(q) for q in scene.card_quads])


def why_missed(detector, scene, codes: set[str]) -> list[str]:
    """One cause from ``MISSED_CAUSES`` per card in ``codes`` (dealt, not reported).

    The detector's raw boxes on the card's labelled indices (overlapping by IoU > 0.3)
    are read again by the classifier: no box is the detector's miss; boxes all read as
    "not an index", or all as other cards, are the classifier's; a box read right means
    the card was lost after reading (merged into another card or below the reporting
    confidence).  A reader is asked about the photo as it reads it first (``as_read``: specks
    filtered out, a blurred photo sharpened).
    """
    from vision.detector import box_iou, read_as_indices

    image = detector.as_read(scene.image) if hasattr(detector, "as_read") else scene.image
    indices, _ = detector.find_indices(image)
    causes = []
    for code in sorted(codes):
        own = [lab.box for lab in scene.labels if lab.cls == 0 and lab.code == code]
        boxes = [box for box, _ in indices if any(box_iou(box, o) > 0.3 for o in own)]
        if not boxes:
            causes.append(MISSED_CAUSES[0])
            continue
        labels, probs, not_index = detector.classify_indices(image, boxes)
        kept = read_as_indices(labels, probs, not_index)
        if not kept:
            causes.append(MISSED_CAUSES[1])
        elif all(detector.card_of_class[labels[k]].code != code for k in kept):
            causes.append(MISSED_CAUSES[2])
        else:
            causes.append(MISSED_CAUSES[3])
    return causes
