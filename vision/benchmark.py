"""How fast each installed runtime reads a table frame, and which to use.

The same frames go through every backend whose model files are in ``models/``
(PyTorch ``.pt``, ONNX, NCNN), with the table's seat zones as regions when a
table config is found beside the frames, as the live pipeline does.  Timing is
wall-clock per frame after a warm-up; the recommendation is simply the fastest.
"""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path

import numpy as np

from scoring.errors import NiuniuError
from vision.detector import DETECTOR_IMGSZ_RULE, LIVE_IMGSZ, is_detector_imgsz

BACKENDS = {"pt": "torch", "onnx": "onnxruntime", "ncnn": "ncnn"}


def installed_backends(models_dir: Path) -> list[str]:
    from vision.detector import model_file

    found = []
    for fmt, module in BACKENDS.items():
        if importlib.util.find_spec(module) is None:
            continue
        if model_file(models_dir, fmt).exists():
            found.append(fmt)
    return found


def load_frames(source: str, limit: int) -> tuple[list[np.ndarray], list | None]:
    """Up to ``limit`` frames from any source, plus seat regions if a table.yaml sits beside them."""
    from vision.sources import open_source

    root = Path(source)
    if (root / "frames").is_dir():  # a recording folder like datasets/demo: frames/ + table.yaml
        source = str(root / "frames")
    src = open_source(source)
    src.open()
    frames = []
    try:
        for frame in src.frames():
            frames.append(frame.image)
            if len(frames) >= limit:
                break
    finally:
        src.close()
    if not frames:
        raise NiuniuError(f"source {source} gave no frames")
    regions = None
    table = root / "table.yaml"
    if table.exists():
        from vision.table import ZoneMap, load_table_config

        h, w = frames[0].shape[:2]
        regions = ZoneMap(load_table_config(table), w, h).regions
        regions = list(regions.values()) if isinstance(regions, dict) else list(regions)
    return frames, regions


def bench_backend(fmt: str, frames, regions, models_dir: Path, imgsz: int, tta: bool = True,
                  second_opinion: bool = True) -> dict:
    from vision.detector import CardDetector, model_file

    det = CardDetector(model_file(models_dir, fmt), imgsz=imgsz, tta=tta,
                       second_opinion=None if second_opinion else False)
    det.detect(frames[0], regions)  # warm-up: first call allocates
    times, cards = [], 0
    for image in frames:
        t0 = time.perf_counter()
        cards += len(det.detect(image, regions))
        times.append(time.perf_counter() - t0)
    ms = np.array(times) * 1000
    return {"backend": fmt, "detector": str(det.detector_path.name), "classifier": str(det.classifier_path.name),
            "second_opinion": det.second_opinion_path.name if det.second_opinion_path else None,
            "frames": len(frames), "ms_per_frame": round(float(ms.mean()), 1),
            "p95_ms": round(float(np.percentile(ms, 95)), 1), "fps": round(1000 / float(ms.mean()), 2),
            "cards_per_frame": round(cards / len(frames), 2)}


def run_bench(source: str, models_dir: Path, frames_limit: int = 30, imgsz: int = LIVE_IMGSZ, tta: bool = True,
              second_opinion: bool = True) -> dict:
    # Checked here too, not only by `niuniu bench`'s flags: a limit of 0 still timed one
    # frame (the source is read until the count reaches it), and a size of 0 read at 32 px,
    # so the table below recommended a runtime from a reading that found nothing.
    if frames_limit < 1:
        raise NiuniuError(f"frames {frames_limit}: time at least 1 frame")
    if not is_detector_imgsz(imgsz):
        raise NiuniuError(f"imgsz {imgsz}: give the detector's input size, {DETECTOR_IMGSZ_RULE}")
    backends = installed_backends(models_dir)
    if not backends:
        raise NiuniuError(f"no card model found in {models_dir} for any installed runtime (torch, onnxruntime, ncnn)")
    frames, regions = load_frames(source, frames_limit)
    rows = [bench_backend(fmt, frames, regions, models_dir, imgsz, tta, second_opinion) for fmt in backends]
    best = min(rows, key=lambda r: r["ms_per_frame"])
    h, w = frames[0].shape[:2]
    return {"source": source, "frame_size": [w, h], "regions": len(regions or []), "tta": tta,
            "second_opinion": second_opinion, "results": rows,
            "recommended": best["backend"]}
