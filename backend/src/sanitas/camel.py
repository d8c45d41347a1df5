"""`CamelModel`, the base of every API shape: snake_case in Python, camelCase on the wire.

It sits below the web platform (web/schemas.py re-exports it) so that the plan table
(plans.py), which the settings resolve, can be an API shape without importing the web."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel


class CamelModel(BaseModel):
    """Python snake_case attributes, camelCase on the wire (see docs/product-rules.md,
    API field names)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True,
                              from_attributes=True, serialize_by_alias=True)
