"""GET /health: each dependency up, degraded (working, but needs attention: e.g. storage
short of free space) or down; 200 when all are up, else 503. `data.status` is "up", else
"down" when any component is down, else "degraded"."""

from __future__ import annotations

from collections.abc import Callable

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from sqlalchemy import text

router = APIRouter()

# Other components (storage, executor) register a check: name -> callable(app) -> bool
# (up or down) or one of "up", "degraded", "down".
HealthCheck = Callable[[FastAPI], bool | str]
STATES = ("up", "degraded", "down")
_checks: dict[str, HealthCheck] = {}


def register_health_check(name: str, check: HealthCheck) -> None:
    _checks[name] = check


def _database_up(app: FastAPI) -> bool:
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
            result = check(request.app)
            components[name] = result if result in STATES else "up" if result else "down"
        except Exception:  # noqa: BLE001 - a failing dependency is reported, not raised
            components[name] = "down"
    healthy = all(v == "up" for v in components.values())
    status = "up" if healthy else "down" if "down" in components.values() else "degraded"
    body = {"success": healthy, "message": "OK" if healthy else "Service degraded",
            "data": {"status": status, **components}}
    return JSONResponse(body, status_code=200 if healthy else 503)
