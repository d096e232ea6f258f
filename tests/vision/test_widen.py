"""Growing the shipped detector (or classifier) into a wider model: it must start out
reading exactly what the shipped one reads, and its doubled channels must be free to
learn apart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scoring.errors import NiuniuError
from vision.detector import MODELS_DIR

torch = pytest.importorskip("torch", reason="widening needs the ml extra")
from vision.train import trained_model  # noqa: E402
from vision.widen import widen  # noqa: E402

SHIPPED = MODELS_DIR / "index-detector.pt"
HELD_OUT = Path(__file__).resolve().parent.parent / "data" / "heldout"


def _model(path):
    return trained_model(path, "detector weights")[1].float().eval()


@pytest.fixture(scope="module")
def wide(tmp_path_factory):
    return widen(SHIPPED, "yolo11s.yaml", tmp_path_factory.mktemp("wide") / "wide.pt")


@pytest.fixture(scope="module")
def narrow():
    return _model(SHIPPED)


@pytest.fixture(scope="module")
def grown(wide):
    return _model(wide)


def _held_out_readings(detector, classifier):
    """What the reader finds on each committed held-out table, in its order."""
    import cv2

    from vision.detector import CardDetector

    reader = CardDetector(detector, classifier, second_opinion=False)
    return [reader.detect(cv2.imread(str(HELD_OUT / name)))
            for name in sorted(json.loads((HELD_OUT / "truth.json").read_text()))]


@pytest.fixture(scope="module")
def shipped_readings():
    return _held_out_readings(SHIPPED, MODELS_DIR / "card-classifier.pt")


def test_the_wider_detector_starts_as_the_shipped_one(narrow, grown):
    assert sum(p.numel() for p in grown.parameters()) > 3 * sum(p.numel() for p in narrow.parameters())
    image = torch.rand(1, 3, 256, 320)
    with torch.no_grad():
        before, after = narrow(image)[0], grown(image)[0]
    assert before.shape == after.shape
    # both files hold fp16 weights: equal to their rounding (measured 6e-7 of the largest output in fp32)
    assert (before - after).abs().max() < 1e-3 * before.abs().max()


def test_the_wider_detector_reads_the_held_out_tables_as_the_shipped_one(wide, shipped_readings):
    for read_wide, read in zip(_held_out_readings(wide, MODELS_DIR / "card-classifier.pt"), shipped_readings,
                               strict=True):
        assert sorted(d.card.code for d in read_wide) == sorted(d.card.code for d in read)


def test_the_wider_classifier_reads_the_held_out_tables_as_the_shipped_one(tmp_path, shipped_readings):
    grown_classifier = widen(MODELS_DIR / "card-classifier.pt", "yolo11s-cls.yaml", tmp_path / "wide-cls.pt")
    assert grown_classifier.stat().st_size > 2 * (MODELS_DIR / "card-classifier.pt").stat().st_size
    for read_wide, read in zip(_held_out_readings(SHIPPED, grown_classifier), shipped_readings, strict=True):
        assert [d.card.code for d in read_wide] == [d.card.code for d in read]
        # fp16 weights in both files: confidences equal to their rounding
        assert max((abs(a.conf - b.conf) for a, b in zip(read_wide, read)), default=0) < 0.01


def test_the_copies_of_a_channel_are_not_twins(narrow, grown):
    """Equal halves would give both copies the same gradient for ever: the split differs."""
    w_small, w_big = narrow.model[1].conv.weight, grown.model[1].conv.weight   # fed by a doubled layer 0
    assert w_big.shape[0] == 2 * w_small.shape[0] and w_big.shape[1] == 2 * w_small.shape[1]
    assert not torch.allclose(w_big[0], w_big[1])                       # two copies of output channel 0
    summed = w_big[0::2, 0::2] + w_big[0::2, 1::2]                      # the two copies of each input, added
    assert torch.allclose(summed, w_small, atol=2e-3 * w_small.abs().max().item())


def test_what_cannot_be_widened_says_so(tmp_path):
    with pytest.raises(NiuniuError, match="no weights to widen"):
        widen(tmp_path / "missing.pt", "yolo11s.yaml", tmp_path / "w.pt")
    broken = tmp_path / "broken.pt"
    broken.write_bytes(b"not a checkpoint")
    with pytest.raises(NiuniuError, match="not an ultralytics checkpoint"):
        widen(broken, "yolo11s.yaml", tmp_path / "w.pt")
    with pytest.raises(NiuniuError, match="other layers"):
        widen(SHIPPED, "yolov8s.yaml", tmp_path / "w.pt")          # another family: nothing to map
    with pytest.raises(NiuniuError, match="cannot build"):
        widen(SHIPPED, "no-such-model.yaml", tmp_path / "w.pt")
    assert not (tmp_path / "w.pt").exists()


def test_only_trained_weights_are_widened_for_training(tmp_path):
    from vision.train import train

    crops = tmp_path / "crops"
    crops.mkdir()
    with pytest.raises(NiuniuError, match="--widen-to grows a trained classify model: give its weights"):
        train("classify", crops, project=tmp_path, name="x", epochs=1, model="yolo11n-cls.yaml",
              widen_to="yolo11s-cls.yaml")
    with pytest.raises(NiuniuError, match="other layers"):       # a detector is not grown into a classifier
        widen(SHIPPED, "yolo11s-cls.yaml", tmp_path / "w.pt")
