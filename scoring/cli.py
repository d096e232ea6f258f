"""``niuniu score | settle | stats | odds | rules``: the rules engine from a shell.

These commands are contracts other tools script against (the ``--json`` shapes are
documented in issue 2), and they are how a supervisor checks a disputed hand without the
kiosk: type the five cards, read the bull.  Bad input raises a
:class:`~scoring.errors.NiuniuError` naming the bad token; the root command prints it on
one line and exits 2.
"""

from __future__ import annotations

import argparse
import json
import sys
import unicodedata
from typing import Any

from scoring.cards import parse_cards
from scoring.evaluate import HandResult, evaluate
from scoring.rules import PRESET_DIR, BankerCover, Preset, list_presets, load_preset
from scoring.settle import Bet, Settlement, SettlementError, money_text, settle_round, to_money
from scoring.stats import hand_stats

DEFAULT_RULES = "cambodia"


def register(sub: argparse._SubParsersAction) -> None:
    rules_help = f"preset name ({', '.join(list_presets())}) or a preset file path; default {DEFAULT_RULES}"

    score = sub.add_parser("score", help="score one five-card hand: category, bull, points, multiplier",
                           description="Score one hand. Cards like AS 10H TH qd A♠ (case-insensitive).")
    score.add_argument("--rules", default=DEFAULT_RULES, help=rules_help)
    score.add_argument("--json", action="store_true", help="print JSON")
    score.add_argument("cards", nargs="+", metavar="CARD", help="five cards (or one quoted string of five)")
    score.set_defaults(func=cmd_score)

    settle = sub.add_parser(
        "settle", help="settle a round: each seat against the banker, with commission",
        description='Settle one round. Seat spec: "SEAT:CARDS:AMOUNT[:KIND[:MULTIPLE]]", '
                    'e.g. "1:7S 8C 5H KD 10C:100:double". KIND defaults to the preset\'s main bet.')
    settle.add_argument("--rules", default=DEFAULT_RULES, help=rules_help)
    settle.add_argument("--banker", required=True, metavar="CARDS",
                        help='the banker\'s five cards, e.g. "5S 8H 2D 4C 9S"')
    settle.add_argument("--seat", action="append", required=True, metavar="SPEC", help="one per seat (repeat)")
    settle.add_argument("--bid", type=int, default=1, help="banker's bank multiple (grab-the-banker presets)")
    settle.add_argument("--banker-stack", metavar="AMOUNT",
                        help="what the player-banker holds (presets whose banker.cover limits what a banker pays)")
    settle.add_argument("--escape", action="append", default=[], metavar="SEAT",
                        help="a seat whose player left mid-round (presets with an escape penalty)")
    settle.add_argument("--json", action="store_true", help="print JSON")
    settle.set_defaults(func=cmd_settle)

    stats = sub.add_parser("stats", help="count every category over all 2,598,960 hands",
                           description="Category counts over all C(52,5) hands, exclusive per the preset.")
    stats.add_argument("--rules", default=DEFAULT_RULES, help=rules_help)
    stats.add_argument("--json", action="store_true", help="print JSON")
    stats.set_defaults(func=cmd_stats)

    odds = sub.add_parser("odds", help="exact win/loss probabilities and house edge per bet",
                          description="Exact odds by enumeration: player and banker dealt from one deck.")
    odds.add_argument("--rules", default=DEFAULT_RULES, help=rules_help)
    odds.add_argument("--json", action="store_true", help="print JSON")
    odds.set_defaults(func=cmd_odds)

    rules = sub.add_parser("rules", help="list presets, or show one (niuniu rules show P)",
                           description="List the built-in presets; 'rules show P' prints one (name or file path).")
    rules.add_argument("--json", action="store_true", help="print JSON")
    rules.set_defaults(func=cmd_rules_list)
    rules_sub = rules.add_subparsers(dest="rules_command", metavar="ACTION")
    show = rules_sub.add_parser("show", help="print one preset")
    show.add_argument("preset", metavar="P", help="preset name or file path")
    show.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")
    show.set_defaults(func=cmd_rules_show)


# ---------------------------------------------------------------------------

def _load(rules: str) -> Preset:
    """The preset, with a note on stderr where a preset file takes a built-in's name but not
    its rules: screens, exports and the audit log would show it under the built-in's name."""
    preset = load_preset(rules)
    if _reuses_builtin_name(preset):
        print(f"niuniu: note: preset file {preset.path} is named {preset.name!r} like the built-in preset, "
              f"but its rules differ; screens and logs show it as {preset.name}: give it a name of its own "
              f"(name = \"house-{preset.name}\")", file=sys.stderr)
    return preset


def _reuses_builtin_name(preset: Preset) -> bool:
    if preset.path is None or preset.name not in list_presets():
        return False
    builtin = PRESET_DIR / f"{preset.name}.toml"
    if preset.path.resolve() == builtin.resolve():
        return False
    return load_preset(preset.name).rules_digest != preset.rules_digest


def cmd_score(args: argparse.Namespace) -> int:
    preset = _load(args.rules)
    hand = evaluate(parse_cards(" ".join(args.cards), 5, unique=preset.decks == 1), preset)
    if args.json:
        _print_json({"rules": preset.name, **hand.to_json()})
        return 0
    print(f"{hand.label}  ({preset.name})")
    print(f"  bull    {_codes(hand.bull) if hand.bull else '(none)'}")
    print(f"  rest    {_codes(hand.rest)}")
    print(f"  points {hand.points}  multiplier x{hand.multiplier} ({preset.main_bet})  top card {hand.top.code}")
    return 0


def cmd_settle(args: argparse.Namespace) -> int:
    preset = _load(args.rules)
    seats: dict[str, tuple[str, Bet]] = {}
    for spec in args.seat:
        seat, cards, bet = _seat_spec(spec, preset)
        if seat in seats:
            raise SettlementError(f"--seat {spec!r}: seat {seat} is given twice")
        seats[seat] = (cards, bet)
    settlement = settle_round(preset, args.banker, seats, banker_bid=args.bid, escaped=tuple(args.escape),
                              banker_stack=args.banker_stack)
    if args.json:
        _print_json(settlement.to_json())
    else:
        _print_settlement(settlement, preset)
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    stats = hand_stats(_load(args.rules))
    if args.json:
        _print_json(stats.to_json())
        return 0
    print(f"{stats.rules}: {stats.total:,} hands ({stats.seconds * 1000:.1f} ms)")
    for category, count in stats.counts.items():
        print(f"  {category.label:<11} {count:>9,}  {100 * count / stats.total:8.4f}%")
    return 0


def cmd_odds(args: argparse.Namespace) -> int:
    from scoring.odds import exact_odds  # numpy is only needed here; keep other commands quick to start

    odds = exact_odds(_load(args.rules))
    if args.json:
        _print_json(odds.to_json())
        return 0
    print(f"{odds.rules}: exact, {odds.deals:,} (player, banker) deals from one deck ({odds.seconds:.2f} s)")
    print(f"  player wins {float(odds.player_win):.6%}   banker wins {float(odds.banker_win):.6%}"
          f"   push {float(odds.push):.6%}")
    for kind in odds.house_edge:
        print(f"  {kind:<9} expected multiplier {float(odds.expected_multiplier[kind]):.6f}"
              f"   house edge {float(odds.house_edge[kind]):.4f}%")
    print("  one hand:")
    for category, p in odds.categories.items():
        print(f"    {category.label:<11} {float(p):.6%}")
    return 0


def cmd_rules_list(args: argparse.Namespace) -> int:
    presets = [load_preset(name) for name in list_presets()]
    if args.json:
        _print_json([{"name": p.name, "title": p.title, "banking": p.banking.value, "bets": list(p.bet_kinds)}
                     for p in presets])
        return 0
    width = max(len(p.name) for p in presets)
    for p in presets:
        print(f"{p.name:<{width}}  {p.banking.value:<6}  {', '.join(p.bet_kinds):<16}  {p.title}")
    print("\nniuniu rules show P  prints one; any command takes --rules PATH for a custom .toml/.yaml preset.")
    return 0


def cmd_rules_show(args: argparse.Namespace) -> int:
    preset = _load(args.preset)
    if getattr(args, "json", False):
        _print_json(preset.to_json())
        return 0
    print(f"{preset.name} — {preset.title}")
    print(f"  source: {preset.source}")
    if preset.path is not None and preset.path.resolve().parent != PRESET_DIR:
        print(f"  file: {preset.path}")
    if preset.interpretation:
        print(f"  interpretation: {' '.join(preset.interpretation.split())}")
    banker = preset.banker
    policy = banker.selection.value
    if banker.rotate_at:
        policy += f" (to {banker.rotate_at.label} or better)"
    print(f"  banking: {preset.banking.value}; banker: {policy}; decks: {preset.decks}")
    if preset.banking.value == "player":
        print(f"  bank bids: {', '.join(map(str, banker.bids))}; "
              f"bet multiples: {', '.join(map(str, banker.bet_multiples))}")
        print(f"  banker's cover: {_COVER_TEXT[preset.banker_cover]}")
    print(f"  suits (strongest first): {' > '.join(s.value for s in preset.suits)}"
          f"{'' if preset.suits_break_ties else ' (not used)'}; full tie: {preset.full_tie.value}")
    if any(c.value == "five_small" for c in preset.order):
        print(f"  five small: total at most {preset.five_small_limit}")
    print(f"  commission: {(preset.commission_rate * 100).normalize():f}% of winnings"
          f"{' (banker too, on its net win)' if preset.commission_on_banker else ''},"
          f" rounded {preset.commission_rounding} to {money_text(preset.commission_quantum)}")
    if preset.escape_penalty:
        print(f"  escape: {preset.escape_description or preset.escape_penalty}")
    kinds = preset.bet_kinds
    print(f"  {'hand (strongest first)':<24}" + "".join(f"{k:>10}" for k in kinds))
    for category in preset.order:
        print(f"  {category.label:<24}" + "".join(f"{'x' + str(preset.multiplier(k, category)):>10}" for k in kinds))
    for kind in kinds:
        if preset.bets[kind].description:
            print(f"  {kind}: {preset.bets[kind].description}")
    return 0


# ---------------------------------------------------------------------------

def _seat_spec(spec: str, preset: Preset) -> tuple[str, str, Bet]:
    parts = spec.split(":")
    if not 3 <= len(parts) <= 5:
        raise SettlementError(
            f"--seat {spec!r}: expected SEAT:CARDS:AMOUNT[:KIND[:MULTIPLE]], e.g. \"1:7S 8C 5H KD 10C:100:double\"")
    seat, cards, amount_text = (p.strip() for p in parts[:3])
    kind = parts[3].strip().lower() if len(parts) > 3 and parts[3].strip() else preset.main_bet
    if not seat:
        raise SettlementError(f"--seat {spec!r}: the seat name before the first ':' is empty")
    amount = to_money(amount_text, f"--seat {spec!r}: stake")
    multiple = 1
    if len(parts) == 5:
        if not parts[4].strip().isascii() or not parts[4].strip().isdigit():   # int() reads "٣" and "1_0" too
            raise SettlementError(f"--seat {spec!r}: bet multiple {parts[4]!r} is not a whole number like 3")
        multiple = int(parts[4])
    return seat, cards, Bet(seat, amount, kind, multiple)


_COVER_TEXT = {
    BankerCover.UNLIMITED: "unlimited (every win is paid in full)",
    BankerCover.STRONGEST_FIRST: "the banker's stack (winners paid in full, strongest hand first, until it runs out)",
    BankerCover.PRO_RATA: "the banker's stack (winners share it in proportion to what each won)",
}


def _print_settlement(s: Settlement, preset: Preset) -> None:
    banker = s.banker
    assert banker is not None
    bid = f" x{s.banker_bid} bid" if s.banker_bid != 1 else ""
    print(f"{preset.name}: banker {banker.label}{bid}  [{_hand_cards(banker)}]")
    rows = [("seat", "hand", "bet", "outcome", "x", "gross", "commission", "net")]
    for line in s.lines:
        bet = line.bet
        assert bet is not None
        staked = f"{money_text(bet.amount)} {bet.kind}" + (f" x{bet.multiple}" if bet.multiple != 1 else "")
        outcome = line.outcome.value + (" (left)" if line.escaped else "")
        rows.append((line.seat, line.player.label, staked, outcome, str(line.multiplier), money_text(line.gross),
                     money_text(line.commission), money_text(line.net)))
    # Each column as wide as its widest cell (at least the usual width): a large stake must
    # not run into the next column and be misread.
    least = (6, 12, 18, 12, 4, 12, 12, 12)
    widths = [max(at_least, *(_width(row[i]) + 2 for row in rows)) for i, at_least in enumerate(least)]
    for row in rows:
        print("  " + "".join(_pad(cell, w, left=i < 4) for i, (cell, w) in enumerate(zip(row, widths))))
    for line in s.lines:
        if line.owed is not None:
            print(f"  seat {line.seat} won {money_text(line.owed)}; the banker could pay "
                  f"{money_text(line.gross)} ({money_text(line.short)} short)")
    if s.banker_stack is not None:
        print(f"  banker's stack {money_text(s.banker_stack)}")
    print(f"  banker net {money_text(s.banker_net)}"
          + (f" (after {money_text(s.banker_commission)} commission)" if s.banker_commission else "")
          + f"   house commission {money_text(s.total_commission)}   house net {money_text(s.house_net)}")


def _width(text: str) -> int:
    """Columns the text takes on a terminal: a seat named 座位一 takes two a character."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _pad(text: str, width: int, *, left: bool) -> str:
    fill = " " * max(0, width - _width(text))
    return text + fill if left else fill + text


def _hand_cards(hand: HandResult) -> str:
    return f"{_codes(hand.bull)} | {_codes(hand.rest)}" if hand.bull else _codes(hand.rest)


def _codes(cards: Any) -> str:
    return " ".join(c.code for c in cards)


def _print_json(data: Any) -> None:
    json.dump(data, sys.stdout, ensure_ascii=False, indent=2)
    sys.stdout.write("\n")
