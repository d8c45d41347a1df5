"""Schemathesis hooks of `make fuzz` (scripts/fuzz_api.py loads them via SCHEMATHESIS_HOOKS):
the generated requests also carry the inputs that used to break the API (issue 19).

- Moments (`date-time`, `date`): often at the ends of the calendar or without a zone, e.g.
  9999-12-31T23:59:59-01:00 (year 10000 in UTC) or 0001-01-01T00:00:00+01:00.
- Any string of a path, a query or a JSON body: sometimes one of them replaced by a value
  with a NUL byte, an extreme moment or invisible characters. Free-text fields such as
  report periods are plain strings in the document, so this is how they meet such moments.

The API must answer each with a documented status (422 for the bad ones), never a 5xx."""

from __future__ import annotations

import copy
from datetime import UTC, date, datetime, timedelta, timezone
from functools import partial

import schemathesis
from hypothesis import strategies as st

EXTREME_MOMENTS = ["9999-12-31T23:59:59-01:00", "0001-01-01T00:00:00+01:00",
                   "9999-12-31T23:59:59.999999+00:00", "0001-01-01T00:00:00Z",
                   "2099-01-01T00:00:00", "1969-12-31T23:59:59Z", "9000-01-01T00:00:01Z"]
EXTREME_DAYS = ["9999-12-31", "0001-01-01", "9000-01-01", "1969-12-31"]
POISON = ["a\x00b", "\x00", "\x00" * 3, "x\u202eexe.pdf", "\u200b\x07",
          *EXTREME_MOMENTS, *EXTREME_DAYS]

_zones = st.sampled_from([None, UTC, timezone(timedelta(hours=14)),
                          timezone(-timedelta(hours=12))])


def _iso(value: date) -> str:
    """Named functions here, not lambdas: hypothesis parses a lambda's source to describe it,
    which schemathesis's worker threads can trip on Python 3.11 ("AST constructor recursion
    depth mismatch")."""
    return value.isoformat()


_moments = st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31),
                        timezones=_zones).map(_iso)

schemathesis.openapi.format("date-time", st.one_of(st.sampled_from(EXTREME_MOMENTS), _moments))
schemathesis.openapi.format("date", st.one_of(st.sampled_from(EXTREME_DAYS),
                                              st.dates().map(_iso)))


def _string_paths(value, path=()):
    if isinstance(value, str):
        yield path
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _string_paths(item, (*path, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _string_paths(item, (*path, i))


def _replaced(value, path, new):
    if not path:
        return new
    out = copy.deepcopy(value)
    target = out
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = new
    return out


def _poisoned(value):
    """`value` as drawn, or (one time in three) with one of its strings replaced by POISON."""
    paths = list(_string_paths(value))
    if not paths:
        return st.just(value)
    bad = st.builds(partial(_replaced, value), st.sampled_from(paths), st.sampled_from(POISON))
    return st.one_of(st.just(value), st.just(value), bad)


@schemathesis.hook
def flatmap_body(ctx, body):
    return _poisoned(body)


@schemathesis.hook
def flatmap_query(ctx, query):
    return _poisoned(query)


@schemathesis.hook
def flatmap_path_parameters(ctx, path_parameters):
    return _poisoned(path_parameters)
