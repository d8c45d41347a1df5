"""The mail filter's metrics (served by `sanitas mail` on SANITAS_MAIL_METRICS_PORT, with the
bearer-token rule of sanitas/web/metrics.py). Every label has a fixed set of values."""

from __future__ import annotations

from prometheus_client import Counter, Histogram

from sanitas.engine.verdict import Verdict
from sanitas.web.metrics import bounded

OUTCOMES = frozenset(("delivered", "refused", "deferred", "duplicate"))
VERDICTS = frozenset(v.value for v in Verdict)
FAILURES = frozenset(("unreachable", "temporary", "permanent"))
BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)

MESSAGES = Counter("sanitas_mail_messages", "Messages the mail filter answered, by outcome: "
                   "delivered (250), refused (5xx), deferred (4xx), duplicate (a retry of one "
                   "already delivered: 250 without a second delivery)",
                   ["outcome"])
MESSAGE_VERDICTS = Counter("sanitas_mail_message_verdicts",
                           "Messages cleaned, by the message's verdict", ["verdict"])
ATTACHMENTS = Counter("sanitas_mail_attachments", "Attachments, by verdict (refused: "
                      "replaced by a note saying why)", ["verdict"])
LATENCY = Histogram("sanitas_mail_duration_seconds", "Time from the end of DATA to the "
                    "answer to Postfix (cleaning and re-injection)", ["outcome"],
                    buckets=BUCKETS)
NEXT_HOP_FAILURES = Counter("sanitas_mail_next_hop_failures",
                            "Re-injections the next hop did not accept: unreachable, "
                            "temporary (4xx) or permanent (5xx)", ["kind"])


def message(outcome: str, seconds: float | None = None) -> None:
    label = bounded(outcome, OUTCOMES)
    MESSAGES.labels(label).inc()
    if seconds is not None:
        LATENCY.labels(label).observe(seconds)


def cleaned(verdict: str, attachment_verdicts: list[str]) -> None:
    MESSAGE_VERDICTS.labels(bounded(verdict, VERDICTS)).inc()
    for v in attachment_verdicts:
        ATTACHMENTS.labels(bounded(v, VERDICTS)).inc()


def next_hop_failed(kind: str) -> None:
    NEXT_HOP_FAILURES.labels(bounded(kind, FAILURES)).inc()
