"""One table's configuration: where each seat's cards lie, the camera, the thresholds.

A table file is written once at installation (``niuniu calibrate``) and read at every
start, so it is validated strictly: an unknown key is far more likely a typo that would
silently fall back to a default than a deliberate addition.  Every error names the file
and the key (``thresholds.k``, ``seats[2].polygon``) so the installer can fix it without
reading code.

Zones are polygons in *normalised* image coordinates (0..1 of width and height) so the
same file survives a change of camera resolution.  YAML and TOML are both accepted
because the Pi's installers like TOML and everyone else writes YAML.

The geometry helpers here (point in polygon, pixel boxes) are shared by the tracker, the
pipeline's crop regions, calibration and the kiosk's overlay.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Sequence
from datetime import timezone, tzinfo
from decimal import Decimal
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
import yaml
from pydantic import (BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator,
                      model_validator)

from scoring.errors import NiuniuError
from scoring.rules import PRESET_SUFFIXES, DuplicateKey, unique_key_loader

PLAYER_SEATS: tuple[str, ...] = tuple(str(i) for i in range(1, 8))
SEAT_NAMES: tuple[str, ...] = ("banker",) + PLAYER_SEATS
"""Seat names in display order: the banker, then players 1..7."""

Point = tuple[float, float]
Box = tuple[float, float, float, float]


def time_zone_of(name: str) -> tzinfo:
    """An IANA time zone; UTC needs no time zone database (a minimal system may lack one)."""
    if name == "UTC":
        return timezone.utc
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"{name!r} is not a time zone; use an IANA name such as Asia/Phnom_Penh, "
                         "Asia/Macau or UTC (and install the tzdata package)") from None


class ConfigError(NiuniuError):
    """A table file that cannot be used; the message names the file and the key."""


AS_RECORDED = "as_recorded"
"""Validation context key: the table was in force when a recording was made (see
:func:`table_config_from_dict`)."""


def _as_recorded(info: ValidationInfo) -> bool:
    return bool(info.context and info.context.get(AS_RECORDED))


def _takes_bool(annotation: Any) -> bool:
    return annotation is bool or any(_takes_bool(arg) for arg in getattr(annotation, "__args__", ()) or ())


def _kind_of(annotation: Any) -> str:
    """What a key takes, in the installer's words (for an error message)."""
    args = [a for a in getattr(annotation, "__args__", ()) or () if a is not type(None)]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "a mapping of keys"
    if annotation is str or str in args:
        return "text"
    if getattr(annotation, "__origin__", None) is list:
        return "a list"
    if any(isinstance(a, type) and issubclass(a, BaseModel) for a in args):
        return "a mapping of keys"
    return "a number"


class StrictModel(BaseModel):
    """Base of every config model: unknown keys are errors, values never change after load."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    @field_validator("*", mode="before")
    @classmethod
    def _true_false_only_for_switches(cls, value: Any, info: ValidationInfo) -> Any:
        # Pydantic's lax mode reads `k: true` as 1 and `mirror: "yes"` as true: a slip in the
        # file that silently becomes a setting.  A switch takes true/false and nothing else;
        # a number, a name or a list never takes true/false.
        if value is None:      # an optional key left empty: its own type check says what it takes
            return value
        switch = _takes_bool(cls.model_fields[info.field_name].annotation)
        if switch and not isinstance(value, bool):
            raise ValueError("write true or false")
        if not switch and isinstance(value, bool):
            raise ValueError(f"{str(value).lower()} is a switch value; this key takes "
                             f"{_kind_of(cls.model_fields[info.field_name].annotation)}")
        return value


class SeatZone(StrictModel):
    name: Annotated[str, Field(description="'banker' or a player seat '1'..'7'")]
    polygon: Annotated[
        list[tuple[float, float]],
        Field(min_length=3, description="zone corners as (x, y), normalised 0..1 of the image"),
    ]

    @field_validator("name", mode="before")
    @classmethod
    def _name_as_text(cls, value: Any) -> Any:
        # YAML reads `name: 1` as an integer; a seat number is still a seat name.
        return str(value) if isinstance(value, int) and not isinstance(value, bool) else value

    @field_validator("name")
    @classmethod
    def _known_seat(cls, value: str) -> str:
        if value not in SEAT_NAMES:
            raise ValueError(f"seat name {value!r} is not one of {', '.join(SEAT_NAMES)}")
        return value

    @field_validator("polygon", mode="before")
    @classmethod
    def _numbers_only(cls, value: Any) -> Any:
        # true/false would read as the corner 1.0/0.0 (see StrictModel)
        if isinstance(value, (list, tuple)) and any(isinstance(v, bool) for p in value
                                                    if isinstance(p, (list, tuple)) for v in p):
            raise ValueError("a corner is two numbers [x, y], not true/false")
        return value

    @field_validator("polygon")
    @classmethod
    def _inside_image(cls, value: list[tuple[float, float]]) -> list[tuple[float, float]]:
        for i, (x, y) in enumerate(value):
            if not (0.0 <= x <= 1.0 and 0.0 <= y <= 1.0):
                raise ValueError(
                    f"point {i} ({x}, {y}) is outside 0..1; zones are fractions of the image width and height"
                )
        if abs(polygon_area(value)) < 1e-6:
            raise ValueError("the polygon has no area (its points are on one line)")
        return value


class CameraSettings(StrictModel):
    source: str | None = Field(None,
                               description="default --source: picamera2, a device index, a URL, a video or a folder")
    width: int | None = Field(None, ge=64, le=8192, description="requested capture width in pixels")
    height: int | None = Field(None, ge=64, le=8192, description="requested capture height in pixels")
    fps: float = Field(10.0, gt=0, le=120, description="requested frame rate; also the timing of frame folders")
    rotate: Literal[0, 90, 180, 270] = Field(0, description="clockwise rotation applied to every frame")
    mirror: bool = Field(False, description="mirror every frame left-right after rotating it: for a camera that "
                                            "saves mirror images (one flip setting on, or seen through a mirror)")
    offline_after_s: float = Field(3.0, gt=0, le=600, description="no frame for this long means the camera is offline")
    frozen_after_s: float = Field(10.0, ge=0, le=600, allow_inf_nan=False,
                                  description="the same picture for this long means a live camera is frozen, reported "
                                              "offline (0: not checked)")
    reconnect_initial_s: float = Field(0.5, gt=0, le=60, description="first reconnect delay; doubles on each failure")
    reconnect_max_s: float = Field(30.0, gt=0, le=3600, description="longest delay between reconnect attempts")
    jpeg_quality: int = Field(85, ge=30, le=100, description="quality of recorded key frames and the live view")
    move_limit: float = Field(0.03, ge=0, le=0.5, allow_inf_nan=False,
                              description="the dealer's screen says the camera moved when the table shifts more "
                                          "than this share of the picture's width from where its zones were "
                                          "marked (0: not checked)")

    @model_validator(mode="after")
    def _size_pair(self) -> "CameraSettings":
        if (self.width is None) != (self.height is None):
            raise ValueError("give both width and height, or neither")
        return self


class Thresholds(StrictModel):
    k: int = Field(3, ge=1, le=60, description="frames a card must be seen in (of the last n) to be accepted")
    n: int = Field(5, ge=1, le=120, description="length of the voting window, in frames")
    conf: float = Field(0.5, ge=0.0, le=1.0, description="a detection below this confidence is not a vote")
    needs_confirmation_below: float = Field(
        0.75, ge=0.0, le=1.0, description="an accepted card whose mean confidence is below this needs confirmation"
    )
    min_vote_share: float = Field(
        0.7, ge=0.0, le=1.0,
        description="an accepted card whose class won less than this share of its votes needs confirmation",
    )
    accept_after_s: float = Field(
        0.4, ge=0.0, le=10.0,
        description="a card is accepted only once in view this long: one slid across another seat, or blurred "
                    "as it lands, is not taken for what it looked like in its first frames at a fast camera",
    )
    recheck_s: float = Field(
        1.5, ge=0.0, le=30.0,
        description="for this long after a card is accepted its readings still count; if they then name another "
                    "card it is marked for the dealer to confirm",
    )
    remove_after_s: float = Field(
        3.0, gt=0, le=600, description="an accepted card unseen for this long has left the table (not just covered)"
    )
    crop_padding: float = Field(
        0.08, ge=0.0, le=1.0, description="each seat's crop grows by this fraction of its size on every side"
    )
    motion_gate: bool = Field(
        True, description="read a seat's crop when it changed, until k reads in a row agree; else reuse its last read"
    )
    motion_pixel_threshold: int = Field(
        25, ge=1, le=254, description="grey levels a pixel (at 1/4 size, blurred) must change by to count as motion"
    )
    motion_min_area: float = Field(
        0.005, gt=0.0, le=1.0, description="fraction of a crop's pixels that must change for it to be read again"
    )
    refresh_frames: int = Field(
        30, ge=1, le=10_000, description="a crop unchanged for this many frames is read anyway (one crop per frame)"
    )

    @model_validator(mode="after")
    def _k_within_n(self) -> "Thresholds":
        if self.k > self.n:
            raise ValueError(f"k ({self.k}) cannot exceed n ({self.n}): a card cannot be seen in more frames "
                             "than the window holds")
        return self


class RecordingSettings(StrictModel):
    """How long round recordings are kept.

    A busy table records about 10 MB a round (a key frame per card at the camera's full
    size): 10 GB a day, so without a limit the disk fills within weeks, and then the audit
    log itself cannot be written and the table stops.  The oldest recordings go first; the
    audit log is never touched."""

    min_free_gb: float = Field(5.0, ge=0, le=1e6, allow_inf_nan=False,
                               description="delete the oldest recordings while the data disk has less free space "
                                           "than this (GB)")
    keep_days: float | None = Field(None, gt=0, le=36500, allow_inf_nan=False,
                                    description="delete recordings older than this many days "
                                                "(default: keep while there is space)")
    min_keep_days: float | None = Field(None, gt=0, le=36500, allow_inf_nan=False,
                                        description="never delete a recording younger than this many days, "
                                                    "even when the disk is short (a regulator's minimum "
                                                    "retention); the dealer's screen warns instead")

    @model_validator(mode="after")
    def _floor_under_limit(self) -> "RecordingSettings":
        if self.keep_days is not None and self.min_keep_days is not None and self.min_keep_days > self.keep_days:
            raise ValueError(f"min_keep_days ({self.min_keep_days:g}) is more than keep_days ({self.keep_days:g}): "
                             "a recording cannot have to be kept longer than it may be kept")
        return self


class BetLimits(StrictModel):
    """The table's posted minimum and maximum stake on one seat.

    The screen refuses a stake outside them: a chip stack misread by a zero is the dealer's
    costliest slip, and the posted limits are what the house agreed to risk per seat."""

    minimum: Decimal = Field(gt=0, le=10**9, description="smallest stake a seat may place")
    maximum: Decimal = Field(gt=0, le=10**9, description="largest stake a seat may place (the kiosk "
                                                        "takes no stake over 10^9)")

    @field_validator("minimum", "maximum", mode="before")
    @classmethod
    def _as_typed(cls, value: Any) -> Any:
        # YAML reads 25.5 as a binary float; its shortest repr is what the installer typed.
        return repr(value) if isinstance(value, float) else value


    @model_validator(mode="after")
    def _ordered(self) -> "BetLimits":
        if self.minimum > self.maximum:
            raise ValueError(f"minimum {self.minimum} is above maximum {self.maximum}; swap them")
        return self


COLLECTOR_PROTOCOLS = ("tcp", "tls", "udp")


class AuditForwardSettings(StrictModel):
    """The casino's log collector, which receives every audit record as it is written.

    The backups and the printed shift report show a rewritten history within a day; a copy
    on a machine the kiosk's users cannot reach shows it to the second, and keeps the
    records of a disk that dies before its nightly backup.  Syslog is what a casino's
    surveillance systems already collect (``kiosk.forward``)."""

    to: str = Field(description="the collector as tcp://HOST:PORT, tls://HOST:PORT (RFC 5425) or udp://HOST:PORT "
                                "(may lose or cut long records)")
    ca_file: str | None = Field(None, min_length=1,
                                description="with tls://, the CA certificate (PEM) the collector's certificate "
                                            "must chain to (default: the system's CAs)")

    @field_validator("to")
    @classmethod
    def _collector(cls, value: str) -> str:
        collector_address(value)
        return value

    @model_validator(mode="after")
    def _ca_for_tls(self) -> "AuditForwardSettings":
        if self.ca_file is not None and self.protocol != "tls":
            raise ValueError(f"ca_file is for a tls:// collector; {self.to} is not one")
        return self

    @property
    def protocol(self) -> str:
        return collector_address(self.to)[0]

    @property
    def address(self) -> tuple[str, int]:
        return collector_address(self.to)[1:]


def collector_address(text: str) -> tuple[str, str, int]:
    """``(protocol, host, port)`` of ``tcp://HOST:PORT`` (or tls://, udp://); ValueError saying
    what to write when it is not one."""
    match = re.fullmatch(r"(\w+)://(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):(\d{1,5})", text.strip())
    example = "tcp://syslog.casino.lan:514"
    if match is None:
        raise ValueError(f"{text!r} is not a collector address; write it like {example} (tls:// and udp:// work "
                         "too)")
    protocol, host, port = match.group(1).lower(), match.group(2).strip("[]"), int(match.group(3))
    if protocol not in COLLECTOR_PROTOCOLS:
        raise ValueError(f"{protocol}:// is not a syslog transport; use one of "
                         f"{', '.join(p + '://' for p in COLLECTOR_PROTOCOLS)} (e.g. {example})")
    if not 1 <= port <= 65535:
        raise ValueError(f"port {port} is not a port (1..65535); syslog listens on 514, over TLS on 6514")
    return protocol, host, port


class TableConfig(StrictModel):
    table_id: str = Field(min_length=1, max_length=64, description="short name used in recordings and the audit log")
    rules: str = Field(min_length=1, description="rule preset name (niuniu rules lists them) or preset file path")
    currency: str = Field("USD", min_length=1, max_length=8, description="ISO 4217 currency code shown with "
                                                                          "amounts (USD, KHR, HKD, ...)")
    timezone: str = Field("UTC", description="IANA time zone the staff's screens show and read times in "
                                             "(e.g. Asia/Phnom_Penh); the audit log itself stays in UTC")
    seats: list[SeatZone] = Field(min_length=2, description="the banker and 1..7 player seats")
    camera: CameraSettings = Field(default_factory=CameraSettings)
    thresholds: Thresholds = Field(default_factory=Thresholds)
    bet_limits: BetLimits | None = Field(None, description="the posted minimum and maximum stake per seat")
    recordings: RecordingSettings = Field(default_factory=RecordingSettings)
    audit_forward: AuditForwardSettings | None = Field(None, description="send every audit record to the casino's "
                                                                         "log collector (syslog) as it is written")

    @field_validator("table_id")
    @classmethod
    def _file_name_safe(cls, value: str) -> str:
        # it names the recordings folder, so it must be a safe file name everywhere
        if not re.fullmatch(r"[A-Za-z0-9._-]+", value) or value in (".", ".."):
            raise ValueError("use only letters, digits, '.', '_' and '-' (it names the recordings folder)")
        return value

    @field_validator("currency")
    @classmethod
    def _currency_code(cls, value: str, info: ValidationInfo) -> str:
        # Printed beside every amount on the screen, the receipts and the shift report: a
        # three-letter code is written in capitals (usd is USD).  Anything else a table file
        # already says (HK$, chips) is kept as it was: a kiosk that stopped at start after an
        # upgrade over a currency's spelling would cost the table its evening.  A new value
        # given to ``calibrate --currency`` must be a three-letter code (``vision.cli``).
        return value.upper() if re.fullmatch(r"[A-Za-z]{3}", value) else value

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        time_zone_of(value)
        return value

    @property
    def time_zone(self) -> tzinfo:
        return time_zone_of(self.timezone)

    @field_validator("seats")
    @classmethod
    def _seat_set(cls, value: list[SeatZone], info: ValidationInfo) -> list[SeatZone]:
        names = [s.name for s in value]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"seat {repeated[0]!r} is given twice; each seat has one zone")
        if "banker" not in names:
            raise ValueError("there is no 'banker' seat; every table needs the banker's zone")
        if not _as_recorded(info):
            problem = overlap_problem(value)
            if problem:
                raise ValueError(problem)
        return value

    @field_validator("rules")
    @classmethod
    def _known_rules(cls, value: str) -> str:
        try:
            from scoring.rules import load_preset
        except ModuleNotFoundError as exc:  # scoring not installed yet: checked at round start
            if exc.name != "scoring.rules":
                raise
            return value
        try:
            load_preset(value)
        except NiuniuError as exc:
            raise ValueError(str(exc)) from None
        return value

    @model_validator(mode="after")
    def _limits_in_money_units(self) -> "TableConfig":
        """A posted limit the screen could never take as a stake (25.5 at a table that counts
        whole riel, 25.125 where it counts cents) is refused here, where the file is written,
        not found by the dealer; a dinar table's 0.001 fils are fine."""
        if self.bet_limits is None:
            return self
        try:
            from scoring.rules import load_preset
            unit = load_preset(self.rules).commission_quantum
        except (ModuleNotFoundError, NiuniuError):
            return self     # an unknown preset was named above; scoring not installed: checked at start
        for name in ("minimum", "maximum"):
            value = getattr(self.bet_limits, name)
            if value % unit:
                raise ValueError(f"bet_limits.{name} {value} is not a whole number of the money unit {unit} of "
                                 f"preset {self.rules!r}; no stake at this table can be it: round it to the unit")
        return self

    @property
    def seat_names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.seats)

    @property
    def player_seats(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.seats if s.name != "banker")

    def with_thresholds(self, **changes: Any) -> "TableConfig":
        """A validated copy with some thresholds changed: to compare settings on one table."""
        thresholds = {**self.thresholds.model_dump(), **changes}
        # Only the thresholds change: the rest was accepted already (maybe as recorded).
        return table_config_from_dict({**self.model_dump(), "thresholds": thresholds}, as_recorded=True)

    def zone(self, name: str) -> SeatZone:
        for seat in self.seats:
            if seat.name == name:
                return seat
        raise KeyError(name)


# ---------------------------------------------------------------- loading


def load_table_config(path: str | Path) -> TableConfig:
    """Read and validate a table file (``.yaml``/``.yml``/``.toml``/``.json``)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"table file {path} does not exist; "
                          f"create one with `niuniu calibrate --out {path}`") from None
    except UnicodeDecodeError as exc:
        # an editor's Latin-1 or Windows code page: the byte offset alone told the technician nothing
        line = path.read_bytes()[:exc.start].count(b"\n") + 1
        raise ConfigError(f"table file {path} is not UTF-8 text (byte 0x{exc.object[exc.start]:02x} on line {line}); "
                          "save it as UTF-8 (in nano or vim it already is; in a Windows editor choose "
                          "'UTF-8' when saving) and start again") from None
    except OSError as exc:
        raise ConfigError(f"table file {path} cannot be read: {exc}") from None
    data = parse_config_text(text, path)
    preset = preset_file(data, path)
    if preset is not None:
        data = {**data, "rules": str(preset)}
    return table_config_from_dict(data, path)


def preset_file(data: Any, table_file: Path) -> Path | None:
    """The preset file a table file's ``rules`` names (None: a built-in preset's name).

    A relative path is read beside the table file, wherever the command runs (the service
    runs from /var/lib/niuniu, a console from anywhere), found or not: read against the
    current directory, `niuniu check` passed from a folder holding a house.toml and the
    service failed at start, or found another file of that name."""
    rules = data.get("rules") if isinstance(data, dict) else None
    if not isinstance(rules, str) or not rules.strip().lower().endswith(PRESET_SUFFIXES):
        return None
    named = Path(rules.strip())
    return named if named.is_absolute() else Path(table_file).parent / named


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict:
    """A JSON object whose every key is given once (json keeps the last of two silently)."""
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise DuplicateKey(key, 0)
        seen[key] = value
    return seen


def parse_config_text(text: str, path: Path) -> dict:
    suffix = path.suffix.lower()
    try:
        if suffix == ".toml":
            data = tomllib.loads(text)
        elif suffix == ".json":
            data = json.loads(text, object_pairs_hook=_unique_keys)
        elif suffix in (".yaml", ".yml"):
            data = yaml.load(text, Loader=unique_key_loader())
        else:
            raise ConfigError(f"table file {path}: unknown format {suffix!r}; use .yaml, .yml, .toml or .json")
    except DuplicateKey as exc:
        line = f" (line {exc.line})" if exc.line else ""
        raise ConfigError(f"table file {path}: key {exc.key!r} is given twice{line}; only the last would count: "
                          "keep one") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"table file {path} is not valid TOML: {exc}") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"table file {path} is not valid JSON: {exc}") from None
    except yaml.YAMLError as exc:
        where = getattr(exc, "problem_mark", None)
        at = f" at line {where.line + 1}, column {where.column + 1}" if where is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"table file {path} is not valid YAML{at}: {problem}") from None
    if data is None:
        raise ConfigError(f"table file {path} is empty; it needs table_id, rules and seats")
    if not isinstance(data, dict):
        raise ConfigError(f"table file {path} must be a mapping of keys (table_id, rules, seats, ...), "
                          f"not a {type(data).__name__}")
    return data


def table_config_from_dict(data: dict, source: str | Path = "<table config>", *,
                           as_recorded: bool = False) -> TableConfig:
    """Validate an already-parsed mapping (the kiosk's calibration page uses this).

    ``as_recorded``: the table a recording was made with (its meta.json).  It ran the round,
    so a replay must use it as it was: checks added since (overlapping zones, the currency
    code) are skipped, or a stricter release could no longer replay old evidence."""
    try:
        return TableConfig.model_validate(data, context={AS_RECORDED: True} if as_recorded else None)
    except ValidationError as exc:
        raise ConfigError(describe_validation_error(exc, source)) from None


def describe_validation_error(exc: ValidationError, source: str | Path) -> str:
    """Turn pydantic's report into one line per problem, each naming the key."""
    problems = []
    for err in exc.errors():
        key = format_key(err["loc"])
        if err["type"] == "extra_forbidden":
            allowed = _allowed_keys(err["loc"][:-1])
            hint = f" (allowed here: {', '.join(allowed)})" if allowed else ""
            problems.append(f"{key}: unknown key{hint}")
        elif err["type"] == "missing":
            problems.append(f"{key}: required key is missing")
        else:
            message = err["msg"].removeprefix("Value error, ")
            given = err.get("input")
            if isinstance(given, list) and any(isinstance(v, dict) for v in given):
                problems.append(f"{key}: {message}")   # the whole seats list: the message names the seats
            else:
                problems.append(f"{key}: {message} (got {_short(given)})")
    head = f"table file {source}: " if problems else f"table file {source} is invalid"
    return head + "; ".join(problems)


def format_key(loc: Sequence[Any]) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(top level)"


def _allowed_keys(loc: Sequence[Any]) -> list[str]:
    model: Any = TableConfig
    for part in loc:
        if isinstance(part, int):
            continue
        field = getattr(model, "model_fields", {}).get(part)
        if field is None:
            return []
        annotation = field.annotation
        args = getattr(annotation, "__args__", ()) or ()
        candidates = [annotation, *args]
        model = next((c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)), None)
        if model is None:
            return []
    return list(getattr(model, "model_fields", {}))


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# ---------------------------------------------------------------- geometry


def polygon_area(polygon: Sequence[Point]) -> float:
    """Signed shoelace area (any unit); zero means the points are collinear."""
    total = 0.0
    for (x1, y1), (x2, y2) in zip(polygon, list(polygon[1:]) + [polygon[0]]):
        total += x1 * y2 - x2 * y1
    return total / 2.0


OVERLAP_LIMIT = 0.5
"""Two zones may share a strip along their border (hand-marked neighbours do), but not this
share of either zone: a card there counts to the seat listed first, so the other could
(almost) never win a card, or one zone swallows another and takes every stray card."""
_OVERLAP_GRID = 256


def overlap_problem(seats: Sequence["SeatZone"]) -> str | None:
    """What is wrong with zones that overlap too much (:data:`OVERLAP_LIMIT`), or None."""
    centres = (np.arange(_OVERLAP_GRID) + 0.5) / _OVERLAP_GRID
    xs, ys = np.meshgrid(centres, centres)
    masks = [(s.name, _polygon_mask(s.polygon, xs, ys)) for s in seats]
    problems = []
    for i, (first, mask_a) in enumerate(masks):
        for second, mask_b in masks[i + 1:]:
            area_a, area_b = int(mask_a.sum()), int(mask_b.sum())
            if not area_a or not area_b:   # smaller than the grid: nothing to judge by
                continue
            shared = int(np.count_nonzero(mask_a & mask_b))
            share_a, share_b = shared / area_a, shared / area_b
            if max(share_a, share_b) < OVERLAP_LIMIT:
                continue
            covered, other, share = (first, second, share_a) if share_a >= share_b else (second, first, share_b)
            problems.append(f"the zones of {_seat_label(first)} and {_seat_label(second)} overlap: {share:.0%} of "
                            f"{_seat_label(covered)}'s zone lies in {_seat_label(other)}'s, and a card there counts "
                            f"to {_seat_label(first)} alone (listed first)")
    if not problems:
        return None
    if len(problems) > 3:   # one zone over all the others: the first few say what to fix
        problems = problems[:3] + [f"{len(problems) - 3} more pairs"]
    return ("; ".join(problems) + "; redraw the zones so each seat's cards lie in its own zone "
            "(niuniu calibrate --preview draws them on the camera's picture)")


def _seat_label(name: str) -> str:
    return "the banker" if name == "banker" else f"seat {name}"


def _polygon_mask(polygon: Sequence[Point], xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Which grid points lie inside the polygon (even-odd rule, as :func:`point_in_polygon`)."""
    inside = np.zeros(xs.shape, dtype=bool)
    count = len(polygon)
    for i in range(count):
        x1, y1 = polygon[i]
        x2, y2 = polygon[(i + 1) % count]
        if y1 == y2:
            continue
        crosses = (y1 > ys) != (y2 > ys)
        cross_x = x1 + (ys - y1) * (x2 - x1) / (y2 - y1)
        inside ^= crosses & (xs < cross_x)
    return inside


def point_in_polygon(point: Point, polygon: Sequence[Point]) -> bool:
    """Even-odd ray casting; a point exactly on an edge counts as inside."""
    x, y = point
    inside = False
    count = len(polygon)
    for i in range(count):
        x1, y1 = polygon[i]
        x2, y2 = polygon[(i + 1) % count]
        if _on_segment(x, y, x1, y1, x2, y2):
            return True
        if (y1 > y) != (y2 > y):
            cross_x = x1 + (y - y1) * (x2 - x1) / (y2 - y1)
            if x < cross_x:
                inside = not inside
    return inside


def _on_segment(x: float, y: float, x1: float, y1: float, x2: float, y2: float) -> bool:
    if min(x1, x2) - 1e-9 <= x <= max(x1, x2) + 1e-9 and min(y1, y2) - 1e-9 <= y <= max(y1, y2) + 1e-9:
        return abs((x2 - x1) * (y - y1) - (y2 - y1) * (x - x1)) <= 1e-9 * max(1.0, abs(x2 - x1) + abs(y2 - y1))
    return False


def to_pixels(polygon: Sequence[Point], width: int, height: int) -> list[Point]:
    return [(x * width, y * height) for x, y in polygon]


def to_normalised(polygon: Sequence[Point], width: int, height: int) -> list[Point]:
    """Pixel points to 0..1 fractions, clamped so a click on the border stays valid."""
    if width <= 0 or height <= 0:
        raise ValueError("image size must be positive")
    return [(min(max(x / width, 0.0), 1.0), min(max(y / height, 0.0), 1.0)) for x, y in polygon]


def zone_box(polygon: Sequence[Point], width: int, height: int, padding: float = 0.0) -> tuple[int, int, int, int]:
    """The pixel box around a normalised zone, grown by ``padding`` of its size, clipped to the image.

    Cards on a zone's edge are cut by a tight crop; the padding keeps their corner
    indices whole.
    """
    xs = [x * width for x, _ in polygon]
    ys = [y * height for _, y in polygon]
    x1, x2, y1, y2 = min(xs), max(xs), min(ys), max(ys)
    pad_x, pad_y = (x2 - x1) * padding, (y2 - y1) * padding
    return (
        int(max(0, x1 - pad_x)),
        int(max(0, y1 - pad_y)),
        int(min(width, x2 + pad_x + 0.999)),
        int(min(height, y2 + pad_y + 0.999)),
    )


def box_centre(box: Box) -> Point:
    x1, y1, x2, y2 = box
    return ((x1 + x2) / 2.0, (y1 + y2) / 2.0)


def centre_in(box: Box, region: tuple[int, int, int, int]) -> bool:
    """Whether ``box``'s centre lies in a seat crop (x1, y1, x2, y2): a detection belongs to
    the crop it was read in by its centre, as to a seat zone."""
    x, y = box_centre(box)
    return region[0] <= x <= region[2] and region[1] <= y <= region[3]


class ZoneMap:
    """Seat zones resolved to pixels for one frame size, so lookups per detection are cheap."""

    def __init__(self, config: TableConfig, width: int, height: int) -> None:
        self.size = (width, height)
        self._zones = [(s.name, to_pixels(s.polygon, width, height)) for s in config.seats]
        self.regions = [zone_box(s.polygon, width, height, config.thresholds.crop_padding) for s in config.seats]

    def seat_of(self, box: Box) -> str | None:
        """The seat whose zone holds the box's centre; the first listed wins where zones overlap."""
        centre = box_centre(box)
        for name, polygon in self._zones:
            if point_in_polygon(centre, polygon):
                return name
        return None

    @property
    def pixel_zones(self) -> list[tuple[str, list[Point]]]:
        return list(self._zones)


def dump_table_config(config: TableConfig, path: str | Path) -> None:
    """Write a table file in the format its extension asks for (YAML, TOML or JSON)."""
    path = Path(path)
    write_text_atomic(path, table_config_text(config, path))


def table_config_text(config: TableConfig, path: str | Path) -> str:
    """The table file's text in the format ``path``'s extension asks for (nothing written)."""
    path = Path(path)
    data = config.model_dump(mode="json", exclude_none=True)
    data["seats"] = [{"name": s["name"], "polygon": [[round(x, 4), round(y, 4)] for x, y in s["polygon"]]}
                     for s in data["seats"]]
    suffix = path.suffix.lower()
    if suffix in (".yaml", ".yml"):
        text = yaml.safe_dump(data, sort_keys=False, default_flow_style=None)
    elif suffix == ".toml":
        text = _to_toml(data)
    elif suffix == ".json":
        text = json.dumps(data, indent=2) + "\n"
    else:
        raise ConfigError(f"cannot write {path}: unknown format {suffix!r}; use .yaml, .yml, .toml or .json")
    return text


def write_text_atomic(path: Path, text: str | bytes) -> None:
    """Write beside ``path`` and rename over it: a reader never sees half a file, and a
    failed write leaves the old file as it was and no ``.tmp`` behind."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        if isinstance(text, bytes):
            tmp.write_bytes(text)
        else:
            tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    except BaseException:
        try:
            tmp.unlink()
        except OSError:
            pass
        raise


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a valid TOML basic string
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} as TOML")


def _to_toml(data: dict) -> str:
    """A TOML writer for this schema only (flat keys, sub-tables, one array of tables)."""
    lines = [f"{k} = {_toml_value(v)}" for k, v in data.items() if not isinstance(v, dict) and k != "seats"]
    for key, value in data.items():
        if isinstance(value, dict):
            lines += ["", f"[{key}]"] + [f"{k} = {_toml_value(v)}" for k, v in value.items()]
    for seat in data.get("seats", []):
        lines += ["", "[[seats]]"] + [f"{k} = {_toml_value(v)}" for k, v in seat.items()]
    return "\n".join(lines) + "\n"
