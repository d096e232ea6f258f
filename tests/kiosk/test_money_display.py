"""Money as people read it (QA pass 48, money.md): every figure on the dealer's screen, the
round pages, the shift report and the console written to the table's money unit (the
preset's quantum) with its thousands grouped, never rounded; what the log stores, and the
exports, unchanged.

H1 a 3-decimal currency's players net kept exact; M1 3-decimal stakes at a 0.001 table;
M2 riel without ".00"; M3 thousands and the currency; L1 a win the commission ate whole;
L2 ASCII digits only."""

from __future__ import annotations

import json
import re
import threading
from decimal import Decimal
from pathlib import Path
from types import SimpleNamespace

import pytest

from kiosk.audit import AuditType
from kiosk.rounds import load_round
from kiosk.table_service import TableError, parse_amount
from kiosk_testing import ACCOUNTS, hand, login, table_dict
from scoring.rules import PRESET_DIR
from vision.table import table_config_from_dict

BANKER_BULL_8 = "4S 6H QD 9C 9H"
NIU_NIU = "KS QS JS 10S 10H"            # beats Bull 8 (Equal pays 1:1)
BULL_5 = "AS 2S 3D 4D 5C"
NO_BULL = "2H 4C 7D 9S KH"              # no ten from three: Bull 5 beats it


def preset_file(folder: Path, name: str, quantum: str, rounding: str = "half_up") -> Path:
    path = folder / f"{name}.toml"
    path.write_text((PRESET_DIR / "cambodia.toml").read_text()
                    .replace('name = "cambodia"', f'name = "{name}"')
                    .replace('quantum = "0.01"', f'quantum = "{quantum}"')
                    .replace('rounding = "half_up"', f'rounding = "{rounding}"'))
    return path


@pytest.fixture
def table(tmp_path, request):
    """``(quantum, currency, rounding, bet_limits)`` by indirect parametrisation; cents in USD by default."""
    quantum, currency, rounding, limits = getattr(request, "param", ("0.01", "USD", "half_up", None))
    data = table_dict(("banker", "1", "2"), rules=str(preset_file(tmp_path, "money", quantum, rounding)))
    data["currency"] = currency
    if limits:
        data["bet_limits"] = limits
    return table_config_from_dict(data)


KWD = ("0.001", "KWD", "half_even", None)
KHR = ("1", "KHR", "half_up", None)
USD = ("0.01", "USD", "half_up", None)


def settle_one(dealer, service, stake: str, player: str = NIU_NIU, banker: str = BANKER_BULL_8) -> dict:
    """Seat 1 stakes ``stake`` Equal; the round is dealt, settled and cleared into the history."""
    dealer.post("/dealer/api/bet", {"seat": "1", "amount": stake, "kind": "equal"})
    service.observe([hand("banker", banker), hand("1", player)], 1)
    state = dealer.post("/dealer/api/settle")["state"]
    service.observe([], 2)
    return state


def line_of(state: dict, name: str = "1") -> dict:
    return next(s for s in state["seats"] if s["name"] == name)["line"]


def surveillance(app):
    watcher = app.test_client()
    login(watcher, "watch1")
    return watcher


def round_list_cells(page: str, number: int = 1) -> list[str]:
    row = re.search(rf'<td><a href="/review/round/{number}">#{number}</a></td>(.*?)</tr>', page, re.S).group(1)
    return [" ".join(re.sub(r"<[^>]+>", "", cell).split()) for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]


def seat_row(page: str, seat: str = "1") -> str:
    row = re.search(rf"<td>Seat {seat}</td>(.*?)</tr>", page, re.S).group(1)
    return " ".join(re.sub(r"<[^>]+>", " ", row).split())


# --------------------------------------------------------------------------- H1


@pytest.mark.parametrize("table", [KWD], indirect=True)
def test_a_three_decimal_players_net_is_kept_exact_in_the_round_list_and_the_history_tile(app, dealer, service):
    """1.03 Equal wins 1.03 less 0.052 commission (5 %, half even to the fils): 0.978, not 0.98."""
    settled = settle_one(dealer, service, "1.03")
    assert load_round(service.audit, 1, table_id="t1")["players_net"] == "0.978"
    tile = dealer.state()["history"][0]
    assert tile["players_net"] == "0.978" and tile["lines"]["1"]["net"] == "0.978"
    cells = round_list_cells(surveillance(app).get("/review/").get_data(as_text=True))
    assert cells[5] == "0.978", cells
    assert cells[4].endswith("WIN 0.978"), cells
    # and the PAY line beside it, every figure to the fils (M2: the gross was 1.03)
    assert (line_of(settled)["net"], line_of(settled)["commission"], line_of(settled)["gross"]) == \
        ("0.978", "0.052", "1.030")


# --------------------------------------------------------------------------- M1


@pytest.mark.parametrize("table", [KWD], indirect=True)
def test_a_fils_table_takes_three_decimal_stakes_and_refuses_finer(dealer, service):
    assert service.set_bet("1", "1.125", "equal", "dealer1")["1"].amount == Decimal("1.125")
    assert dealer.state()["seats"][1]["bet"]["amount"] == "1.125"
    with pytest.raises(TableError, match=r"'1.1255' has more than 3 decimals"):
        service.set_bet("1", "1.1255", "equal", "dealer1")


def test_a_cents_table_still_refuses_a_third_decimal():
    with pytest.raises(TableError, match="has more than 2 decimals"):
        parse_amount("30.001", "1")
    assert parse_amount("30.5", "1") == Decimal("30.50")      # logged with 2 places, as always
    assert parse_amount("1.125", "1", unit=Decimal("0.001")) == Decimal("1.125")
    assert str(parse_amount("7", "1", unit=Decimal("1"))) == "7.00"      # riel stakes are logged as before


# --------------------------------------------------------------------------- M2


@pytest.mark.parametrize("table", [KHR], indirect=True)
def test_riel_is_shown_without_cents_everywhere_but_logged_as_before(app, dealer, service, audit, runner):
    """1,234,567 Equal wins; commission 61,728.35 rounds to 61,728: net 1,172,839."""
    settled = settle_one(dealer, service, "1234567")
    line = line_of(settled)
    assert (line["gross"], line["commission"], line["net"], line["amount"]) == \
        ("1234567", "61728", "1172839", "1172839")
    assert line["bet"]["amount"] == "1234567"
    assert settled["totals"]["commission"] == "61728"
    tile = dealer.state()["history"][0]
    assert tile["players_net"] == "1172839" and tile["bets"]["1"]["amount"] == "1234567"
    assert tile["lines"]["1"]["gross"] == "1234567"
    # The log keeps its own text: records already written read the same, new ones are alike.
    logged = audit.records(types=(AuditType.SETTLEMENT_LINE,))[-1].data
    assert (logged["gross"], logged["net"], logged["bet"]["amount"]) == ("1234567.00", "1172839.00", "1234567.00")
    page = surveillance(app).get("/review/round/1").get_data(as_text=True)
    assert "1,234,567 equal" in seat_row(page) and "WIN 1,234,567 61,728 1,172,839" in seat_row(page)
    assert ".00" not in seat_row(page)
    assert "House net -1,172,839 KHR" in page and "commission 61,728" in page
    code, out, _ = runner(["audit", "report", "--data-dir", app.config["DATA_DIR"]])
    assert code == 0 and "stakes       1,234,567 KHR" in out, out
    assert "players net  1,172,839 KHR" in out and "commission 61,728 KHR" in out
    report = surveillance(app).get("/review/report?from=2000-01-01&to=2100-01-01").get_data(as_text=True)
    assert '<td id="report-stakes">1,234,567</td>' in report and "Stakes (KHR)" in report


@pytest.mark.parametrize("table", [KWD], indirect=True)
def test_a_fils_round_page_writes_every_figure_to_three_places(app, dealer, service):
    settle_one(dealer, service, "1.03")
    row = seat_row(surveillance(app).get("/review/round/1").get_data(as_text=True))
    assert "1.030 equal" in row and "WIN 1.030 0.052 0.978" in row, row


@pytest.mark.parametrize("table", [("1", "KHR", "half_up", {"minimum": "1000", "maximum": "5000000"})],
                         indirect=True)
def test_riel_limits_are_written_to_the_unit_and_grouped(dealer):
    refused = dealer.post("/dealer/api/bet", {"seat": "1", "amount": "100", "kind": "equal"}, status=409)
    assert refused["error"] == "bet on seat 1: 100 is below the table minimum (1,000 to 5,000,000 KHR)"
    assert dealer.state()["table"]["bet_limits"] == {"minimum": "1000", "maximum": "5000000"}
    assert "Table limits 1,000 to 5,000,000 KHR" in dealer.page()


def test_the_pages_and_the_python_helper_write_money_alike(app):
    """The pages' macro and :func:`scoring.settle.money_shown` (screen, console) are one rule."""
    from scoring.settle import money_shown

    template = app.jinja_env.from_string('{% from "_money.html" import amount with context %}{{ amount(x) }}')
    for unit in ("0.01", "0.05", "0.10", "0.001", "1", "100", "1E+2", "0.5"):
        for text in ("0", "0.00", "-0.00", "5", "95.00", "-3516515.95", "3518516.00", "1.03", "0.978", "-493.149",
                     "1234567", "1000.0", "0.5", "-1000000000.00"):
            shown = template.render(x=text, preset=SimpleNamespace(commission_quantum=Decimal(unit)))
            assert shown == money_shown(text, Decimal(unit), grouped=True), (unit, text, shown)
    assert template.render(x=None, preset=SimpleNamespace(commission_quantum=Decimal("1"))) == ""
    pinned = {("3518516.00", "1"): "3,518,516", ("1.03", "0.001"): "1.030", ("-0.00", "1"): "0",
              ("3700.00", "1E+2"): "3,700", ("0.978", "0.01"): "0.978",     # finer than the unit: never rounded
              ("-3516515.95", "0.01"): "-3,516,515.95", ("12.50", "1"): "12.50"}
    for (text, unit), expected in pinned.items():
        assert money_shown(text, Decimal(unit), grouped=True) == expected, (text, unit)


# --------------------------------------------------------------------------- M3


@pytest.mark.parametrize("table", [USD], indirect=True)
def test_thousands_are_grouped_and_the_currency_named_but_exports_stay_plain(app, dealer, service, runner):
    settle_one(dealer, service, "1234567")       # wins 1,234,567.00 less 61,728.35
    watcher = surveillance(app)
    cells = round_list_cells(watcher.get("/review/").get_data(as_text=True))
    assert cells[5] == "1,172,838.65" and cells[4].endswith("WIN 1,172,838.65"), cells
    page = watcher.get("/review/round/1").get_data(as_text=True)
    assert "1,234,567.00 equal" in seat_row(page) and "WIN 1,234,567.00 61,728.35 1,172,838.65" in seat_row(page)
    assert "amounts in USD" in page and "House net -1,172,838.65 USD" in page
    code, out, _ = runner(["audit", "report", "--data-dir", app.config["DATA_DIR"]])
    assert "stakes       1,234,567.00 USD" in out and "players net  -1,172,838.65" not in out
    assert "players net  1,172,838.65 USD" in out and "house result -1,172,838.65 USD" in out, out
    assert re.search(r"\n\s+1\s+1\s+1,234,567.00\s+1,172,838.65\n", out), out
    code, out, _ = runner(["audit", "report", "--data-dir", app.config["DATA_DIR"], "--json"])
    books = json.loads(out)[0]
    assert (books["stakes"], books["players_net"]) == ("1234567.00", "1172838.65")    # machines read it plain
    exported = watcher.get("/review/export?format=json").get_data(as_text=True)
    assert "1234567.00" in exported and "1,234,567" not in exported
    csv_text = watcher.get("/review/export?format=csv").get_data(as_text=True)
    assert "1,234,567" not in csv_text


# --------------------------------------------------------------------------- L2


@pytest.mark.parametrize("typed", ["٣٠", "３０", "۳۰", "1٠"])
def test_only_ascii_digits_are_a_stake(typed):
    with pytest.raises(TableError, match="is not an amount"):
        parse_amount(typed, "1")


# --------------------------------------------------------------------------- L1 (the screen itself)


CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")


def _browser_missing() -> bool:
    try:
        import selenium  # noqa: F401
    except ImportError:
        return True
    return not (CHROMIUM.exists() and CHROMEDRIVER.exists())


@pytest.mark.browser
@pytest.mark.skipif(_browser_missing(), reason="needs Debian chromium + chromium-driver and selenium")
@pytest.mark.parametrize("table", [("0.01", "USD", "ceiling", None)], indirect=True)
def test_a_win_the_commission_takes_whole_reads_as_a_win_not_a_push(tmp_path, app, service):
    """0.01 Equal wins 0.01; 5 % of it rounded up to the cent is 0.01: nothing moves, but it won."""
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    from werkzeug.serving import make_server

    service.set_bet("1", "0.01", "equal", "dealer1")
    service.observe([hand("banker", NO_BULL), hand("1", BULL_5)], 1)
    service.settle("dealer1")
    line = line_of(service.snapshot())
    assert (line["outcome"], line["gross"], line["commission"], line["net"], line["action"]) == \
        ("win", "0.01", "0.01", "0.00", "none")
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    options = Options()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 f"--user-data-dir={tmp_path / 'chromium-profile'}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    try:
        url = f"http://127.0.0.1:{server.server_port}/"
        driver.get(url + "auth/login")
        driver.find_element(By.ID, "username").send_keys("dealer1")
        driver.find_element(By.ID, "password").send_keys(ACCOUNTS["dealer1"][1])
        driver.find_element(By.ID, "login").click()
        money = '.seat[data-seat="1"] .money .amount'
        WebDriverWait(driver, 10).until(lambda d: d.find_elements(By.CSS_SELECTOR, money))
        text = driver.find_element(By.CSS_SELECTOR, money).text
        assert text == "WIN · commission takes the whole win", text
    finally:
        driver.quit()
        server.shutdown()
        server.server_close()


# --------------------------------------------------------------------------- L3


@pytest.mark.parametrize("table", [("1E+2", "KHR", "half_up", None)], indirect=True)
def test_an_exponent_unit_is_named_plainly_when_a_stake_is_refused(service):
    with pytest.raises(TableError) as refused:
        service.set_bet("1", "150", "equal", "dealer1")
    assert "not a whole number of the table's money unit 100 (money)" in str(refused.value)
    assert service.set_bet("1", "1,500", "equal", "dealer1")["1"].amount == 1500
