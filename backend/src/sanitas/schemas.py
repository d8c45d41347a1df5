"""Shapes shared by every route: the `{success, message, data}` envelope, camelCase fields."""

from __future__ import annotations

from typing import Generic, TypeVar

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

T = TypeVar("T")


class CamelModel(BaseModel):
    """Python snake_case attributes, camelCase on the wire (as the SPEC names fields)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True,
                              from_attributes=True, serialize_by_alias=True)


class Envelope(BaseModel, Generic[T]):
    success: bool = True
    message: str = ""
    data: T | None = None


class ErrorEnvelope(BaseModel):
    success: bool = False
    message: str
    error: str


def ok(data=None, message: str = "") -> dict:
    return {"success": True, "message": message, "data": data}
