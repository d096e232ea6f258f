"""``niuniu calibrate`` and ``niuniu replay`` (and, when present, the model commands).

Handlers return an exit code and raise :class:`~scoring.errors.NiuniuError` for
anything the user can fix; the root command prints it as one line.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path

import cv2

from scoring.errors import NiuniuError
from vision.aim import save_view, view_path
from vision.calibrate import (CalibrationError, build_config, click_zones, draw_zones, even_layout, grid_layout,
                              has_display, parse_grid, seat_names, zones_from_json)
from vision.replay import format_rounds, jsonable, replay
from vision.sources import SourceError, open_source, oriented
from vision.table import CameraSettings, TableConfig, dump_table_config, load_table_config


def register(sub: argparse._SubParsersAction) -> None:
    cal = sub.add_parser(
        "calibrate", help="mark each seat's zone on the camera image and write the table file",
        description="Write a table file with one zone per seat. With a display and --source, click each "
                    "seat's corners on a camera frame; headless, use an even layout (--players/--seats, "
                    "optionally --grid RxC) or zones measured elsewhere (--from-json).",
    )
    cal.add_argument("--source", help="camera or recording to take a frame from (picamera2, 0, URL, video, folder)")
    cal.add_argument("--out", required=True, type=Path, help="table file to write (.yaml, .toml or .json)")
    cal.add_argument("--force", action="store_true", help="overwrite --out if it exists")
    cal.add_argument("--table-id", help="table name for recordings and the audit log "
                     "(default: the replaced file's, else table-1)")
    cal.add_argument("--rules", help="rule preset (niuniu rules list; default: the replaced file's, else cambodia)")
    cal.add_argument("--currency", help="currency code shown with amounts (default: the replaced file's, else USD)")
    who = cal.add_mutually_exclusive_group()
    who.add_argument("--players", type=int, help="banker plus this many player seats (1-7); default 5")
    who.add_argument("--seats", help="seat names, comma separated, e.g. banker,1,2,3")
    how = cal.add_mutually_exclusive_group()
    how.add_argument("--grid", help="place seats in an even ROWSxCOLS grid, row by row")
    how.add_argument("--even", action="store_true", help="even layout: banker top middle, players along the bottom")
    how.add_argument("--from-json", type=Path, help='zones file {"banker": [[x,y],...], "1": [...]} (0..1 or pixels)')
    how.add_argument("--click", action="store_true", help="click the zones in a window (needs a display)")
    cal.add_argument("--size", help="image size WxH for pixel zones when there is no --source")
    cal.add_argument("--mirror", action=argparse.BooleanOptionalAction, default=None,
                     help="the camera saves mirror images: mirror its frame back before the zones are marked, "
                          "and write camera.mirror: true so the table reads every frame mirrored back "
                          "(default: as the replaced file says; --no-mirror turns it off)")
    cal.add_argument("--preview", type=Path, help="also write the frame with the zones drawn (JPEG)")
    cal.add_argument("--json", action="store_true", help="print the written config as JSON")
    cal.set_defaults(func=calibrate_command)

    rep = sub.add_parser(
        "replay", help="list the rounds in a recording, a video or a frame folder",
        description="Replay a round recording (no model needed; checked against what was recorded), "
                    "a folder of recordings, a video file or a folder of frames (read by the card model).",
    )
    rep.add_argument("path", type=Path, help="round folder, folder of rounds, video file or frame folder")
    rep.add_argument("--config", type=Path, help="table file (default: the recording's own, or table.yaml beside PATH)")
    rep.add_argument("--json", action="store_true", help="print the rounds as JSON")
    rep.add_argument("--redetect", action="store_true",
                     help="run the model again on the key frames and list differences")
    rep.add_argument("--model", help="card model for videos, frames and --redetect (default: models/)")
    rep.add_argument("--fps", type=float, help="frame rate of a frame folder (default: the table's camera.fps)")
    rep.set_defaults(func=replay_command)

    try:
        model_cli = importlib.import_module("vision.model_cli")
    except ModuleNotFoundError as exc:
        if exc.name != "vision.model_cli":
            raise
    else:
        model_cli.register(sub)


def _replaced_table(out: Path, force: bool) -> TableConfig | None:
    """The table file a recalibration replaces, whose settings it keeps.

    Calibrating again after the camera was bumped must change the zones only: a table id
    reset to the default would split the audit log's history in two, and the rules,
    currency, bet limits and thresholds are the house's, not the camera's."""
    if not out.exists():
        return None
    if not force:
        raise CalibrationError(f"{out} exists; pass --force to replace its zones (its other settings are kept), "
                               "or choose another --out")
    try:
        return load_table_config(out)
    except NiuniuError as exc:
        print(f"note: {out} is not a usable table file, so none of its settings are kept ({exc})", file=sys.stderr)
        return None


def calibrate_command(args: argparse.Namespace) -> int:
    out: Path = args.out
    if out.suffix.lower() not in (".yaml", ".yml", ".toml", ".json"):
        raise CalibrationError(f"--out {out}: use a .yaml, .toml or .json file name")
    previous = _replaced_table(out, args.force)
    lens = previous.camera if previous else CameraSettings()
    mirror = lens.mirror if args.mirror is None else args.mirror
    image = capture_size = None
    if args.source:
        image = grab_frame(args.source)
        capture_size = (image.shape[1], image.shape[0])
        image = oriented(image, lens.rotate, mirror)   # zones are marked on the picture the table will read
    size = (image.shape[1], image.shape[0]) if image is not None else parse_size(args.size)

    layout = "from " + str(args.from_json) if args.from_json else ""
    if args.from_json:
        zones = zones_from_json(args.from_json, size)
    else:
        if previous and args.players is None and not args.seats:
            names = list(previous.seat_names)      # the same seats, zoned again
        else:
            names = seat_names(args.players if args.players is not None else (None if args.seats else 5), args.seats)
        if args.grid:
            zones = grid_layout(names, *parse_grid(args.grid))
            layout = f"even {args.grid} grid; adjust the zones to the table (check them with --preview)"
        elif args.click or (not args.even and image is not None and has_display()):
            if image is None:
                raise CalibrationError("--click needs --source to show a frame")
            zones = click_zones(image, names)
            layout = "clicked"
        else:
            zones = even_layout(names)
            layout = ("even layout (banker top middle, players along the bottom); adjust the zones to the "
                      "table (check them with --preview)")

    # Everything the replaced file says (future keys too), overlaid with what calibrating sets.
    settings = previous.model_dump(mode="json", exclude_defaults=True, exclude={"seats"}) if previous else {}
    kept = sorted(settings)
    given = {"table_id": args.table_id, "rules": args.rules, "currency": args.currency}
    settings.update({key: value for key, value in given.items() if value})
    camera = settings.pop("camera", {})
    if args.source:
        camera["source"] = args.source
    if capture_size or size:
        camera["width"], camera["height"] = capture_size or size
    camera.pop("mirror", None)
    if mirror:
        camera["mirror"] = True
    config = build_config(zones, table_id=settings.pop("table_id", "table-1"),
                          rules=settings.pop("rules", "cambodia"), camera=camera, source=str(out), **settings)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        dump_table_config(config, out)
    except OSError as exc:
        raise CalibrationError(f"cannot write {out}: {exc}") from None
    load_table_config(out)  # what was written must read back
    view = view_path(out)
    if image is not None:
        save_view(image, view)   # what the running table checks the camera's aim against
    elif view.exists():
        # Zones placed without a picture no longer match the old one: a stale view would
        # warn "moved" about a camera that did not move.
        view.unlink()
    if args.preview:
        if image is None:
            raise CalibrationError("--preview needs --source to draw on")
        if not cv2.imwrite(str(args.preview), draw_zones(image, config.seats)):
            raise CalibrationError(f"cannot write preview {args.preview}")
    if args.json:
        print(json.dumps(config.model_dump(mode="json"), indent=2))
    else:
        print(f"wrote {out}: table {config.table_id}, rules {config.rules}, seats {', '.join(config.seat_names)}")
        print(f"zones: {layout}")
        if image is not None:
            print(f"wrote {view}: the picture the zones were marked on; the kiosk warns when the camera "
                  f"moves from it (keep it beside {out.name})")
        if previous:
            seats = [] if args.players is not None or args.seats else ["seats"]
            print("kept from the file it replaces: " + ", ".join(
                seats + [key.replace("_", " ") for key in kept if not given.get(key)]))
    return 0


def grab_frame(spec: str):
    """One settled frame from a source (a live camera gets a few frames to adjust exposure)."""
    source = open_source(spec, start_ts=0.0)
    try:
        source.open()
        image = None
        for _ in range(5 if source.live else 1):
            image = source.read()
        if image is None:
            raise SourceError(f"{source.description} delivered no frame")
        return image
    except NiuniuError:
        raise
    except Exception as exc:  # a camera library error is a source problem, not a crash
        raise SourceError(f"{source.description}: {exc}") from None
    finally:
        source.close()


def parse_size(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    try:
        width, height = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise CalibrationError(f"--size {text!r}: write width x height in pixels, like 1920x1080") from None
    if width <= 0 or height <= 0:
        raise CalibrationError(f"--size {text!r}: both sides must be positive")
    return width, height


def replay_command(args: argparse.Namespace) -> int:
    rounds = replay(args.path, config=args.config, redetect=args.redetect, model=args.model, fps=args.fps)
    if args.json:
        json.dump(jsonable(rounds), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(format_rounds(rounds))
    return 0 if all(r.get("matches_recording", True) for r in rounds) else 1
