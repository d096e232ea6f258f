"""Index angles: labelled right in the scenes, read from the orientation model's bins, and
crops turned upright by them."""

from __future__ import annotations

import cv2
import numpy as np

from vision.orientation import ANGLE_CLASSES, angle_of_class, class_of_angle, read_angle, upright_crop
from vision.synth.dataset import SynthConfig, write_dataset
from vision.synth.faces import procedural_deck
from vision.synth.scene import INDEX_CLASS, render_scene

ANGLES = np.array([angle_of_class(n) for n in ANGLE_CLASSES])


def _normalised_grey(image: np.ndarray) -> np.ndarray:
    grey = cv2.cvtColor(np.ascontiguousarray(image), cv2.COLOR_BGR2GRAY).astype(np.float32)
    return (grey - grey.mean()) / (grey.std() + 1e-6)


def _face_index(face, margin: float) -> np.ndarray:
    """The face's top-left index as printed (upright), cut square like a crop."""
    img = np.ascontiguousarray(face.image[..., :3])
    h, w = img.shape[:2]
    x0, y0, x1, y1 = face.index_boxes[0]
    cx, cy = (x0 + x1) / 2 * w, (y0 + y1) / 2 * h
    half = max((x1 - x0) * w, (y1 - y0) * h) * margin / 2
    m = cv2.getAffineTransform(np.float32([[cx - half, cy - half], [cx + half, cy - half], [cx - half, cy + half]]),
                               np.float32([[0, 0], [64, 0], [0, 64]]))
    return _normalised_grey(cv2.warpAffine(img, m, (64, 64), borderMode=cv2.BORDER_REPLICATE))


def test_every_index_turned_by_its_label_angle_stands_as_printed():
    """Both corners of a 7 of clubs, on cards lying at any angle: each crop turned by its
    label's angle matches the printed index best unturned (the lower corner is printed
    half round, so a label that missed that would match best turned by 180)."""
    deck = procedural_deck(7, height=300)
    face = deck.faces["7C"]
    one = type(deck)(name=deck.name, split=deck.split, faces={"7C": face}, back=None)
    printed = [_face_index(face, m) for m in (1.15, 1.35, 1.6)]
    turns = []
    for seed in range(20):
        scene = render_scene(np.random.default_rng(seed), one, size=(416, 312), kind="closeup")
        for lab in (lab for lab in scene.labels if lab.cls == INDEX_CLASS):
            crop = _normalised_grey(upright_crop(scene.image, lab.box, lab.up, 64))
            likeness = [max(float((np.rot90(crop, k) * p).mean()) for p in printed) for k in range(4)]
            turns.append(int(np.argmax(likeness)))
    assert len(turns) >= 20 and turns.count(0) == len(turns), turns


def test_an_angle_between_two_bins_reads_between_them_across_north():
    probs = np.zeros(len(ANGLES))
    probs[ANGLES == 350] = 0.6
    probs[ANGLES == 0] = 0.4
    assert abs(read_angle(probs, ANGLES) - 354.0) < 1e-6
    probs[ANGLES == 180] = 0.3        # a far bin does not pull it round
    assert abs(read_angle(probs / probs.sum(), ANGLES) - 354.0) < 1e-6
    assert class_of_angle(354.9) == "a350" and class_of_angle(355.1) == "a000" and class_of_angle(-90) == "a270"


def test_an_upright_crop_turns_the_box_contents_by_the_angle():
    """A bar pointing right (angle 0) comes out pointing up; a crop at 270 is index_crop's."""
    image = np.zeros((200, 200, 3), np.uint8)
    cv2.rectangle(image, (100, 95), (140, 105), (255, 255, 255), -1)      # from the centre to the right
    box = (60, 60, 140, 140)
    turned = upright_crop(image, box, 0.0, 64)[..., 0] > 128
    ys, xs = np.nonzero(turned)
    assert abs(xs.mean() - 32) < 3 and ys.mean() < 20
    same = upright_crop(image, box, 270.0, 64)[..., 0] > 128
    ys, xs = np.nonzero(same)
    assert xs.mean() > 44 and abs(ys.mean() - 32) < 3


def test_an_upright_set_writes_turned_crops_and_the_orientation_models_data(tmp_path):
    """``--crop-view upright --orientation-crops``: the classifier's crops differ from the box
    framing, the scenes do not, and every readable index is filed under its angle."""
    box, upright = tmp_path / "box", tmp_path / "upright"
    write_dataset(SynthConfig(out=box, images=3, val_images=1, seed=5, crops_only=True), workers=1, progress=False)
    made = write_dataset(SynthConfig(out=upright, images=3, val_images=1, seed=5, crops_only=True,
                                     crop_view="upright", orientation_crops=True), workers=1, progress=False)
    assert made["crop_view"] == "upright" and made["orientation_crops"] is True
    crops = sorted(p.relative_to(box) for p in (box / "classify").rglob("*.jpg"))
    assert crops == sorted(p.relative_to(upright) for p in (upright / "classify").rglob("*.jpg"))
    differ = sum((box / c).read_bytes() != (upright / c).read_bytes() for c in crops)
    assert differ == len(crops)
    oriented = list((upright / "orient" / "train").rglob("*.jpg"))
    assert len(oriented) >= made["splits"]["train"]["crops"]
    assert {p.parent.name for p in oriented} <= set(ANGLE_CLASSES) and not (box / "orient").exists()
