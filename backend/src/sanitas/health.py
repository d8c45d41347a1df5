"""GET /health: each dependency up or down; 200 when all are up, else 503."""

from __future__ import annotations

from collections.abc import Callable

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from sqlalchemy import text

router = APIRouter()

# Other components (storage, executor) register a check: name -> callable(app) -> bool.
HealthCheck = Callable[[object], bool]
_checks: dict[str, HealthCheck] = {}


def register_health_check(name: str, check: HealthCheck) -> None:
    _checks[name] = check


def _database_up(app) -> bool:
    with app.state.sessionmaker() as session:
        session.execute(text("SELECT 1"))
    return True


register_health_check("database", _database_up)


class HealthAnswer(BaseModel):
    success: bool
    message: str
    data: dict[str, str]


@router.get("/health", response_model=HealthAnswer, tags=["health"])
def health(request: Request):
    components: dict[str, str] = {}
    for name, check in _checks.items():
        try:
            components[name] = "up" if check(request.app) else "down"
        except Exception:  # a failing dependency is reported, not raised
            components[name] = "down"
    healthy = all(v == "up" for v in components.values())
    body = {"success": healthy, "message": "OK" if healthy else "Service degraded",
            "data": {"status": "up" if healthy else "down", **components}}
    return JSONResponse(body, status_code=200 if healthy else 503)
