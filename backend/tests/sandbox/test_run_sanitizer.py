"""The service's entry point, end to end through the real sandbox."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from sanitas.sandbox import SandboxError, run_sanitizer
from sanitas.sandbox.bwrap import SandboxLimits
from tests.engine.corpus import huge_png

MB = 1024 * 1024


def test_hostile_pdf_sanitized_in_sandbox_with_progress(sandbox_settings, sandbox_corpus,
                                                        tmp_path):
    from tests.engine.pdfscan import pdf_dangers
    seen: list[int] = []
    out = tmp_path / "out"
    result = run_sanitizer(sandbox_corpus["hostile.pdf"], out, mode="basic",
                           settings=sandbox_settings, on_progress=seen.append,
                           original_name="Quarterly report.pdf", prewarm=False)
    assert result.status == "ok", result.reason
    assert Path(result.output) == out / "Quarterly report.pdf"
    assert [p.name for p in out.iterdir()] == ["Quarterly report.pdf"]
    assert seen and seen == sorted(seen) and seen[-1] == 100
    assert any(f.kind == "javascript" for f in result.findings)
    assert pdf_dangers(Path(result.output)) == set()


def test_private_input_readable_through_descriptor(sandbox_settings, sandbox_corpus, tmp_path):
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    source = private / "input"
    source.write_bytes(sandbox_corpus["photo.jpg"].read_bytes())
    source.chmod(0o600)
    result = run_sanitizer(source, tmp_path / "out", mode="basic", settings=sandbox_settings,
                           original_name="holiday.jpg", prewarm=False)
    assert result.status == "ok" and Path(result.output).name == "holiday.jpg"
    assert b"EVIL" not in Path(result.output).read_bytes()


def test_rejections_come_back_with_reasons(sandbox_settings, sandbox_corpus, tmp_path):
    result = run_sanitizer(sandbox_corpus["invoice.pdf"], tmp_path / "out", mode="basic",
                           settings=sandbox_settings, original_name="invoice.pdf",
                           prewarm=False)
    assert result.status == "rejected" and "executable" in result.reason
    assert list((tmp_path / "out").iterdir()) == []


def test_warm_spare_is_used_once(sandbox_settings, sandbox_corpus, tmp_path):
    """Without the template (sandbox_prefork off; office files always): a spare per job."""
    from sanitas.sandbox import bwrap

    sandbox_settings = sandbox_settings.model_copy(update={"sandbox_prefork": False})
    first = run_sanitizer(sandbox_corpus["clean.pdf"], tmp_path / "a", mode="basic",
                          settings=sandbox_settings, prewarm=True)
    spares = bwrap.spares()
    assert len(spares) == 1 and spares[0].alive()  # executor_workers=1 in these settings
    second = run_sanitizer(sandbox_corpus["notes.txt"], tmp_path / "b", mode="basic",
                           settings=sandbox_settings, prewarm=False)
    assert first.status == second.status == "ok"
    assert not spares[0].alive()  # used for one job, then gone
    bwrap.shutdown_spares()


def test_idle_spare_warms_up_then_serves_any_job(sandbox_settings, sandbox_corpus, tmp_path):
    """A spare left idle imports the PDF libraries and says so; it still takes any file."""
    from sanitas.sandbox import bwrap

    sandbox_settings = sandbox_settings.model_copy(update={"sandbox_prefork": False})
    bwrap.shutdown_spares()
    run_sanitizer(sandbox_corpus["notes.txt"], tmp_path / "a", mode="basic",
                  settings=sandbox_settings, prewarm=True)
    (spare,) = bwrap.spares()
    assert spare.wait_warm(timeout=30) and spare.wait_warm(timeout=0)  # said once, remembered
    result = run_sanitizer(sandbox_corpus["photo.jpg"], tmp_path / "b", mode="basic",
                           settings=sandbox_settings, prewarm=False)
    assert result.status == "ok" and not spare.alive()
    bwrap.shutdown_spares()


def test_wall_clock_timeout(sandbox_settings, tmp_path):
    from tests.engine.corpus import clean_pdf, save_pdf

    # ~0.02 s a page at best: 400 pages cannot finish in half a second on any machine.
    source = save_pdf(clean_pdf(pages=400), tmp_path / "long.pdf")
    result = run_sanitizer(source, tmp_path / "out", mode="advanced", settings=sandbox_settings,
                           limits=SandboxLimits(wall_seconds=0.5), prewarm=False)
    assert result.status == "rejected" and "longer than" in result.reason
    assert list((tmp_path / "out").iterdir()) == []


def test_memory_limit_rejects_the_file(sandbox_settings, tmp_path):
    source = huge_png(tmp_path / "big.png", 8000, 8000)  # 192 MB of pixels, small file
    result = run_sanitizer(source, tmp_path / "out", mode="basic", settings=sandbox_settings,
                           limits=SandboxLimits(memory_bytes=160 * MB), prewarm=False)
    assert result.status == "rejected" and "memory" in result.reason.lower()


def test_output_size_limit_rejects_the_file(sandbox_settings, tmp_path):
    from tests.engine.corpus import clean_pdf, save_pdf

    source = save_pdf(clean_pdf(pages=4), tmp_path / "small.pdf")  # pixels are much bigger
    assert source.stat().st_size < 64 * 1024
    result = run_sanitizer(source, tmp_path / "out", mode="advanced", settings=sandbox_settings,
                           limits=SandboxLimits(file_size_bytes=64 * 1024), prewarm=False)
    assert result.status == "rejected", result
    assert "larger than allowed" in result.reason or "size limit" in result.reason
    assert list((tmp_path / "out").iterdir()) == []


def test_no_bwrap_means_refusal(sandbox_settings, sandbox_corpus, tmp_path, monkeypatch):
    from sanitas.sandbox import bwrap

    bwrap.shutdown_spares()  # and the template: none may be running from before
    monkeypatch.setenv("PATH", str(tmp_path))  # a PATH without bubblewrap
    for name in ("clean.pdf", "notes.txt"):  # the template cannot start either
        with pytest.raises(SandboxError, match="bubblewrap"):
            run_sanitizer(sandbox_corpus[name], tmp_path / "out", mode="basic",
                          settings=sandbox_settings, prewarm=False)
    bwrap.shutdown_spares()


def test_unsandboxed_only_when_allowed(sandbox_settings, sandbox_corpus, tmp_path, caplog):
    none = sandbox_settings.model_copy(update={"sandbox": "none", "allow_unsandboxed": False})
    with pytest.raises(SandboxError, match="disabled"):
        run_sanitizer(sandbox_corpus["clean.pdf"], tmp_path / "out", mode="basic", settings=none)
    allowed = none.model_copy(update={"allow_unsandboxed": True})
    with caplog.at_level(logging.WARNING):
        result = run_sanitizer(sandbox_corpus["clean.pdf"], tmp_path / "out", mode="basic",
                               settings=allowed)
    assert result.status == "ok"
    assert "WITHOUT A SANDBOX" in caplog.text


def test_ocr_text_layer_through_the_sandbox(sandbox_settings, tmp_path):
    """SANITAS_OCR: tesseract runs inside the sandbox and the rebuilt PDF is searchable."""
    from tests.engine.corpus import clean_pdf, save_pdf
    from tests.engine.fidelity import pdf_text

    source = save_pdf(clean_pdf(pages=1, with_image=False), tmp_path / "letter.pdf")
    settings = sandbox_settings.model_copy(update={"ocr": True})
    result = run_sanitizer(source, tmp_path / "out", mode="advanced", settings=settings,
                           prewarm=False)
    assert result.status == "ok", result.reason
    text = pdf_text(Path(result.output)).lower()
    assert "quick brown" in text and "lazy dog" in text
