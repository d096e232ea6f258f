"""The mirror judge's fix words (QA52): the judge file is found beside the card classifier or in
models/, and no option of any command names it; `--model` names the index detector, so
"pass --model models/card-mirror.pt" would have the table read its cards with the judge."""

from __future__ import annotations

import shutil

import pytest

from vision.detector import MODELS_DIR

pytest.importorskip("ultralytics", reason="the card model needs the ml extra: pip install -e '.[ml]'")


def test_a_judge_file_that_is_no_judge_says_to_restore_it_in_niuniu_detect_and_check(tmp_path, capsys):
    from kiosk.cli import main

    folder = tmp_path / "models"
    folder.mkdir()
    for name in ("index-detector.pt", "card-classifier.pt", "card-orientation.pt"):
        shutil.copy(MODELS_DIR / name, folder / name)
    shutil.copy(MODELS_DIR / "index-detector.pt", folder / "card-mirror.pt")     # a detect model, not a judge
    photo = tmp_path / "table.png"
    shutil.copy(sorted((MODELS_DIR.parent / "datasets" / "demo" / "frames").iterdir())[0], photo)

    code = main(["detect", "--model", str(folder / "index-detector.pt"), "--no-second-opinion", str(photo)])
    err = capsys.readouterr().err
    assert code == 2 and f"mirror-judge classifier model {folder / 'card-mirror.pt'} is a detect model" in err, err
    assert "restore models/card-mirror.pt from the repository" in err and "--model" not in err, err

    from kiosk.commands import _detector       # `niuniu kiosk` and `niuniu check`: the table runs on, unchecked
    import argparse
    detector = _detector(argparse.Namespace(model=str(folder / "index-detector.pt"), model_format="pt"))
    err = capsys.readouterr().err
    assert detector.mirror_judge is None and "restore models/card-mirror.pt from the repository" in err, err
    assert "--model" not in err and "will not be checked for mirror images" in err, err
