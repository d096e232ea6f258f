"""`niuniu evaluate --synthetic-hands`: whole-hand accuracy and why each missed card was missed."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kiosk.cli import main
from scoring.cards import CARD_CODES, Card
from vision.evaluate import MISSED_CAUSES, why_missed

pytest.importorskip("ultralytics", reason="the card model needs the ml extra: pip install -e '.[ml]'")


def _held_out_hand():
    from vision.synth.decks import deck_names, load_deck
    from vision.synth.scene import render_scene

    deck = load_deck(deck_names("holdout")[0])
    return render_scene(np.random.default_rng([5, 5]), deck, size=(640, 480), kind="hands", seats=1, hand_size=5,
                        max_tilt=0.35)


def test_each_missed_card_is_put_down_to_the_stage_that_lost_it():
    """Four dealt cards, each lost at a different stage: not boxed by the detector, boxed
    but called "not an index", boxed and read as another card, read right and then lost."""
    scene = _held_out_hand()
    dealt = sorted({lab.code for lab in scene.labels if lab.cls == 0})
    assert len(dealt) >= 4, "the rendered hand shows four readable indices"
    unboxed, rejected, misread, lost = dealt[:4]
    codes = sorted(CARD_CODES)
    boxes = {lab.code: lab.box for lab in scene.labels if lab.cls == 0}

    class Detector:
        card_of_class = [Card.parse(c) for c in codes]

        def find_indices(self, image):
            return [(boxes[c], 0.9) for c in (rejected, misread, lost)], []

        def classify_indices(self, image, found):
            code = next(c for c in (rejected, misread, lost) if tuple(boxes[c]) == tuple(found[0]))
            p = np.full((1, 52), 0.01)
            reading = {rejected: code, misread: next(c for c in codes if c not in dealt), lost: code}[code]
            p[0, codes.index(reading)] = 0.5
            return p.argmax(axis=1), p, np.array([0.9 if code == rejected else 0.0])

    causes = why_missed(Detector(), scene, {unboxed, rejected, misread, lost})
    assert dict(zip(sorted({unboxed, rejected, misread, lost}), causes)) == {
        unboxed: "no index boxed", rejected: "taken for no index", misread: "misread", lost: "read, then left out"}


def test_evaluate_synthetic_hands_accounts_for_every_dealt_card(capsys):
    """Every dealt card is either read right or has one cause; the seed picks the hands."""
    assert main(["evaluate", "--synthetic-hands", "6", "--seed", "31", "--json"]) == 0
    first = json.loads(capsys.readouterr().out)
    assert first["hands"] == 6 and first["seed"] == 31 and set(first["missed"]) == set(MISSED_CAUSES)
    assert first["cards_dealt"] - first["cards_right"] == sum(first["missed"].values())
    assert 0 <= first["hands_right"] <= 6
    assert main(["evaluate", "--synthetic-hands", "6", "--seed", "31"]) == 0
    text = capsys.readouterr().out
    assert f"all five right in {first['hands_right']} " in text and "dealt cards not read:" in text


def test_a_hidden_card_read_right_fails_only_the_strict_count_and_a_card_not_on_the_table_fails_both(monkeypatch):
    """A card of the fan whose index shows too little to be dealt may be read: it is on the
    table, so the lenient count forgives it; a card that is nowhere on the table is false."""
    import vision.synth.scene as scene_module
    from vision.evaluate import synthetic_hands

    rendered = []
    render = scene_module.render_scene
    monkeypatch.setattr(scene_module, "render_scene", lambda *a, **k: rendered.append(render(*a, **k)) or rendered[-1])

    class ReadsEveryFaceUpCard:
        extra = None

        def detect(self, image):
            codes = list(rendered[-1].face_up) + ([self.extra] if self.extra else [])
            return [type("Read", (), {"card": Card.parse(c)})() for c in codes]

    reader = ReadsEveryFaceUpCard()
    result = synthetic_hands(reader, 6, seed=31, kind="held")
    hidden = sum(len(set(s.face_up) - {lab.code for lab in s.labels if lab.cls == 0}) for s in rendered)
    assert hidden > 0, "some fans hide a card's index"
    assert all(len(s.face_up) == 5 for s in rendered)
    assert result["hidden_cards_read"] == result["extra_cards"] == hidden and result["false_cards"] == 0
    assert result["hands_right_lenient"] == 6 and result["hands_right"] < 6
    assert result["cards_right"] == result["cards_dealt"]

    rendered.clear()
    reader.extra = next(c for c in CARD_CODES if c.startswith("A"))
    again = synthetic_hands(reader, 6, seed=31, kind="held")
    on_table = sum(reader.extra in s.face_up for s in rendered)
    assert again["false_cards"] == 6 - on_table and again["hands_right_lenient"] == on_table


def test_evaluate_can_read_the_hands_held_up_in_a_fan(capsys):
    """`--held` renders other scenes (fans of large cards in a player's hand) from the same
    held-out designs, and says so; the shipped model reads most of their cards."""
    assert main(["evaluate", "--synthetic-hands", "4", "--seed", "31", "--held", "--json"]) == 0
    held = json.loads(capsys.readouterr().out)
    assert main(["evaluate", "--synthetic-hands", "4", "--seed", "31", "--json"]) == 0
    table = json.loads(capsys.readouterr().out)
    assert held["kind"] == "held" and table["kind"] == "hands"
    assert held["card_recall"] >= 0.6 and held["cards_dealt"] - held["cards_right"] == sum(held["missed"].values())
    assert main(["evaluate", "--synthetic-hands", "4", "--seed", "31", "--held"]) == 0
    assert "held-out fans held up (seed 31)" in capsys.readouterr().out


def test_evaluate_can_deal_from_named_decks_and_refuses_an_unknown_one(capsys):
    """`--decks` reads a design before it is trained on; a misspelt name stops before any hand."""
    from vision.synth.decks import load_manifest

    if load_manifest().deck["kennard_jumbo"].missing_art() is not None:
        pytest.skip("Kennard's decks are not installed: run `sudo datasets/install-card-art.sh`")
    assert main(["evaluate", "--synthetic-hands", "3", "--seed", "31", "--decks", "kennard_jumbo", "--json"]) == 0
    named = json.loads(capsys.readouterr().out)
    assert named["decks"] == ["kennard_jumbo"] and named["cards_dealt"] >= 9
    assert named["cards_dealt"] - named["cards_right"] == sum(named["missed"].values())
    assert main(["evaluate", "--synthetic-hands", "3", "--seed", "31", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["decks"] == "held-out"
    assert main(["evaluate", "--synthetic-hands", "3", "--decks", "kennard_jumbo,no-such-deck"]) != 0
    assert "unknown deck 'no-such-deck'" in capsys.readouterr().err


def test_photos_read_stretched_are_scored_against_labels_stretched_alike(tmp_path):
    """`niuniu evaluate --stretch 0.5,1`: the detector gets the photo at half its width and
    a card found where its label now lies counts as read, not as a miss and an extra."""
    import cv2

    from vision.corners import Detection
    from vision.evaluate import LabelledImage, evaluate

    photo = tmp_path / "photo.jpg"
    cv2.imwrite(str(photo), np.full((100, 200, 3), 128, np.uint8))
    seen = []

    class Detector:   # finds the seven of hearts on the right half of whatever it is given
        def detect(self, image):
            seen.append(image.shape[:2])
            h, w = image.shape[:2]
            return [Detection(card=Card.parse("7H"), conf=0.9, box=(w * 0.6, h * 0.2, w * 0.9, h * 0.8))]

    images = [LabelledImage(photo, [("7H", (110.0, 10.0, 190.0, 90.0))])]
    assert evaluate(Detector(), images, "card").perfect_images == 1
    squeezed = evaluate(Detector(), images, "card", stretch=(0.5, 1.0))
    assert seen[-1] == (100, 100)
    assert (squeezed.correct, squeezed.predicted, squeezed.perfect_images) == (1, 1, 1)


def test_photos_read_black_and_white_lose_their_ink_and_keep_their_labels(tmp_path):
    """`niuniu evaluate --grey`: the detector gets the photo without colour, so a reader
    that tells hearts from spades by ink alone scores its red card as a miss and an extra."""
    import cv2

    from vision.corners import Detection
    from vision.evaluate import LabelledImage, evaluate

    photo = tmp_path / "photo.png"
    image = np.full((100, 200, 3), 255, np.uint8)
    image[20:80, 120:180] = (40, 40, 220)   # a red pip (BGR)
    cv2.imwrite(str(photo), image)

    class ReadsTheInk:
        def detect(self, image):
            b, g, r = image[50, 150].astype(int)
            return [Detection(card=Card.parse("7H" if r - b > 60 else "7S"), conf=0.9, box=(120, 20, 180, 80))]

    images = [LabelledImage(photo, [("7H", (110.0, 10.0, 190.0, 90.0))])]
    in_colour = evaluate(ReadsTheInk(), images, "card")
    grey = evaluate(ReadsTheInk(), images, "card", grey=True)
    assert (in_colour.correct, in_colour.perfect_images) == (1, 1)
    assert (grey.correct, grey.predicted, grey.truth, grey.confusions) == (0, 1, 1, {"7H->7S": 1})


def test_photos_read_mirrored_are_scored_against_labels_mirrored_alike(tmp_path):
    """`niuniu evaluate --mirror`: the reader gets the photo mirrored left-right and its
    labels move with it, so a reader that finds the card where it now lies scores it right."""
    import cv2

    from vision.corners import Detection
    from vision.evaluate import LabelledImage, evaluate

    photo = tmp_path / "photo.png"
    image = np.full((100, 200, 3), 255, np.uint8)
    image[20:80, 20:60] = 0   # a dark card on the left
    cv2.imwrite(str(photo), image)

    class ReadsWhereTheCardIs:
        def detect(self, image):
            xs = np.flatnonzero(image[50, :, 0] < 128)
            return [Detection(card=Card.parse("7S"), conf=0.9, box=(xs[0], 20, xs[-1] + 1, 80))]

    images = [LabelledImage(photo, [("7S", (15.0, 15.0, 65.0, 85.0))])]
    for mirror in (False, True):
        score = evaluate(ReadsWhereTheCardIs(), images, "card", mirror=mirror)
        assert (score.correct, score.perfect_images) == (1, 1), mirror


def test_photos_read_speckled_get_the_same_specks_every_run_and_keep_their_labels(tmp_path):
    """`niuniu evaluate --speckle 0.1`: the reader gets each photo with a tenth of its pixels
    black or white, the same ones every run (a measure must be repeatable), the labels as they were."""
    import cv2

    from vision.corners import Detection
    from vision.evaluate import LabelledImage, evaluate

    photo = tmp_path / "photo.png"
    cv2.imwrite(str(photo), np.full((100, 200, 3), 128, np.uint8))
    seen = []

    class CountsTheSpecks:
        def detect(self, image):
            seen.append(image.copy())
            return [Detection(card=Card.parse("7S"), conf=0.9, box=(20, 20, 60, 80))]

    images = [LabelledImage(photo, [("7S", (15.0, 15.0, 65.0, 85.0))])]
    for _ in range(2):
        score = evaluate(CountsTheSpecks(), images, "card", speckle=0.1)
        assert (score.correct, score.perfect_images) == (1, 1)
    assert np.array_equal(seen[0], seen[1])
    assert 0.08 < (seen[0] != 128).any(axis=2).mean() < 0.12


def test_a_speckle_share_out_of_range_is_one_clear_error(capsys):
    with pytest.raises(SystemExit):
        main(["evaluate", "photos", "--speckle", "0.9"])
    assert "'0.9' is not a share of pixels: give a number from 0 to 0.5, e.g. 0.05" in capsys.readouterr().err


def test_photos_read_blurred_come_blurred_before_their_specks_and_keep_their_labels(tmp_path):
    """`niuniu evaluate --blur 2.5`: the reader gets each photo blurred by that Gaussian (its
    edges measure blurred to vision.blur), the specks of --speckle added after, sharp."""
    import cv2

    from vision.blur import BLURRED_SIGMA, blur_sigma
    from vision.corners import Detection
    from vision.evaluate import LabelledImage, evaluate

    sharp = np.zeros((120, 200, 3), np.uint8)
    sharp[30:90, 50:150] = 200
    photo = tmp_path / "photo.png"
    cv2.imwrite(str(photo), sharp)
    seen = []

    class Keeps:
        def detect(self, image):
            seen.append(image.copy())
            return [Detection(card=Card.parse("7S"), conf=0.9, box=(60, 40, 140, 80))]

    images = [LabelledImage(photo, [("7S", (50.0, 30.0, 150.0, 90.0))])]
    for speckle in (0.0, 0.02):
        score = evaluate(Keeps(), images, "card", blur=2.5, speckle=speckle)
        assert (score.correct, score.perfect_images) == (1, 1)
    assert blur_sigma(sharp) < BLURRED_SIGMA < blur_sigma(seen[0])
    specks = (seen[1] == 0).all(axis=2) | (seen[1] == 255).all(axis=2)
    assert specks[:, :40].mean() > 0.005   # black and white specks on the black ground: not blurred away


def test_a_blur_out_of_range_is_one_clear_error(capsys):
    with pytest.raises(SystemExit):
        main(["evaluate", "photos", "--blur", "-1"])
    assert "'-1' is not a blur in pixels: give a number from 0 to 10, e.g. 2.5" in capsys.readouterr().err


def test_rendered_hands_read_blurred_are_the_same_hands_said_blurred(capsys):
    assert main(["evaluate", "--synthetic-hands", "2", "--seed", "31", "--blur", "2.5", "--json"]) == 0
    blurred = json.loads(capsys.readouterr().out)
    assert main(["evaluate", "--synthetic-hands", "2", "--seed", "31", "--json"]) == 0
    clean = json.loads(capsys.readouterr().out)
    assert (blurred["blur"], clean["blur"]) == (2.5, 0.0) and blurred["cards_dealt"] == clean["cards_dealt"]
    assert main(["evaluate", "--synthetic-hands", "1", "--seed", "31", "--held", "--blur", "2.5"]) == 0
    assert "fans held up, blurred by 2.5 px (seed 31)" in capsys.readouterr().out


def test_photos_read_smeared_come_smeared_along_the_direction_asked_and_keep_their_labels():
    """`niuniu evaluate --smear 9,60`: the reader gets each photo as a hand moving 9 px at 60
    degrees leaves it, which the reader's own smear check finds that way; the labels stay."""
    import math

    import cv2

    from vision.blur import MOTION_DIRECTIONS, line_blur_kernel, motion_blur
    from vision.corners import Detection
    from vision.evaluate import LabelledImage, evaluate

    path = sorted((Path(__file__).resolve().parent.parent / "data" / "heldout").glob("*.jpg"))[1]
    seen = []

    class Keeps:
        def detect(self, image):
            seen.append(image)
            return [Detection(card=Card.parse("7S"), conf=0.9, box=(60, 40, 140, 80))]

    score = evaluate(Keeps(), [LabelledImage(path, [("7S", (50.0, 30.0, 150.0, 90.0))])], "card", smear=(9.0, 60.0))
    assert (score.correct, score.perfect_images) == (1, 1)
    photo = cv2.imread(str(path))
    assert np.array_equal(seen[0], cv2.filter2D(photo, -1, line_blur_kernel(9, math.radians(60))))
    assert abs(math.degrees(motion_blur(seen[0])[1]) - 60) <= 180 / MOTION_DIRECTIONS


@pytest.mark.parametrize("given", ["2", "41", "9,east", "nine"])
def test_a_smear_out_of_range_or_unreadable_is_one_clear_error(capsys, given):
    with pytest.raises(SystemExit):
        main(["evaluate", "photos", "--smear", given])
    assert (f"{given!r} is not a smear: give its length in pixels from 3 to 40 and, if not 30, its direction "
            "in degrees, e.g. 9 or 9,30") in capsys.readouterr().err


def test_rendered_hands_read_smeared_are_the_same_hands_said_smeared(capsys):
    assert main(["evaluate", "--synthetic-hands", "2", "--seed", "31", "--smear", "9", "--json"]) == 0
    smeared = json.loads(capsys.readouterr().out)
    assert main(["evaluate", "--synthetic-hands", "2", "--seed", "31", "--json"]) == 0
    clean = json.loads(capsys.readouterr().out)
    assert (smeared["smear"], clean["smear"]) == ([9.0, 30.0], None)
    assert smeared["cards_dealt"] == clean["cards_dealt"]
    assert main(["evaluate", "--synthetic-hands", "1", "--seed", "31", "--held", "--smear", "9,120"]) == 0
    assert "fans held up, smeared 9 px at 120 degrees (seed 31)" in capsys.readouterr().out


def test_photos_read_brightened_lose_their_pale_ink_to_white_and_keep_their_labels(tmp_path):
    """`niuniu evaluate --gain 1.4`: every pixel times 1.4, whites clipped: a card's white and its
    pale ink turn the same white, dark ink stays ink."""
    import cv2

    from vision.corners import Detection
    from vision.evaluate import LabelledImage, evaluate

    photo = np.full((120, 200, 3), 200, np.uint8)   # a white card
    photo[40:60, 60:80] = (190, 190, 240)             # pale pink ink
    photo[70:90, 60:80] = (40, 40, 40)                # black ink
    path = tmp_path / "photo.png"
    cv2.imwrite(str(path), photo)
    seen = []

    class Keeps:
        def detect(self, image):
            seen.append(image)
            return [Detection(card=Card.parse("7S"), conf=0.9, box=(60, 40, 140, 80))]

    score = evaluate(Keeps(), [LabelledImage(path, [("7S", (50.0, 30.0, 150.0, 90.0))])], "card", gain=1.4)
    assert (score.correct, score.perfect_images) == (1, 1)
    assert (seen[0][10, 10] == 255).all() and (seen[0][50, 70] == 255).all()   # the pink faded into the white
    assert (seen[0][80, 70] == 56).all()


def test_a_gain_out_of_range_is_one_clear_error_and_hands_read_brightened_are_said_so(capsys):
    with pytest.raises(SystemExit):
        main(["evaluate", "photos", "--gain", "9"])
    assert "'9' is not a brightness gain: give a number from 0.2 to 4, e.g. 1.25" in capsys.readouterr().err
    assert main(["evaluate", "--synthetic-hands", "1", "--seed", "31", "--gain", "1.25", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["gain"] == 1.25
    assert main(["evaluate", "--synthetic-hands", "1", "--seed", "31", "--held", "--gain", "1.25"]) == 0
    assert "fans held up, brightness x1.25 (seed 31)" in capsys.readouterr().out


def test_a_photo_is_judged_mirrored_by_its_indices_together_and_one_sure_crop_cannot_outvote_them():
    from vision.mirror import CROP_LOG_ODDS_CAP, mirrored_odds

    assert mirrored_odds([0.8, 0.8, 0.5]) > 2 > mirrored_odds([0.8, 0.5, 0.5])
    assert mirrored_odds([1.0, 0.2, 0.2, 0.2]) < 0   # capped: one crop "sure" at 1.0 counts CROP_LOG_ODDS_CAP
    assert mirrored_odds([1.0]) == pytest.approx(CROP_LOG_ODDS_CAP) and mirrored_odds([]) == 0


def test_close_ups_cut_each_labelled_card_out_to_fill_the_frame_and_score_it_against_its_own_labels(tmp_path):
    """`niuniu evaluate --close-up`: each labelled card becomes a photo of its own, enlarged
    to CLOSE_UP_SIDE; a card read where its label lies in the cut-out counts as read, and a
    card far off (not in the cut) is neither a miss nor an extra there."""
    import cv2

    from vision.corners import Detection
    from vision.evaluate import CLOSE_UP_SIDE, LabelledImage, evaluate

    image = np.full((200, 400, 3), 128, np.uint8)
    image[20:180, 20:120] = (0, 0, 255)      # the seven of hearts, red
    image[20:180, 250:350] = (255, 0, 0)     # the eight of spades, blue
    photo = tmp_path / "photo.png"
    cv2.imwrite(str(photo), image)
    seen = []

    class Detector:   # reads each coloured card where it is in whatever it is given
        def detect(self, img):
            seen.append(img.shape[:2])
            found = []
            for code, channel in (("7H", 2), ("8S", 0)):
                ys, xs = np.nonzero((img[..., channel] > 200) & (img[..., 1] < 60))
                if len(xs):
                    found.append(Detection(Card.parse(code), 0.9, (xs.min(), ys.min(), xs.max(), ys.max())))
            return found

    images = [LabelledImage(photo, [("7H", (20.0, 20.0, 120.0, 180.0)), ("8S", (250.0, 20.0, 350.0, 180.0))])]
    whole = evaluate(Detector(), images, "card")
    assert (whole.images, whole.correct, whole.perfect_images) == (1, 2, 1)
    close = evaluate(Detector(), images, "card", close_up=True)
    assert [max(shape) for shape in seen[1:]] == [CLOSE_UP_SIDE, CLOSE_UP_SIDE]
    assert (close.images, close.truth, close.predicted, close.correct, close.perfect_images) == (2, 2, 2, 2, 2)


def test_rendered_hands_read_close_up_are_the_same_hands_cut_out(capsys):
    """`--synthetic-hands N --close-up` deals the same cards as without it, each hand cut out
    to fill the frame, and says so."""
    assert main(["evaluate", "--synthetic-hands", "3", "--seed", "31", "--held", "--close-up", "--json"]) == 0
    close = json.loads(capsys.readouterr().out)
    assert main(["evaluate", "--synthetic-hands", "3", "--seed", "31", "--held", "--json"]) == 0
    whole = json.loads(capsys.readouterr().out)
    assert (close["close_up"], whole["close_up"]) == (True, False)
    assert close["cards_dealt"] == whole["cards_dealt"] and close["cards_right"] >= close["cards_dealt"] - 2
    assert close["cards_dealt"] - close["cards_right"] == sum(close["missed"].values())
    assert main(["evaluate", "--synthetic-hands", "3", "--seed", "31", "--held", "--close-up"]) == 0
    assert "fans held up, close up (seed 31)" in capsys.readouterr().out


def test_rendered_hands_read_black_and_white_are_the_same_hands_and_say_so(capsys):
    """`--synthetic-hands N --grey` deals the same cards as in colour; the shipped model,
    which learnt suits by shape, still reads nearly all of them."""
    assert main(["evaluate", "--synthetic-hands", "3", "--seed", "31", "--held", "--grey", "--json"]) == 0
    grey = json.loads(capsys.readouterr().out)
    assert main(["evaluate", "--synthetic-hands", "3", "--seed", "31", "--held", "--json"]) == 0
    colour = json.loads(capsys.readouterr().out)
    assert (grey["grey"], colour["grey"]) == (True, False) and grey["cards_dealt"] == colour["cards_dealt"]
    assert grey["cards_right"] >= colour["cards_right"] - 2
    assert main(["evaluate", "--synthetic-hands", "3", "--seed", "31", "--held", "--grey"]) == 0
    assert "fans held up, black and white (seed 31)" in capsys.readouterr().out


def test_rendered_hands_read_speckled_are_the_same_hands_read_through_the_filter(capsys):
    """`--synthetic-hands N --speckle 0.05` deals the same cards (the specks have their own
    random stream); the photo reader, reading through its median filter, keeps nearly all."""
    assert main(["evaluate", "--synthetic-hands", "3", "--seed", "31", "--speckle", "0.05", "--json"]) == 0
    noisy = json.loads(capsys.readouterr().out)
    assert main(["evaluate", "--synthetic-hands", "3", "--seed", "31", "--json"]) == 0
    clean = json.loads(capsys.readouterr().out)
    assert (noisy["speckle"], clean["speckle"]) == (0.05, 0.0) and noisy["cards_dealt"] == clean["cards_dealt"]
    assert noisy["cards_right"] >= clean["cards_right"] - 2
    assert main(["evaluate", "--synthetic-hands", "1", "--seed", "31", "--speckle", "0.05"]) == 0
    assert "hands, 5.0% of the pixels speckled (seed 31)" in capsys.readouterr().out


def test_a_stretch_that_is_not_two_factors_or_given_to_rendered_hands_is_one_clear_error(capsys):
    with pytest.raises(SystemExit):
        main(["evaluate", "some-photos", "--stretch", "0.75"])
    assert "'0.75' is not two factors: give ACROSS,DOWN, e.g. 0.75,1" in capsys.readouterr().err
    assert main(["evaluate", "--synthetic-hands", "2", "--stretch", "0.75,1"]) != 0
    err = capsys.readouterr().err
    assert "--stretch resizes labelled photos" in err and len(err.strip().splitlines()) == 1


def test_photo_commands_read_re_stretched_and_zoomed_out_unless_told_read_once_and_the_table_pipeline_reads_once():
    """`niuniu detect` and `niuniu evaluate` read each photo also re-stretched (PHOTO_ASPECTS)
    and zoomed out; `--read-once` (or its first name, `--one-aspect`) reads once, as a
    detector built without them (the table pipeline's) does."""
    from kiosk.cli import build_parser
    from vision.detector import PHOTO_ASPECTS, CardDetector
    from vision.model_cli import _detector

    parser = build_parser()
    for argv in (["detect", "a.jpg"], ["evaluate", "photos"]):
        reader = _detector(parser.parse_args(argv))
        assert (reader.aspects, reader.zoom_out, reader.mirror_judge is not None, reader.despeckle,
                reader.sharpen) == (PHOTO_ASPECTS, True, True, True, True)
    for flag in ("--read-once", "--one-aspect"):
        reader = _detector(parser.parse_args(["detect", "a.jpg", flag]))
        assert (reader.aspects, reader.zoom_out, reader.mirror_judge, reader.despeckle, reader.sharpen) == \
            ((), False, None, False, False)
    table = CardDetector()
    assert (table.aspects, table.zoom_out, table.mirror_judge, table.despeckle, table.sharpen) == \
        ((), False, None, False, False)
