"""Audio and video: tags, cover pictures, chapters, attachments and data tracks removed, the
audio, video and subtitle streams copied into a new container (remuxed, never re-encoded in
basic mode).

ffmpeg (and ffprobe) from the read-only /usr run inside the job's sandbox as children of the
engine, under its limits (memory, CPU, processes, no network). Each run names its demuxer
(`-f`, from the kind detection decided by magic bytes), so ffmpeg never guesses the format from
the bytes: a playlist (HLS, concat, SDP) disguised as a media file is read with the wrong
demuxer and refused as damaged. `-protocol_whitelist file` keeps any reference inside a file
(QuickTime data references stay off: the mov demuxer's `enable_drefs` is 0) to local files, and
the sandbox holds no other file than the input.

What the output keeps: every audio, video and subtitle stream, copied bit for bit
(`-c copy`), their order, dispositions and language; nothing else of the input's metadata. The
muxers write no encoder name or date (`-fflags +bitexact`), MP3 no ID3 tag unless something is
kept in it. The output is probed again (ffprobe, `check_output`): the same number of audio,
video and subtitle streams, the same duration within a tolerance, no tag but the technical ones
the muxer writes itself, no attachment; otherwise the file is refused (`invalid_output`).

The policy: `documentMetadata` decides the tags (title, artist, comment, dates, encoder...;
`keep` keeps them, without location and device tags unless `imageMetadata` keeps those too),
`imageMetadata` the location (GPS, ISO 6709) and device tags (make, model, serial), `coverArt`
the cover pictures (`keep`: the first one, re-encoded by the image family, where the container
can carry one), `chapters` the chapter marks (`keep`: their times, titled "Chapter N" so no
name survives), `embeddedFiles` the attachments of Matroska files (fonts, files: never kept,
nothing checks a font or an arbitrary file here). Data tracks (GoPro GPMF and camera motion
tracks carry GPS positions, timecode tracks the recording time) are never kept.

Advanced mode (a policy whose output is not "same") re-encodes the streams instead of copying
them (H.264 or VP8 video, AAC, MP3, Vorbis, Opus, FLAC or PCM audio as the container wants),
which drops whatever hides inside the coded streams themselves (SEI user data, ancillary bytes)
at the cost of a generation loss and far more CPU.
"""

from __future__ import annotations

import glob
import json
import re
import shutil
import struct
import subprocess
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sanitas.engine.policy import Action, Mode, Rule
from sanitas.engine.report import Context, Rejected, RejectionCode

if TYPE_CHECKING:
    from sanitas.engine.formats import Output


@dataclass(frozen=True)
class Container:
    demuxer: str  # ffmpeg's input format name (-f)
    muxer: str  # ffmpeg's output format name (-f)
    extension: str
    video: bool  # the kind may hold video
    cover: bool = False  # the muxer can carry an attached cover picture
    chapters: bool = False  # the muxer can carry chapter marks
    mux_options: tuple[str, ...] = ()
    # advanced mode: (video encoder options, audio encoder options, subtitle encoder options)
    reencode: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]] = ((), (), ())


_H264 = ("-c:v", "libx264", "-preset", "veryfast", "-crf", "20", "-pix_fmt", "yuv420p",
         "-x264-params", "threads=2")
_AAC = ("-c:a", "aac", "-b:a", "192k")
CONTAINERS: dict[str, Container] = {
    "mp3": Container("mp3", "mp3", "mp3", False, cover=True, chapters=True,
                     reencode=((), ("-c:a", "libmp3lame", "-q:a", "2"), ())),
    "flac": Container("flac", "flac", "flac", False, cover=True,
                      reencode=((), ("-c:a", "flac"), ())),
    "ogg": Container("ogg", "ogg", "ogg", False,
                     reencode=((), ("-c:a", "libvorbis", "-q:a", "6"), ())),
    "opus": Container("ogg", "ogg", "opus", False,
                      reencode=((), ("-c:a", "libopus", "-b:a", "128k"), ())),
    "wav": Container("wav", "wav", "wav", False, mux_options=("-write_bext", "0"),
                     reencode=((), ("-c:a", "pcm_s16le"), ())),
    "aiff": Container("aiff", "aiff", "aiff", False, mux_options=("-write_id3v2", "0"),
                      reencode=((), ("-c:a", "pcm_s16be"), ())),
    "m4a": Container("mov", "ipod", "m4a", False, cover=True, chapters=True,
                     reencode=((), _AAC, ())),
    "mp4": Container("mov", "mp4", "mp4", True, chapters=True,
                     reencode=(_H264, _AAC, ("-c:s", "mov_text"))),
    "mov": Container("mov", "mov", "mov", True, chapters=True,
                     reencode=(_H264, _AAC, ("-c:s", "mov_text"))),
    "mkv": Container("matroska", "matroska", "mkv", True, cover=False, chapters=True,
                     reencode=(_H264, ("-c:a", "libopus", "-b:a", "160k"), ("-c:s", "copy"))),
    "webm": Container("matroska", "webm", "webm", True, chapters=True,
                      reencode=(("-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8",
                                 "-b:v", "2M", "-threads", "2"),
                                ("-c:a", "libopus", "-b:a", "160k"), ("-c:s", "webvtt"))),
    "avi": Container("avi", "avi", "avi", True,
                     reencode=(("-c:v", "mpeg4", "-q:v", "3"),
                               ("-c:a", "libmp3lame", "-q:a", "2"), ())),
}

# The EBML header's DocType element (0x4282), a one-byte size, then "webm".
WEBM_DOCTYPE = re.compile(rb"\x42\x82\x84webm")
EBML_HEAD = 64
THREADS = 2  # ffmpeg's threads per job (a job's cores are few; remuxing needs one)
PROBE_TIMEOUT = 60.0
MAX_PROBE_OUTPUT = 16 * 1024 * 1024
MAX_STREAMS = 64  # more streams than any real recording: refused (too_complex)
MAX_CHAPTERS = 1000
# Remuxing reads and writes at disk speed: its time limit is generous, scaled to the input.
SECONDS_PER_MB = {Mode.BASIC: 2.0, Mode.ADVANCED: 30.0}
# Durations (seconds) compared between input and output: the larger of these.
DURATION_TOLERANCE = (0.5, 0.02)

# Tags every muxer writes itself or that say nothing about anyone (compared in lower case).
TECHNICAL_TAGS = frozenset({
    "major_brand", "minor_version", "compatible_brands", "handler_name", "vendor_id",
    "language", "duration", "bps", "number_of_frames", "number_of_bytes",
    "_statistics_tags", "encoder", "mimetype", "filename",
})
_LOCATION = re.compile(r"location|gps|iso6709|geo|latitude|longitude|\bxyz\b|position",
                       re.IGNORECASE)
_DEVICE = re.compile(r"make|model|serial|device|camera|lens|firmware|software|hardware|"
                     r"manufacturer|owner|uuid", re.IGNORECASE)


# APE tags (APEv1/v2) at the end of an MP3, before its ID3v1 tag when there is one: ffmpeg's
# MP3 demuxer neither reads them nor copies them (their bytes are no audio frame), so they are
# read here to be reported, and the output is checked to hold none.
APE_FOOTER = 32
ID3V1 = 128
MAX_APE_ITEMS = 1000
APE_VALUE_READ = 256  # bytes of a text item read to see whether it holds a position
_ISO6709 = re.compile(r"[+-]\d{1,3}\.\d+[+-]\d{1,3}\.\d+")


@dataclass(frozen=True)
class ApeItem:
    key: str
    binary: bool  # a binary item (a cover picture, a file), else text or a locator
    location: bool  # its key or text names a place or holds coordinates


@dataclass(frozen=True)
class ApeTag:
    start: int  # where the tag (its header, else its first item) starts: the audio ends there
    items: list[ApeItem]


def ape_tag(path: Path) -> ApeTag | None:
    """The APE tag ending `path` (or ending just before its ID3v1 tag), or None when there is
    none. Reads the footer and each item's header only (bounded item count, values skipped but
    for the first bytes of a text item)."""
    size = path.stat().st_size
    with open(path, "rb") as fh:
        for end in (size, size - ID3V1):
            if end < APE_FOOTER:
                continue
            fh.seek(end - APE_FOOTER)
            footer = fh.read(APE_FOOTER)
            if footer[:8] == b"APETAGEX":
                break
        else:
            return None
        _version, tag_size, count, flags = struct.unpack("<4I", footer[8:24])
        header = APE_FOOTER if flags & 0x80000000 else 0
        if tag_size < APE_FOOTER or tag_size + header > end:
            raise Rejected("The audio or video file is damaged (its APE tag declares more bytes "
                           "than the file holds).", RejectionCode.DAMAGED)
        start = end - tag_size  # the items start; tag_size counts them and the footer
        position, items = start, list[ApeItem]()
        while len(items) < min(count, MAX_APE_ITEMS) and position + 9 <= end - APE_FOOTER:
            fh.seek(position)
            head = fh.read(8 + 256)
            value_size, item_flags = struct.unpack("<2I", head[:8])
            key_end = head.find(b"\0", 8)
            if key_end < 0:
                break
            key = "".join(c if " " <= c <= "~" else "?"
                          for c in head[8:key_end].decode("latin-1"))
            binary = (item_flags >> 1) & 3 == 1
            text = "" if binary else _read_at(fh, position + key_end + 1,
                                              min(value_size, APE_VALUE_READ))
            items.append(ApeItem(key[:80], binary, bool(_LOCATION.search(key) or (
                _LOCATION.search(text) or _ISO6709.search(text)))))
            position += key_end + 1 + value_size
    return ApeTag(start - header, items)


def _read_at(fh: Any, offset: int, size: int) -> str:
    fh.seek(offset)
    return str(fh.read(size).decode("utf-8", "replace"))


@dataclass
class _Plan:
    """What one run of ffmpeg keeps."""

    streams: list[int] = field(default_factory=list)  # input stream indexes mapped, in order
    cover: int | None = None  # the input index of the cover kept
    chapters: list[tuple[float, float]] = field(default_factory=list)
    keep_tags: bool = False
    blank_tags: list[str] = field(default_factory=list)  # global tags blanked when keeping


def tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise Rejected("Audio and video files cannot be processed by this installation "
                       f"({name} is not installed).", RejectionCode.UNAVAILABLE)
    return found


def probe(path: Path, demuxer: str | None = None, timeout: float = PROBE_TIMEOUT
          ) -> dict[str, Any]:
    """ffprobe's view of `path` (format, streams, chapters), read with `demuxer` when given.
    Raises Rejected (damaged) when ffprobe cannot read it."""
    command = [tool("ffprobe"), "-v", "error", "-hide_banner", "-protocol_whitelist", "file",
               "-show_format", "-show_streams", "-show_chapters", "-of", "json"]
    if demuxer:
        command += ["-f", demuxer]
    command += ["-i", f"file:{path}"]
    done = _run(command, timeout)
    try:
        data = json.loads(done.stdout[:MAX_PROBE_OUTPUT] or b"{}")
    except ValueError:
        data = {}
    if b"error while loading shared libraries" in done.stderr:
        raise Rejected("Audio and video files cannot be processed by this installation "
                       "(ffprobe cannot start).", RejectionCode.UNAVAILABLE)
    if done.returncode != 0 or not isinstance(data, dict) or "format" not in data:
        raise Rejected("The audio or video file is damaged (it cannot be read: "
                       f"{_first_error(done.stderr)}).", RejectionCode.DAMAGED)
    return data


# Debian links libblas.so.3 and liblapack.so.3 (which ffmpeg loads) through /etc/alternatives,
# and the sandbox shows no /etc: the tools are pointed at the implementations' own folders.
_LIBRARY_DIRS = ":".join(sorted(glob.glob("/usr/lib/*-linux-gnu/blas")
                                + glob.glob("/usr/lib/*-linux-gnu/lapack")))


def _run(command: list[str], timeout: float) -> subprocess.CompletedProcess[bytes]:
    env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"}
    if _LIBRARY_DIRS:
        env["LD_LIBRARY_PATH"] = _LIBRARY_DIRS
    try:
        return subprocess.run(command, capture_output=True, timeout=timeout,  # noqa: S603 - argv list, no shell
                              stdin=subprocess.DEVNULL, check=False, env=env)
    except subprocess.TimeoutExpired:
        raise Rejected(f"Processing the audio or video took longer than the {int(timeout)} s "
                       "allowed and was stopped.", RejectionCode.TIME_LIMIT) from None


def _first_error(stderr: bytes) -> str:
    lines = [line.strip() for line in stderr.decode("utf-8", "replace").splitlines()
             if line.strip()]
    text = lines[-1] if lines else "no stream found"
    text = re.sub(r"(file:)?/\S+", "the file", text)  # no paths of the sandbox in reports
    return text[:200]


def _tags(entry: dict[str, Any]) -> dict[str, str]:
    tags = entry.get("tags")
    return {str(k): str(v) for k, v in tags.items()} if isinstance(tags, dict) else {}


def _personal(tags: dict[str, str]) -> list[str]:
    return sorted(k for k in tags if k.lower() not in TECHNICAL_TAGS
                  and not k.lower().startswith("_statistics"))


def _duration(info: dict[str, Any]) -> float | None:
    try:
        value = float(info.get("format", {}).get("duration"))
    except (TypeError, ValueError):
        return None
    return value if value >= 0 else None


def _kind_of_stream(stream: dict[str, Any]) -> str:
    if stream.get("codec_type") == "video" and \
            (stream.get("disposition") or {}).get("attached_pic"):
        return "cover"
    return str(stream.get("codec_type") or "data")


def container_of(src: Path, kind: str) -> Container:
    """The container `kind` is written as: a Matroska file whose EBML header names the WebM
    DocType stays WebM."""
    if kind == "mkv":
        with open(src, "rb") as fh:
            head = fh.read(EBML_HEAD)
        if WEBM_DOCTYPE.search(head):
            return CONTAINERS["webm"]
    return CONTAINERS[kind]


def verify(path: Path, spec: Output) -> None:
    """The output registry's check (formats.OUTPUTS): `path` opens with its own demuxer and
    holds an audio or video stream."""
    from sanitas.engine import formats
    from sanitas.engine.detect import detect

    container = next(c for c in CONTAINERS.values() if c.extension == spec.extension)
    # the demuxer is forced below, and some (flac) read junk as a stream: the bytes must
    # first be detected as a kind that produces this extension
    found = detect(path, path.name).kind
    if spec.extension not in formats.kind(found).outputs:
        raise ValueError(f"the file is not detected as {spec.extension.upper()} ({found})")
    info = probe(path, container.demuxer)
    if not any(_kind_of_stream(s) in ("audio", "video") for s in info.get("streams") or []):
        raise ValueError("no audio or video stream")
    # MP3 (Xing), FLAC (STREAMINFO), AIFF (COMM) and Matroska (Duration) state their length in
    # a header written once the muxer is done: a copy cut short still declares the whole, and
    # only its packets show where it really ends
    declared, played = _duration(info), packets_end(path, container.demuxer)
    if declared is not None and (played is None or declared - played > _tolerance(declared)):
        raise ValueError(f"the file is cut short: its header declares {declared:.2f} s, its "
                         f"packets end at {played or 0:.2f} s")


def sanitize(src: Path, dst: Path, ctx: Context, kind: str) -> str:
    container = container_of(src, kind)
    assert ctx.workdir is not None
    limit = 30.0 + SECONDS_PER_MB[ctx.mode] * src.stat().st_size / (1024 * 1024)
    info = probe(src, container.demuxer)
    declared, played = _duration(info), packets_end(src, container.demuxer, limit)
    if declared is not None and (played is None or declared - played > _tolerance(declared)):
        # a partial download: the header declares the whole, the packets stop early
        raise Rejected(f"The audio or video file is damaged (it is cut short: its header "
                       f"declares {declared:.1f} s, its streams end at {played or 0:.1f} s).",
                       RejectionCode.DAMAGED)
    ctx.progress(15)
    streams = info.get("streams") or []
    if len(streams) > MAX_STREAMS or len(info.get("chapters") or []) > MAX_CHAPTERS:
        raise Rejected(f"The file has more than {MAX_STREAMS} streams or {MAX_CHAPTERS} "
                       "chapters, more than any recording needs.", RejectionCode.TOO_COMPLEX)
    plan = _decide(info, ctx, container)
    ape = ape_tag(src) if container.demuxer == "mp3" else None
    if ape is not None:
        _report_ape(ape.items, ctx)
        # its bytes may look like a frame's sync word and ride along in the last packet: the
        # remux reads a copy that ends where the tag starts
        src = _head(src, ape.start, ctx.workdir / f"media-in.{container.extension}")
    if not plan.streams:
        raise Rejected("The file holds no audio or video stream that can be kept.",
                       RejectionCode.NO_CONTENT)
    cover_file = _cover(src, info, plan, ctx, container, limit) if plan.cover is not None \
        else None
    chapters_file = _chapters_file(plan, ctx.workdir) if plan.chapters else None
    out = ctx.workdir / f"media-out.{container.extension}"
    command = _command(src, out, container, plan, ctx.mode, cover_file, chapters_file)
    done = _run(command, limit)
    if done.returncode != 0 and cover_file is not None:
        # the muxer would not carry this picture: the file goes out without it
        ctx.add("cover_art", "cover picture", action="removed",
                detail=f"the {container.extension.upper()} output cannot carry it")
        plan.cover = cover_file = None
        done = _run(_command(src, out, container, plan, ctx.mode, None, chapters_file), limit)
    if done.returncode != 0:
        raise Rejected("The audio or video file is damaged (its streams cannot be copied: "
                       f"{_first_error(done.stderr)}).", RejectionCode.DAMAGED)
    ctx.progress(85)
    check_output(out, container, info, plan, limit)
    if ctx.mode is Mode.ADVANCED:
        ctx.add("media_reencoded", "streams", action="converted",
                detail="audio and video re-encoded (advanced mode)")
    shutil.move(out, dst)
    return container.extension


def _decide(info: dict[str, Any], ctx: Context, container: Container) -> _Plan:
    """Record a finding for everything found, and what the output keeps."""
    plan = _Plan()
    meta = ctx.decides(Rule.DOCUMENT_METADATA)
    image_meta = ctx.decides(Rule.IMAGE_METADATA)
    found = _tags(info.get("format", {}))
    personal = _personal(found)
    location = [k for k in personal if _LOCATION.search(k)]
    device = [k for k in personal if _DEVICE.search(k) and k not in location]
    plain = [k for k in personal if k not in location and k not in device]
    plan.keep_tags = meta is Action.KEEP and bool(personal)
    if plain:
        ctx.add("metadata", "container tags", action="kept" if plan.keep_tags else "removed",
                detail=", ".join(plain)[:300], rule=Rule.DOCUMENT_METADATA)
    for keys, finding in ((location, "gps_location"), (device, "device_info")):
        if not keys:
            continue
        kept = plan.keep_tags and image_meta is Action.KEEP
        ctx.add(finding, "container tags", action="kept" if kept else "removed",
                detail=", ".join(keys)[:300], rule=Rule.IMAGE_METADATA)
        if plan.keep_tags and not kept:
            plan.blank_tags += keys
    if plan.keep_tags and "timecode" in found:
        plan.blank_tags.append("timecode")  # QuickTime muxers would make a timecode track of it
    chapters = info.get("chapters") or []
    if chapters:
        keep = ctx.decides(Rule.CHAPTERS) is Action.KEEP and container.chapters
        titled = sum(1 for c in chapters if _personal(_tags(c)))
        detail = f"{len(chapters)} chapter(s)" + (f", {titled} with titles or tags" if titled
                                                   else "")
        if keep:
            detail += "; kept as marks titled Chapter 1, 2..."
        elif ctx.decides(Rule.CHAPTERS) is Action.KEEP:
            detail += f"; the {container.extension.upper()} output cannot carry chapters"
        ctx.add("chapters", "chapters", action="kept" if keep else "removed", detail=detail)
        if keep:
            for chapter in chapters:
                try:
                    start, end = float(chapter["start_time"]), float(chapter["end_time"])
                except (KeyError, TypeError, ValueError):
                    continue
                if 0 <= start <= end:
                    plan.chapters.append((start, end))
    covers = 0
    for stream in info.get("streams") or []:
        index = stream.get("index")
        if not isinstance(index, int):
            continue
        where = f"stream {index} ({stream.get('codec_type')}, {stream.get('codec_name')})"
        role = _kind_of_stream(stream)
        tags = _personal(_tags(stream))
        if role in ("audio", "video", "subtitle"):
            plan.streams.append(index)
            if tags:
                ctx.add("metadata", where, action="removed", detail=", ".join(tags)[:300],
                        rule=Rule.DOCUMENT_METADATA)
        elif role == "cover":
            covers += 1
            keep = ctx.decides(Rule.COVER_ART) is not Action.REMOVE and container.cover \
                and covers == 1 and stream.get("codec_name") in ("mjpeg", "png")
            if keep:
                plan.cover = index
            else:
                why = "" if ctx.decides(Rule.COVER_ART) is Action.REMOVE else \
                    "; the output cannot carry it" if not container.cover or covers == 1 else \
                    "; only the first cover picture is kept"
                ctx.add("cover_art", where, action="removed", detail=f"cover picture{why}")
        elif role == "attachment":
            name = _tags(stream).get("filename", "") or _tags(stream).get("mimetype", "")
            ctx.add("embedded_file", f"attachment {name[:120]}".strip(), action="removed",
                    detail="attachments of audio and video files are never kept")
        else:
            tag = str(stream.get("codec_tag_string") or stream.get("codec_name") or "")
            gps = tag.lower() in ("gpmd", "camm") or any(
                _LOCATION.search(v) for v in _tags(stream).values())
            ctx.add("gps_location" if gps else "data_stream", where, action="removed",
                    detail=f"{'GPS ' if gps else ''}data track ({tag[:40] or 'unknown'}); "
                           "data tracks are never kept", rule=Rule.IMAGE_METADATA)
    return plan


def _head(src: Path, size: int, dst: Path) -> Path:
    """A copy of the first `size` bytes of `src`."""
    with open(src, "rb") as fin, open(dst, "wb") as fout:
        while size > 0:
            chunk = fin.read(min(size, 1 << 20))
            if not chunk:
                break
            fout.write(chunk)
            size -= len(chunk)
    return dst


def _report_ape(items: list[ApeItem], ctx: Context) -> None:
    """Findings for an MP3's APE tag: never kept (the MP3 output keeps tags in ID3v2 only)."""
    why = "APE tag; the output keeps no APE tag"
    text = [i.key for i in items if not i.binary]
    location = [i.key for i in items if not i.binary and i.location]
    device = [k for k in text if _DEVICE.search(k) and k not in location]
    plain = [k for k in text if k not in location and k not in device]
    if plain or not items:
        ctx.add("metadata", "APE tag", detail=f"{why}: {', '.join(plain) or 'no item'}"[:300],
                rule=Rule.DOCUMENT_METADATA)
    for keys, finding in ((location, "gps_location"), (device, "device_info")):
        if keys:
            ctx.add(finding, "APE tag", detail=f"{why}: {', '.join(keys)}"[:300],
                    rule=Rule.IMAGE_METADATA)
    for item in items:
        if item.binary and item.key.lower().startswith("cover art"):
            ctx.add("cover_art", f"APE item {item.key}", detail=f"cover picture in the {why}")
        elif item.binary:
            ctx.add("embedded_file", f"APE item {item.key}", detail=f"binary item in the {why}")


def packets_end(path: Path, demuxer: str, timeout: float = PROBE_TIMEOUT) -> float | None:
    """Where the packets actually present end (the latest time + duration of any packet),
    found by demuxing the whole file without decoding it; None when no packet has a time.
    ffprobe's output is read line by line (a long recording has a million packets)."""
    command = [tool("ffprobe"), "-v", "error", "-hide_banner", "-protocol_whitelist", "file",
               "-f", demuxer, "-i", f"file:{path}", "-show_entries",
               "packet=pts_time,duration_time", "-of", "csv=p=0"]
    env = {"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"}
    if _LIBRARY_DIRS:
        env["LD_LIBRARY_PATH"] = _LIBRARY_DIRS
    end: float | None = None
    expired = threading.Event()
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,  # noqa: S603 - argv list, no shell
                          stdin=subprocess.DEVNULL, env=env) as process:
        def stop() -> None:
            expired.set()
            process.kill()

        timer = threading.Timer(timeout, stop)
        timer.start()
        try:
            assert process.stdout is not None
            for line in process.stdout:
                start, _, length = line[:200].strip().partition(b",")
                try:
                    at = float(start) + (float(length) if length not in (b"", b"N/A") else 0.0)
                except ValueError:
                    continue
                end = at if end is None else max(end, at)
        finally:
            timer.cancel()
            process.kill()
    if expired.is_set():
        raise Rejected(f"Reading the audio or video took longer than the {int(timeout)} s "
                       "allowed and was stopped.", RejectionCode.TIME_LIMIT)
    return end


def _tolerance(duration: float) -> float:
    return max(DURATION_TOLERANCE[0], DURATION_TOLERANCE[1] * duration)


def _cover(src: Path, info: dict[str, Any], plan: _Plan, ctx: Context, container: Container,
           limit: float) -> Path | None:
    """The kept cover picture, extracted and cleaned by the image family (its EXIF goes too),
    or None (recorded) when it cannot be."""
    from sanitas.engine import image

    assert ctx.workdir is not None and plan.cover is not None
    stream = next(s for s in info["streams"] if s.get("index") == plan.cover)
    jpeg = stream.get("codec_name") == "mjpeg"
    raw = ctx.workdir / ("cover-in.jpg" if jpeg else "cover-in.png")
    done = _run([tool("ffmpeg"), "-nostdin", "-hide_banner", "-loglevel", "error",
                 "-protocol_whitelist", "file", "-f", container.demuxer, "-i", f"file:{src}",
                 "-map", f"0:{plan.cover}", "-c", "copy", "-frames:v", "1", "-f", "image2",
                 f"file:{raw}"], limit)
    clean = ctx.workdir / "cover-clean"
    try:
        if done.returncode != 0 or not raw.exists():
            raise Rejected("cannot be extracted", RejectionCode.DAMAGED)
        extension = image.sanitize(raw, clean, ctx, "jpeg" if jpeg else "png")
    except Rejected as exc:
        ctx.add("cover_art", f"stream {plan.cover}", action="removed",
                detail=f"cover picture: {exc.reason[:200]}")
        plan.cover = None
        return None
    ctx.add("cover_art", f"stream {plan.cover}", action="kept",
            detail="cover picture, re-encoded without its metadata")
    return clean.rename(ctx.workdir / f"cover.{extension}")


def _chapters_file(plan: _Plan, workdir: Path) -> Path:
    """An FFMETADATA file with the kept chapter marks and neutral titles only."""
    lines = [";FFMETADATA1"]
    for number, (start, end) in enumerate(plan.chapters, 1):
        lines += ["[CHAPTER]", "TIMEBASE=1/1000", f"START={round(start * 1000)}",
                  f"END={round(end * 1000)}", f"title=Chapter {number}"]
    path = workdir / "chapters.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _command(src: Path, out: Path, container: Container, plan: _Plan, mode: Mode,
             cover: Path | None, chapters: Path | None) -> list[str]:
    command = [tool("ffmpeg"), "-nostdin", "-hide_banner", "-loglevel", "error", "-y",
               "-threads", str(THREADS), "-protocol_whitelist", "file",
               "-f", container.demuxer, "-i", f"file:{src}"]
    inputs = 1
    cover_input = chapters_input = None
    if cover is not None:
        command += ["-protocol_whitelist", "file", "-i", f"file:{cover}"]
        cover_input, inputs = inputs, inputs + 1
    if chapters is not None:
        command += ["-protocol_whitelist", "file", "-f", "ffmetadata", "-i", f"file:{chapters}"]
        chapters_input, inputs = inputs, inputs + 1
    for index in plan.streams:
        command += ["-map", f"0:{index}"]
    if cover_input is not None:
        command += ["-map", f"{cover_input}:0"]
    # global and stream tags mapped explicitly; chapter titles come automatically from the
    # chapters' own input (the neutral FFMETADATA file), when there is one
    command += ["-map_metadata:g", "0:g" if plan.keep_tags else "-1",
                "-map_chapters", str(chapters_input) if chapters_input is not None else "-1"]
    for index in range(len(plan.streams) + (cover_input is not None)):
        command += [f"-map_metadata:s:{index}", "-1"]
    for key in plan.blank_tags:
        command += ["-metadata", f"{key}="]
    if mode is Mode.ADVANCED:
        video, audio, subtitles = container.reencode
        command += [*video, *audio, *(subtitles or ("-c:s", "copy"))]
        if cover_input is not None:
            command += ["-c:v:" + str(_cover_position(plan)), "copy"]
    else:
        command += ["-c", "copy"]
    if cover_input is not None:
        command += [f"-disposition:{_cover_position(plan)}", "attached_pic"]
    command += ["-fflags", "+bitexact", "-flags:v", "+bitexact", "-flags:a", "+bitexact",
                *container.mux_options]
    if container.muxer == "mp3":
        command += ["-id3v2_version", "4" if (cover_input is not None or chapters_input is not None
                                              or plan.keep_tags) else "0"]
    command += ["-f", container.muxer, f"file:{out}"]
    return command


def _cover_position(plan: _Plan) -> int:
    return len(plan.streams)


def check_output(out: Path, container: Container, info: dict[str, Any], plan: _Plan,
                 limit: float) -> None:
    """Refuse an output that lost a stream, changed length or still carries a tag or an
    attachment it should not (re-probed with the muxer's own demuxer)."""
    if not out.exists() or out.stat().st_size == 0:
        raise Rejected("The sanitized audio or video file is empty.",
                       RejectionCode.INVALID_OUTPUT)
    try:
        produced = probe(out, container.demuxer, timeout=limit)
    except Rejected:
        raise Rejected("The sanitized audio or video file does not open again.",
                       RejectionCode.INVALID_OUTPUT) from None
    problems = check_streams(info, produced, plan)
    if container.muxer == "mp3" and ape_tag(out) is not None:
        problems.append("an APE tag is left")
    if problems:
        raise Rejected("The sanitized audio or video file did not keep the original's "
                       f"streams ({'; '.join(problems)[:300]}).", RejectionCode.INVALID_OUTPUT)


def _roles(info: dict[str, Any]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for stream in info.get("streams") or []:
        role = _kind_of_stream(stream)
        counts[role] = counts.get(role, 0) + 1
    return counts


def check_streams(before: dict[str, Any], after: dict[str, Any], plan: _Plan) -> list[str]:
    """What the output `after` lost or gained against the input `before`."""
    problems = []
    wanted, got = _roles(before), _roles(after)
    for role in ("audio", "video", "subtitle"):
        if wanted.get(role, 0) != got.get(role, 0):
            problems.append(f"{role} streams {wanted.get(role, 0)} -> {got.get(role, 0)}")
    if got.get("cover", 0) > (plan.cover is not None):
        problems.append("a cover picture is left")
    if got.get("attachment"):
        problems.append("an attachment is left")
    if got.get("data") and not plan.chapters:  # QuickTime writes chapters as a text track
        problems.append("a data track is left")
    if len(after.get("chapters") or []) > len(plan.chapters):
        problems.append("chapters are left")
    length_in, length_out = _duration(before), _duration(after)
    if length_in is not None and length_out is not None \
            and abs(length_in - length_out) > _tolerance(length_in):
        problems.append(f"duration {length_in:.2f} s -> {length_out:.2f} s")
    kept = _tags(after.get("format", {})) if plan.keep_tags else {}
    leftover = [] if plan.keep_tags else _personal(_tags(after.get("format", {})))
    for stream in after.get("streams") or []:
        # what a muxer copies from kept container tags, and its own cover description
        allowed = set(kept) | ({"comment", "title"} if _kind_of_stream(stream) == "cover"
                               else set())
        leftover += [k for k in _personal(_tags(stream)) if k not in allowed]
    if leftover:
        problems.append("tags left: " + ", ".join(sorted(set(leftover)))[:200])
    return problems
