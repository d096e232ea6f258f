"""Run the kiosk in its own process with a scripted detector instead of the card model.

Used by the crash tests (kill -9 needs a real process), the demo and browser tests:

* ``python kiosk_proc.py DEMO_DIR DATA_DIR PAUSE``: the demo (banner with URL and accounts);
* ``python kiosk_proc.py kiosk ARGS...``: ``niuniu kiosk ARGS...``, frames from ``--source``,
  the script read from ``script.json`` beside the frames folder.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from kiosk_testing import FAST_HASH, ScriptedDetector, load_script  # noqa: E402

from kiosk import commands  # noqa: E402

if __name__ == "__main__":
    if sys.argv[1] == "kiosk":
        args = sys.argv[2:]
        source = Path(args[args.index("--source") + 1])
        commands._detector = lambda _args: ScriptedDetector(load_script(source.parent))
        from kiosk.cli import main
        sys.exit(main(["kiosk", *args]))
    demo_dir, data_dir, pause = Path(sys.argv[1]), Path(sys.argv[2]), float(sys.argv[3])
    sys.exit(commands.run_demo(demo_dir, ScriptedDetector(load_script(demo_dir)), data_dir=data_dir, port=0,
                               pause=pause, app_config={"PASSWORD_HASH_METHOD": FAST_HASH}))
