"""Audio and video (engine/media.py): every planted tag gone (exiftool, ffprobe and the raw
bytes agree), the streams intact (count, duration, decoded audio and coded video identical),
the policy's keep/refuse rules, hostile and damaged inputs refused with a clear code."""

from __future__ import annotations

from pathlib import Path

import pytest

from sanitas.engine import formats, sanitize_file
from sanitas.engine.detect import sniff
from sanitas.engine.policy import Policy, Rule
from sanitas.engine.report import REFUSAL_CODES, RejectionCode
from tests.engine import media_corpus as media

pytestmark = media.needs_ffmpeg


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("media")


def run(path: Path, out: Path, mode: str = "basic", **rules: str):
    policy = Policy().with_rules(**rules) if rules else None
    return sanitize_file(path, out, mode=mode, policy=policy)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", sorted(media.RECIPES))
def test_every_tag_gone_streams_kept(name, corpus, tmp_path):
    source = media.make(corpus, name)
    planted = [w for w in media.PLANTED if w in source.read_bytes().decode("latin-1")
               or w in str(media.probe(source))]
    assert len(planted) >= 4, planted  # the sample really carries the tags
    result = run(source, tmp_path)
    assert result.status == "ok", (result.reason, result.code)
    assert result.detected_type == media.KIND_OF[name]
    output = Path(result.output or "")
    assert output.suffix == Path(name).suffix
    assert media.leftovers(output) == []
    before, after = media.probe(source), media.probe(output)
    wanted = {k: v for k, v in media.roles(before).items() if k in ("audio", "video", "subtitle")}
    assert media.roles(after) == wanted
    assert after["chapters"] == []
    assert abs(float(before["format"]["duration"]) - float(after["format"]["duration"])) < 0.2
    assert media.audio_md5(output) == media.audio_md5(source)  # copied, not re-encoded
    if "video" in wanted:
        assert media.video_md5(output) == media.video_md5(source)
    kinds = {f.kind for f in result.findings}
    assert "metadata" in kinds or "device_info" in kinds
    # attachments are files a person may miss: the verdict says some were dropped
    dropped = media.roles(before).get("attachment")
    assert result.outcome().verdict.value == ("partial" if dropped else "cleaned")


def test_exiftool_finds_no_identifying_field(corpus, tmp_path):
    source = media.make(corpus, "tagged.mp4")
    before = media.exiftool(source)
    assert any("GPS" in k or "Location" in k for k in before)
    output = Path(run(source, tmp_path).output or "")
    after = media.exiftool(output)
    identifying = [k for k in after if any(w in k for w in (
        "GPS", "Location", "Make", "Model", "Serial", "Artist", "Title", "Comment", "Encoder",
        "Software"))]
    assert identifying == []
    assert all(str(after[k]).startswith("0000:00:00") for k in after
               if k.endswith(("CreateDate", "ModifyDate")) and not k.startswith("System:"))


def test_detected_by_magic_bytes_whatever_the_name(corpus):
    for name, kind in media.KIND_OF.items():
        head = media.make(corpus, name).read_bytes()[:65536]
        assert sniff(head, "upload.bin").kind == kind, name
    assert {"mp3", "flac", "ogg", "opus", "wav", "aiff", "m4a", "mp4", "mov", "mkv", "webm",
            "avi"} <= set(formats.supported_extensions())


def test_ape_tag_on_mp3_is_dropped_and_reported(corpus, tmp_path):
    """ID3v2 + APEv2 + ID3v1 on one MP3: ffmpeg does not read the APE tag, the engine does
    (to report it), and the output carries none of the three."""
    from mutagen.apev2 import APENoHeaderError, APEv2

    source = media.ape_tagged_mp3(corpus)
    assert set(APEv2(str(source)).keys()) >= {"Title", "Comment", "Cover Art (Front)"}
    before = media.exiftool(source)
    assert before.get("APE:Artist") == "Bob Smith" and "ID3v1:Title" in before
    result = run(source, tmp_path)
    assert result.status == "ok", (result.reason, result.code)
    output = Path(result.output or "")
    with pytest.raises(APENoHeaderError):
        APEv2(str(output))
    after = media.exiftool(output)
    assert not [k for k in after if k.startswith(("APE:", "ID3"))], after
    assert b"APETAGEX" not in output.read_bytes()
    assert media.leftovers(output) == []
    probed = media.probe(output)
    assert media.roles(probed) == {"audio": 1}
    assert abs(float(probed["format"]["duration"]) - float(media.probe(source)["format"][
        "duration"])) < 0.1
    assert media.audio_md5(output) == media.audio_md5(source)
    ape = {(f.kind, f.location): f for f in result.findings if "APE" in f.location}
    assert set(ape) == {("metadata", "APE tag"), ("gps_location", "APE tag"),
                        ("device_info", "APE tag"), ("cover_art", "APE item Cover Art (Front)")}
    assert "Artist, Title" in ape["metadata", "APE tag"].detail
    assert "Comment" in ape["gps_location", "APE tag"].detail
    assert all(f.action == "removed" for f in ape.values())
    # the policy's refuse rules hold for what only an APE tag carries
    only_ape = tmp_path / "only-ape.mp3"
    media.ffmpeg("-f", "lavfi", "-i", "sine=duration=1", "-c:a", "libmp3lame",
                 "-id3v2_version", "0", str(only_ape))
    tag = APEv2()
    tag["Comment"] = "+48.8582+002.2945/"
    tag.save(str(only_ape))
    (tmp_path / "fine").mkdir()
    assert run(only_ape, tmp_path / "fine").status == "ok"
    refused = run(only_ape, tmp_path / "refused", imageMetadata="refuse")
    assert (refused.status, refused.code) == ("rejected", REFUSAL_CODES[Rule.IMAGE_METADATA])


def test_hostile_ape_footer_is_bounded(corpus, tmp_path):
    """An APE footer declaring 4 billion items, its one item's value running past the end and
    starting with bytes an MP3 parser takes for a frame's sync word: read in bounded steps,
    reported, and its bytes left out of the remux; a footer declaring a tag larger than the
    file is damaged."""
    import struct

    audio = media.make(corpus, "tagged.mp3").read_bytes()[:-128]
    item = struct.pack("<2I", 0xFFFFFFF0, 0) + b"Title\x00" + b"Secret Title"
    for size, status in ((len(item) + 32, "ok"), (0xFFFFFFFF, "rejected")):
        source = tmp_path / f"hostile-{status}.mp3"
        footer = b"APETAGEX" + struct.pack("<4I", 2000, size, 0xFFFFFFFF, 0) + bytes(8)
        source.write_bytes(audio + item + footer)
        (tmp_path / status).mkdir()
        result = run(source, tmp_path / status)
        assert result.status == status, result.reason
        if status == "rejected":
            assert result.code == RejectionCode.DAMAGED and "APE tag" in (result.reason or "")
            continue
        output = Path(result.output or "").read_bytes()
        assert b"APETAGEX" not in output and b"Secret Title" not in output
        assert any(f.location == "APE tag" and "Title" in f.detail for f in result.findings)


def test_cover_art_keep_reencodes_it_without_exif(corpus, tmp_path):
    source = media.make(corpus, "tagged.mp3")
    result = run(source, tmp_path, coverArt="keep")
    assert result.status == "ok", result.reason
    output = Path(result.output or "")
    assert media.roles(media.probe(output)) == {"audio": 1, "cover": 1}
    assert media.leftovers(output) == []  # the cover's own EXIF (Canon, EOS 5D) went too
    kept = [f for f in result.findings if f.kind == "cover_art"]
    assert kept and kept[0].action == "kept"


def test_chapters_keep_keeps_marks_not_names(corpus, tmp_path):
    source = media.make(corpus, "tagged.mkv")
    result = run(source, tmp_path, chapters="keep")
    assert result.status == "ok", result.reason
    output = Path(result.output or "")
    chapters = media.probe(output)["chapters"]
    assert [c["tags"]["title"] for c in chapters] == ["Chapter 1", "Chapter 2"]
    assert abs(float(chapters[1]["start_time"]) - 1.5) < 0.01
    assert media.leftovers(output) == []


def test_document_metadata_keep_still_drops_location_and_device(corpus, tmp_path):
    source = media.make(corpus, "tagged.mov")
    result = run(source, tmp_path, documentMetadata="keep")
    assert result.status == "ok", result.reason
    tags = media.probe(Path(result.output or ""))["format"].get("tags", {})
    assert tags.get("artist") == "Alice Example"
    assert not [k for k in tags if "location" in k.lower() or "make" in k or "serial" in k]


@pytest.mark.parametrize(("name", "rule"), [
    ("tagged.mp3", Rule.COVER_ART), ("tagged.mkv", Rule.CHAPTERS),
    ("tagged.mkv", Rule.EMBEDDED_FILES), ("tagged.mp4", Rule.IMAGE_METADATA),
    ("tagged.flac", Rule.DOCUMENT_METADATA)])
def test_refuse_rules(name, rule, corpus, tmp_path):
    result = run(media.make(corpus, name), tmp_path, **{rule.value: "refuse"})
    assert result.status == "rejected"
    assert result.code == REFUSAL_CODES[rule]


def test_advanced_mode_reencodes(corpus, tmp_path):
    source = media.make(corpus, "tagged.mp4")
    result = run(source, tmp_path, mode="advanced")
    assert result.status == "ok", result.reason
    output = Path(result.output or "")
    assert output.suffix == ".mp4"
    assert media.leftovers(output) == []
    assert media.video_md5(output) != media.video_md5(source)
    assert any(f.kind == "media_reencoded" for f in result.findings)


def test_truncated_file_is_damaged(corpus, tmp_path):
    whole = media.make(corpus, "tagged.mp4").read_bytes()
    cut = tmp_path / "cut.mp4"
    cut.write_bytes(whole[:200])
    result = run(cut, tmp_path / "out")
    assert result.status == "rejected"
    assert result.code == RejectionCode.DAMAGED
    assert "damaged" in (result.reason or "")


@pytest.mark.parametrize("name", ["tagged.mp3", "tagged.flac", "tagged.aiff", "tagged.mkv",
                                  "tagged.webm"])
def test_partial_download_is_damaged_not_an_invalid_output(name, corpus, tmp_path):
    """A file cut at two thirds whose header (Xing, STREAMINFO, COMM, Matroska's Duration)
    still declares the whole length: refused as damaged, found by demuxing its packets."""
    whole = media.make(corpus, name).read_bytes()
    cut = tmp_path / f"cut{Path(name).suffix}"
    cut.write_bytes(whole[:len(whole) * 2 // 3])
    (tmp_path / "out").mkdir()
    result = run(cut, tmp_path / "out")
    assert (result.status, result.code) == ("rejected", RejectionCode.DAMAGED), result.reason
    assert "cut short" in (result.reason or "")


def test_playlist_behind_media_magic_opens_nothing(tmp_path):
    """An HLS/concat playlist starting with a media signature is read with the kind's demuxer
    only: it never opens the files it names."""
    secret = tmp_path / "secret.wav"
    secret.write_bytes(b"RIFF")
    for head in (b"ID3", b"fLaC", b"\x1a\x45\xdf\xa3"):
        hostile = tmp_path / "list.mp3"
        hostile.write_bytes(head + b"\n#EXTM3U\n#EXT-X-VERSION:3\n" +
                            f"file '{secret}'\nffconcat version 1.0\n{secret}\n".encode())
        result = run(hostile, tmp_path / "out")
        assert result.status == "rejected"
        assert result.code == RejectionCode.DAMAGED


def test_polyglot_zip_behind_an_mp3_loses_its_tail(corpus, tmp_path):
    """An MP3 with a ZIP appended (a polyglot): the remuxed copy keeps the audio frames only."""
    import io
    import zipfile

    blob = io.BytesIO()
    with zipfile.ZipFile(blob, "w") as zf:
        zf.writestr("payload.exe", b"MZ" + b"\x00" * 64)
    polyglot = tmp_path / "poly.mp3"
    polyglot.write_bytes(media.make(corpus, "tagged.mp3").read_bytes() + blob.getvalue())
    (tmp_path / "out").mkdir()
    result = run(polyglot, tmp_path / "out")
    assert result.status == "ok", result.reason
    data = Path(result.output or "").read_bytes()
    assert b"PK\x03\x04" not in data and b"payload.exe" not in data
