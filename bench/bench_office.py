"""Office files through the sandbox, with LibreOffice started ahead in the spare (warm, the
default) and without (SANITAS_SANDBOX_WARM_OFFICE=false): seconds per legacy file in basic mode
(converted by LibreOffice), seconds per page of a DOCX in advanced mode (LibreOffice renders
it to PDF), what an idle office spare costs (memory, CPU), and the throughput of a batch of 50
legacy files with two workers. Inputs are made here (LibreOffice writes the legacy formats)."""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backend"))

from sanitas.config import Settings
from sanitas.sandbox import bwrap, run_sanitizer
from tests.engine import corpus_office as corpus
from tests.engine.render_office import convert_many

PAGES = 6
BATCH = 50
REPEAT = 3
TICK = os.sysconf("SC_CLK_TCK")


def make_inputs(work: Path) -> dict[str, Path]:
    src = work / "src"
    files = corpus.write_all(src)
    body = "".join("".join(corpus._p(f"Page {n + 1}: quarterly figures, paragraph {i + 1}.")
                           for i in range(12))
                   + ('<w:p><w:r><w:br w:type="page"/></w:r></w:p>' if n < PAGES - 1 else "")
                   for n in range(PAGES))
    long_docx = src / "long.docx"
    long_docx.write_bytes(corpus.docx(body))
    lo = work / "lo"
    made = {}
    for source, target in ((files["clean.docx"], "doc"), (files["clean.docx"], "rtf"),
                           (files["clean.xlsx"], "xls"), (files["clean.odp"], "ppt")):
        out = convert_many([source], target, work / f"legacy-{target}", lo)
        made[target] = out[source]
    made["docx (advanced)"] = long_docx
    return made


def _tree(root: int) -> list[int]:
    """root and every process below it."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_bytes().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            children.setdefault(int(stat[1]), []).append(int(entry))
    found, todo = [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(children.get(pid, []))
    return found


def _pss_and_ticks(pids: list[int]) -> tuple[int, int]:
    pss = ticks = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    pss += int(line.split()[1]) * 1024
            stat = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()
            ticks += int(stat[11]) + int(stat[12])
        except (OSError, ValueError):
            continue
    return pss, ticks


def _idle_spare(settings: Settings, sample: Path, out: Path) -> bwrap._Sandbox:
    """Run one office job so that an office spare is started, and wait until it is idle."""
    bwrap.shutdown_spares()
    run_sanitizer(sample, out, mode="basic", settings=settings, prewarm=True)
    (spare,) = [s for s in bwrap.spares() if s.layout.office]
    last = -1
    for _ in range(60):
        _pss, ticks = _pss_and_ticks(_tree(spare.proc.pid))
        if ticks == last:
            break
        last = ticks
        time.sleep(1.0)
    return spare


def per_file(settings: Settings, path: Path, out: Path, mode: str) -> float:
    times = []
    for _ in range(REPEAT):
        _idle_spare(settings, path, out)
        started = time.perf_counter()
        result = run_sanitizer(path, out, mode=mode, settings=settings, prewarm=False)
        times.append(time.perf_counter() - started)
        assert result.status == "ok", result.reason
    return statistics.median(times)


def spare_cost(settings: Settings, sample: Path, out: Path) -> tuple[float, float, float]:
    """(PSS MB of an idle office spare, CPU s it took to get there, CPU % while idle)."""
    spare = _idle_spare(settings, sample, out)
    pids = _tree(spare.proc.pid)
    pss, ticks = _pss_and_ticks(pids)
    time.sleep(10)
    _pss, later = _pss_and_ticks(pids)
    bwrap.shutdown_spares()
    return pss / 1e6, ticks / TICK, (later - ticks) / TICK / 10 * 100


def batch(settings: Settings, files: list[Path], out: Path) -> float:
    bwrap.shutdown_spares()
    todo = list(files)
    lock = threading.Lock()
    failures: list[str] = []

    def worker(n: int) -> None:
        while True:
            with lock:
                if not todo:
                    return
                path = todo.pop()
            result = run_sanitizer(path, out / f"w{n}", mode="basic", settings=settings,
                                   prewarm=True)
            if result.status != "ok":
                failures.append(result.reason or "")

    started = time.perf_counter()
    threads = [threading.Thread(target=worker, args=(n,)) for n in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - started
    bwrap.shutdown_spares()
    assert not failures, failures[:3]
    return len(files) / elapsed


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-office-") as tmp:
        work = Path(tmp)
        inputs = make_inputs(work)
        out = work / "out"
        # OCR off: advanced mode's figure is LibreOffice's rendering plus the pixel rebuild
        # (bench_engine.py has the OCR figures).
        base = dict(data_dir=work / "data", sandbox="bwrap", executor_workers=2, ocr=False,
                    secret_key="bench-secret-key-that-is-long-enough-0123456789")
        variants = {"warm": Settings(**base, sandbox_warm_office=True),
                    "cold": Settings(**base, sandbox_warm_office=False)}
        figures: dict[str, dict[str, float]] = {v: {} for v in variants}
        for name, settings in variants.items():
            for label, path in inputs.items():
                mode = "advanced" if "advanced" in label else "basic"
                seconds = per_file(settings, path, out, mode)
                figures[name][label] = seconds / PAGES if mode == "advanced" else seconds
        print(f"{'office file through the sandbox':34} {'cold':>8} {'warm':>8}  warm/cold")
        for label in inputs:
            unit = "s/page" if "advanced" in label else "s/file"
            cold, warm = figures["cold"][label], figures["warm"][label]
            print(f"  {label + ' (' + unit + ')':32} {cold:8.3f} {warm:8.3f}  {warm / cold:.2f}"
                  "   target <= 0.50")
        for name, settings in variants.items():
            pss, cpu, idle = spare_cost(settings, inputs["doc"], out)
            print(f"idle office spare, {name}: {pss:6.0f} MB PSS, {cpu:.2f} CPU s to start, "
                  f"{idle:.2f} % CPU while idle")
        legacy = [inputs[k] for k in ("doc", "xls", "ppt", "rtf")]
        files = []
        for i in range(BATCH):
            source = legacy[i % len(legacy)]
            copy = work / "batch" / f"file{i}{source.suffix}"
            copy.parent.mkdir(exist_ok=True)
            copy.write_bytes(source.read_bytes())
            files.append(copy)
        for name, settings in variants.items():
            print(f"batch of {BATCH} legacy office files, 2 workers, {name}: "
                  f"{batch(settings, files, out):.2f} files/s")


if __name__ == "__main__":
    main()
