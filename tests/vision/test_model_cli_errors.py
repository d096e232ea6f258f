"""`niuniu detect / evaluate / export / bench` given bad input: one line naming the file (or
the flag) and the fix, never a traceback; damaged images named, not read half; the card
model's slots refuse a model of the wrong kind.

Most tests here stand a stub in for the card model (``vision.model_cli._detector``): what
they check happens before or around the reading, and loading the real models takes
seconds on a small machine.  The model-kind tests load only the one file they refuse.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

from kiosk.cli import main
from scoring.cards import Card
from vision.corners import Detection
from vision.detector import MODELS_DIR, ModelError

HELD_OUT = Path(__file__).resolve().parent.parent / "data" / "heldout"


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


class StubReader:
    """Stands in for the card model: reads the seven of hearts in the middle of every image."""

    def __init__(self):
        self.shapes = []

    def detect(self, image):
        self.shapes.append(image.shape)
        h, w = image.shape[:2]
        return [Detection(Card.parse("7H"), 0.9, (w * 0.4, h * 0.4, w * 0.6, h * 0.6))]


@pytest.fixture
def stub(monkeypatch):
    reader = StubReader()
    monkeypatch.setattr("vision.model_cli._detector", lambda args: reader)
    return reader


def _photo(path: Path, size=(48, 64)) -> Path:
    """A small image with detail in it (a JPEG of a flat colour is all header)."""
    rng = np.random.default_rng(len(str(path)))
    image = rng.integers(0, 255, (*size, 3), dtype=np.uint8)
    assert cv2.imwrite(str(path), image)
    return path


def _truncated(src: Path, dest: Path, keep: float = 0.5) -> Path:
    data = src.read_bytes()
    dest.write_bytes(data[:int(len(data) * keep)])
    return dest


# ------------------------------------------------------------------ damaged images

def test_a_truncated_jpeg_is_refused_naming_it_and_the_rest_of_the_batch_is_read(tmp_path, stub, capfd):
    """OpenCV decodes the half of a JPEG it has and fills the rest grey; libjpeg's only sign
    is a line on the process's stderr that names no file.  Two of a photo's four cards were
    lost that way, with exit 0.  Now: one line naming the file, the other images read, exit 2."""
    good = _photo(tmp_path / "good.jpg", (200, 300))
    cut = _truncated(good, tmp_path / "cut.jpg")
    code = main(["detect", str(cut), str(good)])
    out, err = capfd.readouterr()
    assert code == 2
    assert err.splitlines() == [f"niuniu detect: error: {cut} is truncated or corrupt (its JPEG data ends early); "
                                "re-copy the file"]
    assert [json.loads(line)["image"] for line in out.splitlines()] == [str(good)]
    assert len(stub.shapes) == 1


def test_a_jpeg_libjpeg_reads_only_in_part_is_refused_whatever_its_end_says(tmp_path):
    """The end marker put back after half the data: libjpeg still warns (to fd 2), and that warning is the sign."""
    from vision.images import ImageError, read_image

    good = _photo(tmp_path / "good.jpg", (200, 300))
    data = good.read_bytes()
    (tmp_path / "patched.jpg").write_bytes(data[:len(data) // 2] + b"\xff\xd9")
    with pytest.raises(ImageError, match=r"patched.jpg is truncated or corrupt \(libjpeg: .*premature end"):
        read_image(tmp_path / "patched.jpg")
    # Bytes after the end marker (some phones append data) are no damage.
    (tmp_path / "trailing.jpg").write_bytes(data + b"\x00" * 64 + b"appended")
    assert read_image(tmp_path / "trailing.jpg").shape == (200, 300, 3)


def test_a_jpegs_end_is_found_past_an_exif_thumbnail_that_has_an_end_marker_of_its_own():
    from vision.images import _jpeg_ends_early

    ok, thumb = cv2.imencode(".jpg", np.full((8, 8, 3), 99, np.uint8))
    ok, main_jpeg = cv2.imencode(".jpg", np.random.default_rng(1).integers(0, 255, (64, 64, 3), dtype=np.uint8))
    payload = b"Exif\x00\x00" + thumb.tobytes()
    app1 = b"\xff\xe1" + (len(payload) + 2).to_bytes(2, "big") + payload
    whole = main_jpeg.tobytes()[:2] + app1 + main_jpeg.tobytes()[2:]
    assert not _jpeg_ends_early(whole)
    assert _jpeg_ends_early(whole[:len(whole) - 200])    # the thumbnail's FF D9 does not count
    assert _jpeg_ends_early(whole[:len(app1)])           # cut among the headers


@pytest.mark.parametrize("suffix", [".png", ".tif"])
def test_a_damaged_png_or_tiff_is_one_line_without_the_decoders_own_messages(tmp_path, stub, capfd, suffix):
    """libpng ("libpng error: Read Error") and OpenCV's TIFF log ("[ WARN:0@5.6] global
    grfmt_tiff.cpp ...") printed their own lines, naming no file, before ours."""
    src = _photo(tmp_path / f"whole{suffix}", (200, 300))
    cut = _truncated(src, tmp_path / f"cut{suffix}", 0.6)
    assert main(["detect", str(cut)]) == 2
    err = capfd.readouterr().err.splitlines()
    assert len(err) == 1 and str(cut) in err[0] and "truncated or corrupt" in err[0], err


def test_an_empty_file_and_a_text_file_say_what_they_are(tmp_path):
    from vision.images import ImageError, read_image

    (tmp_path / "empty.jpg").write_bytes(b"")
    (tmp_path / "notes.jpg").write_text("hello")
    with pytest.raises(ImageError, match="empty.jpg is empty"):
        read_image(tmp_path / "empty.jpg")
    with pytest.raises(ImageError, match="notes.jpg is not a readable image"):
        read_image(tmp_path / "notes.jpg")


def test_a_path_that_is_there_but_no_file_is_not_said_to_be_missing(capsys):
    code, out, err = run(capsys, "detect", "/dev/null")
    assert code == 2 and out == ""
    assert err.strip() == "niuniu detect: error: image /dev/null is not a regular file; give an image file or a " \
                          "folder of them"


# ------------------------------------------------------------------ numbers checked at argparse time

@pytest.mark.parametrize("argv, said", [
    (["detect", "x.jpg", "--conf", "2"], "'2' is not a confidence: give a number from 0 to 1"),
    (["detect", "x.jpg", "--conf", "-1"], "'-1' is not a confidence"),
    (["detect", "x.jpg", "--conf", "nan"], "'nan' is not a confidence"),
    (["detect", "x.jpg", "--imgsz", "0"], "'0' is not a detector input size: give a whole number of pixels from 32 "
                                          "to 4096, a multiple of 32"),
    (["detect", "x.jpg", "--imgsz", "-64"], "'-64' is not a detector input size"),
    (["detect", "x.jpg", "--imgsz", "100000"], "'100000' is not a detector input size"),
    (["detect", "x.jpg", "--imgsz", "400"], "'400' is not a detector input size"),
    (["evaluate", "--synthetic-hands", "-5"], "'-5' is not a number of hands: give a whole number from 1"),
    (["evaluate", "--synthetic-hands", "0"], "'0' is not a number of hands"),
    (["evaluate", "x", "--limit", "-1"], "'-1' is not a number of images"),
    (["evaluate", "x", "--limit", "0"], "'0' is not a number of images"),
    (["evaluate", "x", "--conf", "1.5"], "'1.5' is not a confidence"),
    (["bench", "--frames", "0"], "'0' is not a number of frames: give a whole number from 1"),
    (["bench", "--frames", "-2"], "'-2' is not a number of frames"),
    (["bench", "--imgsz", "0"], "'0' is not a detector input size"),
    (["export", "w.pt", "--imgsz", "0"], "'0' is not an input size"),
    (["train", "detect", "--data", "d", "--epochs", "0"], "'0' is not a number of epochs"),
    (["datasets", "synth", "--out", "o", "--images", "-3"], "'-3' is not a number of scenes"),
    (["datasets", "synth", "--out", "o", "--images", "3", "--val-images", "-1"], "'-1' is not a number of scenes"),
])
def test_a_number_out_of_range_is_refused_before_anything_runs(capsys, argv, said):
    """``--conf 2`` ended in ultralytics' traceback, ``--imgsz 100000`` in OpenCV asking for
    30 GB, and ``--imgsz 0``, ``--frames 0`` or ``--synthetic-hands -5`` in a result read
    from nothing, with exit 0."""
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err


def test_no_validation_scenes_is_a_top_up_the_model_cards_recipes_use():
    """The model card's exact commands make training top-ups with ``--val-images 0``; the range
    check refused 0, so 25 of its recipes failed as written."""
    from kiosk.cli import build_parser

    args = build_parser().parse_args(["datasets", "synth", "--out", "o", "--images", "3", "--val-images", "0"])
    assert args.val_images == 0


# ------------------------------------------------------------------ the model's slots

def test_a_classifier_given_as_the_index_detector_is_refused(capsys):
    """It loaded and ran, found no box in any image, and every reading said "no cards" with
    exit 0 (in `detect`, `replay` and a kiosk alike): a table would read nothing, silently."""
    from vision.detector import CardDetector, IndexFinder

    classifier = MODELS_DIR / "card-classifier.pt"
    with pytest.raises(ModelError) as refused:
        CardDetector(classifier, classifier)
    assert str(refused.value) == (f"index detector model {classifier} is a classify model (53 classes), not the "
                                  f"index detector (detect: index, card); pass --model "
                                  f"{MODELS_DIR / 'index-detector.pt'} or leave --model out")
    with pytest.raises(ModelError, match="card-mirror.pt is a classify model \\(2 classes: mirrored, printed\\)"):
        IndexFinder(MODELS_DIR / "card-mirror.pt")
    code, out, err = run(capsys, "detect", "--model", classifier, sorted(HELD_OUT.glob("*.jpg"))[0])
    assert code == 2 and out == "" and err.count("\n") == 1 and "is a classify model" in err


def test_an_onnx_model_without_onnxruntime_is_refused_before_ultralytics_downloads_it(monkeypatch):
    """The Pi's install has no onnxruntime: ultralytics then tried to pip-install it at the
    first reading, at the table's start, as a service user without the network."""
    import importlib.util

    from vision.detector import IndexFinder

    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "onnxruntime"
                        else find_spec(name, *a))
    with pytest.raises(ModelError) as refused:
        IndexFinder(MODELS_DIR / "index-detector.onnx")
    assert "is ONNX, but this Python has no onnxruntime" in str(refused.value)
    assert "pass --model-format ncnn" in str(refused.value)


def test_an_exported_classifier_given_as_the_index_detector_is_refused_by_its_metadata():
    """An ONNX classifier in the detector's place failed inside ultralytics ("input shape last
    dimension expected 4"), reported as a corrupt file."""
    from vision.detector import IndexFinder

    with pytest.raises(ModelError, match="card-classifier.onnx is a classify model \\(53 classes\\), not the index "
                                         "detector"):
        IndexFinder(MODELS_DIR / "card-classifier.onnx")


def test_a_detect_model_of_other_classes_is_refused_as_the_index_detector(tmp_path):
    """A COCO-style detector's first class would be read as corner indices."""
    import torch

    from vision.detector import DETECTOR_CLASSES, IndexFinder
    from vision.synth.scene import CLASS_NAMES

    assert DETECTOR_CLASSES == CLASS_NAMES   # what the detector is trained on is what its slot asks for

    checkpoint = torch.load(MODELS_DIR / "index-detector.pt", map_location="cpu", weights_only=False)
    checkpoint["model"].names = {0: "person", 1: "bicycle"}
    torch.save(checkpoint, tmp_path / "coco.pt")
    with pytest.raises(ModelError, match="coco.pt is a detect model of other classes \\(2 classes: person, bicycle\\), "
                                         "not the index detector \\(detect: index, card\\)"):
        IndexFinder(tmp_path / "coco.pt")


def test_the_kiosk_refuses_a_classifier_as_its_detector():
    """The kiosk builds its reader through ``kiosk.commands._detector`` (and retries without the
    mirror judge on a ModelError): the wrong file must stop it, not start a table that reads nothing."""
    from kiosk.commands import _detector

    args = argparse.Namespace(model=str(MODELS_DIR / "card-classifier.pt"), model_format="pt", no_tta=False)
    with pytest.raises(ModelError, match="is a classify model"):
        _detector(args)


@pytest.mark.parametrize("make, said", [
    (lambda d: d.mkdir() or d, "is a folder but not an NCNN model (it holds no model.ncnn.param)"),
    (lambda d: (d.with_suffix(".txt").write_text("x" * 2000), d.with_suffix(".txt"))[1],
     "is not a model file the reader runs (.pt, .onnx or an _ncnn_model folder)"),
    (lambda d: (d.with_suffix(".pt").write_bytes(b"not a model" * 500), d.with_suffix(".pt"))[1],
     "could not be loaded (TypeError: "),
])
def test_a_model_path_that_is_no_model_is_one_plain_line(tmp_path, capsys, make, said):
    """A folder got ultralytics' list of twenty formats it supports, a damaged .pt its
    "ERROR ❌️ ... is not a loadable checkpoint" banner: our line now says it plainly."""
    bad = make(tmp_path / "bad")
    code, out, err = run(capsys, "detect", "--model", bad, sorted(HELD_OUT.glob("*.jpg"))[0])
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert str(bad) in err and said in err
    assert "❌" not in err and "Ultralytics supports" not in err


# ------------------------------------------------------------------ export

@pytest.mark.parametrize("name, said", [
    ("folder", "is a folder, not trained weights"),
    ("notes.txt", "is not PyTorch weights (.pt)"),
    ("junk.pt", "could not be loaded"),
    ("lfs.pt", "is only 43 bytes: truncated or a Git LFS pointer"),
])
def test_export_of_a_file_that_is_no_weights_is_one_line(tmp_path, capsys, name, said):
    path = tmp_path / name
    if name == "folder":
        path.mkdir()
    elif name == "lfs.pt":
        path.write_bytes(b"version https://git-lfs.github.com/spec/v1\n")
    else:
        path.write_bytes(b"not a model" * 500)
    code, out, err = run(capsys, "export", path, "--imgsz", "384", "--format", "onnx")
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert err.startswith(f"niuniu export: error: {path} ") and said in err
    assert list(tmp_path.glob("*.onnx")) == []


# ------------------------------------------------------------------ evaluate: bad data

NAMES = "names: ['7 of hearts', 'ace of spades']\n"


def _yolo_set(root: Path, data_yaml: str = NAMES, labels: dict | None = None, images=("a.jpg",)) -> Path:
    """A tiny YOLO set: ROOT/data.yaml, ROOT/test/images/*, ROOT/test/labels/*.txt."""
    (root / "test" / "images").mkdir(parents=True)
    (root / "test" / "labels").mkdir()
    (root / "data.yaml").write_text(data_yaml)
    for name in images:
        _photo(root / "test" / "images" / name)
    for name, text in (labels if labels is not None else {"a.txt": "0 0.5 0.5 0.4 0.4\n"}).items():
        (root / "test" / "labels" / name).write_text(text)
    return root


@pytest.mark.parametrize("data_yaml, said", [
    ("names: [unclosed\n", "data.yaml is not valid YAML (expected ',' or ']', but got '<stream end>' at line 2, "
                           "column 1); fix the file"),
    ("nc: 52\n", "data.yaml has no 'names' list of classes; add one, e.g. names: ['10 of clubs'"),
    ("", "data.yaml has no 'names' list of classes"),
    ("- just a list\n", "data.yaml has no 'names' list of classes"),
    ("names: ['cat', 'dog']\n", "data.yaml: class 0 'cat' is not a card; name each class as a card"),
    ("names: ['joker']\n", "data.yaml: class 0 'joker' is not a card"),
    ("names: {0: AS, 2: KD}\n", "data.yaml: the class ids of 'names' must run 0, 1, 2, ..."),
    ("nc: 3\nnames: [AS, KD]\n", "data.yaml: nc is 3 but 'names' lists 2 classes; make them agree"),
    ("names: 7\n", "data.yaml: 'names' must list the classes"),
])
def test_a_bad_data_yaml_is_one_line_naming_it(tmp_path, stub, capsys, data_yaml, said):
    root = _yolo_set(tmp_path / "set", data_yaml)
    code, out, err = run(capsys, "evaluate", root)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert err.startswith(f"niuniu evaluate: error: {root / 'data.yaml'}") and said in err
    assert stub.shapes == []


def test_a_data_yaml_that_is_a_folder_is_one_line(tmp_path, stub, capsys):
    root = tmp_path / "set"
    (root / "data.yaml").mkdir(parents=True)
    code, _, err = run(capsys, "evaluate", root)
    assert code == 2 and err.strip() == (f"niuniu evaluate: error: {root / 'data.yaml'} is a folder, not a YOLO data "
                                         "file; give a set root whose data.yaml names its classes")


@pytest.mark.parametrize("line, said", [
    ("x 0.5 0.5 0.1 0.1", "line 2: class 'x' is not a class number; a YOLO label line is: class x_center"),
    ("99 0.5 0.5 0.1 0.1", "line 2: class 99 is not in data.yaml's 2 names (0 to 1); fix the label or data.yaml"),
    ("-1 0.5 0.5 0.1 0.1", "line 2: class -1 is not in data.yaml's 2 names"),
    ("0 0.5 0.5 2 abc", "line 2: 'abc' is not a number"),
    ("1 320 240 50 80", "line 2: coordinates 320 240 50 80 are not fractions 0 to 1 of the image (pixels?)"),
])
def test_a_bad_label_line_is_one_line_naming_the_file_and_line(tmp_path, stub, capsys, line, said):
    root = _yolo_set(tmp_path / "set", labels={"a.txt": f"0 0.5 0.5 0.4 0.4\n{line}\n"})
    code, out, err = run(capsys, "evaluate", root)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert err.startswith(f"niuniu evaluate: error: {root / 'test' / 'labels' / 'a.txt'} ") and said in err


@pytest.mark.parametrize("xml, said", [
    ("<annotation><filename>a.jpg</filename><object><name>ace</name>", "is not readable VOC XML (no element found"),
    ("<annotation><filename>a.jpg</filename><object><name>ace</name></object></annotation>",
     "object 1 has no <name> or no <bndbox> with numbers xmin, ymin, xmax, ymax"),
    ("<annotation><object><name>ace</name><bndbox><xmin>a</xmin></bndbox></object></annotation>",
     "object 1 has no <name> or no <bndbox>"),
])
def test_a_bad_voc_file_is_one_line_naming_it(tmp_path, stub, capsys, xml, said):
    _photo(tmp_path / "a.jpg")
    (tmp_path / "a.xml").write_text(xml)
    code, out, err = run(capsys, "evaluate", tmp_path)
    assert code == 2 and out == "" and err.count("\n") == 1, err
    assert err.startswith(f"niuniu evaluate: error: {tmp_path / 'a.xml'}") and said in err


def test_a_missing_split_or_folder_is_named(tmp_path, stub, capsys):
    root = _yolo_set(tmp_path / "set")
    code, _, err = run(capsys, "evaluate", root, "--split", "nosuch")
    assert code == 2 and err.strip() == (f"niuniu evaluate: error: {root} has no split 'nosuch': neither "
                                         f"{root / 'nosuch' / 'images'} nor {root / 'images' / 'nosuch'} exists; "
                                         "pass --split one of test")
    code, _, err = run(capsys, "evaluate", tmp_path / "gone")
    assert code == 2 and "gone does not exist" in err


# ------------------------------------------------------------------ evaluate: what it reads and passes over

def test_evaluate_reads_the_dict_form_of_names_every_image_suffix_and_polygons(tmp_path, stub, capsys):
    """ultralytics writes ``names: {0: ...}``; sets come as .png and .JPG as well as .jpg; a
    segmentation set's polygon line is a box too.  Only *.jpg was read before, and the dict
    form ended in a traceback."""
    labels = {"a.txt": "1 0.5 0.5 0.4 0.4\n", "b.txt": "0 0.5 0.5 0.2 0.2\n",
              "c.txt": "0 0.4 0.4 0.6 0.4 0.6 0.6 0.4 0.6\n"}
    root = _yolo_set(tmp_path / "set", "names:\n  0: 7 of hearts\n  1: AS\n", labels, ("a.jpg", "b.png", "c.JPG"))
    code, out, err = run(capsys, "evaluate", root, "--json")
    assert code == 0 and err == "", err
    result = json.loads(out)
    assert (result["images"], result["truth"], result["correct"]) == (3, 3, 2)   # the stub reads 7H in each middle
    assert result["top_confusions"] == {"AS->7H": 1}
    assert result["skipped"] == [] and result["damaged"] == []


def test_evaluate_says_what_it_passed_over(tmp_path, stub, capsys):
    """A short label line (its card vanished from the truth, and "all cards right in 100%"
    was reported on the rest), a file that is no image and a label without its image were
    passed over without a word."""
    labels = {"a.txt": "0 0.5 0.5 0.4 0.4\n0 0.5 0.5\n", "gone.txt": "0 0.5 0.5 0.1 0.1\n"}
    root = _yolo_set(tmp_path / "set", labels=labels)
    (root / "test" / "images" / "notes.txt").write_text("shot on a phone")
    code, out, err = run(capsys, "evaluate", root)
    assert code == 0
    from vision.sources import IMAGE_SUFFIXES

    lab = root / "test" / "labels" / "a.txt"
    assert err.splitlines() == [
        f"niuniu evaluate: warning: {root / 'test' / 'images'}: 1 files are not images "
        f"({', '.join(IMAGE_SUFFIXES)}) and are not read: notes.txt",
        f"niuniu evaluate: warning: {lab} line 2: 3 fields, not 5 (class x_center y_center width height); the line "
        "is left out of the truth: '0 0.5 0.5'",
        f"niuniu evaluate: warning: {root / 'test' / 'labels'}: 1 label files have no image in "
        f"{root / 'test' / 'images'} and are not read: gone.txt"]
    assert out.strip().endswith("of 1 images; left out: 3 passed over (label lines or files: see the warnings)")


def test_evaluate_names_a_damaged_image_scores_the_rest_and_exits_2(tmp_path, stub, capsys):
    """A truncated JPEG was read half grey and its lost cards scored as misses."""
    root = _yolo_set(tmp_path / "set", labels={"a.txt": "0 0.5 0.5 0.4 0.4\n", "b.txt": "0 0.5 0.5 0.4 0.4\n"},
                     images=("a.jpg", "b.jpg"))
    b = root / "test" / "images" / "b.jpg"
    _truncated(_photo(b, (200, 300)), b)
    code, out, err = run(capsys, "evaluate", root, "--json")
    assert code == 2
    assert err.splitlines() == [f"niuniu evaluate: error: {b} is truncated or corrupt (its JPEG data ends early); "
                                "re-copy the file; left out of the score"]
    result = json.loads(out)
    assert result["images"] == 1 and result["correct"] == 1 and len(result["damaged"]) == 1


def test_evaluate_reads_a_voc_set_and_says_which_labels_have_no_image(tmp_path, stub, capsys):
    _photo(tmp_path / "a.PNG")
    box = "<bndbox><xmin>10</xmin><ymin>10</ymin><xmax>50</xmax><ymax>40</ymax></bndbox>"
    (tmp_path / "a.xml").write_text(f"<annotation><object><name>ace</name>{box}</object></annotation>")
    (tmp_path / "b.xml").write_text(f"<annotation><filename>b.jpg</filename><object><name>ace</name>{box}"
                                    "</object></annotation>")
    code, out, err = run(capsys, "evaluate", tmp_path, "--json")
    assert code == 0
    assert err.strip() == (f"niuniu evaluate: warning: {tmp_path / 'b.xml'}: its image (b.jpg) is not in {tmp_path}; "
                           "its labels are left out")
    assert json.loads(out)["images"] == 1


def test_real_crops_reads_a_set_the_same_way(tmp_path):
    """``vision.real_crops`` loads YOLO sets through ``load_yolo_set`` too: without a place to
    say what it passes over, a damaged image is an error there, not a traceback."""
    from vision.images import ImageError
    from vision.evaluate import load_yolo_set

    root = _yolo_set(tmp_path / "set", labels={"a.txt": "0 0.5 0.5 0.5 0.5\n", "b.txt": ""}, images=("a.jpg", "b.jpg"))
    images, mode = load_yolo_set(root, "test")
    assert mode == "card" and [im.truth for im in images][0] == [("7H", (16.0, 12.0, 48.0, 36.0))]
    (root / "test" / "images" / "b.jpg").write_text("not a photo")
    with pytest.raises(ImageError, match="b.jpg is not a readable image"):
        load_yolo_set(root, "test")
    shutil.rmtree(root / "test")
    assert load_yolo_set(root, "test") == ([], "card")


@pytest.mark.parametrize("frames, imgsz, said", [(0, 384, "frames 0: time at least 1 frame"),
                                                 (-2, 384, "frames -2"),
                                                 (3, 0, "imgsz 0: give the detector's input size")])
def test_bench_called_as_a_library_refuses_nothing_to_time_too(frames, imgsz, said):
    from scoring.errors import NiuniuError
    from vision.benchmark import run_bench

    with pytest.raises(NiuniuError, match=said):
        run_bench(str(HELD_OUT), MODELS_DIR, frames, imgsz)


def test_a_gif_is_read_where_opencv_cannot(tmp_path, monkeypatch):
    """The Pi's OpenCV (below 4.12, for apt's picamera2) decodes no GIF: Pillow reads it."""
    from PIL import Image

    from vision.images import read_image

    Image.new("RGB", (40, 30), (200, 10, 20)).save(tmp_path / "f.gif")
    monkeypatch.setattr("vision.images.cv2.imdecode", lambda *a, **k: None)
    image = read_image(tmp_path / "f.gif")
    assert image.shape == (30, 40, 3) and tuple(int(v) for v in image[5, 5]) == (20, 10, 200)   # BGR
