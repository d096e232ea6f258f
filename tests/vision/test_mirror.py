"""The mirror judge's crop set: `niuniu datasets mirror-crops`."""

from __future__ import annotations

import json

import cv2
import numpy as np

from kiosk.cli import main


def _crop_set(root, cards=("2S", "9H"), per_card=5, val_cards=("2S",)):
    rng = np.random.default_rng(0)
    for split, names in (("train", cards), ("val", val_cards)):
        for card in (*names, "none"):
            folder = root / split / card
            folder.mkdir(parents=True)
            for i in range(per_card if split == "train" else 2):
                crop = np.full((64, 64, 3), 255, np.uint8)
                crop[8:40, 6:20] = rng.integers(0, 120, 3)   # a dark stroke on the left: handed
                cv2.imwrite(str(folder / f"{card}-{i}.jpg"), crop)


def test_each_card_gives_crops_printed_and_mirrored_and_marks_are_left_out(tmp_path, capsys):
    """Every drawn crop is written twice, as it is and mirrored; the "no index" crops are left
    out (a mark has no handedness).  A card with crops of its own in val/ is validated on
    those; one without gives up some of its drawn ones."""
    _crop_set(tmp_path / "src")
    out = tmp_path / "mir"
    assert main(["datasets", "mirror-crops", str(tmp_path / "src"), "--out", str(out), "--per-card", "3",
                 "--seed", "1", "--json"]) == 0
    counts = json.loads(capsys.readouterr().out)
    assert counts["cards"] == 2
    printed = sorted((out / "train" / "printed").iterdir())
    mirrored = sorted((out / "train" / "mirrored").iterdir())
    assert [p.name for p in printed] == [p.name for p in mirrored] and not any("none" in p.name for p in printed)
    assert counts["train"] == 2 * len(printed) == 2 * (3 + 3 - 1) and counts["val"] == 2 * 2
    a, b = cv2.imread(str(printed[0])), cv2.imread(str(mirrored[0]))
    assert a[20, 12].mean() < 150 < b[20, 12].mean() and b[20, 64 - 13].mean() < 150   # the stroke moved across


def test_a_folder_that_is_no_crop_set_is_one_clear_error(tmp_path, capsys):
    assert main(["datasets", "mirror-crops", str(tmp_path), "--out", str(tmp_path / "mir")]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "has no train/ folder" in err[0]
