"""Business-mix benchmark (issue 30): a deterministic set of business-looking files of about
20 kinds (Word, Excel and PowerPoint files with photos, legacy .doc/.xls/.ppt, RTF, PDFs of
text and of photos, JPEG photos, a PNG screenshot, a TIFF scan, CSV, text, HTML, a ZIP of
documents, an e-mail with attachments), mean size about 3 MB, pushed through the one-call API
(`POST /api/v1/sanitize`) of a real `sanitas serve` by N concurrent clients.

Prints files/s, files/s per core, GB/h, latency mean/p50/p95/p99 per kind, and the CPU per
file: the server process's own (API, job orchestration) and its reaped children's (the
sandboxes: the engine, LibreOffice); the latency of a small text file another account sends
every half second meanwhile (the issue's p99 <= 2 s); the storage and database growth per
1,000 files (`--postgres`: also PostgreSQL's transactions and rows). Compare with Glasswall
Halo 2.6.1's published 0.46 files/s per vCPU on its 3.74 MB mean mix; the issue's targets are
>= 1.0 per core in basic mode and >= 0.3 in advanced.

Usage: backend/.venv/bin/python bench/bench_business.py [--mode basic|advanced]
       [--rounds 2] [--clients 4] [--probe-every 0.5] [--postgres] [--env SANITAS_X=VALUE ...]
"""

# ruff: noqa: S311 - seeded generators make the same files on every run (nothing secret)
from __future__ import annotations

import argparse
import contextlib
import io
import os
import random
import statistics
import sys
import tempfile
import threading
import time
import zipfile
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from email.message import EmailMessage
from pathlib import Path

import httpx
import numpy as np
import psutil
from PIL import Image
from sqlalchemy import create_engine, text

BACKEND = Path(__file__).resolve().parents[1] / "backend"
sys.path.insert(0, str(BACKEND))  # the test helpers are the package `tests`
from tests.databases import fresh_pg_database  # noqa: E402
from tests.engine import corpus_office as office  # noqa: E402
from tests.engine.corpus import save_pdf  # noqa: E402
from tests.engine.papers import photo_pixels, two_column_paper  # noqa: E402
from tests.engine.render_office import convert_many  # noqa: E402
from tests.live_server import free_port, make_users, start_server, stop_server  # noqa: E402

MB = 1024 * 1024
WORDS = ["quarterly", "revenue", "forecast", "margin", "customer", "contract", "delivery",
         "schedule", "budget", "invoice", "region", "supplier", "audit", "compliance", "review",
         "meeting", "board", "strategy", "growth", "operations", "headcount", "pipeline",
         "renewal", "product", "launch", "risk", "summary"]


# -- the files ---------------------------------------------------------------------------------
def _jpeg(width: int, height: int, seed: int, quality: int = 88) -> bytes:
    buffer = io.BytesIO()
    Image.fromarray(photo_pixels(width, height, seed)).save(buffer, "JPEG", quality=quality)
    return buffer.getvalue()


def _sentences(rng: random.Random, count: int) -> list[str]:
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(9, 18))).capitalize() + "."
            for _ in range(count)]


def _docx_with_photos(seed: int, paragraphs: int, photos: list[bytes]) -> bytes:
    """A Word document of text paragraphs and full-width photos (the corpus's builder)."""
    rng = random.Random(seed)
    body, parts, rels = [], {}, []
    for i, photo in enumerate(photos, start=1):
        parts[f"word/media/photo{i}.jpeg"] = photo
        rels.append((f"rIdPhoto{i}", f"{office.R}/image", f"media/photo{i}.jpeg"))
    text = _sentences(rng, paragraphs)
    step = max(1, len(text) // (len(photos) + 1))
    for i, sentence in enumerate(text):
        body.append(office._p(sentence))
        if photos and i % step == step - 1 and i // step < len(photos):
            body.append(office._inline_image(f"rIdPhoto{i // step + 1}", pid=i // step + 1))
    return office.docx("".join(body), doc_rels=rels, parts=parts)


def _xlsx_table(seed: int, rows: int) -> bytes:
    """A workbook of one sheet of `rows` rows: a date-like text, a region and four numbers."""
    rng = random.Random(seed)
    cells = []
    for r in range(1, rows + 1):
        values = [rng.randint(100, 99_999) / 100 for _ in range(4)]
        numbers = "".join(f'<c r="{col}{r}"><v>{v}</v></c>'
                          for col, v in zip("CDEF", values, strict=True))
        cells.append(f'<row r="{r}"><c r="A{r}" t="inlineStr"><is><t>2026-{(r % 12) + 1:02d}'
                     f'</t></is></c><c r="B{r}" t="inlineStr"><is><t>{rng.choice(WORDS)}'
                     f"</t></is></c>{numbers}</row>")
    return office.xlsx([("Figures", f"{office.R}/worksheet", "worksheets/sheet1.xml",
                         office._sheet("".join(cells)))])


def _odp_with_photos(seed: int, slides: int) -> bytes:
    """An OpenDocument presentation, a title and a photo on each slide (LibreOffice writes
    the PowerPoint files from it)."""
    rng = random.Random(seed)
    pages, files = [], {}
    for n in range(1, slides + 1):
        files[f"Pictures/slide{n}.jpg"] = _jpeg(1600, 1000, seed * 100 + n, 85)
        title = " ".join(rng.choice(WORDS) for _ in range(4)).title()
        pages.append(
            f'<draw:page draw:name="s{n}"><draw:frame svg:x="1cm" svg:y="1cm" svg:width="24cm"'
            f' svg:height="2cm"><draw:text-box><text:p>{title}</text:p></draw:text-box>'
            f'</draw:frame><draw:frame svg:x="2cm" svg:y="4cm" svg:width="22cm"'
            f' svg:height="13cm"><draw:image xlink:href="Pictures/slide{n}.jpg"/></draw:frame>'
            "</draw:page>")
    body = f"<office:presentation>{''.join(pages)}</office:presentation>"
    return office.odf(office.ODP, body, files=files,
                      manifest_extra=dict.fromkeys(files, "image/jpeg"))


def _odt_text(seed: int, paragraphs: int, photo: bytes | None = None) -> bytes:
    rng = random.Random(seed)
    text = "".join(f"<text:p>{s}</text:p>" for s in _sentences(rng, paragraphs))
    files = {}
    if photo:
        files["Pictures/photo.jpg"] = photo
        text += office._odt_image("Pictures/photo.jpg")
    return office.odf(office.ODT, f"<office:text>{text}</office:text>", files=files,
                      manifest_extra=dict.fromkeys(files, "image/jpeg"))


def _ods_table(seed: int, rows: int) -> bytes:
    rng = random.Random(seed)
    body = "".join(
        "<table:table-row>" + "".join(
            f'<table:table-cell office:value-type="float" office:value="{rng.randint(1, 9999)}"/>'
            for _ in range(6)) + "</table:table-row>" for _ in range(rows))
    return office.odf(office.ODS, f'<office:spreadsheet><table:table table:name="Data">{body}'
                      "</table:table></office:spreadsheet>")


def _pdf_photos(seed: int, pages: int) -> bytes:
    """A brochure: each page one photo, JPEG-compressed as a scanner or camera app writes."""
    images = [Image.fromarray(photo_pixels(1700, 2200, seed + i)) for i in range(pages)]
    buffer = io.BytesIO()
    images[0].save(buffer, "PDF", save_all=True, append_images=images[1:], resolution=200.0,
                   quality=80)
    return buffer.getvalue()


def _screenshot(seed: int) -> bytes:
    """A 1920x1080 application screen: flat panels, text-like rows, a photo pane."""
    rng = np.random.default_rng(seed)
    screen = np.full((1080, 1920, 3), 245, dtype=np.uint8)
    screen[:60] = (40, 70, 120)
    for row in range(100, 1000, 28):
        widths = rng.integers(200, 900)
        screen[row:row + 12, 80:80 + widths] = 60
    screen[100:700, 1100:1860] = photo_pixels(760, 600, seed)
    buffer = io.BytesIO()
    Image.fromarray(screen).save(buffer, "PNG", optimize=False)
    return buffer.getvalue()


def _scan(seed: int) -> bytes:
    """A grey A4 scan at 200 DPI with text-like rows, LZW-compressed TIFF."""
    rng = np.random.default_rng(seed)
    page = np.clip(rng.normal(235, 6, size=(2339, 1654)), 0, 255).astype(np.uint8)
    for row in range(200, 2200, 40):
        page[row:row + 14, 150:150 + int(rng.integers(600, 1350))] = 40
    buffer = io.BytesIO()
    Image.fromarray(page).save(buffer, "TIFF", compression="tiff_lzw")
    return buffer.getvalue()


def _mail(seed: int, attachments: list[tuple[str, bytes, str]]) -> bytes:
    rng = random.Random(seed)
    message = EmailMessage()
    message["From"] = "Finance <finance@example.org>"
    message["To"] = "Board <board@example.net>"
    message["Subject"] = "Quarterly pack"
    message["Date"] = "Mon, 07 Dec 2026 09:00:00 +0000"
    message["Message-ID"] = f"<pack-{seed}@example.org>"
    message.set_content("\n\n".join(_sentences(rng, 12)))
    for name, data, ctype in attachments:
        maintype, subtype = ctype.split("/")
        message.add_attachment(data, maintype=maintype, subtype=subtype, filename=name)
    return message.as_bytes()


def business_files(work: Path) -> list[tuple[str, str, bytes]]:
    """(kind, file name, bytes) of the mix, made the same way on every run."""
    photo = _jpeg(3000, 2000, 1)
    files: list[tuple[str, str, bytes]] = [
        ("docx", "annual-report.docx", _docx_with_photos(
            1, 400, [_jpeg(3600, 2400, seed) for seed in (2, 3, 21, 22)])),
        ("docx", "memo.docx", _docx_with_photos(2, 60, [_jpeg(3000, 2000, 4)])),
        ("xlsx", "ledger.xlsx", _xlsx_table(3, 90_000)),
        ("jpeg", "site-photo.jpg", _jpeg(4000, 3000, 23)),
        ("jpeg", "team.jpg", _jpeg(4500, 3000, 5)),
        ("png", "screenshot.png", _screenshot(6)),
        ("tiff", "signed-scan.tiff", _scan(7)),
        ("pdf", "brochure.pdf", _pdf_photos(8, 8)),
        ("csv", "export.csv", b"date,region,amount,units\n" + b"".join(
            b"2026-%02d-%02d,%s,%d.%02d,%d\n" % ((i % 12) + 1, (i % 28) + 1,
                                                  WORDS[i % len(WORDS)].encode(), i * 7,
                                                  i % 100, i % 500) for i in range(120_000))),
        ("txt", "minutes.txt", "\n".join(_sentences(random.Random(9), 25_000)).encode()),
        ("html", "newsletter.html", ("<html><body>" + "".join(
            f"<h2>{s[:30]}</h2><p>{s}</p>" for s in _sentences(random.Random(10), 15_000))
            + "</body></html>").encode()),
    ]
    paper = work / "paper.pdf"
    save_pdf(two_column_paper(pages=30, seed=11), paper)
    files.append(("pdf", "whitepaper.pdf", paper.read_bytes()))
    files.append(("zip", "contracts.zip", _zip({
        "contract-a.docx": _docx_with_photos(12, 120, [_jpeg(3000, 2000, 12)]),
        "contract-b.pdf": _pdf_photos(13, 2), "site.jpg": photo,
        "terms.txt": b"Terms and conditions.\n" * 2000})))
    files.append(("eml", "quarterly-pack.eml", _mail(14, [
        ("figures.xlsx", _xlsx_table(14, 20_000), "application/vnd.openxmlformats-"
         "officedocument.spreadsheetml.sheet"),
        ("photo.jpg", _jpeg(3600, 2400, 15), "image/jpeg")])))
    # The legacy and PowerPoint files: LibreOffice writes them from OpenDocument files.
    src = work / "odf"
    src.mkdir()
    sources = {"deck.odp": _odp_with_photos(16, 14), "letter.odt": _odt_text(17, 400, photo),
               "notes.odt": _odt_text(24, 900), "sheet.ods": _ods_table(18, 30000),
               "slides.odp": _odp_with_photos(19, 10)}
    for name, data in sources.items():
        (src / name).write_bytes(data)
    wanted = [("pptx", "deck.odp", "pptx"), ("doc", "letter.odt", "doc"),
              ("rtf", "notes.odt", "rtf"), ("xls", "sheet.ods", "xls"),
              ("ppt", "slides.odp", "ppt"), ("odt", "letter.odt", None)]
    for kind, name, target in wanted:
        if target is None:
            files.append((kind, name, sources[name]))
            continue
        out = work / f"lo-{target}"
        made = convert_many([src / name], target, out, work / f"profile-{target}")
        if src / name not in made:
            raise RuntimeError(f"LibreOffice could not write the {kind} sample")
        data = made[src / name].read_bytes()
        files.append((kind, f"{Path(name).stem}.{target}", data))
    return files


def _zip(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buffer.getvalue()


# -- the run -----------------------------------------------------------------------------------
def _cpu(process: psutil.Process) -> tuple[float, float]:
    """(own, reaped children's) user + system CPU seconds of a process."""
    t = process.cpu_times()
    return t.user + t.system, t.children_user + t.children_system


def _machine_cpu() -> float:
    """Busy CPU seconds of the whole machine (every core). The sandboxes' share is measured
    as what the machine spent minus the server and this client: a pre-forked job's processes
    are reaped inside its sandbox, so they never reach the server's children's times."""
    t = psutil.cpu_times()
    return t.user + t.nice + t.system + getattr(t, "irq", 0.0) + getattr(t, "softirq", 0.0)


def _cpu_by_kind(port: int, key: dict[str, str], mode: str,
                 mix: list[tuple[str, str, bytes]]) -> dict[str, list[float]]:
    """Each file of the mix sent alone: the machine's busy CPU seconds from upload to answer
    (server, sandbox, engine, LibreOffice) and the three seconds after it, while the sandbox the job
    used is replaced, by kind. Slow kinds are where the mix's cost is."""
    seconds: dict[str, list[float]] = defaultdict(list)
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=key, timeout=900) as http:
        for kind, name, data in mix:
            before = _machine_cpu()
            answer = http.post(f"/api/v1/sanitize?wait={SYNC_WAIT}", data={"mode": mode},
                               files={"file": (name, data)})
            while answer.status_code == 202:
                time.sleep(0.5)
                answer = http.get(answer.headers["Location"])
                if answer.json()["data"]["file"]["status"] in ("COMPLETED", "FAILED"):
                    break
            time.sleep(3)  # the job's replacement sandbox starts: part of what a file costs
            seconds[kind].append(_machine_cpu() - before)
    return seconds


def _load(url: str | None, data_dir: Path) -> dict[str, float]:
    """What the server has stored so far: bytes in the data dir's storage and database, and
    for PostgreSQL its database's transaction and row counters."""
    database = set(data_dir.glob("sanitas.db*"))
    storage = sum(p.stat().st_size for p in data_dir.rglob("*")
                  if p.is_file() and p not in database and p.name != "serve.log")
    found = {"storage": float(storage), "commits": 0.0, "inserted": 0.0, "updated": 0.0,
             "deleted": 0.0, "fetched": 0.0,
             "db_bytes": float(sum(p.stat().st_size for p in database))}
    if url is None:
        return found
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            row = conn.execute(text(
                "SELECT xact_commit, tup_inserted, tup_updated, tup_deleted, tup_fetched,"
                " pg_database_size(datname) FROM pg_stat_database"
                " WHERE datname = current_database()")).one()
    finally:
        engine.dispose()
    for key, value in zip(("commits", "inserted", "updated", "deleted", "fetched", "db_bytes"),
                          row, strict=True):
        found[key] = float(value)
    return found


PROBE = b"Delivery note 4411: two pallets, signed on arrival.\n"
PROBE_ALONE = 10  # probes sent before the mix: the lone time


def _probe_once(http: httpx.Client) -> float:
    """One small text file through the one-call API: seconds from upload to the clean copy's
    answer (a 202 is polled until done)."""
    t0 = time.perf_counter()
    answer = http.post(f"/api/v1/sanitize?wait={SYNC_WAIT}", data={"mode": "basic"},
                       files={"file": ("note.txt", PROBE)})
    while answer.status_code == 202:
        time.sleep(0.1)
        answer = http.get(answer.headers["Location"])
        if answer.json()["data"]["file"]["status"] in ("COMPLETED", "FAILED"):
            break
    if answer.status_code != 200:
        raise RuntimeError(f"the probe file was not sanitized: {answer.status_code}")
    return time.perf_counter() - t0


def _probe_alone(port: int, key: dict[str, str]) -> list[float]:
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=key, timeout=900) as http:
        _probe_once(http)  # the first one warms the server's paths up
        times = []
        for _ in range(PROBE_ALONE):
            times.append(_probe_once(http))
            time.sleep(0.5)
        return times


def _probe(port: int, key: dict[str, str], every: float, done: threading.Event,
           times: list[float]) -> None:
    """While the mix runs: a small file every `every` seconds from an account of its own, one
    at a time, as a user or a gateway's lone request would arrive among the business load."""
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=key, timeout=900) as http:
        while not done.wait(every):
            times.append(_probe_once(http))


def _pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


SYNC_WAIT = 60  # the one-call API's longest wait (files/routes.py SYNC_WAIT_MAX)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", choices=("basic", "advanced"), default="basic")
    parser.add_argument("--rounds", type=int, default=2, help="times the mix is sent")
    parser.add_argument("--clients", type=int, default=2 * (os.cpu_count() or 2))
    parser.add_argument("--env", action="append", default=[], metavar="SANITAS_X=VALUE")
    parser.add_argument("--no-per-kind", action="store_true",
                        help="skip the second, one-at-a-time pass that measures CPU by kind")
    parser.add_argument("--skip", default="", metavar="KIND,KIND",
                        help="kinds of the mix left out (e.g. xlsx,xls,eml: advanced mode's "
                        "figure for documents, without the spreadsheets that print to "
                        "thousands of pages)")
    parser.add_argument("--postgres", action="store_true",
                        help="the server's database is a fresh PostgreSQL database (the test "
                        "server's), and its load is read from pg_stat_database")
    parser.add_argument("--probe-every", type=float, default=0.5, metavar="SECONDS",
                        help="another account sends a small text file this often while the "
                        "mix runs (its latency: the issue's p99 <= 2 s); 0: no probe")
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="sanitas-business-"))
    started = time.perf_counter()
    skipped = {kind for kind in args.skip.split(",") if kind}
    mix = [item for item in business_files(work) if item[0] not in skipped]
    sizes = [len(data) for _k, _n, data in mix]
    print(f"mix: {len(mix)} files, {len({k for k, _n, _d in mix})} kinds, mean "
          f"{statistics.mean(sizes) / MB:.2f} MB (made in {time.perf_counter() - started:.0f} s)"
          + (f"; left out: {', '.join(sorted(skipped))}" if skipped else ""))

    data_dir = work / "data"
    data_dir.mkdir()
    port = free_port()
    env = dict(item.split("=", 1) for item in args.env)
    with contextlib.ExitStack() as stack:
        url = (stack.enter_context(fresh_pg_database("sanitas_bench_business"))
               if args.postgres else None)
        if url:
            env["SANITAS_DATABASE_URL"] = url
        _run(args, mix, work, data_dir, port, env, url)


def _run(args: argparse.Namespace, mix: list[tuple[str, str, bytes]], work: Path,
         data_dir: Path, port: int, env: dict[str, str], url: str | None) -> None:
    server = start_server(data_dir, port, env)
    try:
        # The last user is the probe's account.
        headers = make_users(data_dir, args.clients + 1, database_url=url)
        keys = []
        for h in headers:
            answer = httpx.post(f"http://127.0.0.1:{port}/api/keys", headers=h, json={
                "name": "bench", "scopes": ["files:write", "files:read"]}, timeout=30)
            keys.append({"X-API-Key": answer.json()["data"]["secret"]})
        proc = psutil.Process(server.pid)
        work_items = [item for _ in range(args.rounds) for item in mix]
        random.Random(20).shuffle(work_items)
        latencies: dict[str, list[float]] = defaultdict(list)
        outcomes: dict[int, int] = defaultdict(int)
        failed: list[str] = []
        lock = threading.Lock()
        queue = list(enumerate(work_items))

        def client(index: int) -> None:
            http = httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=keys[index],
                                timeout=900)
            while True:
                with lock:
                    if not queue:
                        return
                    _i, (kind, name, data) = queue.pop()
                t0 = time.perf_counter()
                answer = http.post(f"/api/v1/sanitize?wait={SYNC_WAIT}", data={"mode": args.mode},
                                   files={"file": (name, data)})
                code = answer.status_code
                if code == 202:  # still processing after the longest wait: poll until done
                    location = answer.headers["Location"]
                    while True:
                        time.sleep(0.5)
                        state = http.get(location).json()["data"]["file"]["status"]
                        if state in ("COMPLETED", "FAILED"):
                            code = 200 if state == "COMPLETED" else 422
                            break
                elapsed = time.perf_counter() - t0
                with lock:
                    latencies[kind].append(elapsed)
                    outcomes[code] += 1
                    if code != 200:
                        failed.append(f"{name} ({kind}, {len(data) / MB:.1f} MB): {code} "
                                      f"after {elapsed:.0f} s")

        probe_key = keys.pop()
        lone = _probe_alone(port, probe_key) if args.probe_every > 0 else []
        mix_done = threading.Event()
        probed: list[float] = []
        probe = threading.Thread(target=_probe, args=(port, probe_key, args.probe_every,
                                                      mix_done, probed), daemon=True)
        load0 = _load(url, data_dir)
        own0, _children0 = _cpu(proc)
        me = psutil.Process()
        mine0, machine0 = sum(me.cpu_times()[:2]), _machine_cpu()
        t0 = time.perf_counter()
        if args.probe_every > 0:
            probe.start()
        with ThreadPoolExecutor(args.clients) as pool:
            list(pool.map(client, range(args.clients)))
        wall = time.perf_counter() - t0
        mix_done.set()
        if args.probe_every > 0:
            probe.join()
        time.sleep(2)  # PostgreSQL's statistics reach pg_stat_database within a second
        load1 = _load(url, data_dir)
        own1, _children1 = _cpu(proc)
        mine1, machine1 = sum(me.cpu_times()[:2]), _machine_cpu()
        per_kind = {} if args.no_per_kind else _cpu_by_kind(port, keys[0], args.mode, mix)
    finally:
        stop_server(server)
    count = len(work_items)
    cores = os.cpu_count() or 1
    gigabytes = sum(len(d) for _k, _n, d in work_items) / 1e9
    print(f"mode {args.mode}: {count} files from {args.clients} clients in {wall:.1f} s; "
          f"answers {dict(outcomes)}")
    for line in failed:
        print(f"  not sanitized: {line}")
    if set(outcomes) != {200}:
        sys.exit("not every file came back sanitized: the figures would not mean anything")
    print(f"  {count / wall:.2f} files/s, {count / wall / cores:.2f} files/s per core "
          f"({cores} cores), {gigabytes / wall * 3600:.1f} GB/h")
    server_cpu = own1 - own0
    rest = (machine1 - machine0) - server_cpu - (mine1 - mine0)
    print(f"  CPU per file: server process {server_cpu / count * 1000:.0f} ms (API and "
          f"job orchestration), sandboxes {rest / count * 1000:.0f} ms (engine, LibreOffice; "
          "the machine's busy time less the server and this client: run it on a quiet "
          "machine)")
    print("  latency by kind (s): mean p50 p95 p99")
    for kind in sorted(latencies):
        values = latencies[kind]
        print(f"    {kind:5} {statistics.mean(values):6.2f} {_pct(values, 50):6.2f} "
              f"{_pct(values, 95):6.2f} {_pct(values, 99):6.2f}  (n={len(values)})")
    per_1000 = {k: (load1[k] - load0[k]) * 1000 / count for k in load0}
    print(f"  load per 1,000 files of the mix (the {len(probed)} probes' part included): "
          "storage kept "
          f"{per_1000['storage'] / 1e9:.2f} GB (originals, clean copies, "
          f"previews), database grew {per_1000['db_bytes'] / 1e6:.1f} MB"
          + ("" if url is None else
             f", {per_1000['commits']:.0f} transactions, {per_1000['inserted']:.0f} rows "
             f"inserted, {per_1000['updated']:.0f} updated, {per_1000['deleted']:.0f} deleted, "
             f"{per_1000['fetched'] / 1000:.0f}k rows read"))
    if probed:
        print(f"  a small text file from another account, alone: p50 {_pct(lone, 50):.2f} s, "
              f"p99 {_pct(lone, 99):.2f} s (n={len(lone)}); while the mix ran: mean "
              f"{statistics.mean(probed):.2f} s, p50 {_pct(probed, 50):.2f}, p95 "
              f"{_pct(probed, 95):.2f}, p99 {_pct(probed, 99):.2f}, max {max(probed):.2f} "
              f"(n={len(probed)}; the issue's target: p99 <= 2 s)")
    if per_kind:
        print("  one file at a time, CPU by kind (the machine's busy seconds a file, all "
              "processes) and what one core does at that cost:")
        for kind in sorted(per_kind):
            seconds = statistics.mean(per_kind[kind])
            print(f"    {kind:5} {seconds:6.2f} s  {1 / seconds:6.2f} files/s per core")


if __name__ == "__main__":
    main()
