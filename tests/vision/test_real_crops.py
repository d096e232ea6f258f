"""Real-photo classifier crops: the right card on each index, mirrored copies turned back."""

from pathlib import Path

import cv2
import numpy as np
import pytest

from scoring.cards import CARD_CODES, Card
from vision.real_crops import assign_cards, harvest

CARD_BOX = (100.0, 100.0, 300.0, 380.0)
INDEX_BOX = (110.0, 110.0, 150.0, 170.0)   # top-left corner of the card


def test_an_index_takes_the_card_of_the_one_box_that_holds_it():
    truth = [("QH", CARD_BOX), ("2S", (400.0, 100.0, 600.0, 380.0))]
    assert assign_cards([INDEX_BOX], truth) == ["QH"]


def test_an_index_in_overlapping_boxes_or_on_the_table_is_skipped():
    overlapping = [("QH", CARD_BOX), ("2S", (120.0, 90.0, 320.0, 370.0))]
    assert assign_cards([INDEX_BOX], overlapping) == [None]
    assert assign_cards([(500.0, 500.0, 540.0, 560.0)], [("QH", CARD_BOX)]) == [None]
    # centre inside, but most of the box hangs off the card: a mark beside it, not its index
    assert assign_cards([(80.0, 100.0, 130.0, 160.0)], [("QH", CARD_BOX)]) == [None]


class MirrorAwareFake:
    """Finds one index; reads it as QH only when the ink is on the left of the index
    (the photo as taken), as a real classifier reads a mirrored glyph badly."""

    name = "fake"
    card_of_class = [Card.parse(c) for c in sorted(CARD_CODES)]

    def find_indices(self, image):
        return [(INDEX_BOX, 0.9)], []

    def find_mirrored_box(self, width):
        return (width - INDEX_BOX[2], INDEX_BOX[1], width - INDEX_BOX[0], INDEX_BOX[3])

    def classify_indices(self, image, boxes):
        x0, y0, x1, y1 = (int(v) for v in boxes[0])
        patch = image[y0:y1, x0:x1]
        left_ink = patch[:, : patch.shape[1] // 2].mean() < patch[:, patch.shape[1] // 2:].mean()
        probs = np.full((1, 52), 0.5 / 51)
        probs[0, self.card_of_class.index(Card.parse("QH")) if left_ink else 0] = 0.5
        return probs.argmax(axis=1), probs, np.zeros(1)


def _photo(mirrored: bool) -> np.ndarray:
    img = np.full((480, 640, 3), 255, np.uint8)
    x0, y0, x1, y1 = (int(v) for v in INDEX_BOX)
    img[y0:y1, x0:x0 + 15] = 0   # the asymmetric "glyph": ink on the left
    return np.ascontiguousarray(img[:, ::-1]) if mirrored else img


def _write_set(root: Path, photos: dict[str, np.ndarray]) -> None:
    (root / "train" / "images").mkdir(parents=True)
    (root / "train" / "labels").mkdir(parents=True)
    (root / "data.yaml").write_text("names: ['queen of hearts']\n")
    for stem, img in photos.items():
        cv2.imwrite(str(root / "train" / "images" / f"{stem}.jpg"), img)
        h, w = img.shape[:2]
        x0, y0, x1, y1 = CARD_BOX
        if stem.startswith("mirrored"):
            x0, x1 = w - x1, w - x0
        (root / "train" / "labels" / f"{stem}.txt").write_text(
            f"0 {(x0 + x1) / 2 / w} {(y0 + y1) / 2 / h} {(x1 - x0) / w} {(y1 - y0) / h}\n")


class _FakeWithMirroredIndex(MirrorAwareFake):
    """In a mirrored photo the index sits at the mirrored place."""

    def find_indices(self, image):
        mirrored = image[110:170, 640 - 150:640 - 110].mean() < 200
        box = self.find_mirrored_box(image.shape[1]) if mirrored else INDEX_BOX
        return [(box, 0.9)], []


def test_mirrored_copies_are_turned_back_before_cutting(tmp_path):
    _write_set(tmp_path / "set", {"plain": _photo(False), "mirrored": _photo(True)})
    stats = harvest(_FakeWithMirroredIndex(), tmp_path / "set", "train", tmp_path / "out", copies=0)
    assert stats["photos_used"] == 2 and stats["unmirrored"] == 1
    crops = sorted((tmp_path / "out" / "train" / "QH").glob("*.jpg"))
    assert len(crops) == 2
    for path in crops:  # both crops show the glyph as printed: ink on the left
        crop = cv2.imread(str(path))
        half = crop.shape[1] // 2
        assert crop[:, :half].mean() + 20 < crop[:, half:].mean(), path.name


def test_a_photo_too_close_to_call_is_skipped(tmp_path):
    class Undecided(MirrorAwareFake):
        def classify_indices(self, image, boxes):
            probs = np.full((1, 52), 1 / 52)
            return probs.argmax(axis=1), probs, np.zeros(1)

    _write_set(tmp_path / "set", {"plain": _photo(False)})
    stats = harvest(Undecided(), tmp_path / "set", "train", tmp_path / "out")
    assert stats["skipped_orientation"] == 1 and stats["crops"] == 0


@pytest.mark.parametrize("argv", [["datasets", "real-crops", "/nonexistent", "--out", "/tmp/x"]])
def test_cli_without_a_yolo_set_says_what_is_missing(argv, capsys):
    from kiosk.cli import main

    assert main(argv) == 2
    assert "data.yaml" in capsys.readouterr().err


def test_a_detection_on_no_card_becomes_a_not_an_index_crop(tmp_path):
    """Printed fabric taken for an index is the real false positive the synthetic scenes
    cannot foresee: it is kept as a crop of the classifier's reject class."""
    from vision.detector import NOT_INDEX

    stray = (500.0, 380.0, 540.0, 440.0)   # far from the only card

    class WithStray(MirrorAwareFake):
        def find_indices(self, image):
            return [(INDEX_BOX, 0.9), (stray, 0.4)], []

    photo = _photo(False)
    photo[380:440, 500:540] = 90
    _write_set(tmp_path / "set", {"plain": photo})
    stats = harvest(WithStray(), tmp_path / "set", "train", tmp_path / "out", copies=0)
    assert stats["not_index"] == 1 and stats["indices"] == 1
    rejects = list((tmp_path / "out" / "train" / NOT_INDEX).glob("*.jpg"))
    assert len(rejects) == 1 and cv2.imread(str(rejects[0])).mean() < 200  # the dark patch, not white card
    assert len(list((tmp_path / "out" / "train" / "QH").glob("*.jpg"))) == 1
