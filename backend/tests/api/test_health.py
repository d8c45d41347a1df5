from fastapi.testclient import TestClient

from sanitas.main import create_app


def test_health_reports_database_up(settings):
    with TestClient(create_app(settings)) as client:
        answer = client.get("/health")
    assert answer.status_code == 200
    assert answer.json()["data"]["database"] == "up"


def test_health_is_503_when_database_is_unreachable(settings):
    settings.database_url = "postgresql+psycopg://nobody@127.0.0.1:1/nothing"
    with TestClient(create_app(settings)) as client:
        answer = client.get("/health")
    assert answer.status_code == 503
    assert answer.json()["data"]["database"] == "down"


def test_unknown_api_path_is_a_json_404(settings):
    with TestClient(create_app(settings)) as client:
        answer = client.get("/api/does-not-exist")
    assert answer.status_code == 404
    assert answer.json() == {"success": False, "message": "No API route /api/does-not-exist",
                             "error": "not_found"}
