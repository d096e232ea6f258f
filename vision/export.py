"""Export trained weights to the runtime formats the device uses.

ONNX runs everywhere through onnxruntime; NCNN is the fastest on a Raspberry Pi's
ARM cores.  Both are exported at the fixed input size the detector runs at, so
the files in ``models/`` are used exactly as benchmarked.  NCNN export runs
offline only when ``ncnn`` and the ``pnnx`` version ultralytics pins are
installed (the ``export`` extra), because ultralytics otherwise downloads pnnx.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from scoring.errors import NiuniuError

FORMATS = ("onnx", "ncnn")


def export(weights: Path, imgsz: int, formats=FORMATS) -> list[Path]:
    """Write ``weights`` as each format beside it; return the paths written."""
    from vision.detector import ModelError, _ultralytics_logs_to_stderr, short_cause

    if not weights.exists():
        raise NiuniuError(f"no weights at {weights}; train first (`niuniu train`)")
    # Checked before ultralytics sees the file: given a folder, a .txt or a damaged checkpoint
    # it raises a TypeError whose text lists every format it supports.
    fix = "give the .pt file `niuniu train` wrote (runs/<name>/weights/best.pt) or one from models/"
    if weights.is_dir():
        raise ModelError(f"{weights} is a folder, not trained weights; {fix}")
    if weights.suffix.lower() != ".pt":
        raise ModelError(f"{weights} is not PyTorch weights (.pt): only those are exported; {fix}")
    if weights.stat().st_size < 1024:
        raise ModelError(f"{weights} is only {weights.stat().st_size} bytes: truncated or a Git LFS pointer; "
                         "restore the file from the repository")
    from ultralytics import YOLO

    _ultralytics_logs_to_stderr()
    try:
        YOLO(str(weights))   # loaded once to check it; each export below loads its own fresh copy
    except Exception as exc:  # ultralytics raises many types for a bad file
        raise ModelError(f"{weights} could not be loaded ({type(exc).__name__}: {short_cause(exc)}); the file is "
                         f"corrupt or not ultralytics weights; {fix}") from exc
    written = []
    for fmt in formats:
        if fmt not in FORMATS:
            raise NiuniuError(f"unknown export format {fmt!r}; choose from {', '.join(FORMATS)}")
        if fmt == "ncnn":
            try:
                import ncnn  # noqa: F401
                import pnnx  # noqa: F401
            except ImportError as exc:
                raise NiuniuError("NCNN export needs `pip install -e '.[export]'` (ncnn and the pinned pnnx); "
                                  "without them ultralytics would try to download pnnx") from exc
        try:
            out = YOLO(str(weights)).export(format=fmt, imgsz=imgsz, simplify=True, device="cpu")
        except Exception as exc:  # noqa: BLE001 - the exporter's own failure, said in one line
            raise NiuniuError(f"exporting {weights} to {fmt} failed "
                              f"({type(exc).__name__}: {short_cause(exc)})") from exc
        written.append(Path(out))
    # pnnx leaves intermediate files beside the weights; the ncnn folder holds what is used
    for junk in weights.parent.glob(weights.stem + ".pnnx*"):
        junk.unlink() if junk.is_file() else shutil.rmtree(junk, ignore_errors=True)
    for junk in [*weights.parent.glob(weights.stem + "_ncnn.py"),
                 *weights.parent.glob(weights.stem + "_ncnn_model/model_ncnn.py")]:
        junk.unlink()  # pnnx's generated PyTorch re-implementation: not needed to run
    return written
