"""Account management for the admin: add people, disable them, reset passwords and PINs.

Accounts are never deleted: the audit log names people by username, and a name that
could be deleted and reissued would make the log say the wrong person did something.
"""

from __future__ import annotations

from flask import Blueprint, flash, g, redirect, render_template, request, session, url_for

from kiosk import auth, db
from kiosk.audit import AuditType
from kiosk.auth import AuthError, PinTaken, Role, require
from kiosk.backup import backup_status, restored_after
from kiosk.runtime import audit, runtime, service
from vision.record import recordings_dir
from vision.retention import storage_status

bp = Blueprint("admin", __name__, url_prefix="/admin")


def _user(conn, user_id: int):
    row = conn.execute("SELECT id, username, role, active FROM users WHERE id = ?", (user_id,)).fetchone()
    if row is None:
        raise AuthError(f"there is no account number {user_id}")
    return row


@bp.route("/users", methods=("GET", "POST"))
@require(Role.ADMIN)
def users():
    conn = db.get_db()
    error, status = None, 200
    if request.method == "POST":
        form = request.form
        try:
            if form.get("password", "") != form.get("password2", ""):
                raise AuthError("the two passwords differ; type the same password twice")
            created = auth.create_user(conn, form.get("username", "").strip(), form.get("role", ""),
                                       form.get("password", ""), form.get("pin", "").strip() or None,
                                       created_by=g.user["username"])
        except PinTaken as taken:
            error, status = _retire(conn, taken), 400
        except AuthError as exc:
            error, status = str(exc), 400
        else:
            audit().append(AuditType.USER_CREATED, g.user["username"], created)
            flash(f"Account {created['username']} ({created['role']}) created.")
            return redirect(url_for("admin.users"))
    config = service().config
    storage = storage_status(recordings_dir(runtime().data_dir, config.table_id))
    backup = backup_status(audit())
    return render_template("admin/users.html", users=auth.list_users(conn), roles=[r.value for r in Role],
                           error=error, status=service().status(), backup=backup,
                           restored=restored_after(audit(), backup),
                           forward=service().forward_status(),
                           storage=storage, retention=config.recordings), status


@bp.route("/users/<int:user_id>/active", methods=("POST",))
@require(Role.ADMIN)
def set_active(user_id: int):
    conn = db.get_db()
    active = request.form.get("active") == "1"
    try:
        row = _user(conn, user_id)
        if row["id"] == g.user["id"] and not active:
            raise AuthError("you cannot disable your own account; ask another admin")
        if row["role"] == Role.ADMIN.value and not active:
            admins = conn.execute("SELECT COUNT(*) FROM users WHERE role = 'admin' AND active = 1").fetchone()[0]
            if admins <= 1:
                raise AuthError("this is the last active admin; create another admin first")
    except AuthError as exc:
        flash(str(exc), "error")
        return redirect(url_for("admin.users"))
    conn.execute("UPDATE users SET active = ? WHERE id = ?", (1 if active else 0, user_id))
    if not active:
        # A disabled account's sessions are refused while it is disabled; ending them too
        # means enabling it later does not bring back a session nobody used meanwhile.
        auth.end_sessions(conn, user_id)
    audit().append(AuditType.USER_CHANGED, g.user["username"],
                   {"username": row["username"], "change": "enabled" if active else "disabled"})
    flash(f"Account {row['username']} {'enabled' if active else 'disabled'}.")
    return redirect(url_for("admin.users"))


def _retire(conn, taken: PinTaken) -> str:
    message = auth.retire_pin(conn, taken)
    audit().append(AuditType.USER_CHANGED, g.user["username"], {
        "username": taken.holder, "change": "PIN cleared: typed for another account, so no longer secret"})
    return message


@bp.route("/users/<int:user_id>/secret", methods=("POST",))
@require(Role.ADMIN)
def reset_secret(user_id: int):
    """Set a new password (and, for a supervisor, optionally a new PIN), and end every
    session of the account: a reset is how an admin answers a leaked password or PIN, and
    it achieves nothing while whoever used it stays logged in."""
    conn = db.get_db()
    form = request.form
    try:
        row = _user(conn, user_id)
        password = form.get("password", "")
        pin = form.get("pin", "").strip() or None
        auth.check_password(password, "the new password", username=row["username"])
        if password != form.get("password2", ""):
            raise AuthError(f"the two new passwords for {row['username']} differ; type the same password twice")
        if pin is not None:
            auth.validate_account(row["username"], row["role"], password, pin)
            auth.check_pin_free(conn, pin, for_id=user_id)
    except PinTaken as taken:
        flash(_retire(conn, taken), "error")
        return redirect(url_for("admin.users"))
    except AuthError as exc:
        flash(str(exc), "error")
        return redirect(url_for("admin.users"))
    # One transaction: there is no moment when the new secret is set and the old sessions
    # (or a login made with the old password just before) still hold.
    with conn:
        conn.execute("UPDATE users SET password_hash = ?, pin_hash = COALESCE(?, pin_hash) WHERE id = ?",
                     (auth.hash_secret(password), auth.hash_secret(pin) if pin is not None else None, user_id))
        generation = auth.end_sessions(conn, user_id)
    if user_id == g.user["id"]:
        # An admin resetting their own password is the one who knows the new one: keep
        # this session, end the others.
        session["gen"] = generation
    audit().append(AuditType.USER_CHANGED, g.user["username"],
                   {"username": row["username"], "change": "password and PIN reset" if pin else "password reset"})
    flash(f"New password{' and PIN' if pin else ''} set for {row['username']}; "
          f"{'your other' if user_id == g.user['id'] else 'their'} open sessions have ended.")
    return redirect(url_for("admin.users"))
