"""Compliance reports: every file of a period and scope with its hashes, policy, result and
findings, plus totals, as CSV or PDF, generated in the background (worker.py) and kept in
blob storage."""
