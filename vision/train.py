"""Train the two card models with ultralytics, on the CPU, resumable.

Both start from a model ``.yaml`` (random weights): no pretrained file exists on
a casino LAN and nothing may be downloaded.  ``plots=False`` because plotting
fetches a font.  ``fliplr=0``: a mirrored index is not a card; rotation and
perspective already come from the scene generator, so ultralytics' geometric
augmentations are kept mild.  Runs write ``last.pt`` every epoch, so a session
that ends mid-training loses at most one epoch: ``--resume`` carries on.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from scoring.errors import NiuniuError

DETECT_DEFAULTS = dict(
    imgsz=416, batch=16, fliplr=0.0, flipud=0.0, degrees=0.0, mosaic=0.5, scale=0.25,
    translate=0.1, hsv_h=0.02, hsv_s=0.5, hsv_v=0.35, close_mosaic=1, plots=False,
    patience=100, cos_lr=False, warmup_epochs=1.0,
)
CLASSIFY_DEFAULTS = dict(
    imgsz=64, batch=32, fliplr=0.0, flipud=0.0, degrees=0.0, plots=False, patience=100,
    # The scenes already carry rotation, blur, light and JPEG variety; RandAugment and
    # erasing on top made a from-scratch 52-class net underfit (train loss above val
    # loss, 11.6% top-1 after 5 epochs).  Small batches give 4x the updates per epoch.
    # hsv_h=0.5 turns every crop to any hue: with the decks' own inks the classifier learnt
    # "blue is diamonds, green is clubs" and misread four-colour decks that disagree (and
    # held-out hands with their hue turned); black stays black, so red-or-black still counts.
    # hsv_s=1.0 turns some crops fully grey: at 0.3 no crop ever lost its colour, and v13 read
    # the red cards of a black-and-white photo as spades and clubs (grey held-out fans: 79 of
    # 250 fully right against 217 in colour; v14, fine-tuned at 1.0: 207 and 216).
    auto_augment=None, erasing=0.0, scale=0.1, hsv_h=0.5, hsv_s=1.0, hsv_v=0.3, warmup_epochs=0.3,
    optimizer="AdamW", lr0=0.001, cos_lr=True, cache="ram",
)


def _yolo():
    try:
        from ultralytics import YOLO
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise NiuniuError("training needs ultralytics: pip install -e '.[ml]'") from exc
    return YOLO


def train(task: str, data: Path, *, project: Path, name: str, epochs: int, model: str | None = None,
          resume: bool = False, workers: int = 2, widen_to: str | None = None, **overrides) -> Path:
    """Train (or resume) one model; return the path of its best weights.

    ``widen_to`` (a wider model .yaml of the same family, e.g. ``yolo11s.yaml``) starts
    from ``model``'s trained weights grown to that width (``vision.widen``), written
    beside the run, instead of from ``model`` itself."""
    YOLO = _yolo()
    run_dir = project / name
    last = run_dir / "weights" / "last.pt"
    if resume:
        committed = Path(__file__).resolve().parent.parent / "models" / "checkpoints" / f"{name}-last.pt"
        if not last.exists() and committed.exists():
            # A new session has no runs/ folder: start from the checkpoint committed with the code.
            last.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(committed, last)
        if not last.exists():
            raise NiuniuError(f"--resume: no checkpoint at {last}; start without --resume first")
        # resume=<path>, not resume=True: ultralytics' boolean form refuses a checkpoint
        # without optimizer state (our slim committed one), while its trainer resumes
        # from the path fine and simply starts the optimizer moments afresh.
        # save_dir: the checkpoint remembers the absolute folder of the machine it came from.
        YOLO(str(last)).train(resume=str(last), data=str(data), workers=workers, save_dir=str(run_dir))
    else:
        if not Path(data).exists():
            raise NiuniuError(f"training data {data} does not exist; make it with `niuniu datasets synth`")
        args = dict(DETECT_DEFAULTS if task == "detect" else CLASSIFY_DEFAULTS)
        args.update({k: v for k, v in overrides.items() if v is not None})
        model = model or ("yolo11n.yaml" if task == "detect" else "yolo11n-cls.yaml")
        if task == "classify":
            _check_crop_size(Path(data), int(args["imgsz"]))
        if widen_to:
            if not str(model).endswith(".pt"):
                raise NiuniuError(f"--widen-to grows a trained {task} model: give its weights as --model X.pt")
            from vision.widen import widen

            model = str(widen(Path(model), widen_to, run_dir.parent / f"{run_dir.name}-start.pt"))
            print(f"starting from {model}: {widen_to} holding the trained weights of the narrower model")
        if task == "classify" and str(model).endswith(".pt"):
            model = _with_the_data_reject_class(Path(model), Path(data), run_dir)
        YOLO(model).train(data=str(data), epochs=epochs, project=str(project), name=name, exist_ok=True,
                          device="cpu", workers=workers, seed=0, deterministic=False, **args)
    best = run_dir / "weights" / "best.pt"
    return best if best.exists() else last


def _check_crop_size(data: Path, imgsz: int) -> None:
    """Refuse crops cut at another size than the classifier will learn at.

    ultralytics would quietly resize them, and the model would learn the resize's
    blur (or lose the detail) instead of what the detector's crops look like when it
    reads at ``imgsz`` (``CardDetector`` cuts them at the size the model was trained at)."""
    import cv2

    train = data / "train"
    for folder in sorted(p for p in train.iterdir() if p.is_dir()) if train.is_dir() else []:
        first = next((f for f in folder.iterdir() if f.suffix.lower() in (".jpg", ".jpeg", ".png")), None)
        crop = cv2.imread(str(first)) if first is not None else None
        if crop is not None and crop.shape[:2] != (imgsz, imgsz):
            raise NiuniuError(
                f"{first}: the classifier crops in {data} are {crop.shape[1]}x{crop.shape[0]} px, but it would be "
                f"trained at --imgsz {imgsz}: give --imgsz {crop.shape[1]}, or cut the crops again with "
                f"`niuniu datasets synth/real-crops --crop-size {imgsz}`")


def publish(weights: Path, dest: Path) -> Path:
    """Copy trained weights into ``models/`` (where the detector looks by default)."""
    if not weights.exists():
        raise NiuniuError(f"no weights at {weights}")
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(weights, dest)
    return dest


def trained_model(weights: Path, what: str):
    """``(checkpoint, model)`` of an ultralytics ``.pt``, the model being its EMA weights
    where it has them (what ultralytics itself predicts with); a missing or unreadable
    file is one ``NiuniuError`` line naming ``what`` was expected there."""
    import torch

    weights = Path(weights)
    if not weights.exists():
        raise NiuniuError(f"no {what} at {weights}")
    try:
        ckpt = torch.load(weights, map_location="cpu", weights_only=False)
        return ckpt, ckpt.get("ema") or ckpt["model"]
    except Exception as exc:  # a truncated or foreign file: one clear line, not a traceback
        raise NiuniuError(f"{weights} is not an ultralytics checkpoint ({exc}); give trained {what}") from exc


def slim_checkpoint(last: Path, dest: Path) -> Path:
    """Save a resumable copy of ``last.pt`` without the optimizer state.

    The optimizer's moment buffers are 4x the model's size and would push the
    committed checkpoint past the ~20 MB a file may take in the repository;
    ultralytics' trainer resumes without them when given the checkpoint's path (the
    moments restart; the epoch, EMA weights and learning-rate schedule carry on).
    """
    import torch

    ckpt = torch.load(last, map_location="cpu", weights_only=False)
    ckpt["optimizer"] = None
    dest.parent.mkdir(parents=True, exist_ok=True)
    torch.save(ckpt, dest)
    return dest


def _with_the_data_reject_class(weights: Path, data: Path, run_dir: Path) -> str:
    """Fine-tuning a classifier without the reject class on data that has one starts
    from a copy that has it (``with_reject_class``), written beside the run."""
    from vision.detector import NOT_INDEX

    if not (data / "train" / NOT_INDEX).is_dir() or not weights.exists():
        return str(weights)
    if NOT_INDEX in dict(trained_model(weights, "classifier weights")[1].names).values():
        return str(weights)
    start = with_reject_class(weights, run_dir.parent / f"{run_dir.name}-start.pt", NOT_INDEX)
    print(f"{weights} has no '{NOT_INDEX}' class and the data has: starting from {start}")
    return str(start)


def with_reject_class(weights: Path, dest: Path, label: str) -> Path:
    """A copy of a card classifier with one more class, ``label`` (the reject class), last.

    Fine-tuning a 52-class classifier on a data folder with 53 classes would make
    ultralytics drop the whole output layer (its shape changed) and learn all 53 rows
    from nothing.  Here the 52 trained rows are kept and the new one starts silent (zero
    weights, a bias far below the others), so the fine-tune only has to learn the new class.
    """
    import torch

    ckpt, model = trained_model(weights, "classifier weights")
    names = dict(model.names)
    if label in names.values():
        raise NiuniuError(f"{weights} already has a '{label}' class")
    old = model.model[-1].linear
    new = torch.nn.Linear(old.in_features, old.out_features + 1).to(old.weight.dtype)
    with torch.no_grad():
        new.weight[:-1] = old.weight
        new.weight[-1] = 0
        new.bias[:-1] = old.bias
        new.bias[-1] = old.bias.min() - 4
    model.model[-1].linear = new
    model.names = {**names, len(names): label}
    model.nc = len(model.names)
    if isinstance(getattr(model, "yaml", None), dict):
        model.yaml["nc"] = model.nc
    ckpt = {"model": model, "ema": None, "optimizer": None, "epoch": -1, "train_args": ckpt.get("train_args", {})}
    dest.parent.mkdir(parents=True, exist_ok=True)
    torch.save(ckpt, dest)
    return dest
