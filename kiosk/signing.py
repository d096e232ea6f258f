"""The table's evidence key: an evidence package anyone can check without the kiosk.

An evidence package (``kiosk.evidence``) proves itself against the kiosk's own log: its
records are the ones the log holds, and the log recorded the export.  The regulator, lawyer
or insurer it is handed to has no log.  So the kiosk signs each package's manifest with a
key of its own (Ed25519), the casino publishes the public half once (``niuniu audit
public-key``), and ``niuniu audit check-evidence PACKAGE --public-key table.pem`` proves with
nothing else that every file is the one this table exported: the manifest holds each
file's SHA-256, and only the holder of the private key can sign a manifest.  The same key
signs the statement of each audit export of a period (``kiosk.exports``).

The private key lives in the data directory (``evidence_key``, readable by the kiosk's
user only), made on first use.  The log records its public half when it is made
(``signing_key_created``), so a new key — a disk restored without it, a key moved aside —
shows in the chain, and the key a package names can be traced to the log that made it.
Backups carry it as they carry the session secret.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
from pathlib import Path

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from kiosk.audit import AuditError, AuditLog, AuditType, damaged_words

KEY_FILE = "evidence_key"
SIGNATURE = "SIGNATURE.json"
SIGNATURE_FORMAT = "niuniu-evidence-signature/1"
ALGORITHM = "Ed25519"


class SigningError(AuditError):
    pass


def fingerprint(public_key: Ed25519PublicKey) -> str:
    """SHA-256 of the raw public key, hex: what a manifest, the log and a person compare."""
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return hashlib.sha256(raw).hexdigest()


def public_pem(public_key: Ed25519PublicKey) -> str:
    return public_key.public_bytes(serialization.Encoding.PEM,
                                   serialization.PublicFormat.SubjectPublicKeyInfo).decode("ascii")


def table_key(data_dir: str | Path, log: AuditLog, actor: str) -> Ed25519PrivateKey:
    """The data directory's signing key; made (and its public half logged) on first use.

    A key file that cannot be read is an error, never a quiet new key: packages signed
    with a key nobody published prove nothing, and the old key may still be restorable."""
    path = Path(data_dir) / KEY_FILE
    found = read_table_key(data_dir)
    if found is not None:
        return found
    key = Ed25519PrivateKey.generate()
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption())
    # Written whole beside it, then linked into place: a reader never sees half a key, and of
    # two processes making one at once, one key wins and both use it.
    draft = path.with_name(f".{KEY_FILE}.{os.getpid()}.draft")
    try:
        fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(pem)
        os.link(draft, path)
    except FileExistsError:            # another process made it a moment ago: use theirs
        return _read_key(path, path.read_bytes())
    except OSError as exc:
        raise SigningError(f"cannot create the evidence signing key {path}: {exc.strerror}; run this as the "
                           "kiosk's user (sudo -u niuniu niuniu ...)") from None
    finally:
        draft.unlink(missing_ok=True)
    public = key.public_key()
    try:
        # table(): a console opens the log without a table id, and a record of no table reads
        # as "table 's key" wherever it is shown.
        log.append(AuditType.SIGNING_KEY_CREATED, actor,
                   {"algorithm": ALGORITHM, "fingerprint": fingerprint(public), "public_key": public_pem(public)},
                   table_id=log.table())
    except Exception:
        path.unlink(missing_ok=True)   # a key the log never recorded must not sign anything
        raise
    return key


def read_table_key(data_dir: str | Path) -> Ed25519PrivateKey | None:
    """The data directory's signing key, None if it has none yet; :class:`SigningError` if unreadable."""
    path = Path(data_dir) / KEY_FILE
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SigningError(f"cannot read the evidence signing key {path}: {exc.strerror}; run this as the kiosk's "
                           "user (sudo -u niuniu niuniu ...)") from None
    return _read_key(path, data)


def logged_key(log: AuditLog, key_id: str):
    """The readable ``signing_key_created`` record of the key with fingerprint ``key_id``, or
    None.  A damaged one is passed over: which key it recorded cannot be read, so it vouches
    for none (:func:`damaged_key_words` says so where a key is checked)."""
    return next((r for r in log.records(types=[AuditType.SIGNING_KEY_CREATED])
                 for data, _ in (r.read(),) if data is not None and data.get("fingerprint") == key_id), None)


def damaged_key_words(log: AuditLog) -> str | None:
    """Why a key no readable record made may still be the log's own: its ``signing_key_created``
    records that cannot be read, in :class:`DamagedRecord`'s words, and what that means for the
    key check; None where every one reads."""
    damaged = [r for r in log.records(types=[AuditType.SIGNING_KEY_CREATED]) if r.damage]
    if not damaged:
        return None
    return (f"{damaged_words(damaged, 'key record')}; a key record that cannot be read cannot vouch for a key, "
            "though the key may be the one it recorded")


def _read_key(path: Path, data: bytes) -> Ed25519PrivateKey:
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        raise SigningError(f"{path} is not a readable private key ({exc}); restore it from the latest backup "
                           "(niuniu restore copies it back), or move it aside to make a new key, which the audit "
                           "log records and which must then be published again") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise SigningError(f"{path} holds a {type(key).__name__}, not an Ed25519 key; restore the table's key from "
                           "the latest backup, or move the file aside to make a new one")
    return key


def signature_bytes(key: Ed25519PrivateKey, manifest: bytes) -> bytes:
    """``SIGNATURE.json``: the signature over the manifest's exact bytes, and the key to check it."""
    public = key.public_key()
    return (json.dumps({"format": SIGNATURE_FORMAT, "algorithm": ALGORITHM, "signs": "MANIFEST.json",
                        "key_fingerprint": fingerprint(public), "public_key": public_pem(public),
                        "signature": base64.b64encode(key.sign(manifest)).decode("ascii")},
                       indent=2, sort_keys=True) + "\n").encode("utf-8")


def load_public_key(path: str | Path) -> Ed25519PublicKey:
    """A published public key (PEM, as ``niuniu audit public-key`` prints it)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise SigningError(f"cannot read the public key {path}: {exc.strerror}") from None
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, TypeError) as exc:
        raise SigningError(f"{path} is not a PEM public key ({exc}); give the file `niuniu audit public-key` "
                           "wrote") from None
    if not isinstance(key, Ed25519PublicKey):
        raise SigningError(f"{path} holds a {type(key).__name__}, not the table's Ed25519 key")
    return key


def check_signature(signature: bytes | None, manifest_bytes: bytes, manifest: dict,
                    published: Ed25519PublicKey | None, log: AuditLog | None,
                    problems: list[str], facts: list[str]) -> None:
    """Is the manifest signed, by which key, and is that the key the casino published (or
    the one the log recorded)?  Appends to ``problems`` and ``facts``."""
    claimed = manifest.get("signing_key")
    if signature is None:
        if claimed:
            problems.append(f"the manifest says {SIGNATURE} signs it (key {claimed}) but the package has none: "
                            "it was removed after export")
        elif published is not None:
            problems.append("the package is not signed, so the published key cannot vouch for it (exported before "
                            "this kiosk signed packages?); check it against the kiosk's log with --data-dir")
        return
    try:
        key_id = verified_signer(json.loads(signature), manifest_bytes)
    except InvalidSignature:
        problems.append(f"{SIGNATURE} does not match MANIFEST.json: the manifest was changed after it was signed")
        return
    except UNREADABLE as exc:
        problems.append(f"{SIGNATURE} cannot be read ({exc})")
        return
    if not claimed:
        problems.append(f"{SIGNATURE} was added after export: the manifest names no signing key")
        return
    if claimed != key_id:
        problems.append(f"the manifest names signing key {claimed}, but {SIGNATURE} is by key {key_id}")
        return
    check_signer(key_id, published, log, problems, facts, signed="MANIFEST.json",
                 proves="the manifest is as the table signed it (each file is checked against it on its own)")


# What reading a signature out of JSON someone handed over can raise, besides InvalidSignature.
UNREADABLE = (ValueError, TypeError, KeyError, AttributeError)


def verified_signer(sealed: dict, data: bytes) -> str:
    """The fingerprint of the key whose signature in ``sealed`` (its ``public_key`` PEM and
    base64 ``signature``, as evidence and export statements carry them) holds over ``data``.

    Raises ``InvalidSignature`` when it does not hold, one of ``UNREADABLE`` when it cannot
    be read: a bad file is a finding for the caller, never a crash."""
    public = serialization.load_pem_public_key(sealed["public_key"].encode("ascii"))
    raw = base64.b64decode(sealed["signature"], validate=True)
    if not isinstance(public, Ed25519PublicKey):
        raise TypeError(f"a {type(public).__name__}, not Ed25519")
    public.verify(raw, data)
    return fingerprint(public)


def check_signer(key_id: str, published: Ed25519PublicKey | None, log: AuditLog | None, problems: list[str],
                 facts: list[str], *, signed: str, proves: str) -> None:
    """Is the key that made a (valid) signature the one the casino published, or one this log
    made?  ``signed`` names what was signed, ``proves`` what that shows.  Appends."""
    if published is not None:
        if fingerprint(published) != key_id:
            problems.append(f"signed by key {key_id}, not by the published key {fingerprint(published)}")
        else:
            facts.append(f"{signed} is signed by the published key {key_id}: {proves}")
    if log is not None:
        made = logged_key(log, key_id)
        damaged = damaged_key_words(log) if made is None else None
        if damaged:
            problems.append(f"signed by key {key_id}, which no readable record of this log made: {damaged}")
        elif made is None:
            problems.append(f"signed by key {key_id}, which this log never made")
        else:
            facts.append(f"signed by the key this log made at seq {made.seq} ({made.ts})")
    if published is None and log is None:
        facts.append(f"{signed} is signed by key {key_id} (compare it with the key the casino publishes: "
                     "--public-key FILE)")
