"""``niuniu calibrate`` and ``niuniu replay`` (and, when present, the model commands).

Handlers return an exit code and raise :class:`~scoring.errors.NiuniuError` for
anything the user can fix; the root command prints it as one line.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import cv2

from scoring.errors import NiuniuError
from pydantic import ValidationError

from vision.aim import view_path
from vision.calibrate import (CalibrationError, build_config, check_zones, click_zones, draw_zones, even_layout,
                              grid_layout, has_display, parse_grid, seat_names, zones_from_json)
from vision.replay import format_rounds, jsonable, replay, seal_line
from vision.sources import SourceError, open_source, oriented
from vision.table import (CameraSettings, ConfigError, TableConfig, parse_config_text, table_config_from_dict,
                          table_config_text)


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
    cal.add_argument("--rules", help="rule preset (`niuniu rules` lists them; default: the replaced file's, "
                     "else cambodia)")
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
    rep.add_argument("--fps", type=frame_rate, help="frame rate of a frame folder (default: the table's camera.fps)")
    rep.add_argument("--data-dir", type=Path,
                     help="the kiosk's data directory whose audit log sealed the recording (default: the one the "
                          "recording lies in, if it has an audit.sqlite3): each recording is checked against its seal")
    rep.set_defaults(func=replay_command)

    try:
        model_cli = importlib.import_module("vision.model_cli")
    except ModuleNotFoundError as exc:
        if exc.name != "vision.model_cli":
            raise
    else:
        model_cli.register(sub)


@dataclass
class _Replaced:
    """What a recalibration keeps of the table file it replaces."""

    settings: dict                    # the file's keys other than seats, as written there
    camera: CameraSettings            # its camera (rotation and mirroring apply to the new frame)
    seat_names: list[str] | None      # None where its seats cannot be read


_PLACEHOLDER_SEATS = [{"name": n, "polygon": [list(p) for p in pts]}
                      for n, pts in even_layout(["banker", "1"]).items()]


def _replaced_table(out: Path, force: bool, given: dict) -> _Replaced | None:
    """The table file a recalibration replaces, whose settings it keeps.

    Calibrating again after the camera was bumped must change the zones only: a table id
    reset to the default would split the audit log's history in two, and the rules,
    currency, bet limits and thresholds are the house's, not the camera's.  So a file whose
    settings cannot be read is refused, not replaced by defaults: only its seats (the zones
    being replaced) may be broken, and a setting given on the command line replaces the
    file's.  ``given``: the settings from the command line (already checked)."""
    if not out.exists() and not out.is_symlink():
        return None
    if not force:
        raise CalibrationError(f"{out} exists; pass --force to replace its zones (its other settings are kept), "
                               "or choose another --out")
    if out.is_dir():
        raise CalibrationError(f"--out {out} is a folder; give the table file's name, like {out / 'table.yaml'}")
    keep = "fix it so its table id, rules and other settings can be kept, or move it aside to start afresh"
    try:
        text = out.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CalibrationError(f"table file {out} cannot be read ({exc}); {keep}") from None
    try:
        data = parse_config_text(text, out)
    except ConfigError as exc:
        raise CalibrationError(f"{exc}; {keep}") from None
    settings = {key: value for key, value in data.items() if key != "seats"}
    try:
        config = table_config_from_dict({**settings, **given, "seats": _PLACEHOLDER_SEATS}, out)
    except ConfigError as exc:
        raise CalibrationError(f"{exc}; {keep}") from None
    try:
        names = seat_names(seats=[str(s["name"]) for s in data["seats"]])
    except (KeyError, TypeError, CalibrationError):
        names = None
    return _Replaced(settings, config.camera, names)


_FLAG_KEYS = (("--table-id", "table_id", "the table's name, like vip-3"),
              ("--rules", "rules", "a rule preset (niuniu rules lists them) or a preset file"),
              ("--currency", "currency", "a currency code, like USD"))


_SETTING_NAMES = {"camera": "camera settings", "recordings": "recording settings"}


def _given_settings(args: argparse.Namespace) -> dict:
    """The settings given as flags, each checked alone so its error names the flag, not the
    table file being written (which does not exist yet, or is not at fault)."""
    given = {}
    for flag, key, what in _FLAG_KEYS:
        value = getattr(args, key)
        if value is None:
            continue
        value = value.strip()
        if key == "currency":
            value = value.upper()     # usd is USD
        if not value:
            raise CalibrationError(f"{flag} is empty; give {what}")
        if key == "currency" and not re.fullmatch(r"[A-Z]{3}", value):   # "dollars" is a typo, not a currency
            raise CalibrationError(f"{flag} {getattr(args, key)!r}: write the three-letter ISO 4217 code "
                                   "(USD, KHR, HKD, MOP, ...)")
        try:
            TableConfig.model_validate({"table_id": "t", "rules": "cambodia", "seats": _PLACEHOLDER_SEATS,
                                        key: value})
        except ValidationError as exc:
            problem = exc.errors()[0]["msg"].removeprefix("Value error, ")
            raise CalibrationError(f"{flag} {getattr(args, key)!r}: {problem}") from None
        given[key] = value
    return given


def _checked_preview(preview: Path | None, source: str | None, out: Path) -> Path | None:
    """``--preview`` checked before anything is written: a preview that fails after the
    table file was replaced would leave a failed command that changed the table."""
    if preview is None:
        return None
    if not source:
        raise CalibrationError("--preview needs --source: it draws the zones on a frame from the camera "
                               "(without one, check them on the kiosk's Seat zones page)")
    if preview.is_dir():
        raise CalibrationError(f"--preview {preview} is a folder; give a picture file name, like "
                               f"{preview / 'zones.jpg'}")
    if not cv2.haveImageWriter(str(preview)):
        raise CalibrationError(f"--preview {preview}: cannot write a {preview.suffix or 'nameless'} picture; "
                               "end the name in .jpg or .png")
    if not preview.parent.is_dir():
        raise CalibrationError(f"--preview {preview}: the folder {preview.parent} does not exist")
    if preview.resolve() in (out.resolve(), view_path(out).resolve()):
        raise CalibrationError(f"--preview {preview} would overwrite the table file or its calibration "
                               "picture; choose another name")
    return preview


def calibrate_command(args: argparse.Namespace) -> int:
    """Check everything first, then write: a failed calibration leaves the old table file
    and its calibration picture as they were."""
    out: Path = args.out
    if out.suffix.lower() not in (".yaml", ".yml", ".toml", ".json"):
        raise CalibrationError(f"--out {out}: use a .yaml, .toml or .json file name")
    given = _given_settings(args)
    preview = _checked_preview(args.preview, args.source, out)
    names = None
    if not args.from_json and (args.players is not None or args.seats is not None):
        names = seat_names(args.players, args.seats)
    grid = parse_grid(args.grid) if args.grid else None
    size_flag = parse_size(args.size)
    if args.click and not args.source:
        raise CalibrationError("--click needs --source to show a frame")
    previous = _replaced_table(out, args.force, given)
    lens = previous.camera if previous else CameraSettings()
    mirror = lens.mirror if args.mirror is None else args.mirror
    image = capture_size = None
    if args.source:
        image = grab_frame(args.source)
        capture_size = (image.shape[1], image.shape[0])
        image = oriented(image, lens.rotate, mirror)   # zones are marked on the picture the table will read
    size = (image.shape[1], image.shape[0]) if image is not None else size_flag

    kept_seats = False
    # --preview draws on the source's frame: without one, point at what works
    check = ("check them with --preview" if image is not None else
             "check them on a camera frame with --source ... --preview zones.jpg, or on the kiosk's Seat zones page")
    layout = "from " + str(args.from_json) if args.from_json else ""
    where = f"zones file {args.from_json}" if args.from_json else "the zones"
    if args.from_json:
        zones = zones_from_json(args.from_json, size)
    else:
        if names is None:
            if previous and previous.seat_names:
                names, kept_seats = list(previous.seat_names), True    # the same seats, zoned again
            elif previous:
                raise CalibrationError(f"the seats of {out} cannot be read; say which seats to mark with "
                                       "--players N or --seats banker,1,2,...")
            else:
                names = seat_names(5)
        if grid:
            zones = grid_layout(names, *grid)
            layout = f"even {args.grid} grid; adjust the zones to the table ({check})"
        elif args.click or (not args.even and image is not None and has_display()):
            zones = click_zones(image, names)
            layout, where = "clicked", "the clicked zones"
        else:
            zones = even_layout(names)
            layout = ("even layout (banker top middle, players along the bottom); adjust the zones to the "
                      f"table ({check})")
    check_zones(zones, where)

    # Everything the replaced file says (future keys too), overlaid with what calibrating sets.
    settings = dict(previous.settings) if previous else {}
    kept = (["seats"] if kept_seats else []) + [_SETTING_NAMES.get(key, key.replace("_", " "))
                                                for key in settings if key not in given]
    settings.update(given)
    camera = dict(settings.pop("camera", None) or {})
    if args.source:
        camera["source"] = args.source
    if capture_size or size:
        camera["width"], camera["height"] = capture_size or size
    camera.pop("mirror", None)
    if mirror:
        camera["mirror"] = True
    config = build_config(zones, table_id=settings.pop("table_id", "table-1"),
                          rules=settings.pop("rules", "cambodia"), camera=camera, source=str(out), **settings)
    text = table_config_text(config, out)
    table_config_from_dict(parse_config_text(text, out), out)   # what is written must read back
    view = view_path(out)
    pictures: list[tuple[Path, bytes]] = []
    if image is not None:
        # what the running table checks the camera's aim against (vision.aim.save_view's quality)
        pictures.append((view, _encoded(image, ".jpg", view, [cv2.IMWRITE_JPEG_QUALITY, 92])))
    if preview is not None:
        pictures.append((preview, _encoded(draw_zones(image, config.seats), preview.suffix, preview)))
    _write_all(out, text, pictures)
    if image is None and view.exists():
        # Zones placed without a picture no longer match the old one: a stale view would
        # warn "moved" about a camera that did not move.
        try:
            view.unlink()
        except OSError as exc:
            raise CalibrationError(f"wrote {out}, but the old calibration picture {view} cannot be removed "
                                   f"({exc}); delete it, or the kiosk compares the camera with it") from None
    if args.json:
        print(json.dumps(config.model_dump(mode="json"), indent=2))
    else:
        print(f"wrote {out}: table {config.table_id}, rules {config.rules}, seats {', '.join(config.seat_names)}")
        print(f"zones: {layout}")
        if image is not None:
            print(f"wrote {view}: the picture the zones were marked on; the kiosk warns when the camera "
                  f"moves from it (keep it beside {out.name})")
        if preview is not None:
            print(f"wrote {preview}: the zones drawn on the frame")
        if kept:
            print("kept from the file it replaces: " + ", ".join(kept))
    return 0


def _encoded(image, suffix: str, path: Path, params: list[int] | None = None) -> bytes:
    try:
        ok, buf = cv2.imencode(suffix.lower(), image, params or [])
    except cv2.error as exc:
        raise CalibrationError(f"cannot encode {path}: {exc}") from None
    if not ok:
        raise CalibrationError(f"cannot encode {path} as {suffix}; end the name in .jpg or .png")
    return buf.tobytes()


def _write_all(out: Path, text: str, pictures: list[tuple[Path, bytes]]) -> None:
    """Write the table file and its pictures all or none: each to a .tmp beside it first,
    then renamed over the old ones, so a full disk or a read-only folder leaves the old table
    file and calibration picture as they were (and no .tmp behind)."""
    files = [(out, text.encode("utf-8"))] + pictures
    staged: list[tuple[Path, Path]] = []
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        for path, data in files:
            tmp = path.with_name(path.name + ".tmp")
            staged.append((tmp, path))
            tmp.write_bytes(data)
        for tmp, path in reversed(staged):   # the table file last: it is what the kiosk reads
            tmp.replace(path)
    except OSError as exc:
        for tmp, _ in staged:
            try:
                tmp.unlink()
            except OSError:
                pass
        where = getattr(exc, "filename", None) or out
        raise CalibrationError(f"cannot write {where}: {exc.strerror or exc}; nothing was changed") from None


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


def frame_rate(text: str) -> float:
    """``--fps``: a frame rate above 0.  A negative one runs time backwards (no card is ever
    seen to leave, so the alerts vanish), NaN compares false everywhere, and 0 would quietly
    mean "the table's"."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and 0 < value <= 1000):
        raise argparse.ArgumentTypeError(f"{text} is not a frame rate above 0 (frames per second, "
                                         "at most 1000)")
    return value


def replay_command(args: argparse.Namespace) -> int:
    """Rounds to stdout; each recording or frame that could not be read as one error line
    on stderr (after the rounds that could), and then exit 2."""
    rounds = replay(args.path, config=args.config, redetect=args.redetect, model=args.model, fps=args.fps,
                    data_dir=args.data_dir)
    errors = [r for r in rounds if "error" in r]
    if args.json:
        json.dump(jsonable(rounds), sys.stdout, indent=2)
        sys.stdout.write("\n")
    elif len(errors) < len(rounds) or not errors:
        print(format_rounds(rounds))
    sys.stdout.flush()
    for entry in errors:
        print(f"niuniu replay: error: {entry['error']}", file=sys.stderr)
    # A replay that matches a swapped recording proves nothing: the seal and the folder's name
    # are said on stderr too, where --json readers and scripts see them.
    for r in rounds:
        for warning in r.get("warnings", []):
            print(f"niuniu replay: warning: {r['recording']}: {warning}", file=sys.stderr)
        if "seal" in r and not r["seal"]["ok"]:
            print(f"niuniu replay: {r['recording']}: {seal_line(r['seal'])}", file=sys.stderr)
    if errors:
        return 2
    return 0 if all(r.get("matches_recording", True) and (r.get("seal") or {}).get("ok", True)
                    for r in rounds) else 1
