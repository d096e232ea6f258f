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
    if not weights.exists():
        raise NiuniuError(f"no weights at {weights}; train first (`niuniu train`)")
    from ultralytics import YOLO

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
        out = YOLO(str(weights)).export(format=fmt, imgsz=imgsz, simplify=True, device="cpu")
        written.append(Path(out))
    # pnnx leaves intermediate files beside the weights; the ncnn folder holds what is used
    for junk in weights.parent.glob(weights.stem + ".pnnx*"):
        junk.unlink() if junk.is_file() else shutil.rmtree(junk, ignore_errors=True)
    for junk in [*weights.parent.glob(weights.stem + "_ncnn.py"),
                 *weights.parent.glob(weights.stem + "_ncnn_model/model_ncnn.py")]:
        junk.unlink()  # pnnx's generated PyTorch re-implementation: not needed to run
    return written
