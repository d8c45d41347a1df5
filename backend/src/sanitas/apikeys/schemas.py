"""Request and answer shapes of the API key calls."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator
from pydantic.alias_generators import to_camel

from sanitas.models.api_key import API_KEY_NAME_MAX, ApiKeyScope
from sanitas.web.schemas import CamelModel, Label, Moment, UtcTimestamp

KeyName = Annotated[Label, StringConstraints(strip_whitespace=True, min_length=1,
                                           max_length=API_KEY_NAME_MAX)]


class ApiKeyIn(BaseModel):
    """A new key. Unknown keys are refused."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")

    name: KeyName = Field(description="What the key is for, e.g. the program that uses it")
    scopes: list[ApiKeyScope] = Field(
        default_factory=lambda: [ApiKeyScope.FILES_WRITE, ApiKeyScope.FILES_READ],
        min_length=1, max_length=len(ApiKeyScope),
        description="What the key may do; both when left out")
    expires_at: Moment | None = Field(
        None, description="When the key stops working (ISO 8601 with a time zone); never "
                          "when left out")

    @field_validator("scopes")
    @classmethod
    def _unique(cls, value: list[ApiKeyScope]) -> list[ApiKeyScope]:
        return sorted(set(value), key=list(ApiKeyScope).index)


class ApiKeyOut(CamelModel):
    id: str
    name: str
    prefix: str = Field(description="The secret's first characters, to tell keys apart")
    scopes: list[ApiKeyScope]
    created_at: UtcTimestamp
    last_used_at: UtcTimestamp | None = None
    expires_at: UtcTimestamp | None = None


class ApiKeyCreated(CamelModel):
    key: ApiKeyOut
    secret: str = Field(description="The whole key (sk_live_...). Shown only in this answer: "
                                    "only its hash is stored.")


class ApiKeyRevoked(CamelModel):
    id: str
