"""Markdown, YAML, TOML, SubRip and WebVTT (issue 22, breadth): clean files keep their content
(re-read by an independent parser where one exists), hostile ones lose their active content or
are refused with their code."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
import yaml

from sanitas.engine import detect, sanitize_file
from sanitas.engine.report import Policy, RejectionCode
from tests.engine.breadth_corpus import MARKDOWN_CLEAN, SRT_CLEAN, TOML_CLEAN, VTT_CLEAN, YAML_CLEAN


def _file(folder: Path, name: str, text: str | bytes) -> Path:
    path = folder / name
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def _kinds(result) -> dict[str, list]:
    found: dict[str, list] = {}
    for finding in result.findings:
        found.setdefault(finding.kind, []).append(finding)
    return found


def _clean(tmp_path, out_dir, name, text, policy=None):
    result = sanitize_file(_file(tmp_path, name, text), out_dir, policy=policy)
    assert result.status == "ok", result.reason
    return result, Path(result.output).read_text(encoding="utf-8")


# --- Markdown --------------------------------------------------------------------------------

def test_markdown_clean_keeps_its_content(tmp_path, out_dir):
    result, out = _clean(tmp_path, out_dir, "report.md", MARKDOWN_CLEAN)
    assert result.detected_type == "markdown" and result.output_type == "md"
    assert Path(result.output).name == "report.md"
    assert out.startswith("# Report\n")
    assert "[link](https://example.org/page)" in out
    assert "| a   | b   |" in out and "- one\n- two" in out
    # An element opened in one HTML block and closed in another keeps its Markdown inside.
    assert "<details><summary>More</summary>\n\nHidden **detail**.\n\n</details>\n" in out
    assert not [f for f in result.findings if f.action == "removed"]


HOSTILE_MARKDOWN = """---
author: Jane Secret
email: jane@example.org
---
# Title

Hello <span onclick="steal()" class="x">world</span> and [click](javascript:alert(1)).
Track: ![pixel](https://tracker.example/p.gif) <img src="https://tracker.example/i.gif" alt="i">

<script>alert(document.cookie)</script>

<iframe src="https://evil.example/"></iframe>

<!-- internal: do not publish -->

<div style="background:url(https://tracker.example/bg.png)">styled</div>

[ref]: javascript:alert(2)

<a href="vbscript:msgbox(1)">old</a> <scr<script>ipt>x</script>
"""


def test_markdown_active_content_removed(tmp_path, out_dir):
    policy = Policy().with_rules(hiddenContent="remove")
    result, out = _clean(tmp_path, out_dir, "notes.md", HOSTILE_MARKDOWN, policy=policy)
    lowered = out.lower()
    for gone in ("<script", "onclick", "vbscript:", "tracker.example", "<iframe",
                 "jane secret", "internal: do not publish", "steal()"):
        assert gone not in lowered, gone
    # A javascript: "link" markdown-it refuses stays as escaped text that nothing links.
    assert "\\[click\\](javascript:alert(1))" in out
    assert "# Title" in out and "world" in out and "styled" in out and "pixel" in out
    kinds = _kinds(result)
    assert {"javascript", "event_handler", "external_reference", "embedded_content",
            "hidden_text", "metadata"} <= set(kinds), sorted(kinds)
    assert kinds["metadata"][0].location == "front matter"
    # What is written is Markdown that renderers read back without active HTML: CommonMark,
    # and one that ignores backslash escapes before '<' (as Markdown.pl does).
    from markdown_it import MarkdownIt

    for source in (out, out.replace("\\<", "<")):
        html = MarkdownIt("commonmark").render(source).lower()
        assert "<script" not in html and "onclick" not in html, html
        assert 'href="javascript' not in html and "vbscript" not in html


def test_markdown_comments_follow_the_hidden_content_rule(tmp_path, out_dir):
    text = "Text\n\n<!-- reviewer note -->\n\n<!--[if IE]><script>x()</script><![endif]-->\n"
    result, out = _clean(tmp_path, out_dir, "c.md", text)  # default: hidden content kept
    assert "<!-- reviewer note -->" in out and "[if IE]" not in out and "script" not in out
    assert {(f.kind, f.action) for f in result.findings} >= {("hidden_text", "kept"),
                                                               ("hidden_text", "removed")}


def test_markdown_policy_keeps_remote_pictures_and_front_matter(tmp_path, out_dir):
    policy = Policy().with_rules(externalReferences="keep", documentMetadata="keep",
                                 hiddenContent="keep")
    text = "---\ntitle: Kept\n---\n![p](https://cdn.example/p.png)\n\n<!-- note -->\n"
    result, out = _clean(tmp_path, out_dir, "kept.md", text, policy=policy)
    assert out.startswith("---\ntitle: Kept\n---\n")
    assert "https://cdn.example/p.png" in out and "<!-- note -->" in out
    assert any(f.kind == "external_reference" and f.action == "kept" for f in result.findings)


def test_markdown_detected_by_name_even_when_it_opens_with_html(tmp_path):
    head = b'<p align="center"><img src="logo.png"></p>\n\n# Project\n'
    assert detect.sniff(head, "README.md").kind == "markdown"
    assert detect.sniff(b"# Title\n\ntext\n", "a.markdown").kind == "markdown"
    assert detect.sniff(b"# Title\n\ntext\n", "a.txt").kind == "txt"


def test_markdown_over_the_size_limit_is_refused(tmp_path, out_dir, monkeypatch):
    from sanitas.engine import markdown

    monkeypatch.setattr(markdown, "MAX_MARKDOWN_BYTES", 100)
    result = sanitize_file(_file(tmp_path, "big.md", "word " * 100), out_dir)
    assert result.status == "rejected" and result.code == RejectionCode.TOO_LARGE


# --- YAML ------------------------------------------------------------------------------------

def test_yaml_reserialised_with_its_values(tmp_path, out_dir):
    text = YAML_CLEAN + "anchor: &base {a: 1}\nuse: *base\nref: !Ref Bucket\n"
    result, out = _clean(tmp_path, out_dir, "config.yml", text)
    assert result.detected_type == "yaml" and result.output_type == "yaml"
    assert "# settings" not in out  # comments do not survive
    loader = yaml.SafeLoader
    loader.add_constructor("!Ref", lambda loader_, node: {"Ref": node.value})
    assert yaml.load(out, Loader=loader) == yaml.load(text, Loader=loader)  # noqa: S506
    assert "!Ref" in out


def _alias_bomb(levels: int = 9) -> str:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels + 1):
        name, previous = chr(97 + i), chr(96 + i)
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{previous}"] * 9) + "]")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("text,code,words", [
    (_alias_bomb(), RejectionCode.TOO_COMPLEX, "alias bomb"),
    ("a: !!python/object/apply:os.system ['id']\n", RejectionCode.UNSAFE_STRUCTURE, "run code"),
    ("x: !ruby/object:Gem::Installer {i: x}\n", RejectionCode.UNSAFE_STRUCTURE, "run code"),
    ("u: !!javax.script.ScriptEngineManager [x]\n", RejectionCode.UNSAFE_STRUCTURE, "run code"),
    ("a: &a [*a]\n", RejectionCode.UNSAFE_STRUCTURE, "contains itself"),
    ("[" * 400 + "]" * 400 + "\n", RejectionCode.TOO_COMPLEX, "nests deeper"),
    ("a: [1, 2\nb: }\n", RejectionCode.DAMAGED, "not valid YAML"),
])
def test_hostile_yaml_refused(tmp_path, out_dir, text, code, words):
    result = sanitize_file(_file(tmp_path, "evil.yaml", text), out_dir)
    assert result.status == "rejected" and result.code == code, result.reason
    assert words in result.reason


# --- TOML ------------------------------------------------------------------------------------

def test_toml_reserialised_with_its_values(tmp_path, out_dir):
    text = "# owner's notes\n" + TOML_CLEAN + 'when = 1979-05-27T07:32:00Z\npi = 3.14\n'
    result, out = _clean(tmp_path, out_dir, "pyproject.toml", text)
    assert result.detected_type == "toml" and result.output_type == "toml"
    assert "owner's notes" not in out
    assert tomllib.loads(out) == tomllib.loads(text)


@pytest.mark.parametrize("text,code", [
    ('a = 1\na = 2\n', RejectionCode.DAMAGED),
    ('a = "unterminated\n', RejectionCode.DAMAGED),
    ("a = " + "[" * 3000 + "]" * 3000 + "\n", RejectionCode.TOO_COMPLEX),
])
def test_hostile_toml_refused(tmp_path, out_dir, text, code):
    result = sanitize_file(_file(tmp_path, "evil.toml", text), out_dir)
    assert result.status == "rejected" and result.code == code, result.reason


# --- SubRip and WebVTT -----------------------------------------------------------------------

def test_srt_clean_kept_and_detected_by_content(tmp_path, out_dir):
    assert detect.sniff(SRT_CLEAN.encode(), None).kind == "srt"
    result, out = _clean(tmp_path, out_dir, "film.srt", "\ufeff" + SRT_CLEAN)
    assert result.output_type == "srt"
    assert out == SRT_CLEAN


def test_srt_markup_and_stray_blocks_removed(tmp_path, out_dir):
    text = ("1\n00:00:01,000 --> 00:00:02,000\n<script>alert(1)</script><b>Bold</b> "
            '<font color="red" onload="x()">red</font>\n<img src="https://t.example/p.gif">'
            "<scr<script>ipt>x\n\nnot a cue at all\n\n"
            "7\n00:00:03.5 --> 00:00:04,000\n<a href='javascript:x'>link</a>\n")
    result, out = _clean(tmp_path, out_dir, "evil.srt", text)
    assert "<script" not in out and "onload" not in out and "<img" not in out
    assert "<a " not in out and "javascript" not in out and "t.example" not in out
    assert '<b>Bold</b> <font color="red">red</font>' in out
    assert "1\n00:00:01,000 --> 00:00:02,000\n" in out
    assert "2\n00:00:03,500 --> 00:00:04,000\nlink\n" in out  # renumbered, timing normalised
    kinds = _kinds(result)
    assert "javascript" in kinds and "element" in kinds and "invalid_part" in kinds


def test_vtt_clean_kept(tmp_path, out_dir):
    result, out = _clean(tmp_path, out_dir, "film.vtt", VTT_CLEAN)
    assert result.detected_type == "vtt" and result.output_type == "vtt"
    assert out.startswith("WEBVTT\n\n00:00:00.000 --> 00:00:01.500\n<v Alice>Hello <b>there</b>.")
    assert "intro\n00:00:02.000 --> 00:00:03.000 align:start\nSecond cue.\n" in out


def test_vtt_notes_styles_and_markup_cleaned(tmp_path, out_dir):
    text = ("WEBVTT\n\nNOTE reviewed by Jane Secret, call 555-0100\n\n"
            "STYLE\n::cue { background: url(https://tracker.example/x.png); color: red }\n\n"
            "00:01.000 --> 00:02.000 position:10% onload:x\n<c.loud>Hi</c> <script>x()</script>"
            "<00:01.500><u>there</u>\n")
    result, out = _clean(tmp_path, out_dir, "evil.vtt", text)
    assert "Jane Secret" not in out and "tracker.example" not in out and "<script" not in out
    assert "color: red" in out and "<c.loud>Hi</c>" in out and "<00:01.500><u>there</u>" in out
    assert "position:10%" in out and "onload" not in out
    kinds = _kinds(result)
    assert "comments" in kinds and "external_reference" in kinds and "javascript" in kinds


@pytest.mark.parametrize("name,text", [
    ("bad.vtt", "WEBVTT\n\nno cues\n"),
    ("header.vtt", "WEBVTTX\n\n00:01.000 --> 00:02.000\nx\n"),
    ("backwards.srt", "1\n00:00:05,000 --> 00:00:01,000\nx\n"),
])
def test_subtitles_without_cues_are_damaged(tmp_path, out_dir, name, text):
    result = sanitize_file(_file(tmp_path, name, text), out_dir)
    assert result.detected_type == name.rsplit(".", 1)[1]
    assert result.status == "rejected" and result.code == RejectionCode.DAMAGED, result.reason


def test_text_named_srt_without_a_cue_is_plain_text(tmp_path, out_dir):
    result = sanitize_file(_file(tmp_path, "empty.srt", "1\nno timing here\n"), out_dir)
    assert result.status == "ok" and result.detected_type == "txt"
    assert result.output_type == "txt"
