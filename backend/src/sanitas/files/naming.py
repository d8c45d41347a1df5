"""The name a file's sanitized copy is downloaded under."""

from __future__ import annotations


def sanitized_name_for(original_name: str, output_type: str | None) -> str:
    """The download's name: the engine's output name (its one naming rule) after
    'sanitized_'."""
    from sanitas.engine import safe_output_name

    return safe_output_name(original_name, output_type or "", prefix="sanitized_")

