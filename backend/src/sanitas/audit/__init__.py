"""The audit log of security-relevant actions: `service.record` adds a row in the caller's
transaction; admins list and export it through routes.py."""
