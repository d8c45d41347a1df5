"""Sanitization policies over the API: stored, versioned, chosen per upload (issue 12)."""
