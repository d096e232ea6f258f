"""Subcommands for the card model: ``datasets synth``, ``train``, ``detect``, ``bench``.

Kept apart from ``vision.cli`` (which runs tables) because these need the heavy
``ml`` extra; importing ultralytics is deferred to the moment a command needs it.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

from scoring.errors import NiuniuError
from vision.detector import CROP_SIZE, DETECTOR_IMGSZ_RULE, LIVE_IMGSZ, MAX_IMGSZ, PHOTO_IMGSZ, is_detector_imgsz
from vision.synth.scene import MIN_INDEX_VISIBLE

REPO_ROOT = Path(__file__).resolve().parent.parent


def register(sub: argparse._SubParsersAction) -> None:
    ds = sub.add_parser("datasets", help="make training data for the card model")
    ds_sub = ds.add_subparsers(dest="datasets_command", metavar="ACTION")
    ds_sub.required = True
    synth = ds_sub.add_parser("synth", help="render synthetic table scenes with YOLO labels and index crops")
    synth.add_argument("--out", type=Path, required=True, help="output folder (created)")
    synth.add_argument("--images", type=_scene_count, required=True, help="training scenes to render")
    synth.add_argument("--val-images", type=_whole_from(0, 10_000_000, "a number of scenes"), default=None,
                       help="validation scenes (held-out decks); default images/8; 0 for a top-up of "
                            "training scenes only (the model card's recipes use it)")
    synth.add_argument("--seed", type=_seed, default=0)
    synth.add_argument("--workers", type=_workers, default=None, help="processes (default: 2)")
    synth.add_argument("--procedural-share", type=_share, default=0.4,
                       help="share of scenes drawn with procedural casino faces instead of Debian deck art")
    synth.add_argument("--crops-only", action="store_true",
                       help="add classifier crops from larger, closer scenes to OUT/classify (no detector images)")
    _recipe_args(synth)
    synth.add_argument("--orientation-crops", action="store_true",
                       help="also write OUT/orient/: index crops sorted by their angle (a000..a350), the "
                            "orientation model's training data")
    synth.add_argument("--json", action="store_true", help="print the summary as JSON")
    synth.set_defaults(func=_cmd_synth)
    hard = ds_sub.add_parser("hard-negatives",
                             help="add 'not an index' crops where the detector errs in a synth set's scenes")
    hard.add_argument("--out", type=Path, required=True,
                      help="the data set folder, made by `datasets synth`: its manifest says how, so the flags "
                           "below are needed only for a set whose manifest does not record them")
    hard.add_argument("--images", type=_scene_count, default=None,
                      help="mine only the first N training scenes (default: all the set holds)")
    hard.add_argument("--seed", type=_seed, default=None, help="as given to `datasets synth` (default: the manifest's)")
    hard.add_argument("--procedural-share", type=_share, default=None,
                      help="as given to `datasets synth` (default: the manifest's)")
    hard.add_argument("--crops-only", action="store_true", default=None,
                      help="mine the crops-only scenes of a folder that holds both kinds (default: the kind it holds)")
    _recipe_args(hard, " (as given to `datasets synth`; default: the manifest's)", given_only=True)
    hard.add_argument("--per-scene", type=_per_scene, default=4, help="'not an index' crops per scene at most")
    hard.add_argument("--readings-per-scene", type=_per_scene, default=0,
                      help="also this many crops per scene of the detector's boxes on real indices, filed under "
                           "their card: the classifier learns the framing the detector really gives it")
    _detector_args(hard)
    hard.set_defaults(func=_cmd_hard_negatives)

    real = ds_sub.add_parser("real-crops",
                             help="classifier crops from a labelled REAL photo set (YOLO whole-card boxes)")
    real.add_argument("root", type=Path, help="a YOLO set root with data.yaml naming cards ('10 of clubs', ...)")
    real.add_argument("--out", type=Path, required=True, help="output folder: OUT/<split>/<CARD>/*.jpg")
    real.add_argument("--split", action="append", default=None, metavar="SRC[:DEST]",
                      help="split to read and the split to write it as (default: train:train, valid:val)")
    real.add_argument("--copies", type=_whole_from(0, 100, "a number of copies"), default=2,
                      help="jittered crops per index, besides the plain one")
    real.add_argument("--crop-size", type=_crop_size, default=CROP_SIZE,
                      help=f"cut crops at this square size, the classifier's --imgsz (default {CROP_SIZE})")
    _model_args(real)
    real.add_argument("--json", action="store_true")
    real.set_defaults(func=_cmd_real_crops)
    mirror = ds_sub.add_parser("mirror-crops", help="a printed-or-mirrored crop set for the mirror judge, from a "
                                                    "card classifier's crop set")
    mirror.add_argument("src", type=Path, help="a card classifier crop set (SRC/train/<card>/*.jpg, SRC/val/...)")
    mirror.add_argument("--out", type=Path, required=True, help="output folder: OUT/{train,val}/{printed,mirrored}/")
    mirror.add_argument("--per-card", type=_whole_from(1, 100_000, "a crop count"), default=300,
                        help="crops drawn from each card's folder (each also written mirrored)")
    mirror.add_argument("--seed", type=_seed, default=0)
    mirror.add_argument("--json", action="store_true")
    mirror.set_defaults(func=_cmd_mirror_crops)
    smear = ds_sub.add_parser("smear-crops", help="a card classifier crop set with smeared copies of a share of its "
                                                  "crops (a moving hand or camera), the rest linked")
    smear.add_argument("src", type=Path, help="a card classifier crop set (SRC/train/<card>/*.jpg, SRC/val/...)")
    smear.add_argument("--out", type=Path, required=True, help="output folder: OUT/{train,val}/<card>/")
    smear.add_argument("--share", type=_share, default=0.3, help="share of each card's crops also written smeared")
    smear.add_argument("--seed", type=_seed, default=0)
    smear.add_argument("--json", action="store_true")
    smear.set_defaults(func=_cmd_smear_crops)
    demo = ds_sub.add_parser("demo", help="render the bundled demo recording (held-out decks, banker + 5 players)")
    demo.add_argument("--out", type=Path, required=True)
    demo.add_argument("--seed", type=_seed, default=0)
    demo.add_argument("--rounds", type=_whole_from(1, 1000, "a number of rounds"), default=3)
    demo.add_argument("--json", action="store_true")
    demo.set_defaults(func=_cmd_demo)

    tr = sub.add_parser("train", help="train (or resume) the index detector or the card classifier on the CPU")
    tr.add_argument("task", choices=["detect", "classify"])
    tr.add_argument("--data", type=Path, required=True,
                    help="detect: DIR/detect/data.yaml; classify: DIR/classify")
    tr.add_argument("--epochs", type=_whole_from(1, 100_000, "a number of epochs"), default=10)
    tr.add_argument("--imgsz", type=_model_imgsz, default=None,
                    help="input size to train at (detector 384, classifier the crops' size: 64 or 96)")
    tr.add_argument("--batch", type=int, default=None)
    tr.add_argument("--model", default=None,
                    help="model .yaml (default yolo11n[-cls].yaml), or trained weights .pt to fine-tune from")
    tr.add_argument("--widen-to", default=None, metavar="YAML",
                    help="grow --model's trained weights into this wider model first (yolo11s.yaml, or "
                         "yolo11s-cls.yaml for the classifier); it starts computing exactly what --model does")
    tr.add_argument("--lr0", type=_number_from(1e-8, 1.0, "a learning rate", "0.001"), default=None,
                    help="initial learning rate (fine-tuning: lower)")
    tr.add_argument("--warmup-epochs", type=_number_from(0.0, 1000.0, "a number of epochs", "0"), default=None,
                    help="learning-rate warm-up (fine-tuning: 0)")
    tr.add_argument("--optimizer", default=None, choices=["SGD", "Adam", "AdamW", "auto"],
                    help="the detector's default 'auto' picks its own rate and ignores --lr0: name one to fine-tune")
    tr.add_argument("--cos-lr", action="store_true", default=None, help="cosine learning-rate decay")
    tr.add_argument("--hsv-h", type=_number_from(0.0, 0.5, "a hue jitter", "0.5"), default=None,
                    help="hue jitter, 0..0.5 (classifier default 0.5: any hue, so a suit is read by shape, not ink)")
    tr.add_argument("--hsv-s", type=_share, default=None,
                    help="saturation jitter, 0..1 (1: some crops turned fully grey, as a black-and-white photo "
                         "shows them)")
    tr.add_argument("--project", type=Path, default=REPO_ROOT / "runs")
    tr.add_argument("--name", default=None, help="run name (default: the task)")
    tr.add_argument("--resume", action="store_true", help="continue the run from its last.pt")
    tr.add_argument("--publish", type=Path, default=None, help="copy best weights here when done")
    tr.set_defaults(func=_cmd_train)

    det = sub.add_parser("detect", help="read the cards in images; one JSON object per image")
    det.add_argument("images", nargs="+", type=Path, metavar="IMAGE",
                     help="an image file, or a folder: every image under it (subfolders too), in name order")
    _photo_args(det)
    det.add_argument("--json", action="store_true", help="JSON lines (the default output is JSON too)")
    det.set_defaults(func=_cmd_detect)

    ev = sub.add_parser("evaluate", help="measure the card model on labelled photos (YOLO data.yaml or VOC XML)")
    ev.add_argument("data", type=Path, nargs="?", default=None,
                    help="a YOLO set root with data.yaml, or a folder of images + VOC .xml")
    ev.add_argument("--synthetic-hands", type=_whole_from(1, 100_000, "a number of hands"), default=None,
                    metavar="N",
                    help="instead: N rendered five-card hands from held-out deck designs")
    ev.add_argument("--seed", type=_seed, default=2026,
                    help="which hands --synthetic-hands renders (the model card sums 100 of seed 2026 and 150 "
                         "of seed 7)")
    ev.add_argument("--held", action="store_true",
                    help="with --synthetic-hands: each hand held up in a player's fan (as a phone photographs "
                         "a hand) instead of lying on the table")
    ev.add_argument("--decks", type=_deck_list, default=None, metavar="NAME,...",
                    help="with --synthetic-hands: deal from these decks (datasets/decks.toml) instead of the "
                         "held-out designs, e.g. to read a new design before training on it")
    ev.add_argument("--close-up", action="store_true",
                    help="read each labelled card (or each rendered hand) cut out to fill the frame, as a phone "
                         "held close photographs it")
    ev.add_argument("--grey", action="store_true",
                    help="read each photo (or rendered hand) turned black and white first, as a monochrome "
                         "camera or a greyscale export shows it")
    ev.add_argument("--mirror", action="store_true",
                    help="read each photo (or rendered hand) mirrored left-right first, as a set flipped for "
                         "augmentation or a front camera shows it")
    ev.add_argument("--speckle", type=_pixel_share, default=0.0, metavar="SHARE",
                    help="set this share (0..0.5) of each photo's (or rendered hand's) pixels black or white first, "
                         "as a set augmented with salt-and-pepper noise shows it (e.g. 0.05)")
    ev.add_argument("--blur", type=_blur_px, default=0.0, metavar="SIGMA",
                    help="blur each photo (or rendered hand) by a Gaussian of SIGMA pixels first (before any "
                         "--speckle), as a set augmented with blur or a camera out of focus shows it (e.g. 2.5)")
    ev.add_argument("--gain", type=_gain, default=1.0, metavar="FACTOR",
                    help="multiply every pixel of each photo (or rendered hand) by FACTOR first, whites clipped, as "
                         "an overexposed camera or a set augmented with brightness shows it (e.g. 1.25)")
    ev.add_argument("--smear", type=_smear, default=None, metavar="LENGTH[,DEGREES]",
                    help="smear each photo (or rendered hand) by a straight motion blur LENGTH pixels long "
                         "(3 to 40) along DEGREES (default 30) after any --blur and before any --speckle, as a "
                         "moving hand or camera shows it (e.g. 9)")
    ev.add_argument("--split", default="test",
                    help="YOLO split (test, valid, ...): DATA/SPLIT/images, or DATA/images/SPLIT")
    ev.add_argument("--stretch", type=_stretch, default=(1.0, 1.0), metavar="ACROSS,DOWN",
                    help="read each photo resized by these factors, its labels alike, as a set exported "
                         "stretched to a square is (e.g. 0.75,1: a 4:3 photo squeezed across to a square)")
    ev.add_argument("--limit", type=_whole_from(1, 10_000_000, "a number of images"), default=None,
                    help="read only the first N labelled images (in name order)")
    _photo_args(ev)
    ev.add_argument("--json", action="store_true")
    ev.set_defaults(func=_cmd_evaluate)

    ex = sub.add_parser("export", help="export trained weights to ONNX and NCNN beside them")
    ex.add_argument("weights", type=Path, nargs="+")
    ex.add_argument("--imgsz", type=_model_imgsz, required=True,
                    help="input size the model will run at (detector 384, classifier 64)")
    ex.add_argument("--format", action="append", choices=["onnx", "ncnn"], default=None)
    ex.set_defaults(func=_cmd_export)

    be = sub.add_parser("bench", help="ms per table frame for every installed model runtime, and which to use")
    be.add_argument("--source", default=str(REPO_ROOT / "datasets" / "demo"),
                    help="frames to time: a folder, video or camera (default: the bundled demo)")
    be.add_argument("--models", type=Path, default=REPO_ROOT / "models",
                    help="folder holding the card models in every format to time (default: the shipped models/)")
    be.add_argument("--frames", type=_whole_from(1, 100_000, "a number of frames"), default=30,
                    help="frames to time (default 30)")
    be.add_argument("--imgsz", type=_detector_imgsz, default=LIVE_IMGSZ,
                    help=f"detector input size (default {LIVE_IMGSZ})")
    be.add_argument("--no-tta", action="store_true",
                    help="read each index once instead of at 4 rotations (or, upright, at 3 small turns)")
    be.add_argument("--no-second-opinion", action="store_true",
                    help="time the card classifier alone, without its second opinion on unsure crops")
    be.add_argument("--json", action="store_true")
    be.set_defaults(func=_cmd_bench)


def _number_from(lo: float, hi: float, what: str, example: str):
    """An argparse type: a number in [lo, hi], or one message naming the range."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = float("nan")
        if not lo <= value <= hi:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}: give a number from {lo:g} to {hi:g}, "
                                             f"e.g. {example}")
        return value
    return parse


_share = _number_from(0.0, 1.0, "a share", "0.3")
_scale = _number_from(0.5, 4.0, "a scene scale", "1.5")
_pixel_share = _number_from(0.0, 0.5, "a share of pixels", "0.05")
_blur_px = _number_from(0.0, 10.0, "a blur in pixels", "2.5")
_gain = _number_from(0.2, 4.0, "a brightness gain", "1.25")
SMEAR_DEGREES = 30.0   # --smear's direction when none is given: neither along a row nor down it


def _smear(text: str) -> tuple[float, float]:
    """An argparse type: "LENGTH" or "LENGTH,DEGREES" -> (length px, degrees)."""
    length, _, degrees = text.partition(",")
    try:
        value = (float(length), float(degrees) if degrees else SMEAR_DEGREES)
    except ValueError:
        value = (float("nan"), 0.0)
    if not 3.0 <= value[0] <= 40.0 or not -360.0 <= value[1] <= 360.0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a smear: give its length in pixels from 3 to 40 and, "
                                         f"if not {SMEAR_DEGREES:g}, its direction in degrees, e.g. 9 or 9,30")
    return value


def _whole_from(lo: int, hi: int, what: str, unit: str = ""):
    """An argparse type: a whole number in [lo, hi], or one message naming the range."""
    def parse(text: str) -> int:
        # ASCII digits only: int() also takes "1_000" and other scripts' digits, a typo's likelier source.
        if not (text.isascii() and text.isdigit()) or not lo <= int(text) <= hi:
            raise argparse.ArgumentTypeError(f"{text!r} is not {what}: give a whole number{unit} from {lo} to {hi}")
        return int(text)
    return parse


_crop_size = _whole_from(16, 256, "a crop size", " of pixels")
_seed = _whole_from(0, 2**32 - 1, "a seed")
_scene_count = _whole_from(1, 10_000_000, "a number of scenes")
_workers = _whole_from(1, 256, "a number of processes")
_per_scene = _whole_from(0, 1000, "a number of crops per scene")
# A model's input size: a classifier reads crops at any size (64, 96), the detector at a
# multiple of its 32-pixel stride (is_detector_imgsz).
_model_imgsz = _whole_from(16, MAX_IMGSZ, "an input size", " of pixels")


def _detector_imgsz(text: str) -> int:
    """An argparse type: the detector's input size (``is_detector_imgsz``)."""
    if not (text.isascii() and text.isdigit() and is_detector_imgsz(int(text))):
        raise argparse.ArgumentTypeError(f"{text!r} is not a detector input size: give {DETECTOR_IMGSZ_RULE}")
    return int(text)


_factor = _number_from(0.25, 4.0, "a resize factor", "0.75,1")


def _stretch(text: str) -> tuple[float, float]:
    """An argparse type: two factors "ACROSS,DOWN", each from 0.25 to 4."""
    parts = text.split(",")
    if len(parts) != 2:
        raise argparse.ArgumentTypeError(f"{text!r} is not two factors: give ACROSS,DOWN, e.g. 0.75,1")
    return _factor(parts[0]), _factor(parts[1])


def _designs(text: str) -> int:
    """How many procedural training designs: whole, and short of the held-out ones."""
    from vision.synth.faces import PROCEDURAL_HOLDOUT_SEEDS

    return _whole_from(1, PROCEDURAL_HOLDOUT_SEEDS.start - 1, "a number of designs")(text)


def _recipe_args(p: argparse.ArgumentParser, note: str = "", given_only: bool = False) -> None:
    """The recipe flags; ``given_only`` leaves them ``None`` when not given (mining takes the set's own)."""
    p.add_argument("--court-share", type=_share, default=None if given_only else 0.0,
                   help="share of scenes that deal their jacks, queens and kings first" + (note or " (default 0)"))
    p.add_argument("--blur-share", type=_share, default=None if given_only else 0.0,
                   help="share of scenes drawn with the strongest blur of the usual range" + (note or " (default 0)"))
    p.add_argument("--held-share", type=_share, default=None if given_only else 0.0,
                   help="share of scenes that show one hand held up in a player's fan" + (note or " (default 0)"))
    p.add_argument("--stretch-share", type=_share, default=None if given_only else 0.0,
                   help="share of scenes squeezed along one axis, as a photo exported stretched to a square"
                        + (note or " (default 0)"))
    p.add_argument("--exposure-share", type=_share, default=None if given_only else 0.0,
                   help="share of scenes overexposed (light x1.2-1.6 on top of the usual range: whites clipped, "
                        "pale ink faded)" + (note or " (default 0)"))
    p.add_argument("--procedural-designs", type=_designs, default=None if given_only else 400,
                   help="training scenes draw procedural faces from this many designs" + (note or " (default 400)"))
    p.add_argument("--scene-scale", type=_scale, default=None if given_only else 1.0,
                   help="render scenes this many times larger, the layout the same (1: detector scenes 416 px on "
                        "the long side; 1.5 for a detector trained at --imgsz 480)" + (note or " (default 1)"))
    p.add_argument("--crop-size", type=_crop_size, default=None if given_only else CROP_SIZE,
                   help="cut classifier crops at this square size, the --imgsz the classifier will be trained "
                        "and read at" + (note or f" (default {CROP_SIZE})"))
    p.add_argument("--index-visible", type=_share, default=None if given_only else MIN_INDEX_VISIBLE,
                   help="label a corner index for the detector when this share of it shows (an index partly under "
                        "another card; classifier crops are still cut only from indices "
                        f"{MIN_INDEX_VISIBLE:g} visible)" + (note or f" (default {MIN_INDEX_VISIBLE:g})"))
    p.add_argument("--crop-view", choices=("box", "upright"), default=None if given_only else "box",
                   help="cut classifier crops as the detector's box frames them (box), or turned by the index's "
                        "angle, for a classifier read after the orientation model (upright)"
                        + (note or " (default box)"))


def _detector_args(p: argparse.ArgumentParser, imgsz: int = LIVE_IMGSZ) -> None:
    p.add_argument("--model", type=Path, default=None,
                   help="index detector (.pt, .onnx or _ncnn_model folder); default models/index-detector.pt")
    p.add_argument("--imgsz", type=_detector_imgsz, default=imgsz,
                   help=f"detector input size (default {imgsz}; an .onnx or NCNN model runs at the size it was "
                        "exported at)")
    p.add_argument("--conf", type=_number_from(0.0, 1.0, "a confidence", "0.25"), default=0.25,
                   help="index detector's box confidence, 0 to 1")


def _photo_args(p: argparse.ArgumentParser) -> None:
    """A photo reader's flags: the card model's, and whether a photo is read more ways than once."""
    _model_args(p, imgsz=PHOTO_IMGSZ)
    p.add_argument("--read-once", "--one-aspect", action="store_true",
                   help="read each image once, as it is: not also re-stretched 4:3 across and down, zoomed out or "
                        "sharpened, nor judged mirrored, speckled or blurred (a sixth of the time; photos exported "
                        "stretched to a square, close-ups, mirrored, speckled and blurred photos read worse)")


def _model_args(p: argparse.ArgumentParser, imgsz: int = LIVE_IMGSZ) -> None:
    _detector_args(p, imgsz)
    p.add_argument("--classifier", type=Path, default=None, help="card classifier; default: beside --model")
    opinion = p.add_mutually_exclusive_group()
    opinion.add_argument("--second-opinion", type=Path, default=None,
                         help="classifier that also reads the crops the card classifier is unsure of; default: "
                              "card-second-opinion beside the default classifier (none for a --classifier given); "
                              "read as the classifier is, upright where --orientation turns the crops")
    opinion.add_argument("--no-second-opinion", action="store_true",
                         help="read every crop with the card classifier alone (faster, fewer hands right)")
    p.add_argument("--orientation", type=Path, default=None,
                   help="orientation model that turns each index upright for a classifier trained on upright "
                        "crops; default: card-orientation beside the default classifier (none for a --classifier "
                        "given)")
    p.add_argument("--min-card-conf", type=float, default=None,
                   help="leave out cards read below this confidence (detector x classifier); "
                        "default 0.1, chosen on real photos: see models/README.md")
    p.add_argument("--min-lone-conf", type=float, default=None,
                   help="leave out cards seen by one corner only, with no card box, read below this "
                        "confidence (a pip or print taken for an index); default 0.25: see models/README.md")


def _detector(args):
    from vision.detector import LONE_REPORT_CONF, PHOTO_ASPECTS, REPORT_CONF, CardDetector

    min_card = REPORT_CONF if args.min_card_conf is None else args.min_card_conf
    min_lone = LONE_REPORT_CONF if args.min_lone_conf is None else args.min_lone_conf
    for flag, value in (("--min-card-conf", min_card), ("--min-lone-conf", min_lone)):
        if not 0.0 <= value <= 1.0:
            raise NiuniuError(f"{flag} {value} must lie between 0 and 1")
    second = False if args.no_second_opinion else args.second_opinion
    # Photo readers (_photo_args) also read each photo re-stretched and zoomed out unless told
    # --read-once; the other commands (real-crops) have no such flag and read once.
    once = getattr(args, "read_once", True)
    return CardDetector(args.model, args.classifier, second_opinion=second, orientation=args.orientation,
                        imgsz=args.imgsz, conf=args.conf,
                        min_card_conf=min_card, min_lone_conf=min_lone, aspects=() if once else PHOTO_ASPECTS,
                        zoom_out=not once, unmirror=not once, despeckle=not once, sharpen=not once)


def _images_named(paths: list[Path]) -> tuple[list[Path], list[str]]:
    """The image files ``paths`` name, and one error for each path that names none.

    A folder stands for every image under it: photo sets come as folders (a Roboflow
    export's ``test/images/``), and a shell glob over thousands of photos can pass the
    command line's length limit.  A missing path is reported and the others still read:
    one mistyped name must not cost a long batch its answers."""
    from vision.sources import IMAGE_SUFFIXES

    files, errors = [], []
    for path in paths:
        if path.is_dir():
            found = sorted(p for p in path.rglob("*") if p.suffix.lower() in IMAGE_SUFFIXES and p.is_file()
                           and not any(part.startswith(".") for part in p.relative_to(path).parts))
            if not found:
                errors.append(f"folder {path} holds no images ({', '.join(IMAGE_SUFFIXES)})")
            files += found
        elif path.is_file():
            files.append(path)
        elif path.exists():   # /dev/null, a pipe, a socket: there, but no file to read an image from
            errors.append(f"image {path} is not a regular file; give an image file or a folder of them")
        else:
            errors.append(f"image {path} does not exist")
    return files, errors


def quiet_native_logs() -> None:
    """Keep OpenCV's own log and FFmpeg's off stderr: a corrupt TIFF or video otherwise prints
    several "[ WARN:0@5.6] global grfmt_tiff.cpp ..." or "moov atom not found" lines, naming
    no file, before the command's one-line error that does; likewise ultralytics' notes on
    loading a model.  (libjpeg and libpng print straight to stderr: ``vision.images.read_image``
    keeps those off around each read.)  For the commands' own process only: a kiosk keeps its logs."""
    import os

    import cv2.utils.logging as cv_logging

    os.environ.setdefault("OPENCV_FFMPEG_LOGLEVEL", "-8")   # AV_LOG_QUIET; read when FFmpeg is first opened
    cv_logging.setLogLevel(cv_logging.LOG_LEVEL_SILENT)
    # ultralytics' "Loading x.onnx for ONNX Runtime inference..." and the like; its warnings
    # stay.  A filter, not a level: ultralytics sets its logger's level when it is imported.
    logging.getLogger("ultralytics").addFilter(_warnings_only)


def _warnings_only(record: logging.LogRecord) -> bool:
    return record.levelno >= logging.WARNING


def _cmd_detect(args) -> int:
    from vision.images import ImageError, read_image

    quiet_native_logs()
    images, errors = _images_named(args.images)
    for error in errors:
        print(f"niuniu detect: error: {error}", file=sys.stderr)
    if not images:
        return 2
    detector = _detector(args)
    failures = len(errors)
    for path in images:
        try:
            image = read_image(path)
        except ImageError as exc:   # one line naming it; the batch's other images are still read
            print(f"niuniu detect: error: {exc}", file=sys.stderr)
            failures += 1
            continue
        cards = [d.to_json() for d in detector.detect(image)]
        print(json.dumps({"image": str(path), "cards": cards}), flush=True)
    return 2 if failures else 0


def _deck_list(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    if not names:
        raise argparse.ArgumentTypeError("name at least one deck, e.g. --decks kennard_jumbo,kennard_slab")
    return names


def _conditions_said(args) -> str:
    """The changes ``evaluate`` made to each photo or hand before reading it, as the printed
    result names them (", black and white, mirrored, blurred by 2.5 px")."""
    return (", black and white" if args.grey else "") + (", mirrored" if args.mirror else "") + \
        (f", brightness x{args.gain:g}" if args.gain != 1.0 else "") + \
        (f", blurred by {args.blur:g} px" if args.blur else "") + \
        (f", smeared {args.smear[0]:g} px at {args.smear[1]:g} degrees" if args.smear else "") + \
        (f", {args.speckle:.1%} of the pixels speckled" if args.speckle else "")


def _cmd_evaluate(args) -> int:
    from vision.evaluate import PassedOver, evaluate, synthetic_hands

    if args.synthetic_hands:
        if args.stretch != (1.0, 1.0):
            raise NiuniuError("--stretch resizes labelled photos; rendered hands are drawn at the camera's aspect: "
                              "leave --stretch out, or give a photo folder instead of --synthetic-hands")
        kind, what = ("held", "fans held up") if args.held else ("hands", "hands")
        whose = ", ".join(args.decks) if args.decks else "held-out"
        result = synthetic_hands(_detector(args), args.synthetic_hands, args.seed, kind, args.decks, args.close_up,
                                 args.grey, args.mirror, args.speckle, args.blur, args.smear, args.gain)
        what += (", close up" if args.close_up else "") + _conditions_said(args)
        why = ", ".join(f"{n} {cause}" for cause, n in result["missed"].items())
        print(json.dumps(result) if args.json else
              f"{result['hands']} {whose} {what} (seed {args.seed}): "
              f"all five right in {result['hands_right']} "
              f"({result['hands_all_right']:.1%}), card recall {result['card_recall']:.3f}, "
              f"{result['extra_cards']} extra cards ({result['hidden_cards_read']} of them hidden cards read, "
              f"{result['false_cards']} not on the table; {result['hands_right_lenient']} hands right counting "
              f"hidden cards read as no error); dealt cards not read: {why}")
        return 0
    if args.data is None:
        raise NiuniuError("give a labelled photo folder, or --synthetic-hands N")
    quiet_native_logs()
    passed = PassedOver()
    images, mode = _labelled_images(args.data, args.split, passed)
    _say_passed_over(passed.skipped)
    # Images that cannot be read whole are named (each one line), the rest still scored,
    # and the exit status says the score is not of the whole set.
    score = evaluate(_detector(args), images, mode, limit=args.limit, stretch=args.stretch, close_up=args.close_up,
                     grey=args.grey, mirror=args.mirror, speckle=args.speckle, blur=args.blur, smear=args.smear,
                     gain=args.gain, passed=passed)
    for line in passed.damaged:
        print(f"niuniu evaluate: error: {line}; left out of the score", file=sys.stderr)
    result = {"data": str(args.data), "mode": mode, "grey": args.grey, "mirror": args.mirror,
              "speckle": args.speckle, "blur": args.blur, "smear": list(args.smear) if args.smear else None,
              "gain": args.gain,
              **score.to_json(), "skipped": passed.skipped, "damaged": passed.damaged}
    if args.json:
        print(json.dumps(result))
    else:
        left_out = ", ".join(part for part in (
            f"{len(passed.damaged)} damaged image{'s' * (len(passed.damaged) > 1)}" if passed.damaged else "",
            f"{len(passed.skipped)} passed over (label lines or files: see the warnings)" if passed.skipped else "")
            if part)
        print(f"{args.data} ({mode} labels{_conditions_said(args)}): precision {score.precision:.3f}, "
              f"recall {score.recall:.3f}, all cards right in {result['all_right_images']:.1%} "
              f"of {score.images} images" + (f"; left out: {left_out}" if left_out else ""))
    return 2 if passed.damaged else 0


# At most this many "passed over" lines are printed; the rest are counted (and all are in --json).
PASSED_OVER_SHOWN = 10


def _say_passed_over(lines: list[str]) -> None:
    for line in lines[:PASSED_OVER_SHOWN]:
        print(f"niuniu evaluate: warning: {line}", file=sys.stderr)
    if len(lines) > PASSED_OVER_SHOWN:
        print(f"niuniu evaluate: warning: ... and {len(lines) - PASSED_OVER_SHOWN} more passed over "
              "(--json lists them all)", file=sys.stderr)


def _labelled_images(data: Path, split: str, passed):
    """``evaluate``'s photos and their labels from ``data`` (a YOLO set root, or a folder of
    images with VOC XML), or one error saying where none were found and why."""
    from vision.evaluate import load_voc_set, load_yolo_set, yolo_split_folders, yolo_splits

    if not data.exists():
        raise NiuniuError(f"{data} does not exist; give a YOLO set root (with data.yaml) or a folder of images "
                          "with VOC .xml labels")
    if not data.is_dir():
        raise NiuniuError(f"{data} is neither a YOLO set (data.yaml) nor a folder of images with VOC XML")
    if (data / "data.yaml").exists():
        images, mode = load_yolo_set(data, split, passed)
        folders = yolo_split_folders(data, split)
        if folders is None:
            splits = yolo_splits(data)
            raise NiuniuError(f"{data} has no split {split!r}: neither {data / split / 'images'} nor "
                              f"{data / 'images' / split} exists; pass --split "
                              + (f"one of {', '.join(splits)}" if splits else "naming the folder of its images"))
        if not images and not passed.damaged:
            raise NiuniuError(f"no labelled images found in {folders[0]}; it holds no image file")
    else:
        images, mode = load_voc_set(data, passed)
        if not images and not passed.damaged:
            hint = "" if any(data.glob("*.xml")) else " (no .xml labels there, and no data.yaml)"
            raise NiuniuError(f"no labelled images found under {data}{hint}")
    if not images:
        for line in passed.damaged:
            print(f"niuniu evaluate: error: {line}", file=sys.stderr)
        raise NiuniuError(f"no image of {data} could be read whole")
    return images, mode


def _cmd_synth(args) -> int:
    from scoring.cards import CARD_CODES
    from vision.synth.dataset import SynthConfig, write_dataset

    cfg = SynthConfig(out=args.out, images=args.images,
                      val_images=args.val_images if args.val_images is not None else max(1, args.images // 8),
                      seed=args.seed, procedural_share=args.procedural_share, crops_only=args.crops_only,
                      crops_per_scene=20 if args.crops_only else 12, court_share=args.court_share,
                      blur_share=args.blur_share, held_share=args.held_share, stretch_share=args.stretch_share,
                      exposure_share=args.exposure_share, scene_scale=args.scene_scale,
                      procedural_designs=args.procedural_designs, crop_size=args.crop_size,
                      crop_view=args.crop_view, orientation_crops=args.orientation_crops,
                      index_visible=args.index_visible)
    summary = write_dataset(cfg, workers=args.workers, progress=not args.json)
    write_class_file(REPO_ROOT / "models" / "cards.yaml", CARD_CODES)
    if args.json:
        print(json.dumps(summary))
    else:
        for split, info in summary["splits"].items():
            print(f"{split}: {info['scenes']} scenes, {info['labels']} boxes, {info['crops']} index crops, "
                  f"{info['not_index_crops']} not-an-index crops, "
                  f"{len(info['decks'])} deck designs, {info['seconds']} s")
        print(f"wrote {args.out}")
    return 0


def _cmd_hard_negatives(args) -> int:
    from vision.detector import IndexFinder
    from vision.synth.dataset import RECIPE, config_of_set, mine_detector_crops

    if not (args.out / "classify" / "train").is_dir():
        raise NiuniuError(f"{args.out} holds no classifier crops: make it with "
                          f"`niuniu datasets synth --out {args.out}` first")
    cfg = config_of_set(args.out, args.crops_only, images=args.images, seed=args.seed,
                        **{key: getattr(args, key) for key in RECIPE})
    stats = mine_detector_crops(cfg, IndexFinder(args.model, imgsz=args.imgsz, conf=args.conf),
                                per_scene=args.per_scene, readings_per_scene=args.readings_per_scene)
    print(f"{stats['crops']} 'not an index' crops from {stats['false_indices']} false indices, "
          f"{stats['readings']} crops of found indices, in {stats['scenes']} scenes, {stats['seconds']} s")
    return 0


def _cmd_real_crops(args) -> int:
    from vision.real_crops import harvest_set

    if not (args.root / "data.yaml").is_file():
        raise NiuniuError(f"{args.root} has no data.yaml: give the root of a YOLO-format set with card class names")
    splits = dict(s.split(":", 1) if ":" in s else (s, s) for s in (args.split or ["train:train", "valid:val"]))
    summary = harvest_set(_detector(args), args.root, args.out, splits, copies=args.copies,
                          crop_size=args.crop_size)
    if args.json:
        print(json.dumps(summary))
    else:
        for name, st in summary["splits"].items():
            print(f"{name}: {st['crops']} crops from {st['indices']} indices in {st['photos_used']} of {st['photos']} "
                  f"photos ({st['unmirrored']} un-mirrored); classifier top-1 before: {st['top1_before']}")
    return 0


def _cmd_mirror_crops(args) -> int:
    from vision.mirror import write_mirror_crops

    counts = write_mirror_crops(args.src, args.out, args.per_card, seed=args.seed)
    print(json.dumps(counts) if args.json else
          f"wrote {counts['train']} training and {counts['val']} validation crops of {counts['cards']} cards "
          f"to {args.out}")
    return 0


def _cmd_smear_crops(args) -> int:
    from vision.smeared_crops import write_smeared_crops

    counts = write_smeared_crops(args.src, args.out, args.share, seed=args.seed)
    print(json.dumps(counts) if args.json else
          f"linked {counts['linked']} crops of {counts['classes']} classes into {args.out}, "
          f"{counts['smeared']} of them also smeared")
    return 0


def _cmd_demo(args) -> int:
    from vision.synth.demo import write_demo

    manifest = write_demo(args.out, seed=args.seed, rounds=args.rounds, progress=not args.json)
    print(json.dumps(manifest) if args.json else f"wrote {args.out}")
    return 0


def write_class_file(path: Path, codes) -> None:
    """``models/cards.yaml``: the 52 card classes in the classifier's one fixed order.

    ultralytics numbers classify classes by sorted folder name, so that order
    (sorted card codes) is the class-id order; ``CardDetector`` maps by name anyway.
    """
    codes = sorted(codes)
    text = ("# The 52 card classes of the card classifier, in class-id order (sorted card codes).\n"
            "names:\n" + "".join(f"  {i}: {c}\n" for i, c in enumerate(codes)))
    if not path.exists() or path.read_text() != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _cmd_train(args) -> int:
    from vision.train import publish, train

    name = args.name or args.task
    best = train(args.task, args.data, project=args.project, name=name, epochs=args.epochs, model=args.model,
                 resume=args.resume, widen_to=args.widen_to, imgsz=args.imgsz, batch=args.batch, lr0=args.lr0,
                 warmup_epochs=args.warmup_epochs, optimizer=args.optimizer, cos_lr=args.cos_lr,
                 hsv_h=args.hsv_h, hsv_s=args.hsv_s)
    print(f"best weights: {best}")
    if args.publish:
        print(f"published: {publish(best, args.publish)}")
    return 0


def _cmd_export(args) -> int:
    from vision.export import export

    for weights in args.weights:
        for path in export(weights, args.imgsz, tuple(args.format or ("onnx", "ncnn"))):
            print(f"wrote {path}")
    return 0


def _cmd_bench(args) -> int:
    from vision.benchmark import run_bench

    quiet_native_logs()
    report = run_bench(args.source, args.models, args.frames, args.imgsz, tta=not args.no_tta,
                       second_opinion=not args.no_second_opinion)
    if args.json:
        print(json.dumps(report))
        return 0
    w, h = report["frame_size"]
    print(f"{report['source']}: {w}x{h} frames, {report['regions'] or 'no'} seat regions")
    print(f"{'backend':8s} {'ms/frame':>9s} {'p95 ms':>8s} {'fps':>6s} {'cards/frame':>12s}")
    for r in report["results"]:
        print(f"{r['backend']:8s} {r['ms_per_frame']:9.1f} {r['p95_ms']:8.1f} {r['fps']:6.2f} "
              f"{r['cards_per_frame']:12.2f}")
    print(f"use: {report['recommended']}")
    return 0
