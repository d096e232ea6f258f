"""Card model speed per table frame for each runtime (PyTorch, ONNX, NCNN).

Same measurement as `niuniu bench`; this script exists so every benchmark lives in
bench/.  Usage: python3 bench/bench_model.py [--source datasets/demo] [--frames 30]
"""

from __future__ import annotations

import sys

from kiosk.cli import main

if __name__ == "__main__":
    sys.exit(main(["bench", *sys.argv[1:]]))
