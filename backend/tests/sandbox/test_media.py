"""Audio and video through the real sandbox: ffmpeg and ffprobe run inside bubblewrap (their
libraries found read-only, seccomp on), the tags are gone from the copy the parent releases,
the streams are intact, and a hostile or truncated file is refused with its code."""

from __future__ import annotations

from pathlib import Path

import pytest

from sanitas.engine.report import RejectionCode
from sanitas.sandbox import run_sanitizer
from tests.engine import media_corpus as media

pytestmark = media.needs_ffmpeg


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("media-sandbox")


@pytest.mark.parametrize("name", ["tagged.mp3", "tagged.m4a", "tagged.mp4", "tagged.mkv",
                                  "tagged.webm"])
def test_tagged_media_cleaned_in_the_sandbox(name, corpus, sandbox_settings, tmp_path):
    source = media.make(corpus, name)
    result = run_sanitizer(source, tmp_path / "out", settings=sandbox_settings,
                           original_name=name, prewarm=False)
    assert result.status == "ok", (result.reason, result.code)
    output = Path(result.output or "")
    assert output.suffix == Path(name).suffix
    assert media.leftovers(output) == []
    before, after = media.probe(source), media.probe(output)
    assert media.roles(after) == {k: v for k, v in media.roles(before).items()
                                  if k in ("audio", "video", "subtitle")}
    assert media.audio_md5(output) == media.audio_md5(source)


def test_advanced_mode_in_the_sandbox(corpus, sandbox_settings, tmp_path):
    source = media.make(corpus, "tagged.webm")
    result = run_sanitizer(source, tmp_path / "out", mode="advanced",
                           settings=sandbox_settings, original_name="clip.webm", prewarm=False)
    assert result.status == "ok", result.reason
    assert result.output_type == "webm"
    assert media.leftovers(Path(result.output or "")) == []


def test_truncated_and_playlist_refused_in_the_sandbox(corpus, sandbox_settings, tmp_path):
    cut = tmp_path / "cut.mkv"
    cut.write_bytes(media.make(corpus, "tagged.mkv").read_bytes()[:300])
    result = run_sanitizer(cut, tmp_path / "out", settings=sandbox_settings, prewarm=False)
    assert (result.status, result.code) == ("rejected", RejectionCode.DAMAGED)
    # cut at two thirds, its STREAMINFO still declaring the whole: the packets show the cut
    whole = media.make(corpus, "tagged.flac").read_bytes()
    cut = tmp_path / "cut.flac"
    cut.write_bytes(whole[:len(whole) * 2 // 3])
    result = run_sanitizer(cut, tmp_path / "out", settings=sandbox_settings, prewarm=False)
    assert (result.status, result.code) == ("rejected", RejectionCode.DAMAGED)
    assert "cut short" in (result.reason or "")
    playlist = tmp_path / "list.mp3"
    playlist.write_bytes(b"ID3\n#EXTM3U\n#EXTINF:1,\nfile:///etc/passwd\n"
                         b"ffconcat version 1.0\nfile /etc/passwd\n")
    result = run_sanitizer(playlist, tmp_path / "out", settings=sandbox_settings, prewarm=False)
    assert (result.status, result.code) == ("rejected", RejectionCode.DAMAGED)


def test_ape_tag_dropped_and_reported_in_the_sandbox(corpus, sandbox_settings, tmp_path):
    source = media.ape_tagged_mp3(corpus)
    result = run_sanitizer(source, tmp_path / "out", settings=sandbox_settings,
                           original_name="song.mp3", prewarm=False)
    assert result.status == "ok", (result.reason, result.code)
    output = Path(result.output or "")
    assert b"APETAGEX" not in output.read_bytes() and media.leftovers(output) == []
    assert media.audio_md5(output) == media.audio_md5(source)
    assert {f.kind for f in result.findings if "APE" in f.location} == {
        "metadata", "gps_location", "device_info", "cover_art"}
