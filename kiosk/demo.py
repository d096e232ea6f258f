"""``niuniu demo``: the whole table on a recorded camera, for someone seeing it the first time.

A demo directory holds ``table.yaml`` (the table's zones and rules) and ``frames/`` (the
camera's images, in name order).  The demo plays the frames as a camera at the table's
frame rate (looping), recognises the cards with the real detector, and a *demo dealer*
places default bets when a round is complete, waits a few seconds so the newcomer can
read the screen, then settles and clears.  Everything goes through the same service,
audit log and screens as production; only the accounts are made up, and printed.

The demo dealer also has eyes: the recording's ``truth.json`` is what lies on the table.
When dealing has stopped and the camera's reading differs from it (a card misread or
never read), the demo dealer corrects the screen through the same "Correct card" path a
real dealer uses, so the round settles; every such fix is an audit-log correction by
``demo-dealer``, marked on the screen, so the model's errors stay visible to anyone
counting them (``niuniu audit export``).  Without a truth file it only settles what the
camera completed.
"""

from __future__ import annotations

import secrets
import threading
import time
import json
from decimal import Decimal
from pathlib import Path
from typing import Callable, Iterable

from kiosk import db
from kiosk.audit import AuditType
from kiosk.auth import Role, create_user
from kiosk.table_service import Approval, TableError, TableService
from scoring.errors import NiuniuError
from scoring.settle import Bet
from vision.round import RoundState

DEMO_BANKER_STACK = "300"     # three stakes: a table of winners outruns it
DEMO_STAKE = Decimal("100")
DEMO_USERS = (("demo-admin", Role.ADMIN), ("demo-dealer", Role.DEALER), ("demo-super", Role.SUPERVISOR),
              ("demo-surveillance", Role.SURVEILLANCE))


class DemoError(NiuniuError):
    """The demo directory is missing something; the message says what to put where."""


def find_demo_dir(given: str | Path | None) -> Path:
    """``--dataset`` if given, else ``datasets/demo`` here or beside the installed package."""
    candidates = [Path(given)] if given else [Path("datasets/demo"),
                                              Path(__file__).resolve().parents[1] / "datasets" / "demo"]
    for path in candidates:
        if (path / "table.yaml").is_file():
            return path
    tried = ", ".join(str(p) for p in candidates)
    raise DemoError(f"no demo recording found (looked for table.yaml in {tried}); pass --dataset DIR "
                    "with table.yaml and a frames/ folder")


def demo_frames(demo_dir: Path) -> Path:
    frames = demo_dir / "frames"
    if frames.is_dir():
        return frames
    raise DemoError(f"{demo_dir} has no frames/ folder; the demo plays the images in it as the camera")


def default_bets(kinds: tuple[str, ...]) -> Callable[[Iterable[str]], dict[str, Bet]]:
    """100 on every dealt seat, alternating the preset's bet kinds, so both kinds show."""
    def bets(seats: Iterable[str]) -> dict[str, Bet]:
        return {seat: Bet(seat, DEMO_STAKE, kinds[i % len(kinds)]) for i, seat in enumerate(sorted(seats))}
    return bets


def create_demo_accounts(data_dir: Path, audit, *, method: str | None = None) -> list[dict]:
    """Fresh random passwords for the demo accounts (created, or reset if they exist)."""
    from werkzeug.security import generate_password_hash

    accounts = []
    conn = db.connect(data_dir)
    try:
        for username, role in DEMO_USERS:
            password = secrets.token_urlsafe(9)
            pin = f"{secrets.randbelow(9000) + 1000}" if role is Role.SUPERVISOR else None
            row = conn.execute("SELECT id FROM users WHERE username = ?", (username,)).fetchone()
            hasher = (lambda s: generate_password_hash(s, method=method)) if method else generate_password_hash
            if row is None:
                create_user(conn, username, role.value, password, pin, created_by="demo", method=method)
                audit.append(AuditType.USER_CREATED, "demo", {"username": username, "role": role.value, "demo": True})
            else:
                conn.execute("UPDATE users SET password_hash = ?, pin_hash = ?, active = 1 WHERE id = ?",
                             (hasher(password), hasher(pin) if pin else None, row["id"]))
                audit.append(AuditType.USER_CHANGED, "demo", {"username": username, "change": "demo password reset"})
            accounts.append({"username": username, "role": role.value, "password": password, "pin": pin})
    finally:
        conn.close()
    return accounts


def load_truth(demo_dir: Path) -> list[dict[str, list[str]]]:
    """Each recorded round's cards per seat (``truth.json``), or [] when the demo has none."""
    path = demo_dir / "truth.json"
    if not path.is_file():
        return []
    try:
        rounds = json.loads(path.read_text())
        return [{str(seat): [str(c) for c in cards] for seat, cards in r["seats"].items()} for r in rounds]
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise DemoError(f"{path} is not a demo truth file ([{{'round': 1, 'seats': {{...}}}}, ...]): {exc}") from None


def table_fixes(read: dict[str, list[str]], truth: dict[str, list[str]]) -> list[tuple[str, str | None, str | None]]:
    """The corrections ``(seat, old, new)``, in the order to apply them, that turn what was
    read into what is dealt.

    In a single deck a card can be on one seat only, so a misread card may be another
    seat's: a wrong card is replaced by a card its seat is missing when that card is free,
    else removed; cards still missing are added last, when every wrong card has gone.
    """
    missing = {seat: [c for c in cards if c not in read.get(seat, [])] for seat, cards in truth.items()}
    on_table = {card for cards in read.values() for card in cards}
    fixes: list[tuple[str, str | None, str | None]] = []
    for seat, cards in read.items():
        for card in cards:
            if card in truth.get(seat, []):
                continue
            new = next((c for c in missing.get(seat, []) if c not in on_table), None)
            if new is not None:
                missing[seat].remove(new)
                on_table.add(new)
            on_table.discard(card)
            fixes.append((seat, card, new))
    return fixes + [(seat, None, card) for seat, cards in missing.items() for card in cards]


class DemoDealer(threading.Thread):
    """Settles each complete round after ``pause`` seconds, and clears it after another pause.

    With ``truth`` (the recording's rounds), a round still dealing when no card has been
    accepted for ``stall`` seconds is checked against the table and corrected.
    """

    def __init__(self, service: TableService, pause: float = 4.0, poll: float = 0.2,
                 truth: list[dict[str, list[str]]] | None = None, stall: float = 2.0) -> None:
        super().__init__(name="demo-dealer", daemon=True)
        self.service = service
        self.pause = pause
        self.poll = poll
        self.truth = truth or []
        self.stall = stall
        self.stop_event = threading.Event()
        self.settled = 0
        self.corrections = 0
        self.errors: list[str] = []
        self._checked_round: int | None = None

    def run(self) -> None:
        seen: tuple | None = None
        since = time.monotonic()
        # The demo's shutdown (``stopped`` in kiosk.commands) signals this thread but does not
        # wait for it before the service writes ``kiosk_stop``: the thread also ends once the
        # service has stopped, and takes no action after that record (the service refuses them).
        while not self.stop_event.wait(self.poll) and not self.service.stopped:
            machine = self.service.machine
            key = (machine.round_no, str(machine.state), sum(len(h.cards) for h in machine.hands.values()))
            if key != seen:
                seen, since = key, time.monotonic()
                continue
            waited = time.monotonic() - since
            try:
                self._enter_stack()
                if (machine.state == RoundState.dealing and self.truth and waited >= self.stall
                        and self._checked_round != machine.round_no):
                    self._checked_round = machine.round_no
                    self._correct_from_truth()
                elif machine.state == RoundState.complete and waited >= self.pause:
                    self._settle_or_void()
                    since = time.monotonic()
                elif machine.state in (RoundState.settled, RoundState.void) and waited >= 2 * self.pause:
                    self.service.clear("demo-dealer")
            except NiuniuError as exc:
                self.errors.append(str(exc))

    def _enter_stack(self) -> None:
        """Where the preset limits what a player-banker pays (``banker.cover``), the dealer
        enters the banker's stack before each deal, or the round cannot be settled; the
        demo's is small enough that a round of wins shows a short payout now and then."""
        service = self.service
        if service.covered and service.can_take_bets() and service.next_stack is None:
            service.set_stack(DEMO_BANKER_STACK, "demo-dealer")

    def _correct_from_truth(self) -> None:
        """Look at the table (the truth round that shares most cards with the screen) and fix the screen."""
        read = {seat: [c.code for c in hand.cards] for seat, hand in self.service.machine.hands.items()}
        shown = {c for cards in read.values() for c in cards}
        if not shown:
            return
        table = max(self.truth, key=lambda r: len(shown & {c for cards in r.values() for c in cards}))
        for seat, old, new in table_fixes(read, table):
            what = (f"{old} is {new}" if old and new
                    else f"{old} is not on seat {seat}" if old else f"{new} was not read")
            try:
                self.service.correct(seat, old, new, "demo-dealer", f"demo dealer looked at the table: {what}")
                self.corrections += 1
            except NiuniuError as exc:
                self.errors.append(str(exc))

    def _settle_or_void(self) -> None:
        service = self.service
        blocker = service.settle_blocker()
        if blocker is None:
            service.settle("demo-dealer")
            self.settled += 1
            return
        for seat, hand in service.machine.hands.items():  # the demo dealer confirms doubtful reads
            for card, doubtful in zip(hand.cards, hand.needs_confirmation):
                if doubtful:
                    service.correct(seat, card.code, card.code, "demo-dealer", "confirmed by the demo dealer")
        if service.settle_blocker() is None:
            service.settle("demo-dealer")
            self.settled += 1
        else:
            try:
                service.void(f"demo: cannot settle ({blocker})", Approval("demo-dealer", "demo-super"))
            except TableError as exc:
                self.errors.append(str(exc))
