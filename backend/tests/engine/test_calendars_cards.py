"""iCalendar invitations and vCard contact cards (issue 22, breadth): the events and people
stay, what acts, fetches or identifies the producing client goes."""

from __future__ import annotations

import base64
import email
import email.policy
import io
from email.mime.base import MIMEBase
from email.mime.multipart import MIMEMultipart
from email.mime.text import MIMEText
from pathlib import Path

import pytest
from PIL import Image

from sanitas.engine import detect, sanitize_file
from sanitas.engine.report import Policy, RejectionCode
from sanitas.engine.vcalendar import fold, parse, unfold
from tests.engine import corpus
from tests.engine.breadth_corpus import ICS_CLEAN, VCF_CLEAN


def _write(folder: Path, name: str, text: str | bytes) -> Path:
    path = folder / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def _ok(result) -> str:
    assert result.status == "ok", result.reason
    return Path(result.output).read_bytes().decode("utf-8")


def test_invitation_kept_line_for_line(tmp_path, out_dir):
    assert detect.sniff(ICS_CLEAN.encode(), None).kind == "ics"
    result = sanitize_file(_write(tmp_path, "invite.ics", ICS_CLEAN), out_dir)
    out = _ok(result)
    assert result.output_type == "ics"
    # Only the producing program is rewritten; the quoted attendee name keeps its quotes.
    assert out == ICS_CLEAN.replace("-//Example Corp//Calendar 1.0//EN", "-//Sanitas//Sanitas//EN")
    assert [(f.kind, f.action) for f in result.findings] == [("metadata", "removed")]


HOSTILE_ICS = (
    "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Example Corp//Calendar 1.0//EN\r\n"
    "X-WR-CALNAME:Alice's private calendar\r\nBEGIN:VEVENT\r\nUID:e1@example.org\r\n"
    "DTSTAMP:20240101T100000Z\r\nDTSTART:20240105T090000Z\r\nSUMMARY:Review\r\n"
    "X-ALT-DESC;FMTTYPE=text/html:<html><script>alert(1)</script><img src=https://t.example/p>"
    "</html>\r\n"
    "X-MS-OLK-SENDER:mailto:ceo@example.org\r\n"
    "ATTACH;ENCODING=BASE64;VALUE=BINARY;FMTTYPE=application/x-msdownload:"
    + base64.b64encode(b"MZ\x90\x00payload").decode() + "\r\n"
    "ATTACH:https://files.example/agenda.pdf\r\n"
    "URL:javascript:alert(2)\r\n"
    "BEGIN:VALARM\r\nACTION:PROCEDURE\r\nTRIGGER:-PT5M\r\nATTACH:file:///bin/evil\r\n"
    "END:VALARM\r\n"
    "BEGIN:VALARM\r\nACTION:EMAIL\r\nTRIGGER:-PT5M\r\nATTENDEE:mailto:spy@example.net\r\n"
    "SUMMARY:x\r\nDESCRIPTION:y\r\nEND:VALARM\r\n"
    "BEGIN:VALARM\r\nACTION:DISPLAY\r\nTRIGGER:-PT15M\r\nDESCRIPTION:Soon\r\nEND:VALARM\r\n"
    "END:VEVENT\r\nEND:VCALENDAR\r\n")


def test_invitation_hostile_lines_removed(tmp_path, out_dir):
    result = sanitize_file(_write(tmp_path, "evil.ics", HOSTILE_ICS), out_dir)
    out = _ok(result)
    for gone in ("script", "t.example", "MZ", "TVqQ", "files.example", "javascript", "PROCEDURE",
                 "/bin/evil", "spy@example.net", "X-MS-OLK", "X-WR-CALNAME", "Example Corp"):
        assert gone not in out, gone
    assert "SUMMARY:Review" in out and "ACTION:DISPLAY" in out
    kinds = {f.kind for f in result.findings}
    assert {"action", "embedded_file", "external_reference", "unsafe_link", "metadata",
            "foreign_content"} <= kinds, kinds


def test_calendar_policy_keeps_metadata_and_web_attachments(tmp_path, out_dir):
    policy = Policy().with_rules(documentMetadata="keep", externalReferences="keep")
    out = _ok(sanitize_file(_write(tmp_path, "evil.ics", HOSTILE_ICS), out_dir, policy=policy))
    assert "X-WR-CALNAME:Alice's private calendar" in out and "Example Corp" in out
    assert "ATTACH:https://files.example/agenda.pdf" in out
    assert "script" not in out and "PROCEDURE" not in out and "MZ" not in out


def _photo() -> str:
    buffer = io.BytesIO()
    corpus.picture().resize((40, 30)).save(buffer, "JPEG", exif=corpus._gps_exif())
    return base64.b64encode(buffer.getvalue()).decode()


def test_card_photo_cleaned_and_fetched_addresses_removed(tmp_path, out_dir):
    card = VCF_CLEAN.replace("END:VCARD", (
        f"PHOTO;ENCODING=b;TYPE=JPEG:{_photo()}\r\nSOURCE:https://track.example/alice.vcf\r\n"
        "URL:https://alice.example.org/\r\nX-MS-CARDPICTURE:secret\r\n"
        "PRODID:-//Apple Inc.//iOS 17//EN\r\nEND:VCARD"))
    assert detect.sniff(card.encode(), "alice.vcf").kind == "vcf"
    result = sanitize_file(_write(tmp_path, "alice.vcf", card), out_dir)
    out = _ok(result)
    assert "track.example" not in out and "X-MS-CARDPICTURE" not in out and "Apple" not in out
    assert "URL:https://alice.example.org/" in out and "FN:Alice Example" in out
    lines = parse(out, "VCARD")[0].lines
    photo = next(line for line in lines if getattr(line, "name", "") == "PHOTO")
    assert photo.value.startswith("data:image/jpeg;base64,")
    picture = Image.open(io.BytesIO(base64.b64decode(photo.value.partition(",")[2])))
    assert picture.size == (40, 30) and not picture.getexif()  # GPS and camera tags gone
    assert any(f.kind == "gps_location" for f in result.findings)


def test_folding_round_trips_long_utf8_lines():
    line = "DESCRIPTION:" + "Grüße " * 40
    folded = fold(line)
    assert all(len(part.encode()) <= 75 for part in folded.split("\r\n")[:-1])
    assert unfold(folded) == [line]


@pytest.mark.parametrize("text,code", [
    ("BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nSUMMARY:x\r\nEND:VCALENDAR\r\n", RejectionCode.DAMAGED),
    ("BEGIN:VCALENDAR\r\nSUMMARY\r\nEND:VCALENDAR\r\n", RejectionCode.DAMAGED),
    ("BEGIN:VCALENDAR\r\n" + "BEGIN:X-A\r\n" * 20 + "END:X-A\r\n" * 20 + "END:VCALENDAR\r\n",
     RejectionCode.TOO_COMPLEX),
    ('BEGIN:VCALENDAR\r\nATTENDEE;CN="open:mailto:a@b\r\nEND:VCALENDAR\r\n',
     RejectionCode.DAMAGED),
])
def test_broken_calendars_refused(tmp_path, out_dir, text, code):
    result = sanitize_file(_write(tmp_path, "bad.ics", text), out_dir)
    assert result.status == "rejected" and result.code == code, result.reason


def test_invitation_attached_to_a_message_stays_an_invitation(tmp_path, out_dir):
    outer = MIMEMultipart("mixed")
    for name, value in (("From", "Alice <alice@example.org>"), ("To", "bob@example.com"),
                        ("Subject", "Invitation"), ("Date", "Mon, 1 Jan 2024 10:00:00 +0000")):
        outer[name] = value
    outer.attach(MIMEText("You are invited.", "plain"))
    invite = MIMEBase("text", "calendar", method="REQUEST")
    invite.set_payload(HOSTILE_ICS)
    invite.add_header("Content-Disposition", "attachment", filename="invite.ics")
    outer.attach(invite)
    result = sanitize_file(_write(tmp_path, "invite.eml", outer.as_bytes()), out_dir)
    assert result.status == "ok", result.reason
    message = email.message_from_bytes(Path(result.output).read_bytes(),
                                       policy=email.policy.compat32)
    parts = [p for p in message.walk() if p.get_filename() == "invite.ics"]
    assert parts and parts[0].get_content_type() == "text/calendar"
    assert b"PROCEDURE" not in parts[0].get_payload(decode=True)
