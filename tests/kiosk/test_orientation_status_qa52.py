"""A reader without its orientation model, where the supervisor at the table sees it (QA52): the
status the dealer's screen reads names the missing file, and the admin page says in words what it
means and whom to call.  (The dealer's MODEL pill: tests/browser/test_orientation_pill_qa52.py.)"""

from __future__ import annotations

from kiosk_testing import create_accounts, login
from test_kiosk_start_qa52 import unturned  # noqa: F401  (a fixture)

WORDS = "is missing, so the cards are read without being turned upright and are misread more. Call the technician"


def test_the_status_and_the_admin_page_say_the_orientation_model_is_missing(tmp_path, unturned):  # noqa: F811
    missing = str(tmp_path / "models" / "card-orientation.pt")
    create_accounts(unturned)
    client = unturned.test_client()
    login(client, "dealer1")
    assert client.get("/live/status").get_json()["orientation_missing"] == missing
    admin = unturned.test_client()
    login(admin, "admin1")
    page = admin.get("/admin/users").get_data(as_text=True)
    assert f"⚠ No orientation model: {missing} {WORDS}" in page, page


def test_a_reader_with_its_orientation_model_is_shown_as_before(app, client):
    login(client, "dealer1")
    assert client.get("/live/status").get_json()["orientation_missing"] is None
    admin = app.test_client()
    login(admin, "admin1")
    page = admin.get("/admin/users").get_data(as_text=True)
    assert "orientation model" not in page and "Camera " in page and " · model " in page, page
