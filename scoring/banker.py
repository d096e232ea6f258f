"""Who banks the next round, at player-banked tables.

Two policies exist, chosen by the preset's ``banker.selection``:

* ``grab`` — every player bids a bank multiple (0 = does not grab).  The highest bid
  banks at that multiple; a tie goes to the player with more chips, then to a draw; if
  nobody bids, a random player banks at the preset's minimum multiple.  The draw takes
  a :class:`random.Random` from the caller so a recorded round replays the same banker
  (seed it from the round) and tests are deterministic.
* ``rotation`` — the holder of the best hand at or above ``banker.rotate_at`` (bull 9 in
  ``classic``) banks the next round; if nobody reaches it, the banker stays.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from typing import Mapping

from scoring.compare import strength
from scoring.evaluate import HandResult
from scoring.rules import BankerSelection, Preset, load_preset
from scoring.settle import SettlementError, to_money


class BankerReason(StrEnum):
    HIGHEST_BID = "highest_bid"
    MORE_CHIPS = "more_chips"
    DRAW = "draw"
    NO_BIDS = "no_bids"
    ROTATION = "rotation"
    STAYS = "stays"


@dataclass(frozen=True)
class BankerChoice:
    seat: str
    bid: int
    reason: BankerReason

    def to_json(self) -> dict[str, object]:
        return {"seat": self.seat, "bid": self.bid, "reason": self.reason.value}


def grab_banker(
    bids: Mapping[str, int],
    preset: Preset | str,
    rng: random.Random,
    chips: Mapping[str, Decimal | int | str] | None = None,
) -> BankerChoice:
    """Resolve grab-the-banker bids (seat -> bank multiple, 0 for no grab)."""
    if not isinstance(preset, Preset):
        preset = load_preset(preset)
    if preset.banker.selection is not BankerSelection.GRAB:
        raise SettlementError(f"preset {preset.name} picks its banker by {preset.banker.selection.value}, not by bids")
    if not bids:
        raise SettlementError("no players bid; list every seat, with 0 for a player who does not grab")
    allowed = set(preset.banker.bids)
    for seat, bid in bids.items():
        if isinstance(bid, bool) or not isinstance(bid, int) or (bid != 0 and bid not in allowed):
            raise SettlementError(
                f"seat {seat}: bid {bid!r} is not allowed by preset {preset.name}; "
                f"bid 0 (no grab) or one of {', '.join(map(str, preset.banker.bids))}")
    seats = sorted(bids)  # a fixed order, so the same seed draws the same seat
    top = max(bids.values())
    if top == 0:
        return BankerChoice(rng.choice(seats), preset.banker.bids[0], BankerReason.NO_BIDS)
    leaders = [seat for seat in seats if bids[seat] == top]
    if len(leaders) == 1:
        return BankerChoice(leaders[0], top, BankerReason.HIGHEST_BID)
    if chips is not None:
        missing = [seat for seat in leaders if seat not in chips]
        if missing:
            raise SettlementError(f"seat {missing[0]} tied on the highest bid but its chip count is missing")
        stacks = {seat: to_money(chips[seat], f"seat {seat} chips") for seat in leaders}
        most = max(stacks.values())
        leaders = [seat for seat in leaders if stacks[seat] == most]
        if len(leaders) == 1:
            return BankerChoice(leaders[0], top, BankerReason.MORE_CHIPS)
    return BankerChoice(rng.choice(leaders), top, BankerReason.DRAW)


def next_banker(current: str, hands: Mapping[str, HandResult], preset: Preset | str) -> BankerChoice:
    """The banker for the next round under rotation; ``hands`` includes the banker's own."""
    if not isinstance(preset, Preset):
        preset = load_preset(preset)
    threshold = preset.banker.rotate_at
    if preset.banker.selection is not BankerSelection.ROTATION or threshold is None:
        raise SettlementError(f"preset {preset.name} picks its banker by {preset.banker.selection.value}, not rotation")
    bar = preset.category_rank[threshold]
    keyed = {seat: strength(hand, preset) for seat, hand in hands.items()
             if preset.category_rank[hand.category] >= bar}
    if not keyed:
        return BankerChoice(current, preset.banker.bids[0], BankerReason.STAYS)
    best = max(keyed.values())
    winners = [seat for seat, key in keyed.items() if key == best]
    # Several decks can tie completely; the sitting banker keeps the bank then.
    seat = current if current in winners else winners[0]
    reason = BankerReason.STAYS if seat == current else BankerReason.ROTATION
    return BankerChoice(seat, preset.banker.bids[0], reason)
