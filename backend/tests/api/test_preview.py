"""GET /api/process/preview/{fileId}: the PNG the job's sandbox drew from the sanitized
output, for the file's owner only, gone with the file."""

from __future__ import annotations

import io
from datetime import timedelta

import pypdfium2 as pdfium
from PIL import Image
from sqlalchemy import update

from sanitas.db import make_engine, make_sessionmaker, utcnow
from sanitas.models import File
from sanitas.processing.sweeps import expire_files
from sanitas.storage import make_storage, preview_key
from tests.api.polling import wait_for
from tests.factories import add_file, auth_headers, make_user
from tests.preview_samples import marked_pdf, png_chunks, red_share

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 40  # what the routes hand on; drawn by the sandbox


def _upload(client, headers, name: str, data: bytes) -> str:
    answer = client.post("/api/upload/single", headers=headers, files={"file": (name, data)})
    assert answer.status_code == 201, answer.text
    return answer.json()["data"]["fileId"]


def _with_preview(settings, file: File, data: bytes = PNG) -> None:
    path = settings.data_dir / f"seed-preview-{file.id}"
    path.write_bytes(data)
    make_storage(settings).put_file(preview_key(file.id), path, move=True)


def test_pdf_preview_is_drawn_from_the_sanitized_output(live, settings, db_session):
    user = make_user(db_session)
    h = auth_headers(settings, db_session, user)
    source = marked_pdf(600, 400)
    page = pdfium.PdfDocument(source)[0].render(scale=1, draw_annots=True).to_pil()
    assert red_share(page) > 0.9  # as uploaded, the annotation paints the page red
    file_id = _upload(live, h, "marked.pdf", source)
    assert wait_for(live, h, file_id)["file"]["status"] == "COMPLETED"
    answer = live.get(f"/api/process/preview/{file_id}", headers=h)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"] == "image/png"
    assert answer.headers["cache-control"] == "private, no-store"
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert set(png_chunks(answer.content)) == {b"IHDR", b"IDAT", b"IEND"}  # no metadata
    picture = Image.open(io.BytesIO(answer.content))
    assert picture.width == 800 and abs(picture.height - 533) <= 1  # the page's proportions
    assert red_share(picture) < 0.01  # the sanitized page: the annotation is gone
    # Looking at the preview is not a download.
    status = live.get(f"/api/process/status/{file_id}", headers=h).json()["data"]["file"]
    assert status["downloadCount"] == 0


def test_image_preview_is_downscaled(live, settings, db_session):
    user = make_user(db_session)
    h = auth_headers(settings, db_session, user)
    buf = io.BytesIO()
    Image.new("RGB", (1000, 2000), (20, 40, 220)).save(buf, "PNG")
    file_id = _upload(live, h, "tall.png", buf.getvalue())
    assert wait_for(live, h, file_id)["file"]["status"] == "COMPLETED"
    answer = live.get(f"/api/process/preview/{file_id}", headers=h)
    assert answer.status_code == 200, answer.text
    picture = Image.open(io.BytesIO(answer.content))
    assert picture.format == "PNG" and picture.size == (400, 800)
    assert picture.convert("RGB").getpixel((200, 400)) == (20, 40, 220)


def test_no_preview_for_a_text_file(live, settings, db_session):
    user = make_user(db_session)
    h = auth_headers(settings, db_session, user)
    file_id = _upload(live, h, "notes.txt", b"Quarterly numbers\n")
    assert wait_for(live, h, file_id)["file"]["status"] == "COMPLETED"
    answer = live.get(f"/api/process/preview/{file_id}", headers=h)
    assert answer.status_code == 404
    assert answer.json()["error"] == "preview_unavailable"


def test_owner_only(api, settings, db_session):
    owner, other = make_user(db_session), make_user(db_session)
    admin = make_user(db_session, role="ADMIN")
    file = add_file(db_session, settings, owner, status="COMPLETED")
    _with_preview(settings, file)
    mine = api.get(f"/api/process/preview/{file.id}",
                   headers=auth_headers(settings, db_session, owner))
    assert mine.status_code == 200 and mine.content == PNG
    nobody = api.get("/api/process/preview/no-such-id",
                     headers=auth_headers(settings, db_session, other))
    assert nobody.status_code == 404
    for caller in (other, admin):  # not theirs: as if it did not exist, admins included
        answer = api.get(f"/api/process/preview/{file.id}",
                         headers=auth_headers(settings, db_session, caller))
        assert answer.status_code == 404
        assert answer.json() == nobody.json() == {
            "success": False, "message": "File not found", "error": "not_found"}
    assert api.get(f"/api/process/preview/{file.id}").status_code == 401


def test_owners_api_key_sees_the_preview(api, settings, db_session):
    owner = make_user(db_session, role="ENTERPRISE")
    h = auth_headers(settings, db_session, owner)
    key = api.post("/api/keys", headers=h, json={"name": "ci"})
    assert key.status_code == 201, key.text
    file = add_file(db_session, settings, owner, status="COMPLETED")
    _with_preview(settings, file)
    answer = api.get(f"/api/process/preview/{file.id}",
                     headers={"X-API-Key": key.json()["data"]["secret"]})
    assert answer.status_code == 200 and answer.content == PNG


def test_not_ready_expired_and_unavailable(api, settings, db_session):
    user = make_user(db_session)
    h = auth_headers(settings, db_session, user)
    pending = add_file(db_session, settings, user, status="PENDING")
    answer = api.get(f"/api/process/preview/{pending.id}", headers=h)
    assert (answer.status_code, answer.json()["error"]) == (409, "not_ready")
    expired = add_file(db_session, settings, user, status="COMPLETED", expired=True)
    answer = api.get(f"/api/process/preview/{expired.id}", headers=h)
    assert (answer.status_code, answer.json()["error"]) == (410, "expired")
    without = add_file(db_session, settings, user, status="COMPLETED")  # none was drawn
    answer = api.get(f"/api/process/preview/{without.id}", headers=h)
    assert (answer.status_code, answer.json()["error"]) == (404, "preview_unavailable")


def test_the_expiry_sweep_deletes_the_preview(api, settings, db_session):
    user = make_user(db_session)
    h = auth_headers(settings, db_session, user)
    file = add_file(db_session, settings, user, status="COMPLETED")
    _with_preview(settings, file)
    storage = make_storage(settings)
    assert api.get(f"/api/process/preview/{file.id}", headers=h).status_code == 200
    db_session.execute(update(File).where(File.id == file.id)
                       .values(expires_at=utcnow() - timedelta(minutes=1)))
    db_session.commit()
    engine = make_engine(str(settings.database_url))
    try:
        assert expire_files(make_sessionmaker(engine), storage) == 1
    finally:
        engine.dispose()
    assert not storage.exists(preview_key(file.id))
    answer = api.get(f"/api/process/preview/{file.id}", headers=h)
    assert (answer.status_code, answer.json()["error"]) == (410, "expired")


def test_the_admins_delete_takes_the_preview(api, settings, db_session):
    user, admin = make_user(db_session), make_user(db_session, role="ADMIN")
    file = add_file(db_session, settings, user, status="COMPLETED")
    _with_preview(settings, file)
    answer = api.delete(f"/api/admin/files/{file.id}",
                        headers=auth_headers(settings, db_session, admin))
    assert answer.status_code == 200, answer.text
    assert not make_storage(settings).exists(preview_key(file.id))


def test_the_orphan_sweep_keeps_live_previews_only(settings, db_session):
    from sanitas.processing.sweeps import OrphanSweeper

    user = make_user(db_session)
    live_file = add_file(db_session, settings, user, status="COMPLETED")
    _with_preview(settings, live_file)
    gone = add_file(db_session, settings, user, status="COMPLETED")
    _with_preview(settings, gone)
    db_session.execute(update(File).where(File.id == gone.id).values(sanitized_key=None))
    db_session.commit()
    storage = make_storage(settings)
    stray = settings.data_dir / "stray"
    stray.write_bytes(PNG)
    storage.put_file(preview_key("00000000-0000-0000-0000-00000000dead"), stray)
    engine = make_engine(str(settings.database_url))
    try:
        sweeper = OrphanSweeper(interval=0, min_age=0, clock=lambda: 1000.0)
        # the stray preview, and the preview and sanitized copy no row names any more
        assert sweeper.run(make_sessionmaker(engine), storage, 1000.0) == 3
    finally:
        engine.dispose()
    assert storage.keys("previews/") == [preview_key(live_file.id)]
