"""Audio and video (engine/media.py): seconds per minute of media to remux a ~100 MB video
through the sandbox (basic mode: streams copied) and the peak memory of ffmpeg doing it, plus a
tagged MP3. Inputs are generated here with ffmpeg (H.264 720p at ~16 Mbit/s with AAC)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backend"))

from sanitas.config import Settings
from sanitas.sandbox import run_sanitizer

TARGET_MB = 100
BITRATE_MBIT = 16

# Runs the engine in a fresh process and prints the peak RSS of its children (ffmpeg, ffprobe)
# and of itself, in KB.
_PEAK = """
import json, resource, sys, time
from sanitas.engine import sanitize_file
started = time.perf_counter()
result = sanitize_file(sys.argv[1], sys.argv[2])
assert result.status == "ok", result.reason
print(json.dumps({"seconds": time.perf_counter() - started,
                  "children_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
                  "self_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def make_video(path: Path) -> float:
    seconds = TARGET_MB * 8 / BITRATE_MBIT
    subprocess.run(["ffmpeg", "-nostdin", "-hide_banner", "-loglevel", "error", "-y",
                    "-f", "lavfi", "-i", f"testsrc2=size=1280x720:rate=30:duration={seconds}",
                    "-f", "lavfi", "-i", f"sine=duration={seconds}",
                    "-c:v", "libx264", "-preset", "ultrafast", "-b:v", f"{BITRATE_MBIT}M",
                    "-c:a", "aac", "-metadata", "title=Secret", "-metadata",
                    "location=+48.8582+002.2945/", str(path)], check=True)
    return seconds


def main() -> None:
    if shutil.which("ffmpeg") is None:
        print("media: not measured (ffmpeg is not installed)")
        return
    with tempfile.TemporaryDirectory(prefix="bench-media-") as tmp:
        work = Path(tmp)
        video = work / "clip.mp4"
        seconds = make_video(video)
        size_mb = video.stat().st_size / 1e6
        settings = Settings(data_dir=work / "data", sandbox="bwrap", executor_workers=1,
                            secret_key="bench-secret-key-that-is-long-enough-0123456789")
        for mode in ("basic", "advanced"):
            if mode == "advanced":  # re-encoding 100 MB takes minutes: a 10 s cut
                cut = work / "cut.mp4"
                subprocess.run(["ffmpeg", "-nostdin", "-loglevel", "error", "-y", "-i",
                                str(video), "-t", "10", "-c", "copy", str(cut)], check=True)
                source, length = cut, 10.0
            else:
                source, length = video, seconds
            started = time.perf_counter()
            result = run_sanitizer(source, work / f"out-{mode}", mode=mode, settings=settings,
                                   original_name=source.name, prewarm=False)
            took = time.perf_counter() - started
            assert result.status == "ok", result.reason
            print(f"{mode:8} {source.stat().st_size / 1e6:6.1f} MB, {length / 60:5.2f} min of "
                  f"720p H.264+AAC through the sandbox: {took:6.2f} s = "
                  f"{took / (length / 60):6.2f} s per minute of media "
                  f"({source.stat().st_size / 1e6 / took:5.1f} MB/s)")
        (work / "peak").mkdir()
        done = subprocess.run([sys.executable, "-c", _PEAK, str(video), str(work / "peak")],
                              capture_output=True, check=True, text=True,
                              cwd=Path(__file__).resolve().parents[1] / "backend")
        peak = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"remux of {size_mb:.0f} MB in process: {peak['seconds']:.2f} s; peak RSS "
              f"ffmpeg/ffprobe {peak['children_kb'] / 1024:.0f} MB, engine (Python) "
              f"{peak['self_kb'] / 1024:.0f} MB")


if __name__ == "__main__":
    main()
