"""The synthetic scene generator: deterministic, and its labels sit on the cards."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from scoring.cards import CARD_CODES, Card, Suit
from scoring.errors import NiuniuError
from vision.detector import NOT_INDEX
from vision.synth.dataset import (
    MIN_CROP_INDEX_PX,
    SynthConfig,
    config_of_set,
    index_crop,
    mine_detector_crops,
    not_index_boxes,
    render_one,
    write_dataset,
)
from vision.synth.faces import FaceStyle, procedural_deck
from vision.synth.scene import CARD_CLASS, INDEX_CLASS, render_scene


def _tree_digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and p.name != "manifest.json"}


def test_same_seed_same_bytes_and_labels(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for out, workers in ((a, 1), (b, 2)):
        write_dataset(SynthConfig(out=out, images=6, val_images=2, seed=42, procedural_share=1.0),
                      workers=workers, progress=False)
    digest_a = _tree_digest(a)
    digest_b = {k.replace(str(b), str(a)): v for k, v in _tree_digest(b).items()}
    # data.yaml names its own absolute path; everything else must be identical bytes
    digest_a.pop("detect/data.yaml")
    digest_b.pop("detect/data.yaml")
    assert digest_a == digest_b
    assert any(k.startswith("detect/labels/train/") for k in digest_a)


def test_different_seed_different_scenes(tmp_path):
    write_dataset(SynthConfig(out=tmp_path / "a", images=2, val_images=0, seed=1, procedural_share=1.0),
                  workers=1, progress=False)
    write_dataset(SynthConfig(out=tmp_path / "b", images=2, val_images=0, seed=2, procedural_share=1.0),
                  workers=1, progress=False)
    img_a = (tmp_path / "a/detect/images/train/000000.jpg").read_bytes()
    img_b = (tmp_path / "b/detect/images/train/000000.jpg").read_bytes()
    assert img_a != img_b


def test_label_files_are_yolo_format(tmp_path):
    write_dataset(SynthConfig(out=tmp_path, images=4, val_images=1, seed=3, procedural_share=1.0),
                  workers=1, progress=False)
    lines = [ln for f in (tmp_path / "detect/labels/train").glob("*.txt") for ln in f.read_text().splitlines()]
    assert lines, "four scenes produced no labels"
    for line in lines:
        cls, *vals = line.split()
        assert cls in ("0", "1")
        assert all(0.0 <= float(v) <= 1.0 for v in vals)
    crops = list((tmp_path / "classify/train").rglob("*.jpg"))
    assert crops and {c.parent.name for c in crops} <= {*CARD_CODES, NOT_INDEX}
    assert any(c.parent.name == NOT_INDEX for c in crops)


def test_not_an_index_crops_leave_every_other_byte_as_it_was(tmp_path):
    """The reject class was added to a generator whose data sets were already in use:
    the same seed must still give the same scenes, labels and index crops."""
    for out, n in ((tmp_path / "with", 3), (tmp_path / "without", 0)):
        write_dataset(SynthConfig(out=out, images=3, val_images=1, seed=9, procedural_share=1.0,
                                  negatives_per_scene=n), workers=1, progress=False)
    with_ = {k: v for k, v in _tree_digest(tmp_path / "with").items() if f"/{NOT_INDEX}/" not in k}
    without = _tree_digest(tmp_path / "without")
    with_.pop("detect/data.yaml"), without.pop("detect/data.yaml")
    assert with_ == without
    assert list((tmp_path / "with/classify/train" / NOT_INDEX).glob("*.jpg"))
    assert not list((tmp_path / "without/classify/train" / NOT_INDEX).glob("*.jpg"))


def test_not_an_index_boxes_keep_clear_of_every_index_even_hidden_ones():
    found = inside_cards = 0
    for seed in range(8):
        rng = np.random.default_rng(seed)
        deck = procedural_deck(7, 300)
        scene = render_scene(rng, deck, size=(640, 480), kind="hands")
        hidden = len(scene.index_quads) - sum(lab.cls == INDEX_CLASS for lab in scene.labels)
        assert hidden >= 0
        for box in not_index_boxes(scene, np.random.default_rng(seed), 6):
            found += 1
            cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
            # the widest crop index_crop may cut around the box touches no index quad
            half = 0.75 * 1.15 * 1.3 * max(box[2] - box[0], box[3] - box[1])
            for q in scene.index_quads:
                x0, y0 = q.min(axis=0)
                x1, y1 = q.max(axis=0)
                assert not (cx - half < x1 and x0 < cx + half and cy - half < y1 and y0 < cy + half)
            inside_cards += any(cv2.pointPolygonTest(q.astype(np.float32), (cx, cy), False) > 0
                                for q in scene.card_quads)
    assert found >= 20, "too few places without an index were found"
    assert inside_cards >= found // 8, "the hard negatives (pips, court art) were never sampled"


def test_a_printed_page_lies_under_the_cards_and_is_never_labelled(monkeypatch):
    """Newspaper print is what real photos put under cards; it must change only the
    table, never a label, and give "not an index" crops."""
    from vision.synth import scene as scene_module

    deck = procedural_deck(7, 300)
    on_print = 0
    for seed in range(6):
        monkeypatch.setattr(scene_module, "PRINTED_PAGE_SHARE", 0.0)
        bare = render_scene(np.random.default_rng(seed), deck, size=(640, 480), kind="hands")
        monkeypatch.setattr(scene_module, "PRINTED_PAGE_SHARE", 1.0)
        paged = render_scene(np.random.default_rng(seed), deck, size=(640, 480), kind="hands")
        assert _labels_of(paged) == _labels_of(bare)
        changed = np.abs(paged.image.astype(int) - bare.image.astype(int)).max(axis=2) > 40
        assert changed.mean() > 0.02, f"seed {seed}: no page was drawn"
        for x0, y0, x1, y1 in not_index_boxes(paged, np.random.default_rng(seed), 8):
            on_print += changed[int(y0):int(y1) + 1, int(x0):int(x1) + 1].mean() > 0.05
    assert on_print >= 3, "no 'not an index' crop fell on the print"


def _labels_of(scene) -> list:
    return [(lab.cls, lab.code, lab.box) for lab in scene.labels]


def _only_card_deck(code: str):
    deck = procedural_deck(7, height=300)
    return type(deck)(name=deck.name, split=deck.split, faces={code: deck.faces[code]}, back=None)


def test_an_uncorrected_colour_cast_tints_the_light_and_nothing_else():
    """Tungsten light nobody white-balanced turns white cards orange (generator 7's
    training scenes): the scene keeps every card and label where it was."""
    deck = procedural_deck(7, 300)
    for seed in range(4):
        plain = render_scene(np.random.default_rng(seed), deck, size=(416, 312), kind="hands")
        cast = render_scene(np.random.default_rng(seed), deck, size=(416, 312), kind="hands", colour_casts=1.0)
        assert _labels_of(cast) == _labels_of(plain)
        ratio = cast.image.reshape(-1, 3).mean(0) / np.maximum(plain.image.reshape(-1, 3).mean(0), 1)
        assert ratio.max() - ratio.min() > 0.12, f"seed {seed}: colour balance unchanged {ratio}"


def test_a_court_weighted_scene_deals_its_court_cards_first():
    """A training set weighted to court cards (their indices beside busy art are the ones
    the detector misses most) fills the hands with jacks, queens and kings."""
    deck = procedural_deck(7, 300)
    for seed in range(3):
        scene = render_scene(np.random.default_rng(seed), deck, size=(416, 312), kind="hands", seats=2,
                             hand_size=5, courts_first=True)
        ranks = {lab.code[:-1] for lab in scene.labels}
        assert ranks and ranks <= {"J", "Q", "K"}, f"seed {seed}: {sorted(ranks)}"


def test_a_blurred_scene_is_the_same_layout_out_of_focus():
    """The blur weighting changes the optics only: every card and label stays where it was."""
    deck = procedural_deck(7, 300)
    sharpness: dict[bool, list[float]] = {False: [], True: []}
    for seed in range(6):
        plain = render_scene(np.random.default_rng(seed), deck, size=(416, 312), kind="hands")
        blurred = render_scene(np.random.default_rng(seed), deck, size=(416, 312), kind="hands", blurred=True)
        assert _labels_of(blurred) == _labels_of(plain)
        for flag, scene in ((False, plain), (True, blurred)):
            gray = cv2.cvtColor(scene.image, cv2.COLOR_BGR2GRAY)
            sharpness[flag].append(cv2.Laplacian(gray, cv2.CV_64F).var())
    # Some plain scenes are blurred by chance; every weighted one is blurred on purpose.
    assert max(sharpness[True]) < 0.5 * float(np.median(sharpness[False])), sharpness


def test_weighting_shares_of_zero_leave_the_set_as_it_was(tmp_path):
    """The weighting draws on its own stream: sets made before it existed stay reproducible."""
    base = dict(images=3, val_images=0, seed=5, procedural_share=1.0)
    write_dataset(SynthConfig(out=tmp_path / "a", **base), workers=1, progress=False)
    write_dataset(SynthConfig(out=tmp_path / "b", court_share=0.0, blur_share=0.0, held_share=0.0,
                              stretch_share=0.0, **base), workers=1, progress=False)
    write_dataset(SynthConfig(out=tmp_path / "c", court_share=1.0, **base), workers=1, progress=False)
    write_dataset(SynthConfig(out=tmp_path / "d", held_share=1.0, **base), workers=1, progress=False)
    write_dataset(SynthConfig(out=tmp_path / "e", stretch_share=1.0, **base), workers=1, progress=False)
    write_dataset(SynthConfig(out=tmp_path / "f", exposure_share=1.0, **base), workers=1, progress=False)
    image = "detect/images/train/000000.jpg"
    assert (tmp_path / "a" / image).read_bytes() == (tmp_path / "b" / image).read_bytes()
    for other in "cdef":
        assert (tmp_path / "a" / image).read_bytes() != (tmp_path / other / image).read_bytes(), other
    assert json.loads((tmp_path / "d" / "manifest.json").read_text())["held_share"] == 1.0
    assert json.loads((tmp_path / "e" / "manifest.json").read_text())["stretch_share"] == 1.0
    assert json.loads((tmp_path / "f" / "manifest.json").read_text())["exposure_share"] == 1.0


def test_a_lower_index_visible_share_labels_half_hidden_indices_for_the_detector_alone(tmp_path):
    """``--index-visible`` boxes indices partly under another card for the detector (so it is
    not taught that such an index is felt); the picture, the whole-card labels and every
    classifier crop stay as they were."""
    deck = procedural_deck(7, 300)
    added = 0
    for seed in range(6):
        plain = render_scene(np.random.default_rng(seed), deck, size=(416, 312), kind="hands")
        low = render_scene(np.random.default_rng(seed), deck, size=(416, 312), kind="hands", min_index_visible=0.3)
        assert np.array_equal(plain.image, low.image)
        assert set(_labels_of(plain)) <= set(_labels_of(low))
        extra = [lab for lab in low.labels if lab.visible < 0.6]
        assert all(lab.cls == INDEX_CLASS and lab.visible >= 0.3 for lab in extra)
        added += len(extra)
    assert added > 0
    base = dict(images=4, val_images=0, seed=11, procedural_share=1.0)
    write_dataset(SynthConfig(out=tmp_path / "a", **base), workers=1, progress=False)
    write_dataset(SynthConfig(out=tmp_path / "b", index_visible=0.3, **base), workers=1, progress=False)
    assert _tree_digest(tmp_path / "a" / "classify") == _tree_digest(tmp_path / "b" / "classify")
    assert _tree_digest(tmp_path / "a" / "detect" / "images") == _tree_digest(tmp_path / "b" / "detect" / "images")
    lines = [sum(len(p.read_text().splitlines()) for p in (tmp_path / s / "detect" / "labels").rglob("*.txt"))
             for s in "ab"]
    assert lines[1] > lines[0]
    assert json.loads((tmp_path / "b" / "manifest.json").read_text())["index_visible"] == 0.3


def test_an_overexposed_scene_is_the_same_scene_with_its_whites_clipped():
    """The exposure weighting changes the light only: the labels stay, the card's white clips
    to pure white far more often, and the darkest ink is still there to box."""
    deck = procedural_deck(7, 300)
    for seed in range(4):
        plain = render_scene(np.random.default_rng(seed), deck, size=(416, 312), kind="hands")
        bright = render_scene(np.random.default_rng(seed), deck, size=(416, 312), kind="hands", exposure=1.5)
        assert _labels_of(bright) == _labels_of(plain)
        clipped = [float((scene.image.min(axis=2) >= 250).mean()) for scene in (plain, bright)]
        assert clipped[1] > clipped[0] + 0.03, clipped
        assert np.percentile(bright.image.max(axis=2), 1) < 200   # ink and felt are not washed out


def test_a_squeezed_scene_is_the_same_scene_resized_and_its_labels_follow():
    """A photo exported stretched to a square: the same cards where they were, every
    x (or y) pulled toward the centre, and each index label still on its ink."""
    deck = _only_card_deck("QH")
    w, h = 416, 312
    moved = 0
    for seed in range(12):
        plain = render_scene(np.random.default_rng(seed), deck, size=(w, h), kind="closeup")
        for squeeze in ((0.6, 1.0), (1.0, 0.6)):
            squeezed = render_scene(np.random.default_rng(seed), deck, size=(w, h), kind="closeup", squeeze=squeeze)
            assert len(squeezed.card_quads) == len(plain.card_quads)
            for before, after in zip(plain.card_quads, squeezed.card_quads):
                expected = (before - (w / 2, h / 2)) * squeeze + (w / 2, h / 2)
                assert np.abs(after - expected).max() < 0.01, f"seed {seed}: the card did not move with the squeeze"
                moved += 1
            for lab in squeezed.labels:
                if lab.cls != INDEX_CLASS:
                    continue
                x0, y0, x1, y1 = (int(round(v)) for v in lab.box)
                patch = squeezed.image[y0:y1 + 1, x0:x1 + 1].astype(int)
                assert patch.max() - patch.min() > 60, f"seed {seed} {squeeze}: no ink inside index box {lab.box}"
    assert moved >= 20


def test_a_held_fan_is_one_hand_of_large_cards_whose_top_indices_show():
    """A hand held up to a phone: one fan of large cards, no strays or chips, and in a fan
    turned the usual way the upper-left index of nearly every card shows, although each
    lower card shows only a wedge."""
    deck = procedural_deck(10, 300)   # two corners: a fan turned the other way shows one index
    shown = []
    for seed in range(16):
        scene = render_scene(np.random.default_rng(seed), deck, size=(416, 312), kind="held", hand_size=5)
        codes = {lab.code for lab in scene.labels if lab.cls == INDEX_CLASS}
        assert len(scene.card_quads) == 5, f"seed {seed}: {len(scene.card_quads)} face-up cards, not one hand of 5"
        longest = min(float(np.linalg.norm(quad - np.roll(quad, 1, axis=0), axis=1).max()) for quad in scene.card_quads)
        assert longest > 0.3 * 312, f"seed {seed}: a held card is small ({longest:.0f} px long)"
        whole = [lab for lab in scene.labels if lab.cls == CARD_CLASS]
        assert len(whole) <= 2, f"seed {seed}: {len(whole)} cards mostly visible in a fan"
        shown.append(len(codes))
    assert np.mean(shown) >= 4.0 and shown.count(5) >= 10, shown


def test_known_card_lands_in_its_label_box():
    """Render a single known card; its index boxes must enclose ink of that card,
    and the card box must enclose every index box."""
    deck = _only_card_deck("QH")
    checked = 0
    for seed in range(20):
        scene = render_scene(np.random.default_rng(seed), deck, size=(416, 312), kind="closeup")
        index = [lab for lab in scene.labels if lab.cls == INDEX_CLASS]
        cards = [lab for lab in scene.labels if lab.cls == CARD_CLASS]
        assert all(lab.code == "QH" for lab in scene.labels)
        for lab in index:
            x0, y0, x1, y1 = (int(round(v)) for v in lab.box)
            patch = scene.image[y0:y1 + 1, x0:x1 + 1].astype(int)
            assert patch.max() - patch.min() > 60, f"seed {seed}: no ink inside index box {lab.box}"
            for card in cards:
                cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
                assert card.box[0] - 1 <= cx <= card.box[2] + 1 and card.box[1] - 1 <= cy <= card.box[3] + 1
            checked += 1
    assert checked >= 10, "the single card was rarely in frame: scene layout is broken"


def test_index_crop_centres_the_box():
    image = np.zeros((100, 100, 3), np.uint8)
    cv2.rectangle(image, (40, 30), (50, 50), (255, 255, 255), -1)
    crop = index_crop(image, (40, 30, 51, 51))
    assert crop.shape == (64, 64, 3)
    ys, xs = np.nonzero(crop[..., 0] > 128)
    assert abs(xs.mean() - 32) < 3 and abs(ys.mean() - 32) < 3


def test_procedural_designs_vary_and_keep_held_out_art_held_out():
    """The classifier must meet many typefaces and pip shapes to read decks it never saw,
    and a held-out design must never show court art from a training deck (else the
    validation score would flatter the model)."""
    from vision.synth.decks import deck_names
    from vision.synth.faces import (
        PROCEDURAL_HOLDOUT_SEEDS,
        PROCEDURAL_TRAIN_SEEDS,
        available_fonts,
        available_pip_fonts,
        procedural_style,
    )

    train = [procedural_style(np.random.default_rng(s), s) for s in PROCEDURAL_TRAIN_SEEDS[:60]]
    held = [procedural_style(np.random.default_rng(s), s) for s in PROCEDURAL_HOLDOUT_SEEDS]
    assert len({st.font for st in train}) >= min(len(available_fonts()), 8)
    if available_pip_fonts():
        assert any(st.pip_font for st in train) and any(st.pip_font is None for st in train)
    train_art = {st.court_art for st in train} - {None}
    held_art = {st.court_art for st in held} - {None}
    assert train_art <= set(deck_names("train"))
    assert held_art <= set(deck_names("holdout"))


def test_a_share_of_training_designs_print_jumbo_indices_and_no_held_out_design_changes():
    """Casino decks print jumbo indices, which a fan covers in part; training designs must
    show them, and the held-out designs must stay what every figure was measured on."""
    from vision.synth.decks import deck_names
    from vision.synth.faces import PROCEDURAL_HOLDOUT_SEEDS, PROCEDURAL_TRAIN_SEEDS, FaceStyle, procedural_style

    train = [procedural_style(np.random.default_rng(s), s) for s in PROCEDURAL_TRAIN_SEEDS[:200]]
    jumbo = [st for st in train if st.jumbo]
    assert 0.2 <= len(jumbo) / len(train) <= 0.4
    assert all(st.index_height >= 0.15 and st.pip_scale <= 0.7 and not st.four_corners and not st.pip_beside
               and st.condense < 1 for st in jumbo)
    plain = [st for st in train if not st.jumbo]
    mean_jumbo = sum(st.index_height for st in jumbo) / len(jumbo)
    assert mean_jumbo > 0.2 > 0.15 > sum(st.index_height for st in plain) / len(plain)
    assert all(st.condense == 1 for st in train if not st.jumbo)
    for s in PROCEDURAL_HOLDOUT_SEEDS[:10]:
        plain = FaceStyle.random(np.random.default_rng(s), art_decks=tuple(deck_names("holdout")))
        assert procedural_style(np.random.default_rng(s), s) == plain
    # The widest rank of a jumbo design stays clear of the picture (beside the pip or over it).
    from scoring.cards import Card
    from vision.synth.faces import draw_face

    for style in jumbo[:6]:
        for code in ("QS", "KH", "AD"):
            _, boxes = draw_face(Card.parse(code), style, 400, np.random.default_rng(0))
            assert boxes[0][2] - boxes[0][0] <= 0.36, (style.font, code)


def test_a_condensed_rank_is_narrower_and_its_label_box_holds_its_ink():
    """A jumbo rank is squeezed, not shrunk: as tall as the unsqueezed type, narrower, its
    pip kept inside the margin, and its label box tight on the ink with paper below the pip."""
    from dataclasses import replace

    from vision.synth.faces import FaceStyle, draw_face

    style = replace(FaceStyle.random(np.random.default_rng(8)), index_height=0.22, pip_beside=False,
                    pip_font=None, court_art=None, border=False, four_corners=False, four_colour=())
    for code in ("QS", "8H", "KC"):
        wide_rgba, wide = draw_face(Card.parse(code), style, 400, np.random.default_rng(0))
        rgba, narrow = draw_face(Card.parse(code), replace(style, condense=0.6), 400, np.random.default_rng(0))
        h, w = rgba.shape[:2]
        assert (narrow[0][2] - narrow[0][0]) < 0.9 * (wide[0][2] - wide[0][0]), code
        assert abs((narrow[0][3] - narrow[0][1]) - (wide[0][3] - wide[0][1])) * h <= 2, code
        assert narrow[0][0] >= wide[0][0] - 0.005, f"{code}: the pip runs into the margin"
        x0, y0, x1, y1 = (int(round(f * s)) for f, s in zip(narrow[0], (w, h, w, h)))
        ink = rgba[:, :, :3].min(axis=2) < 120
        for edge in (ink[y0:y1 + 1, x0 - 1:x0 + 2], ink[y0:y1 + 1, x1 - 1:x1 + 2], ink[y0 - 1:y0 + 2, x0:x1 + 1],
                     ink[y1 - 1:y1 + 2, x0:x1 + 1]):
            assert edge.any(), f"{code}: the index box is not tight on its ink"
        assert not ink[y0:y1 + 1, :x0 - 1].any(), f"{code}: ink left of the index box"
        assert not ink[y1 + 3:y1 + 8, x0:x1 + 1].any(), f"{code}: ink spills below the index box"


def test_a_glyph_pip_face_labels_its_index_ink():
    """A design that draws pips from a font still puts its index label box on the ink."""
    from vision.synth.faces import FaceStyle, available_pip_fonts, draw_face

    if not available_pip_fonts():
        pytest.skip("no font with suit symbols installed: run `sudo datasets/install-card-art.sh`")
    rng = np.random.default_rng(5)
    style = FaceStyle.random(rng)
    style = type(style)(**{**style.__dict__, "pip_font": available_pip_fonts()[0], "court_art": None,
                                    "pip_beside": False, "border": False})
    for code in ("QH", "10C", "AS"):
        rgba, boxes = draw_face(Card.parse(code), style, 300, rng)
        h, w = rgba.shape[:2]
        x0, y0, x1, y1 = (int(round(f * s)) for f, s in zip(boxes[0], (w, h, w, h)))
        patch = rgba[y0:y1 + 1, x0:x1 + 1, :3].astype(int)
        assert patch.min() < 120, f"{code}: no ink in its index box"
        below = rgba[y1 + 3:y1 + 8, x0:x1 + 1, :3]
        assert below.size and below.min() > 150, f"{code}: the pip spills below the index box"


def test_every_pip_font_draws_spades_as_spades_and_clubs_as_clubs():
    """A font that swaps two suit symbols labels a whole deck wrong: FreeSerif draws
    U+2660 as a club, and its designs taught the classifier that a club is a spade.  A
    spade tapers to a point at the top; a club starts with a round leaf, wide at once."""
    from PIL import Image

    from scoring.cards import Suit
    from vision.synth.faces import FaceStyle, _pip, available_pip_fonts

    if not available_pip_fonts():
        pytest.skip("no font with suit symbols installed: run `sudo datasets/install-card-art.sh`")
    base = FaceStyle.random(np.random.default_rng(5))

    def width_near_top(font: str, suit: Suit) -> float:
        img = Image.new("RGB", (240, 240), (255, 255, 255))
        _pip(img, type(base)(**{**base.__dict__, "pip_font": font}), suit, 120, 120, 150, (0, 0, 0))
        ink = np.asarray(img)[..., 0] < 128
        ys, xs = np.nonzero(ink)
        ink = ink[ys.min():ys.max() + 1, xs.min():xs.max() + 1]
        return ink[int(0.05 * ink.shape[0])].sum() / ink.shape[1]

    for font in available_pip_fonts():
        name = Path(font).name
        assert width_near_top(font, Suit.SPADES) < 0.2, f"{name}: its spade pip is not pointed"
        assert width_near_top(font, Suit.CLUBS) > 0.25, f"{name}: its club pip has no round top leaf"


def _write_pattern(path: Path, rgb: tuple[int, int, int], size: int = 8) -> None:
    name = b"test\x00"
    header = np.array([20 + 4 + len(name), 1, size, size, 3], ">u4").tobytes() + b"GPAT" + name
    path.write_bytes(header + bytes(rgb) * size * size)


def test_photographed_textures_become_table_tops(tmp_path, monkeypatch):
    """Carpet and wood grain were where the model read indices that were not there: some
    table tops are tiled from GIMP's photographed patterns when gimp-data is installed."""
    from vision.synth import scene

    _write_pattern(tmp_path / "magenta.pat", (250, 0, 250))
    (tmp_path / "broken.pat").write_bytes(b"not a pattern at all, just bytes")
    with pytest.raises(ValueError, match="not a GIMP pattern"):
        scene.read_pattern(tmp_path / "broken.pat")
    monkeypatch.setattr(scene, "available_textures", lambda: (tmp_path / "magenta.pat",))
    tops = [scene._surface(np.random.default_rng(s), 64, 48) for s in range(30)]
    magenta = [t for t in tops if t[..., 1].mean() < 40 and t[..., 0].mean() > 120 and t[..., 2].mean() > 120]
    assert 3 <= len(magenta) <= 15, "textures should be some table tops, not none or all"
    monkeypatch.setattr(scene, "available_textures", lambda: ())
    assert all(scene._surface(np.random.default_rng(s), 64, 48).shape == (48, 64, 3) for s in range(30))


def test_the_installed_gimp_patterns_all_read():
    from vision.synth.scene import available_textures, read_pattern

    paths = available_textures()
    if not paths:
        pytest.skip("gimp-data is not installed (datasets/install-card-art.sh installs it)")
    for path in paths:
        img = read_pattern(path)
        assert img.ndim == 3 and img.shape[2] == 3 and min(img.shape[:2]) >= 8, path


def test_hard_negatives_keep_only_what_the_detector_finds_clear_of_every_index(tmp_path):
    """`niuniu datasets hard-negatives`: a detector box on a printed index (even one the
    labels leave out as mostly hidden) must never become a "not an index" crop, or the
    classifier would learn to reject real cards; a box off every card is kept."""
    cfg = SynthConfig(out=tmp_path, images=3, val_images=0, seed=5, crops_only=True)

    class ScriptedDetector:
        """Finds every printed index of the scene, plus one box where none is."""

        def __init__(self):
            self.calls = 0

        def find_indices(self, image):
            _, scene, _, _, _, _ = render_one(cfg, "train", self.calls)
            self.calls += 1
            on_indices = [(tuple(float(v) for v in (*q.min(axis=0), *q.max(axis=0))), 0.9) for q in scene.index_quads]
            rng = np.random.default_rng(self.calls)
            stray = not_index_boxes(scene, rng, 1)
            return on_indices + [(tuple(float(v) for v in b), 0.5) for b in stray], []

    detector = ScriptedDetector()
    stats = mine_detector_crops(cfg, detector, per_scene=4, progress=False)
    written = sorted((tmp_path / "classify" / "train" / NOT_INDEX).glob("*.jpg"))
    assert detector.calls == stats["scenes"] == 3
    assert 1 <= stats["crops"] == len(written) <= 3, stats   # one stray box a scene at most, no index
    assert all(cv2.imread(str(f)).shape == (64, 64, 3) for f in written)


def test_mining_a_set_of_another_generator_is_refused_before_any_crop(tmp_path):
    """Mining renders the scenes again: on a set made by an older generator it would file
    crops of scenes the set does not hold."""
    (tmp_path / "manifest-crops.json").write_text('{"generator": "6", "seed": 19}')
    cfg = SynthConfig(out=tmp_path, images=3, val_images=0, seed=19, crops_only=True)
    with pytest.raises(NiuniuError, match="generator 6"):
        mine_detector_crops(cfg, detector=None, progress=False)
    assert not (tmp_path / "classify").exists()


def test_mining_with_other_shares_than_the_set_was_made_with_is_refused(tmp_path):
    """A court share deals other cards: mined with the wrong one, a set would get crops of
    scenes it does not hold.  The manifest remembers the shares; the message gives the flag."""
    write_dataset(SynthConfig(out=tmp_path, images=1, val_images=0, seed=3, procedural_share=1.0, court_share=0.5),
                  workers=1, progress=False)
    cfg = SynthConfig(out=tmp_path, images=1, val_images=0, seed=3, procedural_share=1.0)
    with pytest.raises(NiuniuError, match="give --court-share 0.5"):
        mine_detector_crops(cfg, detector=None, progress=False)
    assert not list((tmp_path / "classify" / "train" / NOT_INDEX).glob("*_h*.jpg"))


def test_mined_readings_file_each_found_index_under_its_own_card(tmp_path):
    """`hard-negatives --readings-per-scene`: a detector box on a readable printed index
    becomes a crop of that card, so the classifier learns the detector's own framing; a box
    on an index the labels leave out (mostly hidden) or on no index is never filed as a card."""
    cfg = SynthConfig(out=tmp_path, images=3, val_images=0, seed=5, crops_only=True)
    scenes = [render_one(cfg, "train", i)[1] for i in range(3)]

    class ScriptedDetector:
        def __init__(self):
            self.calls = 0

        def find_indices(self, image):
            scene = scenes[self.calls]
            self.calls += 1
            boxes = [tuple(float(v) for v in (*q.min(axis=0), *q.max(axis=0))) for q in scene.index_quads]
            stray = not_index_boxes(scene, np.random.default_rng(self.calls), 1)
            return [(b, 0.9) for b in boxes] + [(tuple(float(v) for v in b), 0.5) for b in stray], []

    stats = mine_detector_crops(cfg, ScriptedDetector(), per_scene=0, readings_per_scene=3, progress=False)
    root = tmp_path / "classify" / "train"
    assert not list((root / NOT_INDEX).glob("*.jpg"))
    written = list(root.glob("*/c*_d*.jpg"))
    assert stats["readings"] == len(written) > 0
    for i, scene in enumerate(scenes):
        readable = [lab.code for lab in scene.labels if lab.cls == INDEX_CLASS
                    and max(lab.box[2] - lab.box[0], lab.box[3] - lab.box[1]) >= MIN_CROP_INDEX_PX]
        mine = [f for f in written if f.name.startswith(f"c{i:06d}_")]
        assert len(mine) == min(3, len(readable)), (i, len(mine), readable)
        assert {f.parent.name for f in mine} <= set(readable)


def test_an_upright_set_mines_its_readings_turned_by_the_angle_of_the_index_they_lie_on(tmp_path):
    """Mining a ``--crop-view upright`` set: the detector's box on an index is cut turned by
    that index's angle, as the reader turns it (not as the box frames it)."""
    from vision.orientation import upright_crop

    cfg = SynthConfig(out=tmp_path, images=2, val_images=0, seed=5, crops_only=True, crop_view="upright")
    rendered = [render_one(cfg, "train", i) for i in range(2)]

    class LabelBoxes:
        calls = 0

        def find_indices(self, image):
            scene = rendered[self.calls][1]
            self.calls += 1
            return [(lab.box, 0.9) for lab in scene.labels if lab.cls == INDEX_CLASS], []

    mine_detector_crops(cfg, LabelBoxes(), per_scene=0, readings_per_scene=4, progress=False)
    checked = 0
    for i, (_, scene, _, image, _, _) in enumerate(rendered):
        for f in (tmp_path / "classify" / "train").glob(f"*/c{i:06d}_d*.jpg"):
            crop = cv2.imread(str(f)).astype(int)
            # a card's two corners share its code: the crop is of one of them
            turned, lab = min((np.abs(crop - upright_crop(image, lab.box, lab.up, 64)).mean(), lab)
                              for lab in scene.labels if lab.cls == INDEX_CLASS and lab.code == f.parent.name)
            boxed = np.abs(crop - index_crop(image, lab.box, None, 64)).mean()
            assert turned < 8 and (turned < boxed or abs(lab.up - 270) < 1), (f.name, turned, boxed)   # JPEG
            checked += 1
    assert checked >= 4


def test_four_colour_decks_do_not_tie_a_colour_to_one_suit():
    """Real four-colour decks disagree (blue is diamonds on poker-room decks, spades on
    others): the generator must draw both, or the classifier learns to name a suit by its
    colour and misreads every deck of the other convention.  Red and black decks stay so."""
    styles = [FaceStyle.random(np.random.default_rng(seed)) for seed in range(400)]
    four = [style for style in styles if style.four_colour]
    assert 0.15 < len(four) / len(styles) < 0.35

    def bluish(rgb):
        return rgb[2] > 120 and rgb[2] > rgb[0] + 60

    assert {suit for style in four for suit in Suit if bluish(style.ink(suit))} >= {Suit.SPADES, Suit.DIAMONDS}
    assert all(style.ink(Suit.SPADES) == style.ink(Suit.CLUBS) == style.black
               and style.ink(Suit.HEARTS) == style.ink(Suit.DIAMONDS) == style.red
               for style in styles if not style.four_colour)


@pytest.mark.parametrize("flag, value, message", [
    ("--blur-share", "30", "'30' is not a share: give a number from 0 to 1"),
    ("--stretch-share", "-0.2", "'-0.2' is not a share: give a number from 0 to 1"),
    ("--scene-scale", "15", "'15' is not a scene scale: give a number from 0.5 to 4"),
    ("--scene-scale", "big", "'big' is not a scene scale"),
    ("--procedural-designs", "100000", "'100000' is not a number of designs"),
    ("--crop-size", "9", "'9' is not a crop size: give a whole number of pixels from 16 to 256"),
])
def test_a_recipe_number_out_of_range_is_one_clear_error_and_writes_nothing(tmp_path, capsys, flag, value, message):
    from kiosk.cli import main

    with pytest.raises(SystemExit) as stop:
        main(["datasets", "synth", "--out", str(tmp_path / "set"), "--images", "2", flag, value])
    assert stop.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "set").exists()


def test_a_scaled_set_renders_its_scenes_larger_and_mining_holds_it_to_that_scale(tmp_path):
    """`--scene-scale`: a detector trained at an input over 416 px needs scenes with real
    detail at that size.  The frame shapes are the same draws, only larger; the manifest
    remembers the scale, and mining at another scale is refused with the flag to give."""
    base = dict(images=4, val_images=0, seed=8, procedural_share=1.0)
    write_dataset(SynthConfig(out=tmp_path / "a", **base), workers=1, progress=False)
    write_dataset(SynthConfig(out=tmp_path / "b", scene_scale=1.5, **base), workers=1, progress=False)
    for i in range(4):
        small = cv2.imread(str(tmp_path / "a" / f"detect/images/train/{i:06d}.jpg"))
        large = cv2.imread(str(tmp_path / "b" / f"detect/images/train/{i:06d}.jpg"))
        assert large.shape[:2] == tuple(round(side * 1.5) for side in small.shape[:2])
    assert json.loads((tmp_path / "b" / "manifest.json").read_text())["scene_scale"] == 1.5
    with pytest.raises(NiuniuError, match="give --scene-scale 1.5"):
        mine_detector_crops(SynthConfig(out=tmp_path / "b", **base), detector=None, progress=False)


def test_crops_cut_for_a_larger_classifier_are_the_same_crops_at_that_size(tmp_path):
    """`--crop-size 96`: a classifier trained at 96 px learns from crops cut at 96 from
    the scene, the same framing as at 64, not 64 px crops enlarged; the manifest
    remembers the size, so mining adds crops of that size and no other."""
    base = dict(images=2, val_images=0, seed=6, procedural_share=1.0, crops_only=True)
    write_dataset(SynthConfig(out=tmp_path / "a", **base), workers=1, progress=False)
    write_dataset(SynthConfig(out=tmp_path / "b", crop_size=96, **base), workers=1, progress=False)
    small = sorted((tmp_path / "a" / "classify" / "train").rglob("*.jpg"))
    large = sorted((tmp_path / "b" / "classify" / "train").rglob("*.jpg"))
    assert [p.relative_to(tmp_path / "a") for p in small] == [p.relative_to(tmp_path / "b") for p in large]
    for a, b in zip(small, large):
        crop_a, crop_b = cv2.imread(str(a)), cv2.imread(str(b))
        assert crop_a.shape[:2] == (64, 64) and crop_b.shape[:2] == (96, 96)
        shrunk = cv2.resize(crop_b, (64, 64), interpolation=cv2.INTER_AREA).astype(int)
        assert np.abs(shrunk - crop_a.astype(int)).mean() < 12   # the same patch of the scene
    assert json.loads((tmp_path / "b" / "manifest-crops.json").read_text())["crop_size"] == 96
    with pytest.raises(NiuniuError, match="give --crop-size 96"):
        mine_detector_crops(SynthConfig(out=tmp_path / "b", **base), detector=None, progress=False)
    older = tmp_path / "a" / "manifest-crops.json"   # a set made before the setting: its crops are 64 px
    older.write_text(json.dumps({k: v for k, v in json.loads(older.read_text()).items() if k != "crop_size"}))
    with pytest.raises(NiuniuError, match="give --crop-size 64"):
        mine_detector_crops(SynthConfig(out=tmp_path / "a", crop_size=96, **base), detector=None, progress=False)


def test_mining_takes_how_a_set_was_made_from_its_manifest(tmp_path):
    """`niuniu datasets hard-negatives --out DIR`: the set's manifest already says its seed,
    shares and scale, so the maker's flags need not be typed again (a retyped one that
    differs is what used to mine the wrong scenes)."""
    made = SynthConfig(out=tmp_path, images=2, val_images=0, seed=3, procedural_share=1.0, court_share=0.5,
                       scene_scale=1.5)
    write_dataset(made, workers=1, progress=False)
    assert config_of_set(tmp_path) == made
    assert config_of_set(tmp_path, images=1).images == 1   # the first scenes only
    for given, flag in ((dict(seed=4), "give --seed 3"), (dict(blur_share=0.25), "give --blur-share 0.0"),
                        (dict(images=3), "give --images 2 or fewer")):
        with pytest.raises(NiuniuError, match=flag):
            mine_detector_crops(config_of_set(tmp_path, **given), detector=None, progress=False)
    assert not list((tmp_path / "classify" / "train" / NOT_INDEX).glob("*_h*.jpg"))


def test_mining_a_folder_without_a_manifest_names_the_flags_to_give(tmp_path, capsys):
    from kiosk.cli import main

    (tmp_path / "classify" / "train").mkdir(parents=True)
    assert main(["datasets", "hard-negatives", "--out", str(tmp_path), "--images", "5"]) == 2
    err = capsys.readouterr().err
    assert "manifest.json is missing or does not record seed: give --seed" in err
    assert "Traceback" not in err


def test_a_set_can_draw_its_procedural_faces_from_more_designs(tmp_path):
    """`--procedural-designs N`: training scenes take procedural faces from N designs instead
    of 400, never from the held-out ones; the manifest remembers N and mining holds a set to it.
    The default keeps the usual designs (and bytes: the other tests' sets are unchanged)."""
    base = dict(images=6, val_images=0, seed=3, procedural_share=1.0, crops_only=True)
    write_dataset(SynthConfig(out=tmp_path, procedural_designs=5000, **base), workers=1, progress=False)
    manifest = json.loads((tmp_path / "manifest-crops.json").read_text())
    designs = [int(name.split("-")[1]) for name in manifest["splits"]["train"]["decks"]]
    assert manifest["procedural_designs"] == 5000
    assert any(d >= 400 for d in designs) and all(d < 5000 for d in designs)
    with pytest.raises(NiuniuError, match="give --procedural-designs 5000"):
        mine_detector_crops(SynthConfig(out=tmp_path, **base), detector=None, progress=False)
    assert config_of_set(tmp_path).procedural_designs == 5000
