"""Webhooks: endpoints, signed deliveries with retries, the SSRF guard (see docs/webhooks.md)."""
