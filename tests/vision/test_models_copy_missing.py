"""A copy of models/ that missed a file (QA 51): without card-orientation.pt (M8) the shipped
classifiers, trained on upright crops, misread more and `niuniu check` must say so; without
card-classifier.pt (L3) the fix must be one the kiosk and `niuniu check` can follow."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from kiosk.preflight import OK, WARN, check_device
from vision.detector import MODELS_DIR, CardDetector, ModelError

pytest.importorskip("ultralytics")
DEMO = Path(__file__).resolve().parents[2] / "datasets" / "demo"


def card_model(tmp_path, *names: str, **options) -> CardDetector:
    folder = tmp_path / "models"
    folder.mkdir()
    for name in ("index-detector.pt", "card-classifier.pt", *names):
        shutil.copy(MODELS_DIR / name, folder / name)
    return CardDetector(folder / "index-detector.pt", second_opinion=False, **options)


def reader_finding(tmp_path, detector):
    table = tmp_path / "table.yaml"
    table.write_text(yaml.safe_dump({**yaml.safe_load((DEMO / "table.yaml").read_text()),
                                     "camera": {"source": str(DEMO / "frames"), "move_limit": 0}}))
    (tmp_path / "data").mkdir(exist_ok=True)
    return next(f for f in check_device(table, tmp_path / "data", camera=False, reader=lambda: detector)
                if f.part == "card model")


def test_check_warns_of_a_missing_orientation_model_and_names_the_file(tmp_path):
    detector = card_model(tmp_path, "card-mirror.pt", unmirror=True)
    assert detector.orientation_missing == tmp_path / "models" / "card-orientation.pt"
    finding = reader_finding(tmp_path, detector)
    assert finding.level == WARN, finding
    assert f"{tmp_path / 'models' / 'card-orientation.pt'} is missing" in finding.message
    assert "restore models/card-orientation.pt from the repository" in finding.message


def test_with_the_orientation_model_beside_the_classifier_nothing_is_missing(tmp_path):
    detector = card_model(tmp_path, "card-orientation.pt", "card-mirror.pt", unmirror=True)
    assert detector.orientation_missing is None and detector.orientation_path.name == "card-orientation.pt"
    finding = reader_finding(tmp_path, detector)
    assert finding.level == OK and "card-orientation.pt + card-classifier.pt" in finding.message, finding


def test_a_missing_classifier_beside_the_detector_says_to_restore_it_not_to_pass_an_option(tmp_path):
    """Neither `niuniu kiosk` nor `niuniu check` has --classifier: the classifier is found
    beside --model."""
    folder = tmp_path / "models"
    folder.mkdir()
    shutil.copy(MODELS_DIR / "index-detector.pt", folder / "index-detector.pt")
    with pytest.raises(ModelError) as raised:
        CardDetector(folder / "index-detector.pt")
    assert f"{folder / 'card-classifier.pt'} not found" in str(raised.value)
    assert "restore models/card-classifier.pt from the repository" in str(raised.value)
    assert "--classifier" not in str(raised.value)
