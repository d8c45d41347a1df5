"""Request and answer shapes of the policy calls (camelCase, the engine's JSON names).

A policy's body mirrors `sanitas.engine.policy.Policy.to_json()`; each rule's allowed values
come from `engine.policy.CHOICES`, so the API and the engine cannot disagree on what a rule
offers. Unknown keys are refused (422).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
    model_validator,
)
from pydantic.alias_generators import to_camel

from sanitas.engine.policy import BASIC_RULES, CHOICES, MAX_PAGES_LIMIT, OUTPUTS, Rule
from sanitas.models.policy import POLICY_DESCRIPTION_MAX, POLICY_NAME_MAX
from sanitas.models.user import Role
from sanitas.web.schemas import CamelModel, Label, UtcTimestamp

MAX_ALLOWED_TYPES = 100


def _actions(rule: Rule) -> type[StrEnum]:
    """The actions `rule` offers, as an enum (its values in the OpenAPI document)."""
    name = rule.value[0].upper() + rule.value[1:] + "Action"
    members = {a.name: a.value for a in sorted(CHOICES[rule])}
    return StrEnum(name, members)  # type: ignore[return-value]  # the functional API makes a class


# mypy cannot see the members of enums built at run time; each comes from CHOICES.
MacrosAction = _actions(Rule.MACROS)
JavascriptAction = _actions(Rule.JAVASCRIPT)
EmbeddedFilesAction = _actions(Rule.EMBEDDED_FILES)
ExternalReferencesAction = _actions(Rule.EXTERNAL_REFERENCES)
HyperlinksAction = _actions(Rule.HYPERLINKS)
ReviewDataAction = _actions(Rule.REVIEW_DATA)
DocumentMetadataAction = _actions(Rule.DOCUMENT_METADATA)
ImageMetadataAction = _actions(Rule.IMAGE_METADATA)
HiddenContentAction = _actions(Rule.HIDDEN_CONTENT)
FormFieldsAction = _actions(Rule.FORM_FIELDS)
CoverArtAction = _actions(Rule.COVER_ART)
ChaptersAction = _actions(Rule.CHAPTERS)
EncryptedContentAction = _actions(Rule.ENCRYPTED_CONTENT)

OutputChoice = Literal["same", "pdf", "pdf+ocr"]
assert get_args(OutputChoice) == OUTPUTS  # the engine's outputs, in its order

Scope = Literal["personal", "organisation"]


class _Strict(BaseModel):
    """camelCase only (a field's Python name is an unknown key too) and no unknown keys."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True,
                              serialize_by_alias=True, extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _json_names_only(cls, data: Any) -> Any:
        if isinstance(data, dict):
            python_names = {name: field.alias for name, field in cls.model_fields.items()
                            if field.alias and field.alias != name}
            wrong = [key for key in data if key in python_names]
            if wrong:
                raise ValueError("unknown field(s): " + ", ".join(
                    f"{key} (the field is {python_names[key]})" for key in wrong))
        return data


class PolicyRules(_Strict):
    """One action per kind of content; a rule left out takes the built-in basic policy's."""

    macros: MacrosAction | None = Field(  # type: ignore[valid-type]  # built from CHOICES
        None, description="VBA/XLM macros and office scripts (never kept)")
    javascript: JavascriptAction | None = Field(  # type: ignore[valid-type]  # from CHOICES
        None, description="JavaScript and PDF actions (never kept)")
    embedded_files: EmbeddedFilesAction | None = Field(  # type: ignore[valid-type]  # CHOICES
        None, description="Attachments, OLE objects, embedded packages; `keep` and `sanitize` "
                          "clean each with its own family and keep it (programs, scripts and "
                          "OLE objects are removed)")
    external_references: ExternalReferencesAction | None = Field(  # type: ignore[valid-type]  # CHOICES
        None, description="Remote templates, external links, DDE; `keep` keeps only what loads "
                          "nothing able to run (linked pictures and media, web links)")
    hyperlinks: HyperlinksAction | None = Field(  # type: ignore[valid-type]  # from CHOICES
        None, description="Clickable links to web addresses")
    review_data: ReviewDataAction | None = Field(  # type: ignore[valid-type]  # from CHOICES
        None, description="Comments and tracked changes; `anonymise` keeps them with the "
                          "reviewers renamed")
    document_metadata: DocumentMetadataAction | None = Field(  # type: ignore[valid-type]  # CHOICES
        None, description="Author, company, dates, custom properties")
    image_metadata: ImageMetadataAction | None = Field(  # type: ignore[valid-type]  # CHOICES
        None, description="EXIF (camera, GPS), XMP and IPTC in pictures")
    hidden_content: HiddenContentAction | None = Field(  # type: ignore[valid-type]  # CHOICES
        None, description="Hidden sheets, slides and text")
    form_fields: FormFieldsAction | None = Field(  # type: ignore[valid-type]  # from CHOICES
        None, description="Fillable form fields")
    cover_art: CoverArtAction | None = Field(  # type: ignore[valid-type]  # from CHOICES
        None, description="Cover pictures of audio and video files; `keep` keeps the first, "
                          "re-encoded without its metadata, where the container can carry it")
    chapters: ChaptersAction | None = Field(  # type: ignore[valid-type]  # from CHOICES
        None, description="Chapter marks of audio and video files; `keep` keeps their times, "
                          "titled Chapter 1, 2... (no original title survives)")
    encrypted_content: EncryptedContentAction | None = Field(  # type: ignore[valid-type]  # CHOICES
        None, description="Encrypted files, archive members and mail (S/MIME, PGP) that no "
                          "password opened, so nothing could inspect them: `hold` (the "
                          "default) keeps them out of the copy; `pass` delivers them "
                          "unchanged and uninspected, so whatever they hide reaches the "
                          "recipient. Either way the verdict is `encrypted`, never clean")


assert {to_camel(f) for f in PolicyRules.model_fields} == {r.value for r in Rule}

PolicyName = Annotated[Label, StringConstraints(strip_whitespace=True, min_length=1,
                                              max_length=POLICY_NAME_MAX)]
TypeName = Annotated[str, StringConstraints(strip_whitespace=True, to_lower=True,
                                            min_length=1, max_length=32)]


class PolicyIn(_Strict):
    """A policy as created (POST) or replaced (PUT)."""

    name: PolicyName
    description: Label | None = Field(None, max_length=POLICY_DESCRIPTION_MAX)
    rules: PolicyRules
    allowed_types: list[TypeName] | None = Field(
        None, min_length=1, max_length=MAX_ALLOWED_TYPES,
        description="Input families or kinds accepted (e.g. `pdf`, `ooxml`, `docx`, "
                    "`image`); null: every supported type")
    output: OutputChoice = Field("same", description="`same`: the input's format; `pdf`: "
                                 "a PDF rebuilt from pixels; `pdf+ocr`: the same with a "
                                 "searchable text layer")
    max_pages: int | None = Field(None, ge=1, le=MAX_PAGES_LIMIT,
                                  description="The most pages rebuilt from pixels")
    scope: Scope | None = Field(None, description="`organisation` (admins only): every "
                                "account may use it; default `personal`, or the policy's "
                                "current scope on update")

    @field_validator("allowed_types")
    @classmethod
    def _known_types(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        from sanitas.engine import formats

        known = set(formats.FAMILIES) | set(formats.KINDS)
        unknown = [t for t in value if t not in known]
        if unknown:
            raise ValueError(f"unknown type(s): {', '.join(unknown[:5])}; use family or kind "
                             "names the upload information lists")
        return sorted(set(value))

    def engine_json(self) -> dict[str, object]:
        """The body in the engine's JSON form (rules left out are not sent)."""
        return {"rules": self.rules.model_dump(exclude_none=True, mode="json"),
                "allowedTypes": self.allowed_types, "output": self.output,
                "maxPages": self.max_pages}


class RuleActions(CamelModel):
    """Every rule's action (answers always list every rule; a policy stored before a rule
    existed answers basic's action for it)."""

    macros: MacrosAction  # type: ignore[valid-type]  # built from CHOICES
    javascript: JavascriptAction  # type: ignore[valid-type]  # built from CHOICES
    embedded_files: EmbeddedFilesAction  # type: ignore[valid-type]  # built from CHOICES
    external_references: ExternalReferencesAction  # type: ignore[valid-type]  # from CHOICES
    hyperlinks: HyperlinksAction  # type: ignore[valid-type]  # built from CHOICES
    review_data: ReviewDataAction  # type: ignore[valid-type]  # built from CHOICES
    document_metadata: DocumentMetadataAction  # type: ignore[valid-type]  # from CHOICES
    image_metadata: ImageMetadataAction  # type: ignore[valid-type]  # built from CHOICES
    hidden_content: HiddenContentAction  # type: ignore[valid-type]  # built from CHOICES
    form_fields: FormFieldsAction  # type: ignore[valid-type]  # built from CHOICES
    cover_art: CoverArtAction = BASIC_RULES[Rule.COVER_ART].value  # type: ignore[valid-type]
    chapters: ChaptersAction = BASIC_RULES[Rule.CHAPTERS].value  # type: ignore[valid-type]
    encrypted_content: EncryptedContentAction = (  # type: ignore[valid-type]  # from CHOICES
        BASIC_RULES[Rule.ENCRYPTED_CONTENT].value)


assert {to_camel(f) for f in RuleActions.model_fields} == {r.value for r in Rule}


class PolicyOut(CamelModel):
    id: str
    name: str
    description: str | None = None
    built_in: bool
    scope: Scope
    owner_id: str | None = Field(None, description="null for built-in and organisation-wide "
                                                   "policies")
    version: int
    rules: RuleActions
    allowed_types: list[str] | None = None
    output: OutputChoice
    max_pages: int | None = None
    created_at: UtcTimestamp | None = None
    updated_at: UtcTimestamp | None = None


class PolicyDeleted(CamelModel):
    id: str


class FindingRules(BaseModel):
    """Which rule decides each kind of finding a report can list (engine/kinds.py): one rule,
    two when the kind depends on the file (the first is the usual one), or none for the
    file's structure, repairs and conversions that no policy decides."""

    kinds: dict[str, list[Rule]]


class PolicyDefaults(BaseModel):
    """The policy each role's uploads use when they name neither a policy nor a mode."""

    model_config = ConfigDict(extra="forbid")

    GUEST: str
    USER: str
    ENTERPRISE: str
    ADMIN: str


class PolicyDefaultsIn(BaseModel):
    """Roles to change (others unchanged); null sets a role back to the built-in basic."""

    model_config = ConfigDict(extra="forbid")

    GUEST: str | None = Field(None, max_length=36)
    USER: str | None = Field(None, max_length=36)
    ENTERPRISE: str | None = Field(None, max_length=36)
    ADMIN: str | None = Field(None, max_length=36)


assert set(PolicyDefaults.model_fields) == {r.value for r in Role}
