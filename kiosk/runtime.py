"""Where a request finds the long-lived objects of the running kiosk.

The audit log and the table service outlive requests and are shared by every
thread (the camera loop, SSE streams, dealer actions); they hang off
``app.extensions`` so blueprints reach them without importing the app module.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from flask import current_app

if TYPE_CHECKING:
    from kiosk.audit import AuditLog
    from kiosk.chain import ChainCheck
    from kiosk.table_service import TableService

EXTENSION = "niuniu"


@dataclass
class Runtime:
    data_dir: Path
    audit: "AuditLog"
    service: "TableService"
    demo_accounts: list = field(default_factory=list)
    chain: "ChainCheck | None" = None      # the chain page's check, with its last full walk


def runtime() -> Runtime:
    return current_app.extensions[EXTENSION]


def audit() -> "AuditLog":
    return runtime().audit


def service() -> "TableService":
    return runtime().service
