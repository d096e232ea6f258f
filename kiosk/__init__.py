"""The dealer kiosk (Flask), the audit log, surveillance review, auth, and the root ``niuniu`` command."""
