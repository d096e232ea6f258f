"""Surveillance review: rounds, their evidence, the chain's health, exports, holds.

Nothing here changes a round.  It writes two things, each logged: who exported what (an
export is itself something surveillance must account for), and holds on recordings, so a
disputed round's key frames outlive the retention that would delete them
(``vision.retention``).
"""

from __future__ import annotations

from datetime import datetime, timedelta, tzinfo
from pathlib import Path

from flask import Blueprint, Response, abort, flash, g, redirect, render_template, request, url_for

from kiosk.adjustment_words import after_close, moved_words, owed_words, standing
from kiosk.audit import (AuditError, AuditType, DamagedRecord, around_period, local_text, log_moment, parse_period,
                         parse_time, typed_day)
from kiosk.auth import Role, require
from kiosk.clockwatch import untrusted_stamps
from kiosk.frame_boxes import with_boxes      # the evidence package draws its boxed frames alike
from kiosk.rounds import (APPROVAL_TYPES, banking_of, camera_during, house_net_at_table, house_net_of, in_period,
                          load_listed_round, load_round, matches, is_change, round_number, round_numbers,
                          seen_cards)
from kiosk.retention import LogHolds, damaged_hold_words, deletion_of, folder_deletion, read_holds
from kiosk.runtime import audit, runtime, service
from kiosk.seals import against_seal
from kiosk.timeline import (SELF_APPROVED, Say, adjustment_said, correction_evidence, evidence_said, frame_captions,
                            key_frames, printed_frames, record_words, self_approved, under_review)
from scoring.categories import Category
from vision.record import HOLD, recordings_dir, round_folder, round_in_name
from vision.round import AlertCode
from vision.retention import folder_bytes, hold_of, hold_recording, release_recording

bp = Blueprint("review", __name__, url_prefix="/review")

REVIEW_ROLES = (Role.SURVEILLANCE,)
PAGE = 50
SCAN_LIMIT = 2000
EXPORTS_SHOWN = 20
SYSTEM_TYPES = (AuditType.KIOSK_START, AuditType.KIOSK_STOP, AuditType.CONFIG_LOADED, AuditType.CONFIG_CHANGED,
                AuditType.MODEL_LOADED, AuditType.CAMERA_OFFLINE, AuditType.CAMERA_ONLINE,
                AuditType.CAMERA_MIRRORED, AuditType.CAMERA_MIRROR_CLEARED,
                AuditType.CAMERA_MOVED, AuditType.CAMERA_MOVE_CLEARED,
                AuditType.GUARDS_RESTORED, AuditType.SETUP_ADMIN, AuditType.LOGIN, AuditType.LOGOUT,
                AuditType.LOGIN_FAILED, AuditType.SESSION_TIMEOUT, AuditType.PIN_FAILED, AuditType.PIN_ACCEPTED,
                AuditType.USER_CREATED, AuditType.USER_CHANGED, AuditType.EXPORTED, AuditType.RECORDINGS_PRUNED,
                AuditType.DISK_LOW, AuditType.RECORDING_HELD, AuditType.RECORDING_RELEASED,
                AuditType.BACKUP_MADE, AuditType.BACKUP_FAILED, AuditType.BACKUP_RESTORED,
                AuditType.RECORDING_CHANGED, AuditType.RECORDING_HOLD_LOST, AuditType.SIGNING_KEY_CREATED,
                AuditType.FORWARD_FAILED, AuditType.FORWARD_RESTORED, AuditType.CLOCK_CHANGED)


def _zone() -> tzinfo:
    """The table's time zone: what the staff type and read times in."""
    return service().config.time_zone


def _time_range() -> tuple[str | None, str | None, str | None]:
    """``(from, to, error)``: a mistyped or reversed range is shown beside the form rather
    than failing the page, and then filters nothing."""
    try:
        return (*parse_period(request.args.get("from", "").strip(), request.args.get("to", "").strip(),
                              zone=_zone(), names=("'from'", "'to'")), None)
    except AuditError as exc:
        return None, None, str(exc)


AROUND_MINUTES = 15       # the round list's "around ± minutes" unless another is typed
AROUND_MOST = 720         # half a day either side: wider is a From/To


def _round_period() -> tuple[str | None, str | None, str | None]:
    """The round list's period, ``(from, to, error)``: From/To as the other pages read them,
    and besides a time alone (``22:40``, ``10:40 pm``) on the day the other end gives, or
    else today in the table's zone; or Around a local time ± minutes (``within``)."""
    zone = _zone()
    since, until = request.args.get("from", "").strip(), request.args.get("to", "").strip()
    around = request.args.get("around", "").strip()
    today = datetime.now(zone).date()
    try:
        if around:
            if since or until:
                return None, None, "Around sets the period itself: clear From and To, or clear Around"
            within = request.args.get("within", "").strip() or str(AROUND_MINUTES)
            if not (within.isascii() and within.isdigit() and 1 <= int(within) <= AROUND_MOST):
                return None, None, (f"± {within!r} is not a number of minutes from 1 to {AROUND_MOST}; "
                                    f"leave it empty for {AROUND_MINUTES}")
            return (*around_period(around, int(within), where="'around'", zone=zone, day=today), None)
        return (*parse_period(since, until, zone=zone, names=("'from'", "'to'"),
                              days=(typed_day(until) or today, typed_day(since) or today)), None)
    except AuditError as exc:
        return None, None, str(exc)


def _export_period(since: str | None, until: str | None) -> dict[str, str]:
    """The round list's period as the export reads it back (UTC, the ``to`` the first instant
    after), so its export links hold the same records for a time alone or an Around."""
    after = (log_moment(until) + timedelta(microseconds=1)).isoformat() if until else ""
    return {"from": log_moment(since).isoformat() if since else "", "to": after}


def _flag(name: str) -> bool:
    return request.args.get(name) in ("1", "on", "true", "yes")


def _started(round_no: int, table_id: str) -> bool:
    """Whether the table has a round of this number (its round_start record, one indexed query)."""
    return bool(audit().records(round_no=round_no, table_id=table_id, types=[AuditType.ROUND_START], limit=1))


@bp.route("/")
@require(*REVIEW_ROLES)
def rounds():
    table_id = service().config.table_id
    wanted = request.args.get("round", "").strip().lstrip("#")
    if wanted:
        # "Round 7" is how a dispute arrives: straight to its page, not hunted down the list
        number = round_number(wanted)
        if number is not None and _started(number, table_id):
            return redirect(url_for("review.round_detail", round_no=number))
        digits = wanted.isascii() and wanted.isdigit()
        newest = round_numbers(audit(), table_id=table_id, limit=1)
        flash(f"there is no round {wanted!r} on table {table_id}" +
              (f" (its rounds are numbered 1 to {newest[0]})" if newest and digits else
               "; type the round's number, like 7"), "error")
        return redirect(url_for("review.rounds"))
    since, until, error = _round_period()
    refused = "period" if error else None    # a filter not read lists no rounds, not every round
    seat = request.args.get("seat", "").strip() or None
    category = request.args.get("category", "").strip() or None
    if category and category not in {c.value for c in Category}:
        error, category = f"category {category!r} is not one of the hand categories", None
    flags = {name: _flag(name) for name in ("corrected", "voided", "alerts", "changed", "damaged",
                                            "recording_failed")}
    camera_only = _flag("camera")       # rounds played under a camera fault (kiosk.rounds.camera_during)
    staff = request.args.get("staff", "").strip() or None
    approver = request.args.get("approver", "").strip() or None
    card, card_error = _card_wanted()
    if card_error and not refused:
        error, refused = card_error, "card"
    alert = request.args.get("alert", "").strip() or None
    if alert and alert not in ALERT_KINDS and not refused:
        error, refused = (f"alert {alert!r} is not one of the kinds the camera raises "
                          f"({', '.join(ALERT_KINDS)}): choose one from the list"), "alert"
    held, holds_unread = _held_rounds(table_id)
    ever_held = _ever_held(table_id)
    held_only, ever_only = _flag("held"), _flag("reviewed")
    before = request.args.get("before", type=int)
    found, last_scanned, scanned = [], None, 0
    if refused:
        numbers: list[int] = []
    elif held_only or ever_only:
        # Few rounds are held, and a disputed round may be months old: asked of the holds, not
        # found by scanning back through every round since.  Ever held: a round released once
        # its case closed stays findable as one that was investigated (QA49 watch L7).
        numbers = [n for n in sorted(held if held_only else ever_held, reverse=True) if before is None or n < before]
        if since or until:
            numbers = [n for n in numbers if in_period(audit(), n, table_id, since, until)]
    elif approver:
        # Approved in the period: a round of an earlier shift corrected in this one is this one's.
        numbers = audit().round_numbers(table_id=table_id, since=since, until=until, limit=SCAN_LIMIT,
                                        before=before, types=APPROVAL_TYPES)
    else:
        numbers = round_numbers(audit(), table_id=table_id, since=since, until=until, limit=SCAN_LIMIT,
                                before=before)
    for number in numbers:
        scanned += 1
        last_scanned = number
        summary = load_listed_round(audit(), number, table_id=table_id)
        if summary and matches(summary, seat=seat, category=category, staff=staff, approved_by=approver,
                               since=since, until=until, alert=alert, **flags):
            if card and card not in seen_cards(summary, seat):
                if card not in camera_cards(summary, seat):
                    continue
                summary["card_camera_only"] = card       # seen by the camera, on no record
            summary["held"] = held.get(number)
            summary["ever_held"] = ever_held.get(number)
            summary["reviewed_corrections"] = _reviewed_corrections(number, table_id) if number in ever_held else []
            summary["self_approved"] = self_approvals(summary)
            # Four indexed queries a round, so only for the rounds shown (or asked for).
            summary["camera"] = camera_during(audit(), summary["first_seq"], summary["ended_seq"], table_id=table_id)
            if camera_only and not summary["camera"]:
                continue
            found.append(summary)
            if len(found) >= PAGE:
                break
    more = len(found) >= PAGE and last_scanned is not None
    args = {k: v for k, v in request.args.items() if k != "before"}
    next_url = url_for("review.rounds", before=last_scanned, **args) if more else None
    return render_template("review/rounds.html", rounds=found, error=error, args=request.args,
                           categories=[c for c in Category], seats=service().config.player_seats,
                           next_url=next_url, refused=refused, alert_kinds=ALERT_KINDS, accounts=_accounts(),
                           holds_unread=holds_unread,
                           export_period=_export_period(since, until) if refused != "period" else
                           {"from": request.args.get("from", ""), "to": request.args.get("to", "")})


# The alert filter's kinds: those the round machine raises (vision.round.AlertCode).
ALERT_KINDS = tuple(code.value for code in AlertCode)


def _card_wanted() -> tuple[str | None, str | None]:
    """The card the round list is asked for, as its code (``kh``, ``K♥`` and ``KH`` are one
    card), and the error where it is no card."""
    from scoring.cards import Card, CardError

    typed = request.args.get("card", "").strip()
    if not typed:
        return None, None
    try:
        return Card.parse(typed).code, None
    except CardError as exc:
        return None, f"{exc}; type one card, like KH or 10S"


def camera_cards(summary: dict, seat: str | None = None) -> set[str]:
    """The cards the camera's alerts name on ``seat`` (any seat if None) that may be on no
    record: the card it read in place of a recorded one (``read_as``: a card changed in place,
    a reread) and a card put on a finished hand (QA49 watch M4: "KH on seat 3" missed the very
    rounds where KH was swapped in).  ``kiosk.rounds.seen_cards`` holds the cards on record."""
    found = set()
    for alert in summary.get("alerts", ()):
        if seat is None or alert.get("seat") == seat:
            found.update(code for code in (alert.get("card"), alert.get("read_as")) if isinstance(code, str))
    return found


def self_approvals(summary: dict) -> list[dict]:
    """The corrections, void and waivers of a round approved by whoever asked for them (QA49 watch M2)."""
    done = [c for c in summary.get("corrections", ()) if is_change(c)] + list(summary.get("settlement_corrections", ()))
    done += [a for a in summary.get("adjustments", ()) if a.get("action") == "waived"]
    return [d for d in done + ([summary["void"]] if summary.get("void") else []) if self_approved(d, d.get("actor"))]


def _ever_held(table_id: str) -> dict[int, object]:
    """The table's rounds whose recording was ever held, released since or not: round -> its
    first ``recording_held`` record.  Holds are few: asked by type (its index), not by table."""
    found: dict[int, object] = {}
    for record in audit().records(types=[AuditType.RECORDING_HELD]):
        if record.table_id == table_id and record.round_no is not None:
            found.setdefault(record.round_no, record)
    return found


def _reviewed_corrections(round_no: int, table_id: str) -> list:
    """The round's corrections made while its recording was held (``kiosk.timeline.under_review``):
    what surveillance must be told of a round it is investigating (QA49 watch M6), on the list
    and the Holds page, not only on the round's own page."""
    records = audit().records(round_no=round_no, table_id=table_id, types=[
        AuditType.RECORDING_HELD, AuditType.RECORDING_RELEASED, AuditType.CARD_CORRECTED,
        AuditType.SETTLEMENT_CORRECTED])
    # a damaged one is left out, as the round's page leaves it out of its timeline: the list
    # flags it (``damaged``) instead of failing on it
    marked = under_review([r for r in records if not r.damage])
    return [r for r in records if r.seq in marked]


def _held_rounds(table_id: str) -> tuple[dict[int, object], list[str]]:
    """The table's rounds under review, as retention keeps them (``kiosk.retention.LogHolds``):
    round -> its earliest ``recording_held`` record no release has lifted, a damaged one
    included; and each hold or release record of the table that cannot be read, in the words
    the Holds page says it in.

    A damaged hold holds its round (stored beside the payload) until a readable release of the
    round's recording is logged after it: the filter must list what surveillance still keeps,
    and one damaged record must not hide the holds that read (QA52 review M4)."""
    logged = read_holds(audit())
    held: dict[int, object] = {}
    for (table, _folder), record in logged.held.items():
        if table == table_id and record.round_no is not None:
            held[record.round_no] = min(record, held.get(record.round_no, record), key=lambda r: r.seq)
    unread: list[str] = []
    for record in logged.damaged:
        if record.table_id != table_id or logged.lifted(record):
            continue
        listed = ""
        if record.type == AuditType.RECORDING_HELD and record.round_no is not None:
            held[record.round_no] = min(record, held.get(record.round_no, record), key=lambda r: r.seq)
            listed = f"; round {record.round_no} is listed as under review (hold record damaged)"
        unread.append(f"{DamagedRecord(record, record.damage)}; {damaged_hold_words(record)}{listed}")
    return held, unread


def _accounts() -> dict[str, list[str]]:
    """The accounts the Staff and Approved by fields offer: who deals and who approves (a list
    to pick from, since a name mistyped finds nothing)."""
    from kiosk import db
    from kiosk.auth import list_users

    rows = list_users(db.get_db())
    return {"staff": sorted({r["username"] for r in rows if r["role"] in (Role.DEALER, Role.SUPERVISOR)}),
            "approvers": sorted({r["username"] for r in rows if r["role"] == Role.SUPERVISOR})}


def _recordings_root() -> Path:
    return recordings_dir(runtime().data_dir, service().config.table_id)


def _recording_dir(round_no: int) -> Path | None:
    return round_folder(_recordings_root(), round_no)


def _say(banking=None) -> Say:
    """The words' money unit: the table's (what ``_money.html`` writes amounts to); with a
    round's ``banking``, the banker as the other side of the seats' money where a player banks."""
    return Say(service().preset.commission_quantum).for_banking(banking)


@bp.route("/round/<int:round_no>")
@require(*REVIEW_ROLES)
def round_detail(round_no: int):
    return _round_page(round_no)


def _round_page(round_no: int, *, note: str = "", note_error: str | None = None, status: int = 200):
    """The round's page; ``note`` and ``note_error``: a case note refused, shown again in its
    form with why, so that what the officer wrote is not lost."""
    table_id = service().config.table_id
    summary = load_round(audit(), round_no, table_id=table_id)
    if summary is None:
        abort(404)
    everything = audit().records(round_no=round_no, table_id=table_id)
    # A damaged record is shown as stored, named in a banner (``round.damaged``), and kept from
    # the helpers below that read payloads: the rest of the round stays readable for the officer
    # investigating the damage, instead of the whole page being one error (QA51 review M4).
    damaged = {r.seq: why for r in everything for why in (r.damage,) if why}
    timeline = [r for r in everything if r.seq not in damaged]
    from vision.replay import not_scored

    folder = _recording_dir(round_no)
    frames, stray = key_frames(folder)
    evidence = correction_evidence(timeline, frames)
    banking = banking_of(summary["settlement"]) if summary["settlement"] else None
    say = _say(banking)
    # a damaged recordings_pruned record excuses nothing (``pruned_folders``): the folder reads as missing
    pruned = None if folder else deletion_of(audit(), round_no, since=summary["started"], table_id=table_id)
    camera, camera_damaged = [], []
    for r in camera_during(audit(), summary["first_seq"], summary["ended_seq"], table_id=table_id):
        why = damaged.get(r.seq) or r.damage
        if why:
            if r.seq not in damaged:      # a fault logged before the round: named beside the round's own
                camera_damaged.append({"seq": r.seq, "type": r.type, "problem": why})
        else:
            camera.append(r)
    clock = untrusted_stamps(audit(), table_id, summary["first_seq"], summary["last_seq"])
    earlier = round_numbers(audit(), table_id=table_id, before=round_no, limit=1)
    later = round_no + 1 if _started(round_no + 1, table_id) else None
    seal = next((r for r in reversed(timeline) if r.type == AuditType.RECORDING_SEALED), None)
    changes = against_seal(folder, seal) if folder and seal else None
    # The log's hold on this round's recording, whatever became of its hold.json: a hold whose
    # file is gone still holds (kiosk.retention), and one whose recording is gone is a finding.
    # Another round's damaged hold or release says nothing of this one; this round's own is
    # named in the banner with its other damaged records.
    logged = read_holds(audit())
    log_hold = _log_hold(round_no, folder.name if folder else None, logged)
    hold = hold_of(folder) if folder else None
    if hold is None and folder and log_hold is None:
        hold = _damaged_hold(logged, folder.name)
    return render_template("review/round.html", round=summary, timeline=timeline, frames=frames,
                           captions=frame_captions(timeline, frames, _zone()), camera=camera,
                           words={r.seq: record_words(r, say) for r in timeline}, evidence=evidence,
                           everything=everything, damaged=damaged, damaged_nearby=camera_damaged,
                           stored_text=stored_text,
                           reviewed=under_review(timeline), printed=printed_frames(timeline, frames, evidence),
                           notes=[r for r in timeline if r.type == AuditType.ROUND_NOTE], note=note,
                           card_seqs=[r.seq for r in timeline if r.type == AuditType.CARD_CORRECTED],
                           settle_seqs=[r.seq for r in timeline if r.type == AuditType.SETTLEMENT_CORRECTED],
                           note_error=note_error, note_max=NOTE_MAX, made=datetime.now(_zone()),
                           clock=clock, earlier=earlier[0] if earlier else None, later=later, seal=seal,
                           seal_changes=changes,
                           recording=folder.name if folder else None, pruned=pruned,
                           hold=hold or (_as_hold(log_hold) if folder and log_hold else None),
                           hold_file_lost=bool(folder and log_hold and hold is None and not (folder / HOLD).exists()),
                           log_hold=log_hold,
                           house_net=house_net_of(summary["settlement"]),
                           paid_house_net=house_net_of(summary["paid_settlement"])
                           if summary["settlement_corrections"] else None,
                           held_house_net=house_net_at_table(summary) if summary["settlement_corrections"] else None,
                           standing=standing(summary["adjustment"], say.money),
                           banking=banking, say=say, stray=stray, not_scored=not_scored,
                           adjustment_said=adjustment_said(summary["adjustment"], say), evidence_said=evidence_said,
                           self_approved=self_approved, SELF_APPROVED=SELF_APPROVED), status


NOTE_MAX = 2000
# Who writes a round's case notes: surveillance, who alone reads the round pages.  Not the pit
# supervisor: the notes are the file of an investigation that may be into the pit's own
# approvals (QA48 dispute: the supervisor approved the bad corrections).
NOTE_ROLES = (Role.SURVEILLANCE,)


@bp.route("/round/<int:round_no>/note", methods=("POST",))
@require(*NOTE_ROLES)
def note(round_no: int):
    """Add a case note to a round: an audit record under the round (``round_note``), so the
    notes are in its evidence package and nobody can edit or remove one afterwards."""
    table_id = service().config.table_id
    if not audit().records(round_no=round_no, table_id=table_id, limit=1):
        abort(404)
    text = request.form.get("text", "").replace("\r\n", "\n").strip()
    error = None
    if not text:
        error = "the note is empty: write what you found or did (a case number, who you spoke to)"
    elif len(text) > NOTE_MAX:
        error = (f"the note is {len(text)} characters; a note holds at most {NOTE_MAX}: shorten it, or add "
                 "the rest as a second note")
    if error:
        return _round_page(round_no, note=text, note_error=error, status=400)
    audit().append(AuditType.ROUND_NOTE, g.user["username"], {"text": text, "role": g.user["role"].value},
                   round_no=round_no)
    flash(f"Note added to round {round_no}.")
    return redirect(url_for("review.round_detail", round_no=round_no, _anchor="notes"))


def stored_text(record) -> str:
    """A damaged record's payload as it is stored, for a person to read: bytes that are not
    UTF-8 as ``\\xNN`` (they would otherwise stop the page being sent)."""
    return record.payload.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _log_hold(round_no: int, folder: str | None, logged: LogHolds):
    """The unreleased readable ``recording_held`` record of this round's recording (its folder
    when on disk, else any folder of the round), or None."""
    table_id = service().config.table_id
    found = [r for (table, name), r in logged.held.items()
             if table == table_id and r.round_no == round_no and (folder is None or name == folder)]
    return max(found, key=lambda r: r.seq, default=None)


def _as_hold(record) -> dict:
    """A log hold in the shape of a ``hold.json`` (``vision.retention.hold_of``)."""
    return {"by": record.actor, "reason": str(record.data.get("reason") or ""), "ts": None, "seq": record.seq}


def _damaged_hold(logged: LogHolds, folder: str) -> dict | None:
    """A damaged ``recording_held`` record that may hold this folder, in the shape of a
    ``hold.json``: retention keeps the recording for it (``LogHolds.damaged_hold``), so the
    pages show it held and offer its release, whose readable record lifts it; its reason is
    lost with the record, and who held it is stored beside the payload."""
    record = logged.damaged_hold(service().config.table_id, folder)
    if record is None:
        return None
    return {"by": record.actor, "reason": f"unknown: its hold record (audit record seq {record.seq}) cannot be read",
            "ts": None, "seq": record.seq}


HOLD_REASON_MAX = 500


def _hold_reason() -> str:
    reason = " ".join(request.form.get("reason", "").split())
    if not reason:
        raise ValueError("say why (a dispute, a case number): the reason is what the log keeps")
    if len(reason) > HOLD_REASON_MAX:
        raise ValueError(f"the reason is {len(reason)} characters; keep it under {HOLD_REASON_MAX}")
    return reason


@bp.route("/round/<int:round_no>/hold", methods=("POST",))
@require(*REVIEW_ROLES)
def hold(round_no: int):
    """Keep this round's recording whatever retention would delete, until released."""
    folder = _recording_dir(round_no)
    try:
        if folder is None:
            raise ValueError(f"round {round_no} has no recording on this kiosk to hold")
        if (held := hold_of(folder)) is not None:
            raise ValueError(f"round {round_no}'s recording is already held by {held['by'] or '?'}")
        reason = _hold_reason()
        try:
            hold_recording(folder, by=g.user["username"], reason=reason)
        except OSError as exc:
            raise ValueError(f"the hold cannot be written into {folder} ({exc.strerror}); check the data disk "
                             "is mounted and writable") from None
    except ValueError as exc:
        flash(str(exc), "error")
        return redirect(url_for("review.round_detail", round_no=round_no))
    try:
        audit().append(AuditType.RECORDING_HELD, g.user["username"], {"folder": folder.name, "reason": reason},
                       round_no=round_no)
    except Exception:
        release_recording(folder)      # a hold nobody can account for is not kept
        raise
    flash(f"Round {round_no}'s recording is held: retention will not delete it until it is released.")
    return redirect(url_for("review.round_detail", round_no=round_no))


@bp.route("/round/<int:round_no>/release", methods=("POST",))
@require(*REVIEW_ROLES)
def release(round_no: int):
    folder = _recording_dir(round_no)
    try:
        held = hold_of(folder) if folder else None
        if held is None and folder is not None:
            # its hold.json was removed, or its hold record is damaged: the log's hold is released all the same
            logged = read_holds(audit())
            record = _log_hold(round_no, folder.name, logged)
            held = _as_hold(record) if record is not None else _damaged_hold(logged, folder.name)
        if held is None:
            raise ValueError(f"round {round_no}'s recording is not held")
        reason = _hold_reason()
    except ValueError as exc:
        flash(str(exc), "error")
        return redirect(url_for("review.round_detail", round_no=round_no))
    audit().append(AuditType.RECORDING_RELEASED, g.user["username"],
                   {"folder": folder.name, "reason": reason, "held_by": held.get("by"),
                    "held_reason": held.get("reason")}, round_no=round_no)
    release_recording(folder)
    flash(f"Round {round_no}'s recording is released: retention treats it as any other again.")
    return redirect(url_for("review.round_detail", round_no=round_no))


@bp.route("/round/<int:round_no>/evidence.zip")
@require(*REVIEW_ROLES)
def evidence(round_no: int):
    """The round's records, recording and manifest in one zip (``kiosk.evidence``); the
    export is logged with the manifest's digest, which is what later proves the package."""
    from kiosk.evidence import evidence_bytes, export_record
    from kiosk.signing import SigningError, table_key

    table_id = service().config.table_id
    if not audit().records(round_no=round_no, table_id=table_id, limit=1):
        abort(404)                     # before the key: no round, nothing to sign (nor a key to make)
    try:
        signer = table_key(runtime().data_dir, audit(), g.user["username"])
    except SigningError as exc:        # no unsigned package while the table's key is unreadable
        flash(f"No evidence exported: {exc}", "error")
        return redirect(url_for("review.round_detail", round_no=round_no))
    try:
        data, manifest = evidence_bytes(audit(), table_id=table_id, round_no=round_no,
                                        recording=_recording_dir(round_no), exported_by=g.user["username"],
                                        signer=signer)
    except AuditError:
        abort(404)
    audit().append(AuditType.EXPORTED, g.user["username"], export_record(manifest), round_no=round_no)
    name = f"evidence-{table_id}-round-{round_no:04d}.zip"
    return Response(data, mimetype="application/zip",
                    headers={"Content-Disposition": f'attachment; filename="{name}"'})


@bp.route("/evidence-key.pem")
@require(*REVIEW_ROLES)
def public_key():
    """The public half of the key evidence is signed with (``kiosk.signing``): what the casino
    publishes so a regulator can check a package on their own (``--public-key``)."""
    from kiosk.signing import SigningError, fingerprint, public_pem, table_key

    try:
        public = table_key(runtime().data_dir, audit(), g.user["username"]).public_key()
    except SigningError as exc:
        flash(str(exc), "error")
        return redirect(url_for("review.rounds"))
    name = f"evidence-key-{service().config.table_id}-{fingerprint(public)[:12]}.pem"
    return Response(public_pem(public), mimetype="application/x-pem-file",
                    headers={"Content-Disposition": f'attachment; filename="{name}"'})


@bp.route("/holds")
@require(*REVIEW_ROLES)
def holds():
    """Every held recording of this table: what the disk must keep, and why.  A hold or
    release record that cannot be read is listed as such, once, and a recording a damaged hold
    may hold is listed held: retention keeps it (``kiosk.retention.LogHolds``)."""
    root = _recordings_root()
    table_id = service().config.table_id
    holds_read = read_holds(audit())
    logged = {name: r for (table, name), r in holds_read.held.items() if table == table_id}
    found = []
    for folder in sorted(root.iterdir() if root.is_dir() else [], reverse=True):
        held = hold_of(folder) if folder.is_dir() else None
        record = logged.pop(folder.name, None) if folder.is_dir() else None
        if held is None and record is not None:
            # The log holds it but its hold.json is gone: retention keeps it; say so.
            held = {**_as_hold(record), "problem": f"its {HOLD} is gone; held by the audit log (seq {record.seq})"}
        elif held is None and folder.is_dir():
            held = _damaged_hold(holds_read, folder.name)      # kept by retention: named in the list below
        if held is not None:
            round_no = round_in_name(folder.name)
            found.append({"folder": folder.name, "round": round_no, **held, "bytes": folder_bytes(folder),
                          "corrected": _reviewed_corrections(round_no, table_id) if round_no is not None else []})
    # Held in the log, never released, and not on disk: the recording a dispute rests on is gone.
    gone = []
    for name, record in sorted(logged.items(), key=lambda item: item[1].seq):
        pruned = folder_deletion(audit(), name, since=record.ts, table_id=table_id)
        gone.append({"folder": name, "round": record.round_no, "by": record.actor, "seq": record.seq,
                     "reason": str(record.data.get("reason") or ""), "pruned": pruned.seq if pruned else None})
    # Each hold or release record that cannot be read, once, with what retention does for it.
    damaged = [{"round": r.round_no, "seq": r.seq, "by": r.actor, "problem": str(DamagedRecord(r, r.damage)),
                "meaning": damaged_hold_words(r)} for r in holds_read.damaged if r.table_id == table_id]
    return render_template("review/holds.html", holds=found, gone=gone, damaged=damaged)


@bp.route("/round/<int:round_no>/frame/<int:frame_no>.jpg")
@require(*REVIEW_ROLES)
def key_frame(round_no: int, frame_no: int):
    """A key frame with the boxes the detector drew on it at the time (from the recording)."""
    folder = _recording_dir(round_no)
    path = folder / "frames" / f"{frame_no:08d}.jpg" if folder else None
    if path is None or not path.is_file():
        abort(404)
    data = path.read_bytes()
    if request.args.get("boxes", "1") != "0":
        data = with_boxes(folder, frame_no, data, service().config) or data
    return Response(data, mimetype="image/jpeg")


@bp.route("/log")
@require(*REVIEW_ROLES)
def log():
    """Everything that is not a round: logins, camera, configuration, model, start/stop; or
    the records of one type.  A page at a time, newest first, each page found from the seq
    its neighbour ended at (not by counting records from the newest), so paging through a
    year's log costs no more than reading its first page (QA48 dispute M7: only the newest
    500 were ever shown)."""
    since, until, error = _time_range()
    kind = request.args.get("type", "").strip()
    types = [kind] if kind else SYSTEM_TYPES
    before, after = _seq_arg("before"), _seq_arg("after")
    query = {"types": types, "since": since, "until": until}
    if after is not None:
        records = audit().records(**query, after_seq=after, limit=LOG_PAGE + 1)
        newer = len(records) > LOG_PAGE
        records = records[:LOG_PAGE][::-1]
        older = bool(records) and bool(audit().records(**query, upto_seq=records[-1].seq - 1, limit=1))
    else:
        records = audit().records(**query, upto_seq=None if before is None else before - 1, newest_first=True,
                                  limit=LOG_PAGE + 1)
        older = len(records) > LOG_PAGE
        records = records[:LOG_PAGE]
        newer = before is not None and bool(audit().records(**query, after_seq=records[0].seq if records
                                                            else max(before - 1, 0), limit=1))
    args = {k: v for k, v in request.args.items() if k not in ("before", "after")}
    say = _say()
    return render_template("review/log.html", records=records, error=error, args=request.args,
                           types=[t.value for t in AuditType], words={r.seq: record_words(r, say) for r in records},
                           older_url=url_for("review.log", before=records[-1].seq, **args) if older else None,
                           newer_url=url_for("review.log", after=records[0].seq if records else (before or 1) - 1,
                                             **args) if newer else None)


LOG_PAGE = 200
SEQ_MOST = 2**63 - 1        # SQLite's largest integer: a seq typed past it is every seq


def _seq_arg(name: str) -> int | None:
    """A paging seq from the address (``before``/``after``), None where there is none, kept
    within what SQLite can compare."""
    value = request.args.get(name, type=int)
    return None if value is None else min(max(value, 0), SEQ_MOST)


@bp.route("/report")
@require(Role.SUPERVISOR, *REVIEW_ROLES)
def report():
    """The period's books; the pit supervisor signs them at shift close, so unlike the rest
    of review a supervisor may read this page.  Without a range it is today's, in the
    table's time zone."""
    from datetime import datetime, timezone

    from kiosk.report import PeriodReport, clock_lines, period_report

    since, until, error = _time_range()
    if not error and since is None and until is None:
        today = datetime.now(_zone()).strftime("%Y-%m-%d")
        since = parse_time(today, where="today", zone=_zone())
        until = parse_time(today, where="today", end=True, zone=_zone())
    table_id = service().config.table_id
    found = {} if error else period_report(audit(), table_id=table_id, since=since, until=until)
    books = (found.get(table_id) or PeriodReport(table_id, since, until)).to_json()
    clock = clock_lines(books, lambda ts: local_text(ts, _zone()))
    return render_template("review/report.html", report=books, error=error, args=request.args, clock=clock,
                           said=_report_said(books), made=datetime.now(timezone.utc).isoformat(), head=audit().last())


def _report_said(books: dict) -> dict[str, str]:
    """The report's adjustment totals in the console's words (``kiosk.adjustment_words``), the
    money to the table's unit as the page writes it: what is owed, what the period moved, and
    the note on a record made after the period closed."""
    say, table = _say(), service().config
    said = {"owed": "", "moved": "", "closed": ""}
    if books.get("adjustments_owed"):
        said["owed"] = owed_words(books["adjustments_owed"], lambda a: f"{say.money(a)} {table.currency}")
    if books.get("adjustments_moved"):
        said["moved"] = moved_words(books["adjustments_moved"], say.money)
    if books.get("to"):
        said["closed"] = after_close(f"{local_text(books['to'], _zone())} {table.timezone}")
    return said


@bp.route("/chain")
@require(*REVIEW_ROLES)
def chain():
    from kiosk.anchors import against_last_backup
    from kiosk.backup import backup_status, restored_after

    status = runtime().chain.status()
    # Each record with its data, or why it cannot be read: a damaged one is named in its row,
    # not the chain's own page failing (the page the officer checks the damage from).
    changed = [(r, *r.read()) for r in audit().records(types=[AuditType.RECORDING_CHANGED], newest_first=True,
                                                          limit=20)]
    backup = backup_status(audit())
    exports = [(r, *r.read()) for r in audit().records(types=[AuditType.EXPORTED], newest_first=True,
                                                          limit=EXPORTS_SHOWN)]
    return render_template("review/chain.html", status=status, last=audit().last(), backup=backup,
                           restored=restored_after(audit(), backup),
                           history=against_last_backup(audit(), backup), changed=changed, exports=exports,
                           forward=service().forward_status())


@bp.route("/export")
@require(*REVIEW_ROLES)
def export():
    """The records of a period as CSV or JSON, with a signed statement (``kiosk.exports``).

    Fixed at the head it starts from, signed and logged first, then streamed as the log is
    read: a year's log never has to fit in the kiosk's memory.  The statement is handed out
    from the chain page (``export_statement``): one download cannot carry two files."""
    from kiosk.exports import PROBLEMS_NAMED, damaged_records, sign_export
    from kiosk.signing import SigningError, table_key

    fmt = request.args.get("format", "csv")
    if fmt not in ("csv", "json"):
        return render_template("error.html", code=400, message=f"format {fmt!r} is not csv or json"), 400
    since, until, error = _time_range()
    if error:
        return render_template("error.html", code=400, message=error), 400
    log = audit()
    try:
        key = table_key(runtime().data_dir, log, g.user["username"])
    except SigningError as exc:        # no unsigned export while the table's key is unreadable
        flash(f"Nothing exported: {exc}", "error")
        return redirect(url_for("review.rounds"))
    if not _flag("damaged_seen"):
        # Told first, on a page: the file holds the damaged records as the log holds them (the
        # readable ones are all there), and its link downloads it once the officer has read why.
        broken = damaged_records(log, since=since, until=until)
        if broken:
            return render_template("review/export_damaged.html", broken=broken[:PROBLEMS_NAMED],
                                   count=len(broken), fmt=fmt,
                                   download=url_for("review.export", **{**request.args, "damaged_seen": "1"}))
    record = sign_export(log, key, actor=g.user["username"], fmt=fmt, since=since, until=until)
    pieces = log.export_text(fmt, since=since, until=until, upto_seq=record.data["head_seq"])
    return Response(_in_blocks(pieces), mimetype="text/csv" if fmt == "csv" else "application/json",
                    headers={"Content-Disposition": f'attachment; filename="{_export_name(record)}"'})


def _export_name(record) -> str:
    """The export's file name, the same for the data and (with its suffix) the statement, so
    ``niuniu audit check-export`` finds the statement beside the file by itself."""
    data = record.data
    return (f"audit-{record.table_id}-{_zone_date(data.get('from'), 'start')}-{_zone_date(data.get('to'), 'now')}"
            f"-e{record.seq}.{data.get('format', 'csv')}")


def _zone_date(bound: str | None, open_end: str) -> str:
    """A period's bound (stored in UTC) as the date it was asked for in the table's zone: a day
    asked for in Phnom Penh starts at 17:00 UTC the day before, which is not the day to name."""
    from kiosk.audit import log_moment

    if not bound:
        return open_end
    try:
        return log_moment(bound).astimezone(_zone()).strftime("%Y-%m-%d")
    except ValueError:
        return bound[:10]


@bp.route("/export/<int:seq>.statement.json")
@require(*REVIEW_ROLES)
def export_statement(seq: int):
    """The signed statement of an export made earlier, rebuilt from its ``audit_exported`` record."""
    from kiosk.exports import SUFFIX, statement_bytes, statement_of

    found = audit().records(after_seq=seq - 1, upto_seq=seq, types=[AuditType.EXPORTED])
    if not found or found[0].data.get("format") not in ("csv", "json"):
        abort(404)
    try:
        data = statement_bytes(statement_of(audit(), found[0]))
    except AuditError as exc:          # an export from before exports were signed
        return render_template("error.html", code=404, message=str(exc)), 404
    return Response(data, mimetype="application/json",
                    headers={"Content-Disposition": f'attachment; filename="{_export_name(found[0])}{SUFFIX}"'})


def _in_blocks(pieces, size: int = 1 << 16):
    """Pieces joined into blocks of about ``size`` characters, as UTF-8: one write per record is
    slow.  ``surrogateescape``: a damaged CSV payload goes out as the bytes stored, not as an
    encoding error half-way through the download."""
    block, length = [], 0
    for piece in pieces:
        block.append(piece)
        length += len(piece)
        if length >= size:
            yield "".join(block).encode("utf-8", "surrogateescape")
            block, length = [], 0
    if block:
        yield "".join(block).encode("utf-8", "surrogateescape")
