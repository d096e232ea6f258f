"""`niuniu datasets smear-crops`: a classifier crop set with smeared copies of some crops."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from kiosk.cli import main


def _crop_set(root, cards=("2S", "9H", "none"), per_card=10):
    for split in ("train", "val"):
        for card in cards:
            folder = root / split / card
            folder.mkdir(parents=True)
            for i in range(per_card if split == "train" else 2):
                crop = np.full((64, 64, 3), 255, np.uint8)
                crop[20:44, 20:44] = 0   # a square: a smear any way softens two of its sides at least
                cv2.imwrite(str(folder / f"{card}-{i}.jpg"), crop)


def _edge_energy(image) -> float:
    grey = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY).astype(np.float32)
    return float((cv2.Sobel(grey, cv2.CV_32F, 1, 0) ** 2 + cv2.Sobel(grey, cv2.CV_32F, 0, 1) ** 2).sum())


def test_every_crop_is_kept_and_a_share_of_each_card_is_added_smeared(tmp_path, capsys):
    """The originals stay (linked), the validation crops are the source's own, and each class,
    the "no index" one too, gains the share asked of smeared copies beside their originals;
    the same seed smears the same crops the same way."""
    _crop_set(tmp_path / "src")
    out = tmp_path / "smeared"
    assert main(["datasets", "smear-crops", str(tmp_path / "src"), "--out", str(out), "--share", "0.3",
                 "--seed", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"linked": 30, "smeared": 9, "classes": 3}
    for card in ("2S", "9H", "none"):
        names = sorted(p.name for p in (out / "train" / card).iterdir())
        smeared = [n for n in names if n.endswith("_smeared.jpg")]
        assert len(names) == 13 and len(smeared) == 3
        assert all(n.replace("_smeared", "") in names for n in smeared)
        assert sorted(p.name for p in (out / "val" / card).iterdir()) == [f"{card}-0.jpg", f"{card}-1.jpg"]
    original = cv2.imread(str(out / "train" / "2S" / "2S-0.jpg"))
    assert np.array_equal(original, cv2.imread(str(tmp_path / "src" / "train" / "2S" / "2S-0.jpg")))
    for path in (out / "train" / "2S").glob("*_smeared.jpg"):
        assert _edge_energy(cv2.imread(str(path))) < 0.85 * _edge_energy(original)
    again = tmp_path / "again"
    main(["datasets", "smear-crops", str(tmp_path / "src"), "--out", str(again), "--share", "0.3", "--seed", "1"])
    first, second = (sorted((root / "train" / "9H").glob("*_smeared.jpg")) for root in (out, again))
    assert [p.name for p in first] == [p.name for p in second]
    assert all(np.array_equal(cv2.imread(str(a)), cv2.imread(str(b))) for a, b in zip(first, second))


def test_a_share_that_writes_nothing_or_too_much_is_one_clear_error(tmp_path, capsys):
    _crop_set(tmp_path / "src")
    assert main(["datasets", "smear-crops", str(tmp_path / "src"), "--out", str(tmp_path / "s"), "--share", "0"]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "a smeared share of 0.0 writes nothing: give a share over 0 and up to 1" in err[0]
    with pytest.raises(SystemExit):
        main(["datasets", "smear-crops", str(tmp_path / "src"), "--out", str(tmp_path / "s"), "--share", "1.5"])
    assert "'1.5' is not a share: give a number from 0 to 1" in capsys.readouterr().err


def test_a_folder_that_is_no_crop_set_is_one_clear_error(tmp_path, capsys):
    assert main(["datasets", "smear-crops", str(tmp_path), "--out", str(tmp_path / "s")]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "has no train/ folder" in err[0]
