"""The dealer's screen and its actions: bets (and bank bids), settle, correct, void, clear,
and the adjustment a settlement correction leaves to pay, collect or waive.

Every action is a small JSON POST (with the CSRF header) answered with the new screen
state, so the dealer's own screen updates at once while the same state reaches every
other browser by server-sent events.  That state is the one last published, never one
built for the answer: building takes the table's lock, which a settle waiting on a slow
disk holds, and the screen would hang with it (QA48 concurrency L1).  Every change is
published under that lock before it is released, so the published state is the table as
the actions check it (a Settle's ``basis``, an adjustment's).
"""

from __future__ import annotations

import json

from flask import Blueprint, g, jsonify, render_template, request

from kiosk import auth
from kiosk.auth import AuthError, Role, require
from kiosk.rounds import round_number
from kiosk.runtime import service
from kiosk.table_service import Approval, TableError
from scoring.cards import CARD_CODES, SUITS_IN_CLASS_ORDER, RANK_NAMES
from vision.round import RoundState

bp = Blueprint("dealer", __name__, url_prefix="/dealer")

TABLE_ROLES = (Role.DEALER, Role.SUPERVISOR)


def _body() -> dict:
    data = request.get_json(silent=True)
    if isinstance(data, dict):
        return data
    return request.form.to_dict()


def _text(data: dict, key: str, limit: int = 300) -> str:
    value = data.get(key)
    return "" if value is None else str(value).strip()[:limit]


def _published() -> dict:
    """The screen state as last published (see the module docstring); built afresh only
    before the first one (a service not started)."""
    version, text = service().latest()
    return json.loads(text) if version else service().snapshot()


def _state(status: int = 200, **extra):
    return jsonify(state=_published(), **extra), status


def _refuse(exc: Exception, status: int = 409):
    return jsonify(error=str(exc), state=_published()), status


def _approval(data: dict, purpose: str) -> Approval:
    round_no = _round_of(data) or service().machine.round_no   # as the purpose names it; a wrong PIN is filed there
    approver = auth.authorize_supervisor(_text(data, "pin", 16), purpose, round_no=round_no)
    return Approval(requested_by=g.user["username"], approved_by=approver)


@bp.route("/")
@require(*TABLE_ROLES)
def screen():
    grid = [[{"code": RANK_NAMES[rank] + suit.value, "rank": RANK_NAMES[rank], "symbol": suit.symbol,
              "red": suit.is_red} for rank in range(1, 14)] for suit in SUITS_IN_CLASS_ORDER]
    return render_template("dealer.html", grid=grid, card_codes=CARD_CODES)


@bp.route("/api/state")
@require(*TABLE_ROLES)
@auth.passive
def state():
    return _state()


@bp.route("/api/bet", methods=("POST",))
@require(*TABLE_ROLES)
def bet():
    data = _body()
    try:
        service().set_bet(_text(data, "seat", 16), _text(data, "amount", 32), _text(data, "kind", 32) or None,
                          g.user["username"], _text(data, "multiple", 16) or None)
    except TableError as exc:
        return _refuse(exc)
    return _state()


@bp.route("/api/repeat-bets", methods=("POST",))
@require(*TABLE_ROLES)
def repeat_bets():
    """The last settled round's stakes again, on every seat still without one."""
    try:
        service().repeat_bets(g.user["username"])
    except TableError as exc:
        return _refuse(exc)
    return _state()


@bp.route("/api/bid", methods=("POST",))
@require(*TABLE_ROLES)
def bid():
    """The bank bid at a grab-the-banker table: one per round, entered with the stakes."""
    try:
        service().set_bid(_text(_body(), "bid", 16), g.user["username"])
    except TableError as exc:
        return _refuse(exc)
    return _state()


@bp.route("/api/stack", methods=("POST",))
@require(*TABLE_ROLES)
def stack():
    """The player-banker's stack for the next round, where it caps what the banker pays."""
    try:
        service().set_stack(_text(_body(), "amount", 32), g.user["username"])
    except TableError as exc:
        return _refuse(exc)
    return _state()


@bp.route("/api/settle", methods=("POST",))
@require(*TABLE_ROLES)
def settle():
    data = _body()
    try:
        service().settle(g.user["username"], _round_of(data), _text(data, "basis", 32) or None)
    except TableError as exc:
        return _refuse(exc)
    return _state()


def _number_of(data: dict, key: str, refusal: str) -> int | None:
    """A whole number the screen sent under ``key`` (None when it sent none: an older screen);
    typed text read as a round number is (ASCII digits only), else ``refusal``."""
    value = data.get(key)
    if value in (None, ""):
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    number = round_number(value) if isinstance(value, str) else None
    if number is None:
        raise TableError(refusal.format(value=value))
    return number


def _round_of(data: dict) -> int | None:
    """The round the screen showed when the action was taken (None from an older screen)."""
    return _number_of(data, "round", "round {value!r} is not a round number")


@bp.route("/api/correct", methods=("POST",))
@require(*TABLE_ROLES)
def correct():
    """Replace, add, remove or confirm a card.  A settled round's change needs a supervisor PIN;
    confirming after Settle a card the camera has read as another since ("Card is right") does
    not: it changes no card and no money (TableService._confirm_settled)."""
    data = _body()
    svc = service()
    seat = _text(data, "seat", 16)
    old = _text(data, "old", 8) or None
    new = _text(data, "new", 8) or None
    reason = _text(data, "reason")
    try:
        round_no = _round_of(data)
    except TableError as exc:
        return _refuse(exc, 400)
    current = round_no is None or round_no == svc.machine.round_no
    settled = not current or svc.machine.state == RoundState.settled
    approval = None
    try:
        if old is None:     # a card added is for the round being dealt on the screen, never a later one
            svc.check_round(round_no, "added")
        confirming = old is not None and new is not None and old.upper() == new.upper()
        if (settled and not confirming) or _text(data, "pin", 16):
            approval = _approval(data, f"correct seat {seat} in round {round_no or svc.machine.round_no}")
        result = svc.correct(seat, old, new, g.user["username"], reason, approval, round_no)
    except AuthError as exc:
        return _refuse(exc, 403)
    except TableError as exc:
        return _refuse(exc)
    return _state(result=result)


def _basis_of(data: dict) -> int | None:
    """The correction an adjustment request answers (the state's ``adjustment.basis``, a seq)."""
    return _number_of(data, "basis", "basis {value!r} is not the number of a correction; reload the screen and "
                                     "try again")


@bp.route("/api/adjustment", methods=("POST",))
@require(*TABLE_ROLES)
def adjustment():
    """The difference a settlement correction left: paid to or collected from the seats
    (``action`` "paid", anyone at the table), or waived ("waived": supervisor PIN and a
    reason).  Names the round and the correction (``basis``) the screen showed."""
    data = _body()
    svc = service()
    action = _text(data, "action", 16) or "paid"
    seats = data.get("seats")
    try:
        if action not in ("paid", "waived"):
            raise TableError(f"action {action!r} is not an adjustment: say paid (the difference was paid or "
                             "collected) or waived (it is not paid or collected)")
        if seats is not None and not (isinstance(seats, list) and all(isinstance(s, (str, int)) for s in seats)):
            raise TableError("seats must be a list of seat names, like [\"1\", \"3\"]")
        round_no, basis = _round_of(data), _basis_of(data)
        chosen = [str(s) for s in seats] if seats is not None else None
        approval = None
        if action == "waived":
            # before the PIN: no approval of a waiver that would not be made
            svc.check_adjustment(round_no, basis, chosen)
            if not _text(data, "reason"):
                raise TableError("waiving an adjustment needs a reason (why its difference is not paid or collected)")
            approval = _approval(data, f"waive the adjustment of round {round_no}")
        record = svc.settle_adjustment(round_no, basis, g.user["username"], waived=action == "waived",
                                       reason=_text(data, "reason"), approval=approval, seats=chosen)
    except AuthError as exc:
        return _refuse(exc, 403)
    except TableError as exc:
        return _refuse(exc)
    return _state(result=record)


@bp.route("/api/void", methods=("POST",))
@require(*TABLE_ROLES)
def void():
    data = _body()
    try:
        round_no = _round_of(data)
        service().check_round(round_no, "voided")    # before the PIN: no approval of a void not made
        approval = _approval(data, f"void round {round_no or service().machine.round_no}")
        service().void(_text(data, "reason"), approval, round_no)
    except AuthError as exc:
        return _refuse(exc, 403)
    except TableError as exc:
        return _refuse(exc)
    return _state()


@bp.route("/api/clear", methods=("POST",))
@require(*TABLE_ROLES)
def clear():
    try:
        service().clear(g.user["username"])
    except TableError as exc:
        return _refuse(exc)
    return _state()
