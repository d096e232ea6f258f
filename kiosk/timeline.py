"""A round's records told to a person: each record in words, each key frame's caption, the
camera's reading behind each correction, what was corrected while the round was under review,
where the money a correction moved stands, and which frames a printout keeps.

The round page (``kiosk.review``, its templates) and the evidence package's summary
(``kiosk.evidence_summary``) tell a round with these same functions (QA49 review M5: eight
copies of "which way does a signed amount point" had drifted, and summary.txt said "the house
owes seat 2 97.50" of money the dealer had already paid), so the officer's screen and the
package handed to a lawyer never word one record two ways.

The functions that read payloads take a round's readable records: both callers leave a damaged
record out and name it beside the round (QA51 review M4), so one here raises its
``DamagedRecord`` rather than being quietly read as empty.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from decimal import Decimal
from pathlib import Path

from kiosk.adjustment_words import DUE, PAID, WAIVED, counterpart, moved, moves, owed, party_name
from kiosk.audit import AuditType, local_text
from kiosk.rounds import banking_of, house_net_of
from scoring.settle import money_shown
from vision.round import HAND_SIZE


def key_frames(folder: Path | None) -> tuple[list[str], list[str]]:
    """A recording's key frames (the stems of ``frames/*.jpg`` named by a frame number,
    ``vision.record.key_frame_name``), in order, and the other ``.jpg`` files there.

    A card opened on a Mac leaves ``._00000154.jpg`` beside each frame (QA49 review H2: its
    ``int()`` crashed the evidence export and left half a zip): such a file is no key frame,
    but it is on the sealed disk, so the package carries it as it is and says so."""
    if folder is None:
        return [], []
    names = sorted(p.stem for p in (folder / "frames").glob("*.jpg") if p.is_file())
    frames = [n for n in names if _frame_number(n) is not None]
    return frames, [n for n in names if _frame_number(n) is None]


def _frame_number(stem: str) -> int | None:
    return int(stem) if stem.isascii() and stem.isdigit() else None


def _numbers(frames: list[str]) -> list[int]:
    return sorted(n for n in map(_frame_number, frames) if n is not None)


# What a key frame shows, from the records that name its frame (QA48 dispute M2: each was only
# "frame 154", and the officer read frame numbers out of the timeline's JSON to find Settle).
_FRAME_WORDS = {AuditType.CARD_ACCEPTED: "{card} read on {seat}", AuditType.CARD_REMOVED: "{card} left {seat}",
                AuditType.ROUND_COMPLETE: "hands complete", AuditType.ROUND_SETTLED: "settled",
                AuditType.ROUND_VOID: "voided", AuditType.ROUND_CLEARED: "table cleared",
                # a frame kept for an alert alone (a card changed in place, a card after the round)
                AuditType.ALERT: "⚠ {code} ({card} on {seat})"}


def _caption(record) -> str:
    data = record.data
    if record.type == AuditType.ALERT and not (data.get("card") and data.get("seat")):
        return f"⚠ {str(data.get('code')).replace('_', ' ')}"
    return _FRAME_WORDS[record.type].format(card=data.get("card"), code=str(data.get("code")).replace("_", " "),
                                            seat=Say.seat(data.get("seat")))


def frame_captions(timeline, frames: list[str], zone) -> dict[str, str]:
    """Each key frame's caption: its number, the local time of its first record, what happened."""
    named: dict[int, list] = {}
    for record in timeline:
        frame_no = record.data.get("frame_no")
        if record.type in _FRAME_WORDS and isinstance(frame_no, int):
            named.setdefault(frame_no, []).append(record)
    captions = {}
    for stem in frames:
        if _frame_number(stem) is None:
            continue
        records = named.get(int(stem), [])
        words = [_caption(r) for r in records]
        when = local_text(records[0].ts, zone).split(" ", 1)[-1] if records else None
        captions[stem] = " · ".join([f"frame {int(stem)}", *([when] if when else []), *words])
    return captions


# ---------------------------------------------------------------- a record in words
#
# QA48 dispute M6: the round page showed each record's payload as JSON, a settlement 3,000
# characters a row, and printed a round on 29 pages.  Each type an officer reads is said in
# words here, the record as logged one click away (it is what the chain hashes); a type not
# known here (a later release's) or a record an older kiosk wrote in another shape is shown
# as its JSON, as before: words that guess would be worse than none.

@dataclass(frozen=True)
class Words:
    """A record as a person reads it: a sentence, and for a settlement its lines as a table."""

    text: str
    head: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()


def seat_order(seat) -> tuple:
    """The order seats are listed in everywhere a round is told: the banker, then seats by number."""
    seat = str(seat)
    return (seat != "banker", len(seat), seat)


@dataclass(frozen=True)
class Say:
    """The pieces of a sentence: seats, bets, money and people as the round page and the
    evidence summary both write them (money to the table's unit, thousands grouped:
    ``scoring.settle.money_shown``, as ``_money.html``).  Who pays whom is said by
    ``kiosk.adjustment_words``, the dealer screen's and the shift report's words too: these
    methods only bind it to the table's unit and the round's other side.

    ``counterpart``: the other side of every seat's money, the house, or the banker where a
    player banks.  A person is named by :meth:`who` (the summary's words add their role at
    the time, from the account records the package carries)."""

    unit: Decimal | None
    counterpart: str = "the house"

    def for_banking(self, banking) -> "Say":
        """The same words with the banker as the other side where a player banks."""
        return replace(self, counterpart=counterpart(banking))

    def money(self, text) -> str:
        return money_shown(str(text), self.unit, grouped=True)

    def signed(self, text) -> str:
        shown = self.money(text)
        return shown if shown.startswith("-") or not Decimal(str(text)) else f"+{shown}"

    def who(self, name, seq: int | None = None) -> str:
        return str(name)

    @staticmethod
    def seat(seat) -> str:
        return party_name(seat)

    @staticmethod
    def seat_name(seat) -> str:
        """A seat as a table's row names it."""
        return party_name(seat, title=True)

    def bet(self, bet: dict) -> str:
        multiple = bet.get("multiple")
        return f"{self.money(bet['amount'])} {bet['kind']}" + (f" ×{multiple}" if multiple not in (None, 1) else "")

    def bets(self, bets: dict) -> str:
        return ", ".join(f"{self.seat(s)} {self.bet(bets[s])}" for s in sorted(bets, key=seat_order)) or "none"

    def line(self, line: dict | None) -> str:
        if not line or line.get("net") is None:
            return "—"
        return f"{str(line.get('outcome', '')).upper()} {self.signed(line['net'])}"

    def owed(self, seat: str, difference) -> str:
        """A difference from the party's side, as a debt (``kiosk.adjustment_words.owed``)."""
        return owed(seat, difference, self.money, self.counterpart)

    def moved(self, seat: str, amount, how: str = PAID) -> str:
        """An amount chips move by for one party (``kiosk.adjustment_words.moved``): ``how`` is
        DUE (still to move), PAID (moved at the table) or WAIVED (forgiven by a supervisor)."""
        return moved(seat, amount, self.money, how)

    def moves(self, amounts: dict, how: str = PAID) -> str:
        """:meth:`moved` for every party, banker first, seats in order."""
        return moves(amounts, self.money, how, order=seat_order)

    @staticmethod
    def card_change(data: dict) -> str:
        """What a card correction did to the card (a log from before corrections named their
        action holds replacements, and confirmations where old and new are one card).  A
        confirmation after Settle names the reading it answered (``read_as``): alone, "4H
        confirmed" does not say what the dealer looked at (QA50 review L4)."""
        old, new, action = data.get("old"), data.get("new"), data.get("action")
        if action is None:
            action = "replaced" if old != new else "confirmed"
        read_as = data.get("read_as")
        seen = f"; the camera had read it as {read_as}" if isinstance(read_as, str) and read_as else ""
        return {"replaced": f"card {old} replaced by {new}", "added": f"card {new} added",
                "removed": f"card {old} removed", "confirmed": f"card {old} confirmed (not changed{seen})"}.get(
            action, f"card {old} → {new} ({action})")


def self_approved(data: dict, actor: str) -> bool:
    """Whether whoever asked for a correction (or void) also approved it with their own PIN
    (QA49 watch M2: a supervisor correcting a held round as herself): the approval a second
    person was to give was not given, so every telling of the round flags it."""
    approver, asked = data.get("approved_by"), data.get("requested_by") or actor
    return isinstance(approver, str) and isinstance(asked, str) and approver.casefold() == asked.casefold()


SELF_APPROVED = "requested and approved by the same person"


def _frame(data: dict) -> str:
    return f", frame {data['frame_no']}" if data.get("frame_no") is not None else ""


def _card_accepted(data: dict, record, say: Say) -> str:
    conf = data.get("confidence")
    notes = [f"moved from {say.seat(data['moved_from'])}" if data.get("moved_from") else "",
             "the round reopened" if data.get("reopened") else "",
             "for the dealer to confirm" if data.get("needs_confirmation") else "",
             f"{data['count']} cards on the seat" if isinstance(data.get("count"), int) and data["count"] > HAND_SIZE
             else ""]
    notes = [n for n in notes if n]
    return (f"{data['card']} accepted on {say.seat(data['seat'])}"
            + (f", conf {float(conf):.2f}" if conf is not None else "") + _frame(data)
            + (f" ({'; '.join(notes)})" if notes else ""))


def _card_removed(data: dict, record, say: Say) -> str:
    state = data.get("state")
    return f"{data['card']} left {say.seat(data['seat'])}{_frame(data)}" + (f" (round {state})" if state else "")


def _approval(data: dict, record, say: Say) -> str:
    """Who did it, who asked, who approved, and why: the part of a correction a dispute turns on."""
    asked = data.get("requested_by")
    approver = data.get("approved_by")
    return (f"by {say.who(record.actor, record.seq)}"
            + (f" (requested by {say.who(asked, record.seq)})" if asked and asked != record.actor else "")
            + (f", approved by {say.who(approver, record.seq)}" if approver else ", no supervisor's approval")
            + (f" ({SELF_APPROVED})" if self_approved(data, record.actor) else "")
            + (f": {data['reason']}" if data.get("reason") else ""))


def _card_corrected(data: dict, record, say: Say) -> str:
    when = " after settlement" if data.get("after_settlement") else ""
    return f"{say.seat(data['seat']).capitalize()}: {say.card_change(data)}{when}, {_approval(data, record, say)}"


def _hands(data: dict, say: Say) -> str:
    results = data.get("results") or {}
    return "; ".join(f"{say.seat(seat)} {' '.join(cards)}"
                     + (f" ({results[seat]['label']})" if isinstance(results.get(seat), dict)
                        and results[seat].get("label") else "")
                     for seat, cards in sorted((data.get("hands") or {}).items(), key=lambda item: seat_order(item[0])))


def _round_complete(data: dict, record, say: Say) -> str:
    how = " (completed by Settle)" if data.get("by") == "settlement" else ""
    hands = _hands(data, say)
    return f"Hands complete{how}{_frame(data)}" + (f": {hands}" if hands else "")


def _settled(data: dict, record, say: Say) -> Words:
    settlement = data["settlement"]
    banker = (settlement.get("banker") or {}).get("label")
    house = house_net_of(settlement)
    text = (f"Settled by {record.actor}{_frame(data)}" + (f"; the banker had {banker}" if banker else "")
            + (f"; house net {say.signed(house)}" if house is not None else "")
            + f"; commission {say.money(settlement['total_commission'])}")
    rows = tuple((say.seat(line["seat"]).capitalize(), (line.get("player") or {}).get("label", ""),
                  say.bet(line), str(line["outcome"]).upper(), say.money(line["gross"]),
                  say.money(line["commission"]), say.signed(line["net"]))
                 for line in sorted(settlement.get("lines", []), key=lambda ln: seat_order(ln["seat"])))
    return Words(text, ("Seat", "Hand", "Bet", "Result", "Gross", "Commission", "Net"), rows)


def _settlement_line(data: dict, record, say: Say) -> str:
    pay = {"pay": "pay", "collect": "collect"}.get(data.get("action"))
    return (f"{say.seat(data['seat']).capitalize()}: {say.line(data)}"
            + (f" ({data['player']} against the banker's {data['banker']})"
               if data.get("player") and data.get("banker") else "")
            + (f"; bet {say.bet(data['bet'])}" if isinstance(data.get("bet"), dict) else "")
            + f"; gross {say.money(data['gross'])}, commission {say.money(data['commission'])}"
            + (f"; {pay} {say.money(data['amount'])}" if pay and data.get("amount") is not None else ""))


def _lines_of(data: dict, which: str) -> dict[str, dict]:
    """A settlement correction's lines before (``old``) or after (``new``), by seat: its own
    line views, or those in its settlement where an older kiosk logged only that."""
    lines = data.get(f"{which}_lines") or (data.get(which) or {}).get("lines") or []
    return {line["seat"]: line for line in lines}


def _settlement_corrected(data: dict, record, say: Say) -> Words:
    old, new = _lines_of(data, "old"), _lines_of(data, "new")
    difference = data.get("difference") or {}
    if isinstance(data.get("new"), dict):
        say = say.for_banking(banking_of(data["new"]))     # a player banks: the other side of the seats' money
    seats = sorted(set(old) | set(new) | set(difference), key=seat_order)
    rows = tuple((say.seat(seat).capitalize(), say.line(old.get(seat)), say.line(new.get(seat)),
                  say.owed(seat, difference[seat]) if seat in difference else "—") for seat in seats)
    return Words(f"Settlement recomputed {_approval(data, record, say)}",
                 ("Seat", "Before", "After", "This correction's difference"), rows)


def _cleared(data: dict, record, say: Say) -> str:
    was = data.get("previous_state")
    new = "; ".join(f"{card} on {Say.seat(seat)}" for seat, card in data.get("new_cards") or ())
    return ("Table cleared" + (f" by {record.actor}" if data.get("manual") else "")
            + (f" (the round was {was})" if was else "") + _frame(data)
            + (f": {data['reason']}" if data.get("reason") else "")
            + (f" ({new}, after this round ended)" if new else ""))


def _adjustment_settled(data: dict, record, say: Say) -> str:
    """Who moved the chips a correction owed (or who waived them, and why): the record a
    dispute over "was I ever paid the difference" turns on."""
    waived = data["action"] == "waived"
    what = say.moves(data.get("difference") or {}, WAIVED if waived else PAID) or "no amount"
    if waived:
        asked, approver = data.get("requested_by"), data.get("approved_by") or record.actor
        return (f"Adjustment waived by {say.who(approver, record.seq)}"
                + (f" (asked by {say.who(asked, record.seq)})" if asked and asked != approver else "")
                + (f" ({SELF_APPROVED})" if self_approved(data, record.actor) else "")
                + f": {what}; reason: {data.get('reason') or 'none given'}")
    return f"Adjustment recorded by {say.who(record.actor, record.seq)}: {what} at the table"


def adjustment_said(adjustment: dict | None, say: Say) -> list[str]:
    """Where the money the corrections moved stands (``kiosk.rounds.adjustment``), in the
    sentences the round page and summary.txt both give: what is still to pay or collect in the
    dealer's verbs (QA49 watch H3: the summary said "no difference" where 195.00 was to be
    collected), what an older kiosk's correction left unrecorded, or that all is settled.
    The records that paid or waived a part are told by :func:`record_words`."""
    if not adjustment:
        return []
    said = []
    if adjustment.get("outstanding"):
        said.append(f"Adjustment outstanding: {say.moves(adjustment['outstanding'], DUE)} (no record yet says "
                    "the dealer paid or collected it, or that a supervisor waived it).")
    if adjustment.get("not_recorded"):
        unknown = "; ".join(say.owed(seat, d) for seat, d in sorted(adjustment["not_recorded"].items(),
                                                                     key=lambda item: seat_order(item[0])))
        said.append(f"Not recorded: {unknown}: corrected by a kiosk from before adjustments were recorded, so the "
                    "log cannot say whether it was paid.")
    if adjustment.get("status") == "settled":
        said.append("Every difference the corrections moved has been paid, collected or waived.")
    elif adjustment.get("status") == "none":
        said.append("The corrections moved no money: nothing was to be paid or collected.")
    return said


def _void(data: dict, record, say: Say) -> str:
    return f"Voided {_approval(data, record, say)}"


def _alert(data: dict, record, say: Say) -> str:
    code = str(data.get("code") or "alert").replace("_", " ")
    return f"⚠ {data['message']} ({code}{_frame(data)})"


def _sealed(data: dict, record, say: Say) -> str:
    return f"{data['folder']}: {len(data['files'])} files, {data['bytes']} bytes, SHA-256 each{_sealed_late(data)}"


def _sealed_late(data: dict) -> str:
    """A seal a start made of a recording left unsealed: which run left it, and how that run ended,
    which is not always how the last run did (QA52 L1: a cleanly stopped round was said to be a
    crash's)."""
    ended = data.get("after_restart")
    if not ended:
        return ""
    if ended == "first start":
        return "; sealed at the kiosk's first start, not when the round ended"
    if ended == "not known":
        return "; sealed when the kiosk started again, not when the round ended: no record says which run recorded it"
    since = data.get("runs_since")
    if isinstance(since, int) and since > 0:
        return (f"; sealed when the kiosk started again, not when the round ended: the run that recorded it "
                f"(started at seq {data.get('recorded_in_run')}) ended: {ended}; {since} more run"
                f"{'s' if since != 1 else ''} came before the start that sealed it")
    return f"; sealed when the kiosk started again, not when the round ended (last run: {ended})"


def _held(data: dict, record, say: Say) -> str:
    return (f"Recording {data.get('folder', '')} held by {record.actor}: {data.get('reason', '')} "
            "(the round is under review from here)")


def _released(data: dict, record, say: Say) -> str:
    held = (f" (held by {data['held_by']}: {data.get('held_reason') or ''})" if data.get("held_by") else "")
    return f"Recording {data.get('folder', '')} released by {record.actor}: {data.get('reason', '')}{held}"


def _changed(data: dict, record, say: Say) -> str:
    if data.get("missing"):
        return f"Recording {data['folder']} is missing from the disk, though sealed"
    return f"Recording {data['folder']} differs from its seal: {data.get('changed_files')} file(s)"


def _recording_failed(data: dict, record, say: Say) -> str:
    """A round played with no recording, or part of one: said as evidence lost, with the error
    (the folder, its permission or the disk), so surveillance knows before a dispute asks."""
    if data.get("stopped") is False:
        return f"⚠ Recording incomplete: {data['error']}"
    if data.get("folder"):
        return f"⚠ Recording stopped: {data['error']}; {data['folder']} holds only what was written before"
    return f"⚠ Not recorded: {data['error']} (this round has no recording)"


def _exported(data: dict, record, say: Say) -> str:
    what = "Evidence package" if data.get("format") == "evidence" else f"Export ({data.get('format')})"
    return (f"{what} made by {record.actor}: {data.get('records', data.get('count'))} records, "
            f"the chain's head then seq {data.get('head_seq')}")


def _note(data: dict, record, say: Say) -> str:
    return f"Note by {record.actor}: {data['text']}"


def _started_words(data: dict, record, say: Say) -> str:
    bets = data.get("bets")
    return f"Round started{_frame(data)}" + (f"; bets {say.bets(bets)}" if bets else "")


def _bets_placed(data: dict, record, say: Say) -> str:
    change = data.get("change") or {}
    why = ("the bets of the voided round stand" if "stand_from_void" in change else
           "the bets of the interrupted round stand" if "stand_from_interrupted" in change else
           "the demo's bets" if data.get("auto_bets") else "")
    return f"Bets {say.bets(data.get('bets') or {})}" + (f" ({why})" if why else "")


def _because(data: dict, record, say: Say) -> str:
    return str(data["reason"])


def _login(data: dict, record, say: Say) -> str:
    return f"{record.actor} logged in as {data.get('role')}" + (f" from {data['ip']}" if data.get("ip") else "")


def _pin_failed(data: dict, record, say: Say) -> str:
    purpose = f" to {data['purpose']}" if data.get("purpose") else ""
    return f"A wrong supervisor PIN, typed by {record.actor}{purpose}"


def _pin_accepted(data: dict, record, say: Say) -> str:
    """A right PIN whose action the table then refused: filed under the round it was typed for,
    it is the only trace of that approval there (the refused action wrote nothing), so the page
    says whose PIN it was and why nothing came of it."""
    purpose = f" to {data['purpose']}" if data.get("purpose") else ""
    refused = str(data.get("refused") or "").strip()
    why = f": {refused}" if refused else f" (HTTP {data['status']})" if data.get("status") else ""
    return (f"A supervisor PIN ({data['approved_by']}), typed by {record.actor}{purpose}, was accepted "
            f"but the action was refused{why}")


def _unturned(data: dict) -> str:
    """A card model that read without its orientation model, as a dispute's reviewer must
    read it: those cards were misread more (QA52; `niuniu check` warns of it beforehand)."""
    missing = data.get("orientation_missing")
    return (f"; READ WITHOUT THE ORIENTATION MODEL ({missing} was missing): the cards were not turned upright "
            "before they were read, and are misread more" if missing else "")


def _kiosk_start(data: dict, record, say: Say) -> str:
    clock = data.get("clock") or {}
    unsynced = f"; {clock['message']}" if isinstance(clock, dict) and clock.get("synchronised") is False else ""
    return (f"Kiosk started (table {data['table_id']}, rules {data['rules']}; the last run: "
            f"{data.get('previous_run', 'not said')}){unsynced}{_unturned(data)}")


def _kiosk_stop(data: dict, record, say: Say) -> str:
    where = f" in round {data['round']} ({data.get('state')})" if data.get("round") is not None else ""
    return f"Kiosk stopped: {data['reason']}{where}"


def _config_loaded(data: dict, record, say: Say) -> str:
    config = data["config"]
    return (f"Table configuration loaded: rules {config['rules']}, {len(config['seats'])} seats, "
            f"amounts in {config.get('currency')}")


def _model_loaded(data: dict, record, say: Say) -> str:
    return f"Card model loaded: {data['name']} (SHA-256 {str(data['sha256'])[:16]}…){_unturned(data)}"


def _account(data: dict, record, say: Say) -> str:
    change = data.get("change") or (f"created as {data['role']}" if data.get("role") else "changed")
    return f"Account {data['username']}: {change}, by {record.actor}"


def _session_ended(data: dict, record, say: Say) -> str:
    return f"{record.actor} ({data.get('role')}) " + ("logged out" if record.type == AuditType.LOGOUT else
                                                       "was logged out: the session timed out")


_WORDS = {
    AuditType.ROUND_START: _started_words, AuditType.BETS_PLACED: _bets_placed,
    AuditType.CARD_ACCEPTED: _card_accepted, AuditType.CARD_REMOVED: _card_removed,
    AuditType.CARD_CORRECTED: _card_corrected, AuditType.ROUND_COMPLETE: _round_complete,
    AuditType.ROUND_SETTLED: _settled, AuditType.SETTLEMENT_LINE: _settlement_line,
    AuditType.SETTLEMENT_CORRECTED: _settlement_corrected, AuditType.ROUND_CLEARED: _cleared,
    AuditType.ROUND_VOID: _void, AuditType.ADJUSTMENT_SETTLED: _adjustment_settled,
    AuditType.ROUND_INTERRUPTED: _because, AuditType.ALERT: _alert,
    AuditType.RECORDING_SEALED: _sealed, AuditType.RECORDING_HELD: _held, AuditType.RECORDING_RELEASED: _released,
    AuditType.RECORDING_CHANGED: _changed, AuditType.RECORDING_FAILED: _recording_failed,
    AuditType.EXPORTED: _exported, AuditType.ROUND_NOTE: _note,
    AuditType.LOGIN: _login, AuditType.LOGIN_FAILED: _because, AuditType.PIN_FAILED: _pin_failed,
    AuditType.PIN_ACCEPTED: _pin_accepted,
    AuditType.LOGOUT: _session_ended, AuditType.SESSION_TIMEOUT: _session_ended, AuditType.KIOSK_START: _kiosk_start,
    AuditType.KIOSK_STOP: _kiosk_stop, AuditType.CONFIG_LOADED: _config_loaded, AuditType.MODEL_LOADED: _model_loaded,
    AuditType.USER_CREATED: _account, AuditType.USER_CHANGED: _account,
    **{kind: _because for kind in (AuditType.CAMERA_OFFLINE, AuditType.CAMERA_ONLINE, AuditType.CAMERA_MIRRORED,
                                   AuditType.CAMERA_MIRROR_CLEARED, AuditType.CAMERA_MOVED,
                                   AuditType.CAMERA_MOVE_CLEARED, AuditType.DISK_LOW)},
}


def record_words(record, say: Say) -> Words | None:
    """``record`` in words, or None where it is shown as its JSON (a type not known here, or a
    record without the fields its words need: an older kiosk's)."""
    describe = _WORDS.get(record.type)
    if describe is None:
        return None
    try:
        data = record.data
        said = describe(data, record, say) if isinstance(data, dict) else None
    except (KeyError, TypeError, ValueError, AttributeError, ArithmeticError):
        return None
    return Words(said) if isinstance(said, str) else said


# ---------------------------------------------------------------- the evidence beside each correction


def evidence_said(seen: dict, old: str | None) -> str:
    """What the camera read of a corrected card (:func:`correction_evidence`), in the words the
    round page and summary.txt both give beside the key frame that shows it."""
    if seen.get("frame_no") is not None:
        conf = seen.get("conf")
        return (f"{seen['card']} read on {Say.seat(seen['seat'])} at frame {seen['frame_no']}"
                + (f", conf {float(conf):.2f}" if conf is not None else "")
                + (f" (the card the camera read where {old} was put by a correction)" if seen["card"] != old else ""))
    return f"the camera never read {old} there" if old else "a card added by hand: the camera did not read it"


def _pick(on_disk: list[int], frame_no: int, until: int | None) -> int | None:
    """The key frame that shows a card read at ``frame_no`` (and gone at ``until``, if it went):
    that frame, else the first after it while the card lay there, else the last before it."""
    if frame_no in on_disk:
        return frame_no
    later = [f for f in on_disk if f > frame_no and (until is None or f < until)]
    if later:
        return later[0]
    return max((f for f in on_disk if f < frame_no), default=None)


def _at_or_before(on_disk: list[int], frame_no: int | None) -> int | None:
    if frame_no is None:
        return None
    return max((f for f in on_disk if f <= frame_no), default=None)


def correction_evidence(timeline, frames: list[str]) -> dict[int, dict]:
    """Per ``card_corrected`` record (by seq): where the camera read the card it corrected (QA48
    dispute M2: finding the frame that showed A♥ where a correction said 9S meant reading frame
    numbers out of JSON).  ``card``, ``seat``: the card as the camera read it, followed back
    through earlier corrections (9S put there by one is the AH the camera saw); ``frame_no``
    and ``conf`` of that reading (None: the camera never read it, a card added by hand);
    ``key_frame``: the recording's frame that shows it (or, unread, the table at that moment)."""
    on_disk = _numbers(frames)
    read: dict[tuple, object] = {}        # (seat, card) -> its last card_accepted
    gone: dict[tuple, int | None] = {}    # (seat, card) -> the frame it left at, since that reading
    origin: dict[tuple, tuple] = {}       # (seat, card put there by a correction) -> (seat, card it replaced)
    settled = None
    found: dict[int, dict] = {}
    for record in timeline:
        data = record.data
        key = (data.get("seat"), data.get("card"))
        if record.type == AuditType.CARD_ACCEPTED:
            read[key] = record
            gone.pop(key, None)
        elif record.type == AuditType.CARD_REMOVED:
            gone[key] = data.get("frame_no")
        elif record.type == AuditType.ROUND_SETTLED:
            settled = data.get("frame_no")
        elif record.type == AuditType.CARD_CORRECTED:
            seat, old, new = data.get("seat"), data.get("old"), data.get("new")
            at = (seat, old)
            for _ in range(len(origin) + 1):        # back through the corrections that put it there
                if at in read or at not in origin:
                    break
                at = origin[at]
            reading = read.get(at) if old else None
            if reading is not None and isinstance(reading.data.get("frame_no"), int):
                frame_no = reading.data["frame_no"]
                found[record.seq] = {"card": at[1], "seat": seat, "frame_no": frame_no,
                                     "conf": reading.data.get("confidence"),
                                     "key_frame": _pick(on_disk, frame_no, gone.get(at))}
            else:
                moment = data.get("frame_no") if isinstance(data.get("frame_no"), int) else settled
                found[record.seq] = {"card": old, "seat": seat, "frame_no": None, "conf": None,
                                     "key_frame": _at_or_before(on_disk, moment if isinstance(moment, int) else None)}
            if new and data.get("action") in ("replaced", "added", None):
                origin[(seat, new)] = at if old else (seat, None)
    return found


def under_review(timeline) -> dict[int, object]:
    """The corrections (card or settlement, by seq) made while the round's recording was held
    (QA48 dispute M7: a hold kept only the files, and nothing told surveillance that the round
    it was investigating was corrected meanwhile) -> the hold in force, the earliest one."""
    holds: dict[str, object] = {}
    marked: dict[int, object] = {}
    for record in timeline:
        folder = str(record.data.get("folder") or "")
        if record.type == AuditType.RECORDING_HELD:
            holds.setdefault(folder, record)
        elif record.type == AuditType.RECORDING_RELEASED:
            holds.pop(folder, None)
        elif record.type in (AuditType.CARD_CORRECTED, AuditType.SETTLEMENT_CORRECTED) and holds:
            marked[record.seq] = min(holds.values(), key=lambda r: r.seq)
    return marked


PRINTED_FRAMES = 4      # a printed round: the frames a dispute turns on, not all thirty
# The alerts whose frame shows a card that is on no record: a card changed in place after it
# was read, a card put on a finished hand (QA49 watch M3: the print kept only frames of 5C, and
# frame 149, the one that showed KH, was left out).
PRINTED_ALERTS = ("card_changed", "card_after_round")


def printed_frames(timeline, frames: list[str], evidence: dict[int, dict]) -> list[str]:
    """The key frames a printed round keeps: those that show a corrected card, then those of
    an alert that shows a card on no record, then the table at Settle and when the hands
    completed; the last frame where none of those was kept."""
    on_disk = _numbers(frames)
    moments = {r.type: r.data.get("frame_no") for r in timeline
               if r.type in (AuditType.ROUND_SETTLED, AuditType.ROUND_COMPLETE)}
    wanted = [e["key_frame"] for e in evidence.values()]
    wanted += [r.data["frame_no"] for r in timeline
               if r.type == AuditType.ALERT and r.data.get("code") in PRINTED_ALERTS
               and r.data.get("frame_no") in on_disk]
    wanted += [_at_or_before(on_disk, moments.get(kind) if isinstance(moments.get(kind), int) else None)
               for kind in (AuditType.ROUND_SETTLED, AuditType.ROUND_COMPLETE)]
    chosen = list(dict.fromkeys(f for f in wanted if f is not None))[:PRINTED_FRAMES]
    if not chosen and on_disk:
        chosen = [on_disk[-1]]
    return [f"{f:08d}" for f in chosen]
