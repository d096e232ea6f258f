"""Training across sessions: the committed checkpoint resumes, a missing one says how to start."""

from __future__ import annotations

import numpy as np
import pytest

from scoring.errors import NiuniuError
from vision.detector import MODELS_DIR

torch = pytest.importorskip("torch", reason="training needs the ml extra")
from vision.train import slim_checkpoint, train  # noqa: E402

CHECKPOINT = MODELS_DIR / "checkpoints" / "detect-v10-last.pt"


def test_committed_checkpoint_is_the_detector_to_train_on_and_small():
    """The next session fine-tunes from it (models/README.md says how)."""
    ckpt = torch.load(CHECKPOINT, map_location="cpu", weights_only=False)
    assert ckpt["model"].names == {0: "index", 1: "card"}
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


def test_a_classifier_is_not_trained_on_crops_cut_for_another_size(tmp_path):
    """Crops cut at 64 px trained at --imgsz 96 would teach the enlargement's blur: refused
    before any training, with both ways out."""
    import cv2

    folder = tmp_path / "crops" / "train" / "AS"
    folder.mkdir(parents=True)
    cv2.imwrite(str(folder / "a.jpg"), np.zeros((64, 64, 3), np.uint8))
    with pytest.raises(NiuniuError, match=r"give --imgsz 64, or cut the crops again with .*--crop-size 96"):
        train("classify", tmp_path / "crops", project=tmp_path, name="x", epochs=1, imgsz=96)
    assert not (tmp_path / "x").exists()


@pytest.mark.slow
def test_a_slim_checkpoint_really_resumes(tmp_path):
    """What the next session does: an interrupted run's last.pt, slimmed as committed,
    goes on from the next epoch (ultralytics' resume=True form would refuse it)."""
    import shutil

    from ultralytics import YOLO

    from vision.synth.dataset import SynthConfig, write_dataset

    write_dataset(SynthConfig(out=tmp_path / "data", images=4, val_images=2, seed=3, procedural_share=1.0),
                  workers=1, progress=False)
    data = tmp_path / "data" / "detect" / "data.yaml"
    snapshot = tmp_path / "epoch-1.pt"

    def keep_first_epoch(trainer):
        if trainer.epoch == 0:
            shutil.copyfile(trainer.last, snapshot)

    model = YOLO("yolo11n.yaml")
    model.add_callback("on_model_save", keep_first_epoch)
    model.train(data=str(data), epochs=2, imgsz=64, batch=2, workers=0, device="cpu", plots=False,
                project=str(tmp_path / "runs"), name="first", exist_ok=True, val=False)
    committed = tmp_path / "runs" / "again" / "weights" / "last.pt"
    slim_checkpoint(snapshot, committed)
    train("detect", data, project=tmp_path / "runs", name="again", epochs=2, resume=True)
    resumed = torch.load(committed, map_location="cpu", weights_only=False)
    assert resumed["train_args"]["epochs"] == 2 and resumed["epoch"] == -1, "the run finished its second epoch"


def test_a_reject_class_is_added_without_forgetting_the_cards(tmp_path):
    """Fine-tuning toward the "not an index" class starts from the 52 trained rows, so
    the classifier reads cards as before from its first step (ultralytics alone would
    drop the whole output layer when the class count changes)."""
    import numpy as np
    from ultralytics import YOLO

    from vision.detector import NOT_INDEX
    from vision.train import with_reject_class

    # a 52-card classifier, as classify-v4 was: the shipped one without its reject row
    ckpt = torch.load(MODELS_DIR / "card-classifier.pt", map_location="cpu", weights_only=False)
    net = ckpt["model"]
    if NOT_INDEX in net.names.values():
        head = net.model[-1].linear
        cut = torch.nn.Linear(head.in_features, head.out_features - 1).to(head.weight.dtype)
        with torch.no_grad():
            cut.weight.copy_(head.weight[:-1])
            cut.bias.copy_(head.bias[:-1])
        net.model[-1].linear = cut
        net.names = {i: n for i, n in net.names.items() if n != NOT_INDEX}
    src = tmp_path / "52.pt"
    torch.save(ckpt, src)
    before = YOLO(str(src), task="classify")
    after = YOLO(str(with_reject_class(src, tmp_path / "53.pt", NOT_INDEX)), task="classify")
    assert after.names[len(after.names) - 1] == NOT_INDEX and len(after.names) == len(before.names) + 1
    from vision.detector import index_crop
    from vision.synth.faces import procedural_deck
    from vision.synth.scene import INDEX_CLASS, render_scene

    scene = render_scene(np.random.default_rng(4), procedural_deck(3, 300), size=(640, 480), kind="closeup")
    crops = [index_crop(scene.image, lab.box) for lab in scene.labels if lab.cls == INDEX_CLASS][:6]
    assert crops
    for a, b in zip(before.predict(crops, imgsz=64, verbose=False), after.predict(crops, imgsz=64, verbose=False)):
        p_before, p_after = a.probs.data.float().numpy(), b.probs.data.float().numpy()
        assert p_after.argmax() == p_before.argmax() and p_after[-1] < 0.05   # the new class starts silent
        assert np.allclose(p_after[:-1] / p_after[:-1].sum(), p_before, atol=2e-3)   # the cards read as before
    with pytest.raises(NiuniuError, match="already has"):
        with_reject_class(tmp_path / "53.pt", tmp_path / "54.pt", NOT_INDEX)


def test_a_detector_fine_tune_gets_the_rate_it_was_given(monkeypatch, tmp_path):
    """ultralytics' 'auto' optimizer ignores lr0, so `niuniu train` passes --optimizer on."""
    import vision.train
    from kiosk.cli import main

    seen = {}
    monkeypatch.setattr(vision.train, "train", lambda task, data, **kw: seen.update(kw) or tmp_path / "best.pt")
    assert main(["train", "detect", "--data", str(tmp_path / "d.yaml"), "--model", "last.pt", "--epochs", "8",
                 "--optimizer", "AdamW", "--lr0", "0.0005", "--cos-lr", "--hsv-h", "0.5", "--hsv-s", "1"]) == 0
    assert (seen["optimizer"], seen["lr0"], seen["cos_lr"], seen["epochs"], seen["hsv_h"], seen["hsv_s"]) == \
        ("AdamW", 0.0005, True, 8, 0.5, 1.0)


def test_a_corrupt_classifier_file_is_named_not_a_traceback(tmp_path):
    """Adding the reject class to a truncated download: one line naming the file."""
    from vision.detector import NOT_INDEX
    from vision.train import with_reject_class

    broken = tmp_path / "classifier.pt"
    broken.write_bytes(b"\x80\x02truncated")
    with pytest.raises(NiuniuError, match=r"classifier\.pt is not an ultralytics checkpoint"):
        with_reject_class(broken, tmp_path / "53.pt", NOT_INDEX)
    with pytest.raises(NiuniuError, match="no classifier weights at"):
        with_reject_class(tmp_path / "missing.pt", tmp_path / "53.pt", NOT_INDEX)
