"""Training across sessions: the committed checkpoint resumes, a missing one says how to start."""

from __future__ import annotations

import pytest

from scoring.errors import NiuniuError
from vision.detector import MODELS_DIR

torch = pytest.importorskip("torch", reason="training needs the ml extra")
from vision.train import slim_checkpoint, train  # noqa: E402

CHECKPOINT = MODELS_DIR / "checkpoints" / "detect-v1-last.pt"


def test_committed_checkpoint_is_resumable_and_small():
    ckpt = torch.load(CHECKPOINT, map_location="cpu", weights_only=False)
    assert ckpt["epoch"] >= 0, "a finished (stripped) model cannot be resumed"
    assert ckpt["train_args"]["fliplr"] == 0.0, "a mirrored index is not a card"
    assert CHECKPOINT.stat().st_size < 20 * 1024 * 1024


def test_slim_checkpoint_drops_only_the_optimizer(tmp_path):
    src = tmp_path / "last.pt"
    torch.save({"epoch": 3, "model": None, "optimizer": {"state": list(range(1000))}, "train_args": {}}, src)
    out = slim_checkpoint(src, tmp_path / "slim.pt")
    ckpt = torch.load(out, map_location="cpu", weights_only=False)
    assert ckpt["optimizer"] is None and ckpt["epoch"] == 3


def test_resume_without_a_checkpoint_says_how_to_start(tmp_path):
    with pytest.raises(NiuniuError, match="start without --resume"):
        train("detect", tmp_path / "data.yaml", project=tmp_path, name="never-trained", epochs=1, resume=True)


def test_training_without_data_names_the_command(tmp_path):
    with pytest.raises(NiuniuError, match="niuniu datasets synth"):
        train("detect", tmp_path / "missing.yaml", project=tmp_path, name="x", epochs=1)
