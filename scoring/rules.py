"""Rule sets as data: every Niu Niu variant is a validated preset file.

Tables run Niu Niu under different rules — which special hands exist and how they
rank, what each hand pays on each bet, which suit breaks ties, the commission and how
it is rounded, who banks.  Encoding each variant as an ``if`` chain would make every
new table a code change and every dispute a code review, so a variant is a TOML (or
YAML) file under ``scoring/presets/`` and the code only *reads* it.  A table that
plays house rules writes its own file and passes its path wherever a preset name is
accepted.

The loader is strict because a typo in a money file must not silently fall back to a
default: unknown keys, a category listed twice, a multiplier for a hand the preset does
not rank, a banker policy that contradicts the banking mode — each is refused with the
file and key named.

Built-in presets (each file's comments give its source and every interpretation):

``cambodia``
    House-banked casino game as described by the Wizard of Odds (Cambodian casinos):
    five face cards ("Ultimate") is the only special; suits S > H > C > D; Equal (1:1)
    and Double (the winning hand's multiplier: x1, bull 7-9 x2, niu niu x3, five face x5)
    bets; 5% commission on the player's winnings, rounded to the cent half up
    (interpretation: the source shows no rounding).
``ultimate``
    House-banked, one ``standard`` bet paying the winning hand's multiplier (five face 5,
    niu niu 3, bull 7-9 2, else 1); suits S > H > D > C.  Interpretation: the source lists
    what a win pays; a loss costs the banker's winning multiplier and the house takes the
    same 5% commission as in ``cambodia`` (without it the game would have no house edge).
``classic``
    Player-banked home game: five small (total <= 10) > bomb > five face > four face >
    niu niu; bomb 6, five face 5, four face 4, niu niu 3, bull 7-9 2, everything else 1
    (five small included, as the source lists it); the bank rotates to the best bull 9 or
    better.  Interpretation: suits S > H > C > D, no rake, no bids or bet multiples.
``haodan``
    Player-banked with grab-the-banker bidding (bids 1-4, bet multiples 1-5): five face >
    bomb > niu niu; odds 1 / 2,3,4 (bull 7,8,9) / 5 / 8 / 10.  The points table is the
    ``points`` bet kind (interpretation); an escaping player pays the banker's hand
    multiplier x bid x multiple (interpretation of "as if the hand lost"); no rake.
``grab-banker``
    App-style grab-the-banker: five small (total below 10, i.e. <= 9) x10 > bomb x6 > five
    face x5 > four face x4 > niu niu x3 > bull 7-9 x2 > others x1.  Interpretation: a 5%
    fee on every winner's winnings, the banker's on its net win for the round.

Two interpretations are shared by every preset: within five small the higher total wins
(then the top card), and ``points`` is 10 for niu niu.
"""

from __future__ import annotations

import hashlib
import tomllib
from dataclasses import dataclass, field
from decimal import (ROUND_CEILING, ROUND_DOWN, ROUND_FLOOR, ROUND_HALF_EVEN, ROUND_HALF_UP, ROUND_UP, Decimal, Inexact,
                     localcontext)
from enum import StrEnum
from pathlib import Path
from types import MappingProxyType
from typing import Annotated, Any, Literal, Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from scoring.cards import Suit
from scoring.categories import BULL_CATEGORIES, Category
from scoring.errors import NiuniuError

PRESET_DIR = Path(__file__).resolve().parent / "presets"
PRESET_SUFFIXES = (".toml", ".yaml", ".yml")
MAX_COMMISSION = Decimal("0.25")   # a rate at or above it is a percentage written as a fraction


class PresetError(NiuniuError, ValueError):
    """A preset that cannot be found or does not validate; the message names file and key."""


class Banking(StrEnum):
    HOUSE = "house"    # the casino banks every hand and never pays commission
    PLAYER = "player"  # one player banks against the others; the house only rakes


class BankerSelection(StrEnum):
    HOUSE = "house"        # the house is always the banker
    ROTATION = "rotation"  # the best hand at or above ``rotate_at`` takes the bank next round
    GRAB = "grab"          # players bid a bank multiple; the highest bid banks


class BankerCover(StrEnum):
    """What a player-banker who loses more than they hold pays (``banker.cover``)."""

    UNLIMITED = "unlimited"              # every win is paid in full (the house banks, or stacks are not limited)
    STRONGEST_FIRST = "strongest_first"  # winners are paid in full, strongest hand first, until the stack runs out
    PRO_RATA = "pro_rata"                # every winner gets the same share of what they won


class FullTie(StrEnum):
    """What happens when every tie-break is equal (only possible with several decks)."""

    PUSH = "push"
    BANKER = "banker"


ROUNDING_MODES = MappingProxyType({
    "half_up": ROUND_HALF_UP,
    "half_even": ROUND_HALF_EVEN,
    "down": ROUND_DOWN,
    "up": ROUND_UP,
    "floor": ROUND_FLOOR,
    "ceiling": ROUND_CEILING,
})


# ---------------------------------------------------------------------------
# The file schema (pydantic, extra keys forbidden).
# ---------------------------------------------------------------------------

class _Schema(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


Multiple = Annotated[int, Field(strict=True, ge=1, le=1000)]
MAX_PLACES = 6   # decimal places a commission rate or money unit may have


class HandsSchema(_Schema):
    order: list[Category] = Field(
        description="Categories strongest first. All bull categories and no_bull must appear, "
        "in their natural order; a special hand is enabled by listing it.")
    five_small_limit: int = Field(10, strict=True, ge=5, le=20,
                                  description="Highest total a five_small hand may have (10, or 9 for 'below ten').")

    @field_validator("order")
    @classmethod
    def _order_is_complete(cls, order: list[Category]) -> list[Category]:
        seen: set[Category] = set()
        for category in order:
            if category in seen:
                raise ValueError(f"{category.value} is listed twice")
            seen.add(category)
        missing = [c.value for c in BULL_CATEGORIES if c not in seen]
        if missing:
            raise ValueError(f"must list every ordinary category; missing {', '.join(missing)}")
        bulls = [c for c in order if c in BULL_CATEGORIES]
        if bulls != list(reversed(BULL_CATEGORIES)):
            raise ValueError("ordinary categories must run niuniu, bull_9, ..., bull_1, no_bull (strongest first)")
        # A special listed among or below the ordinary categories is never reached (five face
        # is always a niu niu too) or ranks a bomb under a bull 8: never what a table plays.
        below = [c.value for c in order[order.index(Category.NIUNIU) + 1:] if c not in BULL_CATEGORIES]
        if below:
            raise ValueError(f"{', '.join(below)} {'is' if len(below) == 1 else 'are'} listed below niuniu; special "
                             "hands outrank every ordinary category, so list them before niuniu (strongest first)")
        return order

    @model_validator(mode="after")
    def _limit_needs_five_small(self) -> "HandsSchema":
        if "five_small_limit" in self.model_fields_set and Category.FIVE_SMALL not in self.order:
            raise ValueError("five_small_limit is set but order does not list five_small, so no hand is a five "
                             "small: add \"five_small\" to order, or remove five_small_limit")
        return self


class CompareSchema(_Schema):
    suits: list[Suit] = Field(description="Suit strength for tie-breaks, strongest first (S H C D).")
    suits_break_ties: bool = True
    full_tie: FullTie = FullTie.PUSH

    @field_validator("suits")
    @classmethod
    def _four_suits(cls, suits: list[Suit]) -> list[Suit]:
        if sorted(suits) != sorted(Suit):
            raise ValueError("must list each of S, H, D, C exactly once")
        return suits


class BetSchema(_Schema):
    description: str = ""
    multipliers: dict[str, Multiple] = Field(
        description="Multiplier by category name; 'default' covers every category not listed.")


class CommissionSchema(_Schema):
    rate: Decimal = Field(ge=0, description="Fraction of a winner's winnings kept by the house, e.g. '0.05'.")
    on_banker: bool = Field(False, description="Whether a winning player-banker pays it too (on the round's net).")
    quantum: Decimal = Field(Decimal("0.01"), gt=0, description="Smallest money unit commission is rounded to.")
    rounding: Literal["half_up", "half_even", "down", "up", "floor", "ceiling"] = "half_up"

    @field_validator("rate", "quantum", mode="before")
    @classmethod
    def _no_binary_floats(cls, value: Any) -> Any:
        # A TOML float like 0.05 is a binary approximation; its shortest repr is what the
        # author typed, so read that rather than the float itself.
        return repr(value) if isinstance(value, float) else value

    @field_validator("rate", mode="before")
    @classmethod
    def _no_percent_sign(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().endswith("%"):
            raise ValueError(f"{value!r} is a percentage; write the rate as a fraction, e.g. \"0.05\" for 5%")
        return value

    @field_validator("rate")
    @classmethod
    def _a_fraction(cls, rate: Decimal) -> Decimal:
        # 5 meant as 5% would take 500%, and 0.5 meant as 0.5% would take half of every win:
        # refuse rather than guess which was meant.  Tables keep a few percent; no Niu Niu
        # table is known to keep a quarter or more.
        if rate >= MAX_COMMISSION:
            percent = f"{(rate * 100).normalize():f}"
            raise ValueError(f"{rate} would be {percent}% of the winnings; write the rate as a fraction "
                             f"below {MAX_COMMISSION}, e.g. \"0.05\" for 5% (or \"0.005\" for 0.5%)")
        return rate

    @field_validator("rate", "quantum")
    @classmethod
    def _few_places(cls, value: Decimal) -> Decimal:
        # Money is settled exactly in 28 digits: a unit of 1e-30 cannot divide a stake.
        exponent = value.as_tuple().exponent
        if isinstance(exponent, int) and exponent < -MAX_PLACES:
            raise ValueError(f"{value} has more than {MAX_PLACES} decimal places; write it like \"0.05\" or \"0.01\"")
        return value


class BankerSchema(_Schema):
    selection: BankerSelection
    rotate_at: Category | None = Field(None, description="rotation: weakest hand that takes the bank.")
    bids: list[Multiple] = Field(default_factory=lambda: [1], description="Bank multiples a player may bid.")
    bet_multiples: list[Multiple] = Field(default_factory=lambda: [1], description="Multiples a player may bet.")
    cover: BankerCover = Field(BankerCover.UNLIMITED, description=(
        "A player-banker loses at most their stack: unlimited, strongest_first or pro_rata."))

    @field_validator("bids", "bet_multiples")
    @classmethod
    def _sorted_unique(cls, values: list[int]) -> list[int]:
        if not values:
            raise ValueError("must list at least one multiple")
        if len(set(values)) != len(values):
            raise ValueError("lists a multiple twice")
        return sorted(values)


class EscapeSchema(_Schema):
    penalty: Literal["as_loss"] = Field(description="as_loss: the leaver pays as if the banker's hand beat theirs.")
    description: str = ""


class PresetSchema(_Schema):
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]*$")
    title: str
    source: str
    interpretation: str = ""
    banking: Banking
    decks: int = Field(1, strict=True, ge=1, le=8)
    main_bet: str | None = Field(None, description="Bet kind whose multiplier a scored hand shows; default the first.")
    hands: HandsSchema
    compare: CompareSchema
    bets: dict[str, BetSchema]
    commission: CommissionSchema
    banker: BankerSchema
    escape: EscapeSchema | None = None

    @model_validator(mode="after")
    def _consistent(self) -> "PresetSchema":
        enabled = set(self.hands.order)
        if not self.bets:
            raise ValueError("bets: list at least one bet kind")
        for kind, bet in self.bets.items():
            if not kind.isascii() or not kind.replace("_", "").replace("-", "").isalnum() or not kind.islower():
                raise ValueError(f"bets.{kind}: a bet kind name is lower-case letters, digits, - or _")
            for key in bet.multipliers:
                if key != "default" and key not in enabled:
                    raise ValueError(
                        f"bets.{kind}.multipliers.{key}: not a category this preset ranks "
                        f"(hands.order lists {', '.join(c.value for c in self.hands.order)})")
            if "default" not in bet.multipliers and not enabled <= set(bet.multipliers):
                unpaid = sorted(c.value for c in enabled if c.value not in bet.multipliers)
                raise ValueError(f"bets.{kind}.multipliers: no multiplier for {', '.join(unpaid)} and no 'default'")
        if self.main_bet is not None and self.main_bet not in self.bets:
            raise ValueError(f"main_bet: {self.main_bet!r} is not one of the bets ({', '.join(self.bets)})")
        selection = self.banker.selection
        if self.banking is Banking.HOUSE:
            if selection is not BankerSelection.HOUSE:
                raise ValueError("banker.selection: a house-banked preset must use 'house'")
            if self.commission.on_banker:
                raise ValueError("commission.on_banker: the house does not pay itself commission")
            if self.banker.bids != [1] or self.banker.bet_multiples != [1]:
                raise ValueError("banker: bids and bet_multiples apply to player-banked presets only")
            if self.banker.cover is not BankerCover.UNLIMITED:
                raise ValueError("banker.cover: the house covers every bet; limit it only at player-banked tables")
        elif selection is BankerSelection.HOUSE:
            raise ValueError("banker.selection: a player-banked preset uses 'rotation' or 'grab'")
        if selection is BankerSelection.ROTATION:
            if self.banker.rotate_at is None:
                raise ValueError("banker.rotate_at: rotation needs the weakest hand that takes the bank")
        elif self.banker.rotate_at is not None:
            raise ValueError("banker.rotate_at: only used with selection = 'rotation'")
        if self.banker.rotate_at is not None and self.banker.rotate_at not in enabled:
            raise ValueError(f"banker.rotate_at: {self.banker.rotate_at.value} is not in hands.order")
        return self


# ---------------------------------------------------------------------------
# The runtime preset (what the rest of the code reads).
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class BetKind:
    """One way to bet: its name and the multiplier each category pays (or costs)."""

    name: str
    description: str
    multipliers: Mapping[Category, int]

    def multiplier(self, category: Category) -> int:
        return self.multipliers[category]


@dataclass(frozen=True)
class BankerPolicy:
    selection: BankerSelection
    rotate_at: Category | None
    bids: tuple[int, ...]
    bet_multiples: tuple[int, ...]


@dataclass(frozen=True, eq=False)
class Preset:
    """A validated rule set.

    Compared by identity: compiled lookup tables are cached per preset object, and
    :func:`load_preset` returns the same object for the same built-in name.
    """

    name: str
    title: str
    source: str
    interpretation: str
    banking: Banking
    decks: int
    order: tuple[Category, ...]            # strongest first
    five_small_limit: int
    suits: tuple[Suit, ...]                # strongest first
    suits_break_ties: bool
    full_tie: FullTie
    bets: Mapping[str, BetKind]
    main_bet: str
    commission_rate: Decimal
    commission_quantum: Decimal
    commission_rounding: str               # a key of ROUNDING_MODES
    commission_on_banker: bool
    banker: BankerPolicy
    escape_penalty: str | None
    escape_description: str
    banker_cover: BankerCover = BankerCover.UNLIMITED
    path: Path | None = None
    category_rank: Mapping[Category, int] = field(init=False, repr=False)
    suit_rank: Mapping[Suit, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        ranks = {category: len(self.order) - i for i, category in enumerate(self.order)}
        object.__setattr__(self, "category_rank", MappingProxyType(ranks))
        object.__setattr__(self, "suit_rank", MappingProxyType({s: 4 - i for i, s in enumerate(self.suits)}))

    @property
    def bet_kinds(self) -> tuple[str, ...]:
        return tuple(self.bets)

    @property
    def rules_digest(self) -> str:
        """A short hash of everything that decides money (not names, titles or texts).

        Settlements record it beside the preset's name: a name alone cannot tell a built-in
        preset from a custom file that reuses its name, nor a preset file from itself edited
        since, and a round corrected later must be paid by the rules it was played under.
        Adding a money rule here changes every preset's digest, and old rounds' corrections
        would then be refused: hash a new field only where it differs from its default."""
        bets = tuple(sorted((kind, tuple(sorted((c.value, m) for c, m in bet.multipliers.items())))
                            for kind, bet in self.bets.items()))
        rules = (self.banking, self.decks, self.order, self.five_small_limit, self.suits, self.suits_break_ties,
                 self.full_tie, bets, self.main_bet, self.commission_rate, self.commission_quantum,
                 self.commission_rounding, self.commission_on_banker, self.banker, self.escape_penalty)
        if self.banker_cover is not BankerCover.UNLIMITED:
            rules += (self.banker_cover,)
        return hashlib.sha256(repr(rules).encode("utf-8")).hexdigest()[:16]

    def bet(self, kind: str) -> BetKind:
        """The bet kind named ``kind``; a readable error for a kind this preset lacks."""
        try:
            return self.bets[kind]
        except KeyError:
            raise PresetError(
                f"bet kind {kind!r} is not offered by preset {self.name}; use one of {', '.join(self.bets)}"
            ) from None

    def multiplier(self, kind: str, category: Category) -> int:
        return self.bet(kind).multipliers[category]

    def round_commission(self, amount: Decimal) -> Decimal:
        """``amount`` rounded to a whole number of the table's money unit.

        Not ``quantize``: it rounds to the unit's decimal place only, so a unit of 10 (or
        5, or 0.05) would leave commissions of 4 or 13 — nets the table's own rule on
        stakes calls unpayable."""
        with localcontext() as ctx:
            ctx.traps[Inexact] = False    # a unit like 3 divides with a remainder; rounding is the point
            units = (amount / self.commission_quantum).to_integral_value(
                rounding=ROUNDING_MODES[self.commission_rounding])
            # written to the unit's places (0.00, not 0), as screens and exports show money
            return (units * self.commission_quantum).quantize(self.commission_quantum)

    def to_json(self) -> dict[str, Any]:
        """The preset as plain data, strongest category first (``niuniu rules show --json``)."""
        return {
            "name": self.name,
            "title": self.title,
            "source": self.source,
            "interpretation": self.interpretation,
            "banking": self.banking.value,
            "decks": self.decks,
            "order": [c.value for c in self.order],
            "five_small_limit": self.five_small_limit,
            "suits": [s.value for s in self.suits],
            "suits_break_ties": self.suits_break_ties,
            "full_tie": self.full_tie.value,
            "main_bet": self.main_bet,
            "bets": {
                kind: {
                    "description": bet.description,
                    "multipliers": {c.value: bet.multipliers[c] for c in self.order},
                }
                for kind, bet in self.bets.items()
            },
            "commission": {
                "rate": str(self.commission_rate),
                "on_banker": self.commission_on_banker,
                "quantum": str(self.commission_quantum),
                "rounding": self.commission_rounding,
            },
            "banker": {
                "selection": self.banker.selection.value,
                "rotate_at": self.banker.rotate_at.value if self.banker.rotate_at else None,
                "bids": list(self.banker.bids),
                "bet_multiples": list(self.banker.bet_multiples),
                "cover": self.banker_cover.value,
            },
            "escape": None if self.escape_penalty is None else {
                "penalty": self.escape_penalty, "description": self.escape_description},
            "path": str(self.path) if self.path else None,
        }


def _from_schema(spec: PresetSchema, path: Path | None) -> Preset:
    order = tuple(spec.hands.order)
    bets = {}
    for kind, bet in spec.bets.items():
        default = bet.multipliers.get("default")
        table = {c: bet.multipliers.get(c.value, default) for c in order}
        bets[kind] = BetKind(kind, bet.description.strip(), MappingProxyType(table))
    return Preset(
        name=spec.name,
        title=spec.title.strip(),
        source=spec.source.strip(),
        interpretation=spec.interpretation.strip(),
        banking=spec.banking,
        decks=spec.decks,
        order=order,
        five_small_limit=spec.hands.five_small_limit,
        suits=tuple(spec.compare.suits),
        suits_break_ties=spec.compare.suits_break_ties,
        full_tie=spec.compare.full_tie,
        bets=MappingProxyType(bets),
        main_bet=spec.main_bet or next(iter(spec.bets)),
        commission_rate=spec.commission.rate,
        commission_quantum=spec.commission.quantum,
        commission_rounding=spec.commission.rounding,
        commission_on_banker=spec.commission.on_banker,
        banker=BankerPolicy(
            selection=spec.banker.selection,
            rotate_at=spec.banker.rotate_at,
            bids=tuple(spec.banker.bids),
            bet_multiples=tuple(spec.banker.bet_multiples),
        ),
        escape_penalty=spec.escape.penalty if spec.escape else None,
        escape_description=spec.escape.description.strip() if spec.escape else "",
        banker_cover=spec.banker.cover,
        path=path,
    )


# ---------------------------------------------------------------------------
# Loading.
# ---------------------------------------------------------------------------

def list_presets() -> list[str]:
    """Names of the built-in presets, in the order they are documented."""
    found = sorted(p.stem for p in PRESET_DIR.glob("*.toml"))
    preferred = [n for n in _DOC_ORDER if n in found]
    return preferred + [n for n in found if n not in preferred]


_DOC_ORDER = ("cambodia", "ultimate", "classic", "haodan", "grab-banker")
_BUILTIN_CACHE: dict[str, Preset] = {}


def load_preset(name_or_path: str | Path | Preset) -> Preset:
    """A built-in preset by name, or a preset file (``.toml``, ``.yaml``) by path."""
    if isinstance(name_or_path, Preset):
        return name_or_path
    text = str(name_or_path)
    looks_like_path = (isinstance(name_or_path, Path) or "/" in text or "\\" in text
                       or text.lower().endswith(PRESET_SUFFIXES))
    if not looks_like_path:
        key = text.strip().lower()
        cached = _BUILTIN_CACHE.get(key)
        if cached is not None:
            return cached
        path = PRESET_DIR / f"{key}.toml"
        if not key or not path.is_file():
            raise PresetError(
                f"unknown preset {text!r}; choose one of {', '.join(list_presets())} "
                "or give the path of a .toml/.yaml preset file")
        preset = load_preset_file(path)
        _BUILTIN_CACHE[key] = preset
        return preset
    return load_preset_file(Path(text))


def load_preset_file(path: Path) -> Preset:
    """Read and validate one preset file; every problem names the file and the key."""
    path = Path(path)
    if path.suffix.lower() not in PRESET_SUFFIXES:
        raise PresetError(f"preset file {path}: expected a .toml, .yaml or .yml file")
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise PresetError(f"preset file {path} does not exist; check the path or use a built-in name") from None
    except OSError as exc:
        raise PresetError(f"preset file {path} cannot be read: {exc.strerror or exc}") from None
    data = _parse(path, raw)
    if data is None or data == {}:
        raise PresetError(f"preset file {path} is empty; start from a copy of a built-in preset such as "
                          f"{PRESET_DIR / 'cambodia.toml'} and edit it")
    if not isinstance(data, dict):
        raise PresetError(f"preset file {path}: expected a table of keys at the top level, not a "
                          f"{type(data).__name__}")
    try:
        spec = PresetSchema.model_validate(data)
    except ValidationError as exc:
        raise PresetError(f"preset file {path}: {_describe(exc)}") from None
    return _from_schema(spec, path)


def _parse(path: Path, raw: bytes) -> Any:
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")   # editors on Windows start with a BOM
    except UnicodeDecodeError as exc:
        raise PresetError(f"preset file {path}: not UTF-8 text (byte {exc.start}); save it as UTF-8") from None
    if path.suffix.lower() == ".toml":
        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise PresetError(f"preset file {path}: invalid TOML: {exc}") from None
    import yaml  # only custom presets use YAML

    try:
        return yaml.load(text, Loader=unique_key_loader())
    except DuplicateKey as exc:
        raise PresetError(f"preset file {path}: key {exc.key!r} is given twice (line {exc.line}); YAML would "
                          "silently keep the last one: keep one") from None
    except yaml.YAMLError as exc:
        raise PresetError(f"preset file {path}: invalid YAML: {' '.join(str(exc).split())}") from None


class DuplicateKey(Exception):
    """A key given twice in one mapping of a YAML file (``line`` counts from 1)."""

    def __init__(self, key: Any, line: int) -> None:
        super().__init__(key, line)
        self.key, self.line = key, line


_LOADER: list[type] = []


def unique_key_loader() -> type:
    """yaml's SafeLoader, except that a key given twice in one mapping is an error (TOML's
    rule), not silently the last value: a second ``commission:`` would replace the first
    (presets), a second ``table_id:`` the table's name (table files)."""
    if not _LOADER:
        import yaml

        class UniqueKeyLoader(yaml.SafeLoader):
            def construct_mapping(self, node: Any, deep: bool = False) -> Any:
                seen: set = set()
                if isinstance(node, yaml.MappingNode):
                    for key_node, _ in node.value:
                        if key_node.tag == "tag:yaml.org,2002:merge":   # "<<: *defaults"
                            continue
                        key = self.construct_object(key_node, deep=deep)
                        try:
                            if key in seen:
                                raise DuplicateKey(key, key_node.start_mark.line + 1)
                            seen.add(key)
                        except TypeError:   # an unhashable key: SafeLoader reports it
                            pass
                return super().construct_mapping(node, deep=deep)

        _LOADER.append(UniqueKeyLoader)
    return _LOADER[0]


# How to write a value, by the key it is given for (pydantic's own words say only what is wrong).
_HINTS = {
    "multipliers": "write a whole number from 1 to 1000, like 2",
    "bids": "write whole numbers from 1 to 1000, like [1, 2, 3, 4]",
    "bet_multiples": "write whole numbers from 1 to 1000, like [1, 2, 3, 4, 5]",
    "decks": "write a whole number from 1 to 8",
    "five_small_limit": "write a whole number from 5 to 20 (10, or 9 for 'below ten')",
    "rate": "write a fraction of the winnings as text, e.g. \"0.05\" for 5%",
    "quantum": "write the smallest money unit as text, e.g. \"0.01\" for cents or \"1\"",
    "name": "use lower-case letters, digits, - and _, e.g. \"my-casino\"",
    "suits": "list S, H, D and C, strongest first, e.g. [\"S\", \"H\", \"C\", \"D\"]",
    "order": "use the category names as `niuniu rules show cambodia --json` lists them",
    "rotate_at": "use a category name from hands.order, e.g. \"bull_9\"",
}


def _describe(exc: ValidationError) -> str:
    """All validation problems on one line, each naming its dotted key, the value given
    and, where pydantic's words do not say it, how to write it."""
    parts: list[str] = []
    hinted: set[str] = set()
    for error in exc.errors(include_url=False):
        key = ".".join(str(p) for p in error["loc"])
        if error["type"] == "extra_forbidden":
            parts.append(f"unknown key {key!r} (remove it or check its spelling)")
        elif error["type"] == "missing":
            parts.append(f"missing key {key!r}")
        elif error["type"] == "value_error":   # our own checks: the message names the value and the fix
            message = error["msg"].removeprefix("Value error, ")
            parts.append(f"key {key!r}: {message}" if key else message)
        else:
            given = error.get("input")
            shown = repr(given)
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            got = "" if isinstance(given, (dict, list)) else f" (got {shown})"
            names = [p for p in error["loc"] if isinstance(p, str)]
            field = "multipliers" if "multipliers" in names else names[-1] if names else ""
            hint = ""
            if error["type"] == "string_type":   # YAML reads no, on, 2024-01-01 as other types
                hint = "; put the text in quotes"
            elif field in _HINTS and field not in hinted:   # once, not for each of four suits
                hint = f"; {_HINTS[field]}"
                hinted.add(field)
            parts.append(f"key {key!r}: {error['msg']}{got}{hint}")
    return "; ".join(parts)
