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

from vision.aim import ViewError, load_view, view_path
from vision.calibrate import (CalibrationError, build_config, check_zones, click_zones, draw_zones, even_layout,
                              grid_layout, has_display, parse_grid, seat_names, zones_from_json)
from vision.mirror import mirror_image
from vision.replay import format_rounds, jsonable, replay, seal_line
from vision.sources import SourceError, open_source, oriented
from vision.table import (CameraSettings, ConfigError, TableConfig, parse_config_text, table_config_from_dict,
                          table_config_text)


def register(sub: argparse._SubParsersAction) -> None:
    cal = sub.add_parser(
        "calibrate", help="mark each seat's zone on the camera image and write the table file",
        description="Write a table file with one zone per seat. With a display and --source, click each "
                    "seat's corners on a camera frame; headless, use an even layout (--players/--seats, "
                    "optionally --grid RxC) or zones measured elsewhere (--from-json). Over an existing table "
                    "file (--force), its settings are kept, the camera is opened at its camera size, and, "
                    "unless --from-json, --grid, --even or clicked zones replace them, so are its zones (with "
                    "--source, on the new picture: check them with --preview or the kiosk's Seat zones page).",
    )
    cal.add_argument("--source", help="camera or recording to take a frame from (picamera2, 0, URL, video, folder)")
    cal.add_argument("--out", required=True, type=Path, help="table file to write (.yaml, .toml or .json)")
    cal.add_argument("--force", action="store_true", help="overwrite --out if it exists, keeping its settings "
                     "and, unless new ones are given, its zones")
    cal.add_argument("--table-id", help="table name for recordings and the audit log "
                     "(default: the replaced file's, else table-1)")
    cal.add_argument("--rules", help="rule preset (`niuniu rules` lists them; default: the replaced file's, "
                     "else cambodia)")
    cal.add_argument("--currency", help="currency code shown with amounts (default: the replaced file's, else USD)")
    who = cal.add_mutually_exclusive_group()
    who.add_argument("--players", type=int, help="banker plus this many player seats (1-7); default: the "
                     "replaced file's seats, else 5")
    who.add_argument("--seats", help="seat names, comma separated, e.g. banker,1,2,3 (default: the replaced "
                     "file's seats, else banker,1..5)")
    how = cal.add_mutually_exclusive_group()
    how.add_argument("--grid", help="place seats in an even ROWSxCOLS grid, row by row")
    how.add_argument("--even", action="store_true", help="even layout: banker top middle, players along the bottom "
                     "(over an existing table file, this replaces its zones, which are otherwise kept)")
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
    rep.add_argument("--public-key", type=Path,
                     help="the table's published public key (PEM, from `niuniu audit public-key`): for a recording "
                          "inside an unzipped evidence package, check the package's signature, without which its "
                          "seal is only the package's own")
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
    zones: dict[str, list] | None     # its seats' zones, None where they cannot be kept ...
    zones_problem: str | None         # ... and why


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
        raise CalibrationError(f"{out} exists; pass --force to calibrate it again (its settings are kept, and its "
                               "zones unless --from-json, --grid or --even gives new ones), or choose another --out")
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
    zones, problem = _kept_zones(data, names)
    return _Replaced(settings, config.camera, names, zones, problem)


def _kept_zones(data: dict, names: list[str] | None) -> tuple[dict | None, str | None]:
    """The replaced file's zones, where they still make a table (the kiosk refuses a file
    whose zones are broken or overlap, so those were not in use and are not kept)."""
    if names is None:
        return None, "its seats cannot be read"
    try:
        zones = {str(s["name"]): [tuple(p) for p in s["polygon"]] for s in data["seats"]}
        check_zones(zones, "its zones")
    except CalibrationError as exc:
        return None, str(exc)
    except (KeyError, TypeError, ValueError):
        return None, "its zones cannot be read"
    return zones, None


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
    # Without a zone source and a window to click them in, the replaced file's zones are
    # kept: an even layout would put fitted seats on a generic grid, and cards would count
    # to the wrong seat.  Decided before the camera is opened, so a refusal costs nothing.
    clicking = args.click or bool(not (args.even or grid or args.from_json) and args.source and has_display())
    keep_zones = not (args.even or grid or args.from_json or clicking) and previous is not None \
        and previous.zones is not None
    if keep_zones and names is not None and set(names) != set(previous.zones):
        flag = f"--players {args.players}" if args.players is not None else f"--seats {args.seats}"
        raise CalibrationError(f"{flag} names the seats {', '.join(names)}, but {out} has "
                               f"{', '.join(previous.seat_names)}; its zones are kept only for the same seats: to "
                               "mark other seats add --even (an even layout, to fit on the kiosk's Seat zones "
                               "page), --grid RxC or --from-json zones.json")
    image = capture_size = None
    if args.source:
        # At the replaced file's camera size: the kiosk asks the camera for that size, and the
        # file keeps it (picamera2's own default, 1920x1080, is not the table's).
        image = (grab_frame(args.source, width=lens.width, height=lens.height, fps=lens.fps) if previous
                 else grab_frame(args.source))
        capture_size = (image.shape[1], image.shape[0])
        image = oriented(image, lens.rotate, mirror)   # zones are marked on the picture the table will read
    size = (image.shape[1], image.shape[0]) if image is not None else size_flag

    kept_seats = False
    # --preview draws on the source's frame: without one, point at what works
    check = ("check them with --preview" if image is not None else
             "check them on a camera frame with --source ... --preview zones.jpg, or on the kiosk's Seat zones page")
    layout = "from " + str(args.from_json) if args.from_json else ""
    where = f"zones file {args.from_json}" if args.from_json else "the zones"
    replaced = ""
    if previous and previous.zones is not None:
        replaced = f"; these replace the zones {out} had"
    elif previous:
        replaced = f"; {out}'s zones were not kept ({previous.zones_problem})"
    mirrored_zones = False
    if args.from_json:
        zones = zones_from_json(args.from_json, size)
        layout += replaced
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
            layout = f"even {args.grid} grid{replaced}; adjust the zones to the table ({check})"
        elif clicking:
            zones = click_zones(image, names)
            layout, where = f"clicked{replaced}", "the clicked zones"
        elif keep_zones:
            zones, where = dict(previous.zones), f"the zones of {out}"
            mirrored_zones = mirror != lens.mirror
            if mirrored_zones:   # the picture turns over, and each seat's zone with it
                zones = {n: [(round(1.0 - x, 4), y) for x, y in pts] for n, pts in zones.items()}
            layout = f"kept as {out} had them" + (", mirrored with the picture" if mirrored_zones else "")
            if image is not None:
                seen = f"check them in {preview}" if preview is not None else "check them with --preview zones.jpg"
                layout += (f", on a new picture: if the camera moved they no longer lie over the seats; {seen} or "
                           "on the kiosk's Seat zones page and fit them there (--even resets them to an even "
                           "layout)")
        else:
            zones = even_layout(names)
            layout = ("even layout (banker top middle, players along the bottom)" + replaced +
                      f"; adjust the zones to the table ({check})")
    check_zones(zones, where)

    # Everything the replaced file says (future keys too), overlaid with what calibrating sets.
    settings = dict(previous.settings) if previous else {}
    kept = (["zones"] if keep_zones else []) + (["seats"] if kept_seats else []) + \
        [_SETTING_NAMES.get(key, key.replace("_", " ")) for key in settings if key not in given]
    settings.update(given)
    old_camera = dict(settings.pop("camera", None) or {})
    camera = dict(old_camera)
    if args.source:
        camera["source"] = args.source
    if capture_size or size:
        camera["width"], camera["height"] = capture_size or size
    camera.pop("mirror", None)
    if mirror:
        camera["mirror"] = True
    changed = _camera_changes(old_camera, camera, from_source=capture_size is not None)
    if changed and "camera settings" in kept:
        kept[kept.index("camera settings")] = "the other camera settings"
    config = build_config(zones, table_id=settings.pop("table_id", "table-1"),
                          rules=settings.pop("rules", "cambodia"), camera=camera, source=str(out), **settings)
    text = table_config_text(config, out)
    table_config_from_dict(parse_config_text(text, out), out)   # what is written must read back
    view = view_path(out)
    # Zones kept over a new picture keep the picture they were fitted on as the aim reference:
    # rebased onto the new one, a camera that moved would read as aimed while the zones lie
    # off the seats.  The kiosk then says the camera moved until they are fitted to it.
    fitted_view = _fitted_view(view, image, mirrored_zones) if keep_zones and image is not None else None
    pictures: list[tuple[Path, bytes]] = []
    if image is not None and (fitted_view is None or mirrored_zones):
        # what the running table checks the camera's aim against (vision.aim.save_view's quality)
        reference = image if fitted_view is None else fitted_view
        pictures.append((view, _encoded(reference, ".jpg", view, [cv2.IMWRITE_JPEG_QUALITY, 92])))
    if preview is not None:
        pictures.append((preview, _encoded(draw_zones(image, config.seats), preview.suffix, preview)))
    _write_all(out, text, pictures)
    dropped_view = image is None and view.exists() and not (keep_zones and not mirrored_zones)
    if dropped_view:
        # Zones placed without a picture (or turned over with it) no longer match the old one:
        # a stale view would warn "moved" about a camera that did not move.  Zones kept as they
        # were still lie on it, so it stays.
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
        if fitted_view is not None:
            done = f"turned {view} over with the zones" if mirrored_zones else f"kept {view}"
            print(f"{done}: the picture the zones were fitted on, not the camera's new one; the kiosk checks the "
                  f"camera's aim against it, so if the camera moved it says so until the zones are fitted to the "
                  f"new picture on the Seat zones page and saved with `niuniu calibrate --source {args.source} "
                  f"--from-json zones.json --out {out} --force`")
        elif image is not None:
            what = ("the camera's new picture (the kept zones were not fitted on it: fit them on the Seat zones page)"
                    if keep_zones else "the picture the zones were marked on")
            print(f"wrote {view}: {what}; the kiosk warns when the camera moves from it (keep it beside "
                  f"{out.name})")
        if preview is not None:
            print(f"wrote {preview}: the zones drawn on the frame")
        if dropped_view:
            print(f"removed {view}: the zones no longer fit it (the kiosk compares the camera with its "
                  "first empty-table frame instead; calibrate with --source to keep a picture)")
        if kept:
            print("kept from the file it replaces: " + ", ".join(kept))
        if previous and changed:
            print("camera: " + "; ".join(changed))
    return 0


def _camera_changes(old: dict, new: dict, *, from_source: bool) -> list[str]:
    """What calibrating changed in the replaced file's camera settings, so that "kept" says
    only what was kept."""
    changed = []
    if new.get("source") != old.get("source"):
        changed.append(f"source now {new.get('source')} (was {old.get('source') or 'not set'})")
    size, was = (new.get("width"), new.get("height")), (old.get("width"), old.get("height"))
    if size != was:
        why = "the size of the source's frames" if from_source else "from --size"
        changed.append(f"size now {size[0]}x{size[1]}, {why} (was " +
                       (f"{was[0]}x{was[1]}" if was[0] else "not set") + ")")
    if bool(new.get("mirror")) != bool(old.get("mirror")):
        changed.append("mirror now " + ("on" if new.get("mirror") else "off"))
    return changed


def _fitted_view(view: Path, image, mirrored: bool):
    """The picture kept zones were fitted on, to stay the aim reference beside a new picture
    (turned over when ``mirrored`` turns the zones over), or None where there is none to keep:
    no picture, one that cannot be read, or one of another shape than the camera's now (the
    kiosk could not compare the camera with it)."""
    try:
        old = load_view(view)
    except ViewError:
        return None
    if old is None or abs(old.shape[1] / old.shape[0] - image.shape[1] / image.shape[0]) >= 0.01:
        return None
    return mirror_image(old) if mirrored else old


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


def grab_frame(spec: str, *, width: int | None = None, height: int | None = None, fps: float | None = None):
    """One settled frame from a source (a live camera gets a few frames to adjust exposure),
    a camera asked for ``width`` x ``height`` at ``fps`` where given (else its own default)."""
    source = open_source(spec, width=width, height=height, fps=fps, start_ts=0.0)
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
                    data_dir=args.data_dir, public_key=args.public_key)
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
    # are said on stderr too, where --json readers and scripts see them, and so is a seal whose
    # record cannot be read (QA53).  A recording with no log beside it is only told on stdout,
    # as a round with no seal is: nothing was found wrong.
    for r in rounds:
        for warning in r.get("warnings", []):
            print(f"niuniu replay: warning: {r['recording']}: {warning}", file=sys.stderr)
        if r.get("seal_damaged") is not None:
            print(f"niuniu replay: warning: {r['recording']}: seal not checked: {r['seal_unchecked']}",
                  file=sys.stderr)
        if "seal" in r and not r["seal"]["ok"]:
            print(f"niuniu replay: {r['recording']}: {seal_line(r['seal'])}", file=sys.stderr)
    if errors:
        return 2
    return 0 if all(r.get("matches_recording", True) and (r.get("seal") or {}).get("ok", True)
                    for r in rounds) else 1
