"""The OpenAPI document tells every status a call can answer.

Routes declare the answers of their own logic (409, 410, 415...). The answers that come from
what a call depends on are added here, from the route's dependencies, so they cannot be
forgotten: 401 for a signed-in user, 403 for an admin, 400/413 for a request body (malformed,
too large), 404 for a path parameter that names something, 422 for parameters (on every
call: text holding a NUL is refused whatever the route, sanitas/web/validation.py); 429/503 from
admission control (main.py) on every API call. A wrong method on a known path answers 405
(`method_not_allowed`) with `Allow`, documented nowhere because no route owns it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from fastapi import FastAPI
from fastapi.routing import APIRoute, iter_route_contexts
from starlette.routing import Match
from starlette.types import Scope

ERROR_REF = {"$ref": "#/components/schemas/ErrorEnvelope"}
VALIDATION_REF = {"$ref": "#/components/schemas/ValidationErrorEnvelope"}

_DESCRIPTIONS = {
    "400": "The request is malformed (for example a body that is not valid JSON or multipart)",
    "401": "Not signed in, or the access token is invalid or expired",
    "403": "Signed in, but not allowed (role or plan)",
    "404": "Not found (or not yours)",
    "413": "The request body is larger than allowed",
    "422": "A parameter or a body field is invalid",
}


def _calls(dependant) -> Iterator[Callable[..., Any]]:
    for sub in dependant.dependencies:
        if sub.call is not None:
            yield sub.call
        yield from _calls(sub)


def api_routes(app: FastAPI) -> Iterator[Any]:
    """Every API route with the prefixes of the routers that include it (FastAPI's route
    contexts, which answer like the APIRoute they wrap)."""
    for context in iter_route_contexts(app.routes):
        if isinstance(context.original_route, APIRoute):
            yield context


def _statuses(route: Any) -> set[str]:
    from sanitas.web.deps import get_current_user, plan_gates, require_admin

    calls = set(_calls(route.dependant))
    # Any call: a NUL (or an unpaired surrogate) in its path, query string, JSON body or form
    # fields is refused with 422 before anything else (sanitas/web/validation.py).
    statuses: set[str] = {"422"}
    if get_current_user in calls:
        statuses.add("401")
    if require_admin in calls or plan_gates(calls):
        statuses.add("403")
    # A body FastAPI parses, or one the route reads itself (uploads).
    if route.body_field is not None or (route.openapi_extra or {}).get("requestBody"):
        statuses |= {"400", "413"}
    if route.dependant.path_params:
        statuses.add("404")
    return statuses


def _optional_sign_in(route: Any) -> bool:
    from sanitas.web.deps import get_current_user, get_optional_user

    calls = set(_calls(route.dependant))
    return get_optional_user in calls and get_current_user not in calls


def _document_plan_gates(route: Any, responses: dict[str, Any]) -> None:
    """A route behind `Requires(Capability.X)` says so in its 403 (`plan_required`)."""
    from sanitas.web.deps import plan_gates

    capabilities = plan_gates(_calls(route.dependant))
    if not capabilities:
        return
    answer = responses["403"]
    if "plan_required" not in answer.get("description", ""):
        names = ", ".join(f"`{c.value}`" for c in capabilities)
        answer["description"] = (f"{answer['description']}; or the caller's plan lacks "
                                 f"{names} (`plan_required`, see GET /api/plans)")


def install_openapi(app: FastAPI) -> None:
    """Complete the generated document once, when it is first asked for."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        schema = generate()
        for route in api_routes(app):
            if not route.include_in_schema:
                continue
            for method in route.methods or ():
                operation = schema["paths"].get(route.path_format, {}).get(method.lower())
                if operation is None:
                    continue
                if _optional_sign_in(route):  # e.g. the contact form: a token is optional
                    operation["security"] = [{}, *operation.get("security", [])]
                responses = operation.setdefault("responses", {})
                for status in sorted(_statuses(route)):
                    if status not in responses:
                        responses[status] = {
                            "description": _DESCRIPTIONS[status],
                            "content": {"application/json": {"schema": ERROR_REF}}}
                _document_plan_gates(route, responses)
                # Every 422 is the error envelope with `fields` (errors.py), never FastAPI's
                # HTTPValidationError.
                responses["422"]["content"] = {"application/json": {"schema": VALIDATION_REF}}
        _add_validation_schemas(schema)
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]  # FastAPI's documented override


def _add_validation_schemas(schema: dict[str, Any]) -> None:
    from sanitas.web.schemas import ValidationErrorEnvelope

    components = schema.setdefault("components", {}).setdefault("schemas", {})
    generated = ValidationErrorEnvelope.model_json_schema(
        ref_template="#/components/schemas/{model}")
    components.update(generated.pop("$defs", {}))
    components["ValidationErrorEnvelope"] = generated
    for unused in ("HTTPValidationError", "ValidationError"):
        components.pop(unused, None)


def allowed_methods(app: FastAPI, scope: Scope) -> list[str]:
    """The methods of the routes whose path matches but whose method does not (for 405)."""
    methods: set[str] = set()
    for route in api_routes(app):
        if route.path_format.startswith("/api/{rest"):
            continue
        match, _ = route.matches(scope)
        if match == Match.PARTIAL:
            methods |= set(route.methods or ())
    return sorted(methods)
