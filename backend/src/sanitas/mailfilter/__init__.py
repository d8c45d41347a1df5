"""The mail channel: `sanitas mail`, an after-queue SMTP content filter for Postfix (see
server.py and docs/mail.md). Not to be confused with sanitas/mail.py (the service's own
outgoing notification mail) or engine/mail.py (the .eml cleaner this channel runs in the
sandbox for each message)."""
