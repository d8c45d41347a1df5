"""Audio and video test files made here with ffmpeg, each carrying every tag its container can:
title, artist, comment, dates, GPS (ISO 6709 `location`, Apple's location key), make, model and
serial number, a cover picture, chapters titled with people's names, subtitle tracks with
names, Matroska attachments (a font, a file), timecode data tracks. And the judges: exiftool and
ffprobe on the output, an MD5 of the decoded audio."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

FFMPEG = shutil.which("ffmpeg")
needs_ffmpeg = pytest.mark.skipif(FFMPEG is None or shutil.which("ffprobe") is None,
                                  reason="ffmpeg is not installed (scripts/install.sh)")

# Words planted in tags: none may be found in an output (exiftool, ffprobe, or the bytes).
PLANTED = ("Alice Example", "Secret Title", "recorded at home", "Bob Smith", "Carol",
           "SN123456", "EOS 5D", "Canon", "48.8582", "Dave", "secret-font", "notes.txt",
           "2019:05:06", "2019-05-06")
SECONDS = 3.0

_TAGS = """;FFMETADATA1
title=Secret Title
artist=Alice Example
album_artist=Alice Example
comment=recorded at home
date=2019-05-06
creation_time=2019-05-06T07:08:09Z
location=+48.8582+002.2945/
make=Canon
model=EOS 5D
serial_number=SN123456
[CHAPTER]
TIMEBASE=1/1000
START=0
END=1500
title=Chapter about Bob Smith
[CHAPTER]
TIMEBASE=1/1000
START=1500
END=3000
title=Carol's part
"""
_SUBTITLES = "1\n00:00:00,000 --> 00:00:01,000\nHello there\n\n"


def ffmpeg(*args: str) -> None:
    assert FFMPEG is not None
    subprocess.run([FFMPEG, "-nostdin", "-hide_banner", "-loglevel", "error", "-y", *args],
                   check=True, timeout=120)


def _inputs(folder: Path) -> dict[str, Path]:
    made = {"tags": folder / "tags.txt", "subs": folder / "subs.srt",
            "cover": folder / "cover.jpg", "font": folder / "secret-font.ttf",
            "notes": folder / "notes.txt"}
    if not made["cover"].exists():
        made["tags"].write_text(_TAGS)
        made["subs"].write_text(_SUBTITLES)
        made["font"].write_bytes(b"\x00\x01\x00\x00" + b"secret-font" * 20)
        made["notes"].write_text("notes about Alice Example\n")
        # a cover photo with its own EXIF (the camera's serial number)
        from PIL import Image

        exif = Image.Exif()
        exif[0x010F], exif[0x0110] = "Canon", "EOS 5D"
        Image.new("RGB", (64, 64), (200, 30, 30)).save(made["cover"], exif=exif)
    return made


_SINE = ("-f", "lavfi", "-i", f"sine=frequency=440:duration={SECONDS}:sample_rate=44100")
_TEST = ("-f", "lavfi", "-i", f"testsrc=size=160x120:rate=25:duration={SECONDS}")
_META = ("-map_metadata", "{tags}", "-map_chapters", "{tags}")


def _args(template: tuple[str, ...], inputs: dict[str, Path]) -> list[str]:
    return [a.format(**{k: str(v) for k, v in inputs.items()}) for a in template]


# name -> ffmpeg arguments after the inputs named in {…}
RECIPES: dict[str, tuple[str, ...]] = {
    "tagged.mp3": (*_SINE, "-i", "{cover}", "-i", "{tags}", "-map", "0:a", "-map", "1",
                   "-map_metadata", "2", "-map_chapters", "2", "-c:a", "libmp3lame",
                   "-c:v", "copy", "-disposition:v", "attached_pic", "-id3v2_version", "3",
                   "-write_id3v1", "1", "-metadata:s:v", "title=Alice Example's cover"),
    "tagged.flac": (*_SINE, "-i", "{cover}", "-i", "{tags}", "-map", "0:a", "-map", "1",
                    "-map_metadata", "2", "-c:a", "flac", "-c:v", "copy",
                    "-disposition:v", "attached_pic"),
    "tagged.ogg": (*_SINE, "-i", "{tags}", "-map", "0:a", "-map_metadata", "1",
                   "-map_chapters", "1", "-c:a", "libvorbis"),
    "tagged.opus": (*_SINE, "-i", "{tags}", "-map", "0:a", "-map_metadata", "1",
                    "-map_chapters", "1", "-c:a", "libopus"),
    "tagged.wav": (*_SINE, "-i", "{tags}", "-map", "0:a", "-map_metadata", "1",
                   "-c:a", "pcm_s16le", "-write_bext", "1"),
    "tagged.aiff": (*_SINE, "-i", "{tags}", "-map", "0:a", "-map_metadata", "1",
                    "-c:a", "pcm_s16be", "-write_id3v2", "1"),
    "tagged.m4a": (*_SINE, "-i", "{cover}", "-i", "{tags}", "-map", "0:a", "-map", "1",
                   "-map_metadata", "2", "-map_chapters", "2", "-c:a", "aac", "-c:v", "copy",
                   "-disposition:v", "attached_pic", "-f", "ipod"),
    "tagged.mp4": (*_TEST, *_SINE, "-i", "{subs}", "-i", "{tags}", "-map", "0", "-map", "1",
                   "-map", "2", "-map_metadata", "3", "-map_chapters", "3",
                   "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac", "-c:s", "mov_text",
                   "-metadata:s:s:0", "title=Dave's subtitles",
                   "-metadata:s:a:0", "title=Alice Example's microphone",
                   "-metadata", "com.apple.quicktime.location.ISO6709=+48.8582+002.2945/",
                   "-metadata", "com.apple.quicktime.make=Canon",
                   "-metadata", "com.apple.quicktime.model=EOS 5D",
                   "-timecode", "01:00:00:00", "-movflags", "use_metadata_tags"),
    "tagged.mov": (*_TEST, *_SINE, "-i", "{tags}", "-map", "0", "-map", "1",
                   "-map_metadata", "2", "-map_chapters", "2",
                   "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "aac",
                   "-metadata", "com.apple.quicktime.location.ISO6709=+48.8582+002.2945/",
                   "-metadata", "com.apple.quicktime.make=Canon",
                   "-timecode", "01:00:00:00", "-movflags", "use_metadata_tags"),
    "tagged.mkv": (*_TEST, *_SINE, "-i", "{subs}", "-i", "{tags}", "-map", "0", "-map", "1",
                   "-map", "2", "-map_metadata", "3", "-map_chapters", "3",
                   "-c:v", "libx264", "-preset", "ultrafast", "-c:a", "libopus", "-c:s", "srt",
                   "-metadata:s:s:0", "title=Dave's subtitles",
                   "-metadata:s:a:0", "title=Alice Example's microphone",
                   "-attach", "{font}", "-metadata:s:t:0", "mimetype=font/ttf",
                   "-attach", "{notes}", "-metadata:s:t:1", "mimetype=text/plain",
                   "-attach", "{cover}", "-metadata:s:t:2", "mimetype=image/jpeg"),
    "tagged.webm": (*_TEST, *_SINE, "-i", "{tags}", "-map", "0", "-map", "1",
                    "-map_metadata", "2", "-map_chapters", "2",
                    "-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8",
                    "-c:a", "libopus", "-metadata:s:a:0", "title=Alice Example's microphone"),
    "tagged.avi": (*_TEST, *_SINE, "-i", "{tags}", "-map", "0", "-map", "1",
                   "-map_metadata", "2", "-c:v", "mpeg4", "-c:a", "libmp3lame"),
}
KIND_OF = {"tagged.mp3": "mp3", "tagged.flac": "flac", "tagged.ogg": "ogg",
           "tagged.opus": "opus", "tagged.wav": "wav", "tagged.aiff": "aiff",
           "tagged.m4a": "m4a", "tagged.mp4": "mp4", "tagged.mov": "mov",
           "tagged.mkv": "mkv", "tagged.webm": "mkv", "tagged.avi": "avi"}


def make(folder: Path, name: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    if not path.exists():
        ffmpeg(*_args(RECIPES[name], _inputs(folder)), str(path))
    return path


def ape_tagged_mp3(folder: Path) -> Path:
    """The tagged MP3 (ID3v2 with a cover, ID3v1) with an APEv2 tag written by mutagen between
    the audio and the ID3v1 tag, where taggers (foobar2000, mp3gain) put it: a title, an
    artist, a comment with a position, a camera's serial number and a binary cover picture."""
    from mutagen.apev2 import BINARY, APEv2, APEValue

    path = folder / "ape.mp3"
    if path.exists():
        return path
    data = make(folder, "tagged.mp3").read_bytes()
    assert data[-128:-125] == b"TAG"  # the ID3v1 tag, put back after the APE tag below
    path.write_bytes(data[:-128])
    tag = APEv2()
    tag["Title"] = "Secret Title (APE)"
    tag["Artist"] = "Bob Smith"
    tag["Comment"] = "GPS 48.8582 N, 2.2945 E, recorded at home"
    tag["Serial Number"] = "SN123456"
    tag["Cover Art (Front)"] = APEValue(b"cover.jpg\x00" + _inputs(folder)["cover"].read_bytes(),
                                        BINARY)
    tag.save(str(path))
    with open(path, "ab") as fh:
        fh.write(data[-128:])
    return path


def media_samples(folder: Path) -> dict[str, Path]:
    """One tagged sample per media kind (for the registry walk, tests/engine/samples.py)."""
    return {KIND_OF[name]: make(folder, name) for name in RECIPES if name != "tagged.webm"}


def probe(path: Path) -> dict[str, Any]:
    done = subprocess.run(["ffprobe", "-v", "error", "-show_format", "-show_streams",
                           "-show_chapters", "-of", "json", str(path)],
                          capture_output=True, check=True, timeout=60)
    data: dict[str, Any] = json.loads(done.stdout)
    return data


def exiftool(path: Path) -> dict[str, Any]:
    if shutil.which("exiftool") is None:
        pytest.skip("exiftool is not installed (scripts/install.sh)")
    done = subprocess.run(["exiftool", "-j", "-a", "-u", "-ee", "-G1", str(path)],
                          capture_output=True, check=True, timeout=60)
    data: list[dict[str, Any]] = json.loads(done.stdout)
    return data[0]


def roles(info: dict[str, Any]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for stream in info["streams"]:
        role = stream["codec_type"]
        if role == "video" and stream.get("disposition", {}).get("attached_pic"):
            role = "cover"
        counts[role] = counts.get(role, 0) + 1
    return counts


def audio_md5(path: Path) -> str:
    """MD5 of the decoded audio of the first audio stream (bit-exact copies match)."""
    assert FFMPEG is not None
    done = subprocess.run([FFMPEG, "-nostdin", "-v", "error", "-i", str(path), "-map", "0:a:0",
                           "-f", "md5", "-"], capture_output=True, check=True, timeout=60)
    return done.stdout.decode().strip()


def video_md5(path: Path) -> str:
    """MD5 of the coded video packets of the first video stream (a copy keeps them)."""
    assert FFMPEG is not None
    done = subprocess.run([FFMPEG, "-nostdin", "-v", "error", "-i", str(path), "-map", "0:v:0",
                           "-c", "copy", "-f", "data", "-"], capture_output=True, check=True,
                          timeout=60)
    return hashlib.md5(done.stdout).hexdigest()  # noqa: S324 - a fingerprint, not security


def leftovers(path: Path) -> list[str]:
    """Every planted word still found by exiftool, ffprobe or in the raw bytes."""
    exif = json.dumps(exiftool(path))
    probed = json.dumps(probe(path))
    raw = path.read_bytes().decode("latin-1")
    return [w for w in PLANTED if w in exif or w in probed or w in raw]
