"""What a screen reader is given on the dealer page and the review pages (QA53 Q5 L2, L9): a
heading to find the dealer page by, a name for the stake's field, and header cells that say which
way they head (a column, or a row of the shift report)."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from kiosk_testing import login


class Page(HTMLParser):
    """The page's headings, its labels' targets and words, and each table's rows of cells."""

    def __init__(self, html: str):
        super().__init__()
        self.headings: list[tuple[str, str]] = []
        self.labels: dict[str, str] = {}
        self.tables: dict[str, list[list[tuple[str, dict]]]] = {}
        self._heading = self._label = None
        self._table: list | None = None
        self._text: list[str] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag in ("h1", "h2"):
            self._heading, self._text = tag, []
        elif tag == "label" and attrs.get("for"):
            self._label, self._text = attrs["for"], []
        elif tag == "table":
            name = attrs.get("id") or ("sign-off" if attrs.get("class") == "sign-off" else f"table {len(self.tables)}")
            self._table = self.tables.setdefault(name, [])
        elif tag == "tr" and self._table is not None:
            self._table.append([])
        elif tag in ("th", "td") and self._table is not None and self._table:
            self._table[-1].append((tag, attrs))

    def handle_endtag(self, tag):
        if tag == self._heading:
            self.headings.append((tag, "".join(self._text).strip()))
            self._heading = None
        elif tag == "label" and self._label:
            self.labels[self._label] = "".join(self._text).strip()
            self._label = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data):
        self._text.append(data)


def test_the_dealer_page_has_a_heading_and_names_the_stake(dealer):
    page = Page(dealer.page())
    assert ("h1", "Table t1 · dealer screen") in page.headings
    assert page.labels.get("bet-amount") == "Stake"


def unscoped(page: Page) -> list[str]:
    """Header cells that do not say whether they head a column or a row."""
    return [f"{name} row {i}" for name, rows in page.tables.items() for i, row in enumerate(rows)
            for tag, attrs in row if tag == "th" and attrs.get("scope") not in ("col", "row")]


@pytest.mark.parametrize("url", ["/review/", "/review/round/2", "/review/round/1", "/review/log"])
def test_review_tables_scope_their_header_cells(played, url):
    page = Page(played.get(url).get_data(as_text=True))
    heads = [row for rows in page.tables.values() for row in rows if row and all(tag == "th" for tag, _ in row)]
    assert heads, url
    assert all(attrs.get("scope") == "col" for row in heads for _, attrs in row), url
    # the round page's sign-off sheet is printed for a pen: its labels head no cells to read
    page.tables.pop("sign-off", None)
    assert unscoped(page) == [], url


def test_the_shift_report_scopes_its_row_headers(client, service):
    from kiosk_testing import play
    play(client, service, [("KS QS JS 10S 10H", "settle")])
    login(client, "super1")
    page = Page(client.get("/review/report").get_data(as_text=True))
    totals = page.tables["report-totals"]
    assert totals and all(row[0] == ("th", {"scope": "row"}) for row in totals), totals
    assert all(attrs.get("scope") == "col" for _, attrs in page.tables["report-seats"][0])
