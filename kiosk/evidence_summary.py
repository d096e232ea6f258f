"""A disputed round in plain words, for whoever holds its evidence package and no kiosk
(QA48 dispute M9): the hands as first read and as corrected, the settlement paid and as
corrected, who did what in which role at the time, and how to check the package.

Everything here is derived from the package's records at export (``kiosk.evidence``
writes and checks the package; this module only tells it), so a reader is never asked to
trust these words over the records they come from.
"""

from __future__ import annotations

import dataclasses
import html
import textwrap
from datetime import timezone, tzinfo
from decimal import Decimal, InvalidOperation

from kiosk.audit import AuditLog, AuditRecord, AuditType, local_text, log_moment
from kiosk.rounds import MACHINE_ACTORS, banking_of, house_net_of
from kiosk.timeline import (SELF_APPROVED, Say, adjustment_said, correction_evidence, evidence_said, frame_captions,
                            record_words, seat_order, self_approved, under_review)
from scoring.rules import PresetError, load_preset
from vision.table import TableConfig, time_zone_of

ACCOUNT_TYPES = (AuditType.SETUP_ADMIN, AuditType.USER_CREATED, AuditType.USER_CHANGED)


# --------------------------------------------------------------------------- the staff named


def account_of(record: AuditRecord) -> str | None:
    """The username an account record is about: the first administrator names themself."""
    name = record.actor if record.type == AuditType.SETUP_ADMIN else record.data.get("username")
    return name if isinstance(name, str) else None


def named_staff(records: list[AuditRecord]) -> list[str]:
    """Every person the round's records name: who acted (not the camera, the kiosk or the
    console), who asked for a correction, who approved one, whose hold was released."""
    names: set[str] = set()
    for record in records:
        if record.actor not in MACHINE_ACTORS and record.actor != "console" and not record.actor.startswith("console:"):
            names.add(record.actor)
        for key in ("approved_by", "requested_by", "held_by"):
            if isinstance(record.data.get(key), str) and record.data[key]:
                names.add(record.data[key])
    return sorted(names)


def staff_records(log: AuditLog, records: list[AuditRecord]) -> list[AuditRecord]:
    """The account records of everyone the round's records name, up to its last record.

    "approved_by: super1" is a username only: whoever reads the package without the kiosk
    needs the log's own word that super1 was a supervisor when approving (QA48 dispute M9).
    Accounts belong to the kiosk, not to one table, so they are read across the log; what
    happened to an account after the round does not bear on it."""
    named = set(named_staff(records))
    if not named:
        return []
    last = max(r.seq for r in records)
    return [r for r in log.records(types=ACCOUNT_TYPES, upto_seq=last) if account_of(r) in named]


def role_at(accounts: list[AuditRecord], username: str, seq: int) -> tuple[str | None, bool]:
    """``(role, active)`` of a person as the account records before ``seq`` give them; role
    None where no record before then names the account."""
    role, active = None, True
    for record in accounts:
        if record.seq >= seq:
            break
        if account_of(record) != username:
            continue
        if record.type == AuditType.SETUP_ADMIN:
            role, active = "admin", True
        elif record.type == AuditType.USER_CREATED:
            role, active = record.data.get("role") or role, True
        else:
            role = record.data.get("role") if isinstance(record.data.get("role"), str) else role
            change = record.data.get("change")
            active = False if change == "disabled" else True if change == "enabled" else active
    return role, active


# --------------------------------------------------------------------------- the table as configured


@dataclasses.dataclass(frozen=True)
class TableView:
    """How the summary writes times and money, and which seat zones the boxed frames draw
    where a recording names none: the table's configuration as its kiosk loaded it before the
    round (its ``config_loaded`` record), so a package made at the console reads the same as
    one downloaded from the kiosk, and a zone changed since does not re-date the round.  A log
    without such a record: UTC, and the amounts as logged."""

    zone: tzinfo = timezone.utc
    zone_name: str = "UTC"
    currency: str | None = None
    unit: Decimal | None = None
    config: TableConfig | None = None
    seq: int | None = None

    @classmethod
    def of(cls, record: AuditRecord | None) -> "TableView":
        if record is None:
            return cls()
        raw = record.data.get("config") if isinstance(record.data.get("config"), dict) else {}
        try:
            config = TableConfig.model_validate(raw)
        except (ValueError, OSError, TypeError):      # written by an older kiosk: its fields read one by one
            config = None
        name = raw.get("timezone") if isinstance(raw.get("timezone"), str) else "UTC"
        try:
            zone = time_zone_of(name)
        except ValueError:
            zone, name = timezone.utc, "UTC"
        try:
            unit = load_preset(record.data.get("rules") or raw.get("rules") or "").commission_quantum
        except (PresetError, OSError, ValueError, TypeError):
            unit = None                                 # a preset file since moved: the figures as logged
        currency = record.data.get("currency")
        return cls(zone, name, currency if isinstance(currency, str) else None, unit, config, record.seq)

# --------------------------------------------------------------------------- the summary in plain words

Section = tuple[str, list[str]]


@dataclasses.dataclass(frozen=True)
class _Words(Say):
    """The round page's words (``kiosk.timeline.Say``), with times in the table's zone and UTC
    beside them, and people with their role at the time: what whoever holds the package has
    no kiosk to look up.  An amount an older kiosk logged in another shape is written as
    logged rather than failing the summary."""

    table: TableView = TableView()
    staff: tuple[AuditRecord, ...] = ()

    @classmethod
    def of(cls, table: TableView, staff: list[AuditRecord]) -> "_Words":
        return cls(table.unit, table=table, staff=tuple(staff))

    def when(self, ts: str | None) -> str:
        if not ts:
            return "—"
        try:
            utc = log_moment(ts).astimezone(timezone.utc)
        except ValueError:
            return ts
        if self.table.zone_name == "UTC":
            return f"{utc:%Y-%m-%d %H:%M:%S} UTC"
        local = local_text(ts, self.table.zone)
        same_day = local[:10] == f"{utc:%Y-%m-%d}"
        return f"{local} ({utc:%H:%M:%S} UTC)" if same_day else f"{local} ({utc:%Y-%m-%d %H:%M:%S} UTC)"

    def money(self, text) -> str:
        if text is None:
            return ""
        try:
            return super().money(text)
        except (InvalidOperation, ValueError, TypeError):
            return str(text)

    def signed(self, text) -> str:
        try:
            return super().signed(text)
        except (InvalidOperation, ValueError, TypeError):
            return self.money(text)

    def bet(self, bet: dict) -> str:
        try:
            return super().bet(bet)
        except (KeyError, TypeError, AttributeError):
            return str(bet)

    def who(self, name, seq: int | None = None) -> str:
        if not name:
            return "nobody recorded"
        if name in MACHINE_ACTORS:
            return f"{name} (the kiosk itself)"
        if name == "console" or name.startswith("console:"):
            return f"{name} (a login on the kiosk's computer, not a kiosk account)"
        role, active = role_at(list(self.staff), name, seq if seq is not None else 0)
        if role is None:
            return f"{name} (no account record in the log before then)"
        return f"{name} ({role} at the time{'' if active else ', but the account was disabled then'})"


def first_read(records: list[AuditRecord]) -> dict[str, list[str]]:
    """Each seat's cards as the camera accepted them, before any person corrected one."""
    hands: dict[str, list[str]] = {}
    for record in records:
        if record.type != AuditType.CARD_ACCEPTED:
            continue
        card, seat, moved = record.data.get("card"), record.data.get("seat"), record.data.get("moved_from")
        if moved and card in hands.get(moved, []):
            hands[moved].remove(card)
        hands.setdefault(str(seat), []).append(card)
    return {seat: cards for seat, cards in hands.items() if cards}


def _hand_lines(hands: dict, results: dict, before: dict | None = None) -> list[str]:
    rows = []
    for seat in sorted(hands, key=seat_order):
        cards = hands[seat]
        label = (results.get(seat) or {}).get("label", "") if isinstance(results.get(seat), dict) else ""
        changed = before is not None and list(before.get(seat, [])) != list(cards)
        rows.append([Say.seat_name(seat), " ".join(str(c) for c in cards), label, "(changed)" if changed else ""])
    return _columns(rows)


def _columns(rows: list[list[str]], header: list[str] | None = None) -> list[str]:
    """Rows as plain-text columns, two spaces apart, each line indented."""
    table = ([header] if header else []) + rows
    if not table:
        return []
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
    return ["  " + "  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in table]


def _settlement_lines(words: _Words, lines: dict, settlement: dict | None) -> list[str]:
    rows = []
    for seat in sorted(lines, key=seat_order):
        line = lines[seat]
        bet = line.get("bet") if isinstance(line.get("bet"), dict) else {"amount": line.get("amount"),
                                                                         "kind": line.get("kind")}
        stake = f"{words.money(bet.get('amount'))} {bet.get('kind') or ''}".strip() if bet.get("amount") else ""
        player = line.get("player")
        label = player.get("label", "") if isinstance(player, dict) else str(player or "")
        rows.append([Say.seat_name(seat), stake, label, str(line.get("outcome") or "").upper(),
                     words.money(line.get("gross")), words.money(line.get("commission")),
                     words.signed(line.get("net"))])
    out = _columns(rows, ["Seat", "Bet", "Hand", "Result", "Gross", "Commission", "Net (player's side)"])
    for seat in sorted(lines, key=seat_order):
        if lines[seat].get("short"):
            out.append(f"  {Say.seat_name(seat)} won {words.money(lines[seat].get('owed'))}, but the banker's stack "
                       f"was {words.money(lines[seat]['short'])} short")
    if settlement:
        net = house_net_of(settlement)
        totals = [f"commission {words.money(settlement.get('total_commission'))}"]
        if banking_of(settlement) is not None and banking_of(settlement).value == "player":
            totals.append(f"banker (a player) net {words.signed(settlement.get('banker_net'))}")
        if net is not None:
            totals.append(f"house net {words.signed(net)}")
        out.append("  Round total: " + "; ".join(totals))
    return out


def _banking(summary: dict) -> str | None:
    settlement = summary.get("settlement") or summary.get("paid_settlement")
    banking = banking_of(settlement) if isinstance(settlement, dict) else None
    return banking.value if banking is not None else None


def _said(words: _Words, record: AuditRecord) -> str:
    """A record in the round page's words (:func:`kiosk.timeline.record_words`), when and where
    in the log beside it; one the words cannot tell (an older kiosk's shape) as logged."""
    told = record_words(record, words)
    return f"  {words.when(record.ts)}, log seq {record.seq}: {told.text if told else record.payload}"


def _correction_lines(words: _Words, summary: dict, records: list[AuditRecord], frames: list[str],
                      boxed: dict[str, str], folder: str | None) -> list[str]:
    """Each correction and the void: what, why, who in which role, and what a dispute over it
    turns on (QA49 watch M2): that it was made while the round was under review, that one
    person asked for it and approved it, and the key frame that shows the card as read."""
    out: list[str] = []
    recomputed = iter(summary.get("settlement_corrections") or [])
    money = words.for_banking(_banking(summary))
    evidence = correction_evidence(records, frames)
    reviewed = under_review(records)
    number = 0
    for record in records:
        data = record.data
        if record.type not in (AuditType.CARD_CORRECTED, AuditType.SETTLEMENT_CORRECTED, AuditType.ROUND_VOID):
            continue
        number += 1
        late = " — after settlement" if data.get("after_settlement") else ""
        if record.type == AuditType.CARD_CORRECTED:
            what = f"{Say.seat_name(str(data.get('seat')))}: {Say.card_change(data)}{late}"
        elif record.type == AuditType.SETTLEMENT_CORRECTED:
            what = "Settlement recomputed on the corrected hands"
        else:
            what = "Round voided: its bets returned, nothing settled"
        out.append(f"  {number}. {words.when(record.ts)}, log seq {record.seq}")
        out.append(f"     {what}")
        held = reviewed.get(record.seq)
        if held is not None:
            out.append(f"     Made while the round was under review: its recording held by "
                       f"{words.who(held.actor, held.seq)} at log seq {held.seq} "
                       f"({held.data.get('reason') or 'no reason recorded'})")
        out.append(f"     Why: {data.get('reason') or 'no reason recorded'}")
        people = [f"entered by {words.who(record.actor, record.seq)}"]
        if data.get("requested_by") and data.get("requested_by") != record.actor:
            people.append(f"asked by {words.who(data['requested_by'], record.seq)}")
        if data.get("approved_by"):
            people.append(f"approved by {words.who(data['approved_by'], record.seq)}")
        elif record.type != AuditType.CARD_CORRECTED or data.get("action") != "confirmed":
            people.append("no approval recorded")
        said = "; ".join(people)
        out.append(f"     {said[:1].upper()}{said[1:]}")
        if self_approved(data, record.actor):
            out.append(f"     NOTE: {SELF_APPROVED}: no second person approved it")
        if record.seq in evidence:
            out.append(f"     The camera: {_evidence_line(evidence[record.seq], data.get('old'), boxed, folder)}")
        if record.type == AuditType.SETTLEMENT_CORRECTED:
            change = next(recomputed, None) or {}
            seats = change.get("seats") or {}
            for seat in sorted(seats, key=seat_order):
                c = seats[seat]
                before = words.line({"outcome": c.get("old_outcome"), "net": c.get("old_net")})
                after = words.line({"outcome": c.get("new_outcome"), "net": c.get("new_net")})
                out.append(f"     {Say.seat_name(seat)}: {before} -> {after} ({money.owed(seat, c.get('difference'))})")
    return out or ["  None: no card was corrected, no settlement recomputed, the round was not voided."]


def _evidence_line(seen: dict, old: str | None, boxed: dict[str, str], folder: str | None) -> str:
    """The camera's reading behind a correction and the file that shows it, as the round page
    links it: the boxed copy where one was drawn, else the raw frame."""
    said = evidence_said(seen, old)
    frame = seen.get("key_frame")
    if frame is None:
        return f"{said}; no key frame of it is in this package"
    stem = f"{frame:08d}"
    where = boxed.get(stem) or (f"recording/{folder}/frames/{stem}.jpg" if folder else f"frame {frame}")
    shows = "key frame" if seen.get("frame_no") is not None else "the table then: key frame"
    return f"{said}; {shows} {frame}: {where}"


def summary_sections(summary: dict, records: list[AuditRecord], *, camera: list[AuditRecord],
                     staff: list[AuditRecord], table: TableView, manifest: dict, frames: list[str],
                     boxed: dict[str, str], zones: str | None, stray: list[str] = ()) -> list[Section]:
    """The round in plain words, section by section (summary.txt and summary.html both).
    ``stray``: the ``.jpg`` files of the recording's frames/ not named by a frame number."""
    words = _Words.of(table, staff)
    by_type: dict[str, list[AuditRecord]] = {}
    for record in records:
        by_type.setdefault(record.type, []).append(record)
    sections: list[Section] = []

    corrected = summary.get("settlement_corrections") or []
    status = summary.get("status")
    if corrected:
        status = f"{status}, then its settlement corrected after it was paid ({len(corrected)} time" \
                 f"{'s' if len(corrected) > 1 else ''})"
    elif summary.get("corrected"):
        status = f"{status}, with cards corrected before it was settled"
    settled = (by_type.get(AuditType.ROUND_SETTLED) or [None])[0]
    about = [f"  Table:    {summary.get('table_id')}",
             f"  Round:    {summary.get('round')}",
             f"  Status:   {status}",
             f"  Started:  {words.when(summary.get('started'))}",
             f"  Ended:    {words.when(summary.get('ended'))}",
             f"  Records:  {manifest.get('records', len(records))} in audit.json, log seq "
             f"{summary.get('first_seq')} to {summary.get('last_seq')}"]
    if settled is not None:
        about.append(f"  Settled by {words.who(settled.actor, settled.seq)} at {words.when(settled.ts)}")
    if summary.get("void"):
        void = summary["void"]
        about.append(f"  Voided: {void.get('reason') or 'no reason recorded'} (see Corrections)")
    if summary.get("interrupted"):
        about.append(f"  Interrupted: {summary['interrupted'].get('reason')}")
    sections.append(("The round", about))

    camera_read = first_read(records)
    complete = (by_type.get(AuditType.ROUND_COMPLETE) or [None])[0]
    read_results = complete.data.get("results", {}) if complete is not None else {}
    read_results = {s: r for s, r in read_results.items()
                    if complete is not None and list(complete.data.get("hands", {}).get(s, [])) == camera_read.get(s)}
    hands: list[str] = ["  As the camera first read them:", *_hand_lines(camera_read, read_results)]
    previous = camera_read
    if settled is not None and isinstance(settled.data.get("hands"), dict) and settled.data["hands"] != previous:
        hands += ["", "  As settled and paid at the table:",
                  *_hand_lines(settled.data["hands"], settled.data.get("results") or {}, previous)]
        previous = settled.data["hands"]
    if summary.get("hands") and summary["hands"] != previous:
        hands += ["", "  As corrected (the round as the log held it at export):",
                  *_hand_lines(summary["hands"], summary.get("results") or {}, previous)]
    elif not camera_read and summary.get("hands"):
        hands += _hand_lines(summary["hands"], summary.get("results") or {})
    if len(hands) == 1:
        hands.append("  No card was read in this round.")
    sections.append(("Hands", hands))

    bets = summary.get("bets") or {}
    sections.append(("Bets", _columns([[Say.seat_name(seat), words.bet(bets[seat])]
                                       for seat in sorted(bets, key=seat_order) if isinstance(bets[seat], dict)])
                     or ["  No bets recorded."]))

    paid_lines = summary.get("paid_lines") or {}
    if paid_lines:
        when = f" (log seq {settled.seq}, {words.when(settled.ts)})" if settled is not None else ""
        sections.append((f"Settlement paid at the table{when}",
                         _settlement_lines(words, paid_lines, summary.get("paid_settlement"))))
    else:
        sections.append(("Settlement", [f"  Not settled: the round ended {summary.get('status')}."]))
    if corrected:
        sections.append(("Settlement as corrected (what the books hold now)",
                         _settlement_lines(words, summary.get("lines") or {}, summary.get("settlement"))))
        money = words.for_banking(_banking(summary))
        difference = summary.get("paid_difference") or {}
        settled_up = [_said(money, r) for r in records if r.type == AuditType.ADJUSTMENT_SETTLED]
        # What is still owed, from the adjustment as the round page and the shift report read it
        # (QA49 watch H3): "as corrected minus paid" is no difference where a correction was paid
        # out and a later one undid it, and 195.00 is then to collect.
        standing = [f"  {line}" for line in adjustment_said(summary.get("adjustment"), money)]
        sections.append(("Difference and adjustment",
                         ["  As corrected minus paid at the table (from the player's side):"]
                         + [f"    {Say.seat_name(seat)}: {money.owed(seat, difference[seat])}"
                            for seat in sorted(difference, key=seat_order)]
                         + (standing or ["  No adjustment is kept for these corrections."])
                         + (settled_up or ["  No audit record says a difference was paid, collected or waived at "
                                           "the table."])))

    sections.append(("Corrections and void (each with who, their role then, when and why)",
                     _correction_lines(words, summary, records, frames, boxed, manifest.get("recording"))))

    alerts = [f"  {words.when(a.get('ts'))}: {a.get('message') or a.get('reason') or a}"
              for a in summary.get("alerts") or []]
    alerts += [f"  {words.when(c.get('ts'))}: the kiosk found this round's recording changed since it was sealed "
               f"({c.get('changed_files')} files)" for c in summary.get("recording_changed") or []]
    sections.append(("Alerts", alerts or ["  None logged under this round."]))

    notes = [f"  {words.when(r.ts)}, {words.who(r.actor, r.seq)}: {r.data.get('text')}"
             for r in records if r.type == AuditType.ROUND_NOTE]
    if notes:
        sections.append(("Notes on the round", notes))

    first = summary.get("first_seq") or 0
    sections.append(("Camera", [f"  {words.when(r.ts)}: {r.type}"
                                f"{' (before the round, still in force)' if r.seq < first else ''}: "
                                f"{r.data.get('reason') or ''}".rstrip(": ") for r in camera]
                     or ["  No camera fault (offline, mirrored, moved or covered) was in force at the round's start "
                         "or logged while it ran."]))

    holds = []
    for record in records:
        if record.type == AuditType.RECORDING_HELD:
            holds.append(f"  {words.when(record.ts)}: recording held by {words.who(record.actor, record.seq)}: "
                         f"{record.data.get('reason') or 'no reason recorded'}")
        elif record.type == AuditType.RECORDING_RELEASED:
            holds.append(f"  {words.when(record.ts)}: recording released by {words.who(record.actor, record.seq)}: "
                         f"{record.data.get('reason') or 'no reason recorded'}")
        elif record.type == AuditType.EXPORTED:
            holds.append(f"  {words.when(record.ts)}: exported before ({record.data.get('format')}) by "
                         f"{words.who(record.actor, record.seq)}, log seq {record.seq}")
    sections.append(("Holds and earlier exports", holds or ["  None: the recording was never held, and this is "
                                                             "the round's first export."]))

    sections.append(("Recording and key frames",
                     _recording_lines(words, records, manifest, frames, boxed, zones, table, stray)))

    # Each person's role when the round ended, not at its last record, which may be a note or
    # an export months later (QA49 review L6); their role at each act is beside the act.
    end = summary.get("ended_seq") or summary.get("last_seq") or 0
    people = []
    for name in named_staff(records):
        own = [r for r in staff if account_of(r) == name]
        if not own:
            people.append(f"  {name}: no account record in the log up to this round (an account made before the "
                          "log began, or not a kiosk account): their role is not shown by this package")
            continue
        role, active = role_at(staff, name, end + 1)
        people.append(f"  {name}: {role}{'' if active else ' (account disabled)'} when the round ended (log seq {end})"
                      if role else f"  {name}: no account yet when the round ended (log seq {end})")
        for record in own:
            change = {AuditType.SETUP_ADMIN: "made the first administrator at setup",
                      AuditType.USER_CREATED: f"account created as {record.data.get('role')} by {record.actor}"}.get(
                record.type, f"{record.data.get('change') or 'changed'} by {record.actor}")
            people.append(f"    {words.when(record.ts)}, log seq {record.seq}: {change}")
    sections.append(("Staff named in this round (their account records are in staff.json)",
                     people or ["  Nobody: no person's name is in the round's records."]))
    return sections


ZONES_DRAWN = {"recorded": "the seat zones the recording names (those in force when it was recorded)",
               "given": "the seat zones of the table's configuration before the round (table.json)",
               None: "no seat zones (neither the recording nor the log names them)"}


def _recording_lines(words: _Words, records: list[AuditRecord], manifest: dict, frames: list[str],
                     boxed: dict[str, str], zones: str | None, table: TableView, stray: list[str]) -> list[str]:
    folder = manifest.get("recording")
    seal = next((r for r in reversed(records) if r.type == AuditType.RECORDING_SEALED), None)
    out = []
    if folder:
        out.append(f"  recording/{folder}/ is the round's recording as it was on the kiosk's disk.")
        out.append(f"  Sealed in the audit log at {words.when(seal.ts)} (log seq {seal.seq}): check-evidence checks "
                   "every file of it against that seal." if seal is not None else
                   "  Not sealed in the audit log (recorded before sealing, or the kiosk stopped first): its files "
                   "cannot be checked against the log.")
    elif manifest.get("recording_deleted"):
        deleted = manifest["recording_deleted"]
        out.append(f"  No recording: retention deleted it at {words.when(deleted.get('ts'))} (log seq "
                   f"{deleted.get('seq')}).")
    elif manifest.get("recording_missing"):
        out.append(f"  No recording: it was sealed (log seq {manifest['recording_missing'].get('seq')}) but was gone "
                   "from the kiosk's disk when this package was made.")
    else:
        out.append("  No recording of this round was on the kiosk.")
    if frames:
        out.append("")
        out.append(f"  {len(frames)} key frames. boxed/ holds each with what the camera read drawn on it: each card's "
                   f"box, code and confidence, and {ZONES_DRAWN.get(zones, ZONES_DRAWN[None])}.")
        out.append("  The boxed copies are drawn at export from detections.jsonl: they are NOT part of the recording "
                   "the audit log sealed, and not evidence by themselves; the raw frames in recording/ are.")
        captions = frame_captions(records, frames, table.zone)
        for stem in frames:
            copy = boxed.get(stem) or "no boxed copy (the frame is not an image, or no detections line names it)"
            out.append(f"    {captions.get(stem) or f'frame {int(stem)}'}: {copy}")
    if stray and folder:
        out.append("")
        out.append(f"  Not key frames: {', '.join(f'frames/{name}.jpg' for name in stray)} (not named by a frame "
                   "number: a file a Mac or another program left on the recording's disk, for one). Packed in "
                   "recording/ as it was on the disk, with no boxed copy and no caption; check-evidence names any "
                   "file the seal does not hold.")
    return out


WIDTH = 100      # summary.txt's lines, for a terminal, a text editor or a printout


def summary_text(sections: list[Section], manifest: dict, table: TableView) -> str:
    title = f"Niu Niu table {manifest.get('table_id')}, round {manifest.get('round')}: what happened, in plain words"
    lines = [title, "=" * len(title)]
    for paragraph in _preamble(manifest, table):
        lines += ["", *textwrap.wrap(paragraph, WIDTH, break_long_words=False, break_on_hyphens=False)]
    for heading, body in [*sections, ("Checking this package", _checking())]:
        lines += ["", heading, "-" * len(heading), *(part for line in body for part in _wrapped(line))]
    return "\n".join(lines) + "\n"


def _wrapped(line: str) -> list[str]:
    """A long line folded under its own indent; a table's row is never that long."""
    if len(line) <= WIDTH:
        return [line]
    indent = " " * (len(line) - len(line.lstrip()))
    return textwrap.wrap(line.strip(), WIDTH, initial_indent=indent, subsequent_indent=indent + "  ",
                         break_long_words=False, break_on_hyphens=False)


def _preamble(manifest: dict, table: TableView) -> list[str]:
    """The opening paragraphs: who exported it and when, how to read times and money, and
    what in the package is evidence and what was derived from it."""
    words = _Words.of(table, [])
    if table.seq is None:
        reading = ("The log holds no configuration record of the table before this round: times are in UTC "
                   "and amounts as logged.")
    else:
        zone = "UTC" if table.zone_name == "UTC" else f"the table's time zone, {table.zone_name}, with UTC in brackets"
        unit = f", written to the table's money unit ({table.unit})" if table.unit is not None else ""
        reading = (f"Times are in {zone}. Amounts are in {table.currency or 'the table currency'}{unit}; a net "
                   "is from the player's side (+ the seat won, - the seat lost).")
    return [f"Exported by {manifest.get('exported_by')} at {words.when(manifest.get('exported_at'))}. {reading}",
            "This summary was written by the kiosk when the package was exported, from the records in it. It is "
            "derived, not sealed: the audit log's seal of the round does not cover it, nor summary.html, "
            "round.json or the boxed key frames in boxed/. MANIFEST.json lists them, so a change made to them "
            "after export shows when the package is checked, but the records (audit.json, camera.json, "
            "staff.json, table.json) and the recording are the evidence: where this summary and a record "
            "differ, the record holds."]


def _checking() -> list[str]:
    return ["  Anyone, with the table's public key (published by the casino):",
            "    niuniu audit check-evidence THIS.zip --public-key TABLE-KEY.pem",
            "  At the kiosk, against its audit log:",
            "    niuniu audit check-evidence THIS.zip --data-dir /var/lib/niuniu",
            "  It checks every file against MANIFEST.json, MANIFEST.json against the table's signature, that every "
            "record's hash recomputes, and the recording against its seal; against the log, that each record is "
            "the one the log holds and that the log recorded this export. Replay the recording:",
            "    niuniu replay recording/<folder> --json"]


def summary_html(sections: list[Section], manifest: dict, records: list[AuditRecord], frames: list[str],
                 boxed: dict[str, str], table: TableView) -> str:
    """summary.txt's sections as a page a browser opens from the unzipped package, with the
    key frames (boxed where drawn) beside their captions."""
    esc = html.escape
    title = f"Niu Niu table {manifest.get('table_id')}, round {manifest.get('round')}"
    parts = ["<!doctype html>", '<html lang="en"><head><meta charset="utf-8">', f"<title>{esc(title)}</title>",
             "<style>body{font-family:sans-serif;max-width:70em;margin:1em auto}pre{background:#f6f6f6;padding:.5em;"
             "white-space:pre-wrap}figure{display:inline-block;margin:.3em;max-width:32em}"
             "img{max-width:100%}</style></head><body>",
             f"<h1>{esc(title)}</h1>", *(f"<p>{esc(p)}</p>" for p in _preamble(manifest, table))]
    for heading, body in sections:
        text = "\n".join(line[2:] if line.startswith("  ") else line for line in body)
        parts += [f"<h2>{esc(heading)}</h2>", f"<pre>{esc(text)}</pre>"]
    if frames:
        captions = frame_captions(records, frames, table.zone)
        folder = manifest.get("recording")
        parts.append("<h2>Key frames (boxed copies derived at export; the raw frames are the evidence)</h2>")
        for stem in frames:
            source = boxed.get(stem) or f"recording/{folder}/frames/{stem}.jpg"
            raw = f"recording/{folder}/frames/{stem}.jpg"
            parts.append(f'<figure><a href="{esc(raw)}"><img src="{esc(source)}" alt="frame {int(stem)}"></a>'
                         f"<figcaption>{esc(captions.get(stem) or f'frame {int(stem)}')}"
                         f"{'' if stem in boxed else ' (no boxed copy)'}</figcaption></figure>")
    parts += ["<h2>Checking this package</h2>", f"<pre>{esc(chr(10).join(line[2:] for line in _checking()))}</pre>",
              "</body></html>"]
    return "\n".join(parts) + "\n"
