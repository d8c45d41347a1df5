"""Structured text: JSON, YAML and TOML, parsed with bounds and written back canonically.

- JSON (RFC 8259): the nesting depth is counted by one linear scan before anything is parsed
  (`MAX_JSON_DEPTH`; Python's parser recurses), numbers longer than `MAX_NUMBER_DIGITS`
  characters are refused, NaN/Infinity (not JSON) and text that does not parse are `damaged`,
  and an object naming one key twice is `unsafe_structure` (parsers disagree on which value
  wins: a way to show one program one thing and another program another). The value is written
  back as UTF-8 without a BOM, two-space indented, key order kept: comments, trailing bytes and
  odd encodings do not survive.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from sanitas.engine.report import Context, Rejected, RejectionCode
from sanitas.engine.text_encoding import CONTROL_CHARS, MAX_TEXT_BYTES, decode

if TYPE_CHECKING:
    import yaml

    from sanitas.engine.formats import Output

MAX_JSON_DEPTH = 256
MAX_NUMBER_DIGITS = 400


def json_depth(text: str) -> int:
    """The deepest nesting of arrays and objects in `text`, brackets inside strings ignored:
    one pass with `str.find` jumps, linear in the text (no recursion)."""
    depth = deepest = 0
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while True:
                j = text.find('"', j)
                if j < 0:
                    return deepest  # an unterminated string: the parser says damaged
                k = j - 1
                while text[k] == "\\":
                    k -= 1
                if (j - 1 - k) % 2 == 0:
                    break
                j += 1
            i = j + 1
            continue
        if c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "]}":
            depth -= 1
        i += 1
    return deepest


class _Duplicate(Exception):
    pass


def _pairs(pairs: list[tuple[str, object]]) -> dict[str, object]:
    found: dict[str, object] = {}
    for key, value in pairs:
        if key in found:
            raise _Duplicate(key)
        found[key] = value
    return found


def _number(kind: type[int] | type[float]) -> Callable[[str], int | float]:
    def parse(literal: str) -> int | float:
        if len(literal) > MAX_NUMBER_DIGITS:
            raise _TooLong(literal)
        return kind(literal)
    return parse


class _TooLong(Exception):
    pass


def _constant(name: str) -> object:
    raise ValueError(f"{name} is not a JSON value")


def parse_json(text: str) -> object:
    """`text` as a JSON value, within the module's bounds (raises `Rejected`)."""
    if json_depth(text) > MAX_JSON_DEPTH:
        raise Rejected(f"The JSON document nests deeper than {MAX_JSON_DEPTH} levels.",
                       RejectionCode.TOO_COMPLEX)
    try:
        return json.loads(text, object_pairs_hook=_pairs, parse_int=_number(int),
                          parse_float=_number(float), parse_constant=_constant)
    except _Duplicate as exc:
        raise Rejected(f"The JSON document names the key {str(exc)[:60]!r} twice in one object "
                       "(readers disagree on which value counts).",
                       RejectionCode.UNSAFE_STRUCTURE) from None
    except _TooLong:
        raise Rejected(f"The JSON document holds a number longer than {MAX_NUMBER_DIGITS} "
                       "digits.", RejectionCode.TOO_COMPLEX) from None
    except (ValueError, RecursionError) as exc:
        raise Rejected(f"The JSON document is not valid JSON ({str(exc)[:120]}).",
                       RejectionCode.DAMAGED) from None


def sanitize_json(src: Path, dst: Path, ctx: Context) -> str:
    if src.stat().st_size > MAX_TEXT_BYTES:
        raise Rejected("The text file is too large.", RejectionCode.TOO_LARGE)
    text, encoding = decode(src.read_bytes())
    if encoding != "utf-8":
        ctx.add("encoding", "whole file", action="converted",
                detail=f"{encoding} converted to UTF-8")
    value = parse_json(text)
    try:
        out = json.dumps(value, ensure_ascii=False, indent=2) + "\n"
        out.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate written as \ud800: kept as an escape
        out = json.dumps(value, ensure_ascii=True, indent=2) + "\n"
    if out != text:
        ctx.add("structure", "whole document", action="converted",
                detail="re-serialised as canonical JSON (UTF-8, two-space indent, keys in "
                "their order)")
    dst.write_text(out, encoding="utf-8", newline="")
    return "json"


# --- YAML ------------------------------------------------------------------------------------
# YAML is composed into its node graph (PyYAML's pure-Python safe composer: nothing is
# constructed, no tag runs) and the graph is serialised again: comments, odd indentation and
# encodings do not survive; anchors, aliases, tags and scalar styles do. Bounds: the nodes
# composed (`MAX_YAML_NODES`), the aliases (`MAX_YAML_ALIASES`), how far the aliases expand
# (`MAX_YAML_EXPANDED`: a "billion laughs" of nested aliases is refused before anything reads
# it) and the nesting depth (`MAX_YAML_DEPTH`). Language-specific tags that make loaders build
# objects or run code (`!!python/...`, `!ruby/...`, `!!java...`) are refused; standard tags and
# simple local tags (`!Ref`, `!Sub`, `!include`) are kept as written.
MAX_YAML_BYTES = 16 * 1024 * 1024
MAX_YAML_NODES = 2_000_000
MAX_YAML_ALIASES = 10_000
MAX_YAML_EXPANDED = 10_000_000
MAX_YAML_DEPTH = 200
STANDARD_YAML_TAGS = frozenset(f"tag:yaml.org,2002:{name}" for name in (
    "str", "int", "float", "bool", "null", "seq", "map", "binary", "timestamp", "omap",
    "pairs", "set", "merge", "value"))


def _yaml_loader(text: str) -> yaml.SafeLoader:
    import yaml

    class Loader(yaml.SafeLoader):
        nodes = 0
        aliases = 0
        depth = 0

        def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
            if self.check_event(yaml.AliasEvent):
                Loader.aliases += 1
                if Loader.aliases > MAX_YAML_ALIASES:
                    raise Rejected(f"The YAML document uses more than {MAX_YAML_ALIASES} "
                                   "aliases.", RejectionCode.TOO_COMPLEX)
            Loader.nodes += 1
            if Loader.nodes > MAX_YAML_NODES:
                raise Rejected(f"The YAML document has more than {MAX_YAML_NODES} values.",
                               RejectionCode.TOO_COMPLEX)
            Loader.depth += 1
            try:
                if Loader.depth > MAX_YAML_DEPTH:
                    raise Rejected(f"The YAML document nests deeper than {MAX_YAML_DEPTH} "
                                   "levels.", RejectionCode.TOO_COMPLEX)
                return super().compose_node(parent, index)
            finally:
                Loader.depth -= 1

    return Loader(text)


def _check_yaml_graph(root: yaml.Node, where: str) -> None:
    """Refuse code-running tags, and a graph whose aliases expand past MAX_YAML_EXPANDED
    values or refer to themselves: one pass over the nodes (iterative, memoised sizes)."""
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            children = _yaml_children(node)
            total = 1 + sum(sizes[id(c)] for c in children)
            if total > MAX_YAML_EXPANDED:
                raise Rejected(f"{where}'s aliases expand to more than {MAX_YAML_EXPANDED} "
                               "values (an alias bomb).", RejectionCode.TOO_COMPLEX)
            sizes[key] = total
            continue
        if key in sizes:
            continue
        if key in on_path:
            raise Rejected(f"{where} has an alias that contains itself (a recursive "
                           "structure).", RejectionCode.UNSAFE_STRUCTURE)
        tag = str(node.tag or "")
        if not _safe_yaml_tag(tag):
            raise Rejected(f"{where} uses the tag {tag[:80]!r}, which makes loaders build "
                           "objects or run code.", RejectionCode.UNSAFE_STRUCTURE)
        on_path.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _yaml_children(node) if id(child) not in sizes)


def _yaml_children(node: yaml.Node) -> list[yaml.Node]:
    import yaml

    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [item for pair in node.value for item in pair]
    return []


def _safe_yaml_tag(tag: str) -> bool:
    if tag in STANDARD_YAML_TAGS or not tag:
        return True
    if tag.startswith("tag:yaml.org,2002:"):
        return False  # !!python/..., !!java..., !!ruby/...
    # A local tag (`!Ref`) resolves to itself: a plain name, no language or class path in it.
    return tag.startswith("!") and re.fullmatch(r"![A-Za-z][A-Za-z0-9_-]{0,60}", tag) is not None


def clean_yaml(text: str, ctx: Context, where: str = "The YAML document") -> str:
    """`text` (one or more YAML documents) composed within the bounds and serialised again."""
    import yaml

    loader = _yaml_loader(text)
    documents: list[yaml.Node] = []
    try:
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                break
            _check_yaml_graph(node, where)
            documents.append(node)
        out: str = yaml.serialize_all(documents, allow_unicode=True,
                                      explicit_start=len(documents) > 1, width=4096)
    except yaml.YAMLError as exc:
        raise Rejected(f"{where} is not valid YAML ({str(exc).splitlines()[0][:160]}).",
                       RejectionCode.DAMAGED) from None
    except RecursionError:
        raise Rejected(f"{where} nests too deeply to process safely.",
                       RejectionCode.TOO_COMPLEX) from None
    finally:
        loader.dispose()
    return out


def sanitize_yaml(src: Path, dst: Path, ctx: Context) -> str:
    text = _read_text(src, ctx, MAX_YAML_BYTES, "YAML")
    out = clean_yaml(text, ctx)
    if out != text:
        ctx.add("structure", "whole document", action="converted",
                detail="re-serialised as YAML (UTF-8; comments and layout not kept; anchors, "
                "tags and values kept)")
    dst.write_text(out, encoding="utf-8", newline="")
    return "yaml"


# --- TOML ------------------------------------------------------------------------------------
# Parsed with the standard library's tomllib and written back with tomli-w: comments and layout
# go, tables, keys (in their order) and typed values stay. A document nested too deeply for the
# parser is too_complex; anything that is not TOML (duplicate keys included) is damaged.
MAX_TOML_BYTES = 16 * 1024 * 1024


def sanitize_toml(src: Path, dst: Path, ctx: Context) -> str:
    import tomllib

    import tomli_w

    text = _read_text(src, ctx, MAX_TOML_BYTES, "TOML")
    try:
        value = tomllib.loads(text)
        out = tomli_w.dumps(value, multiline_strings=False)
    except tomllib.TOMLDecodeError as exc:
        raise Rejected(f"The TOML document is not valid TOML ({str(exc)[:160]}).",
                       RejectionCode.DAMAGED) from None
    except RecursionError:
        raise Rejected("The TOML document nests too deeply to process safely.",
                       RejectionCode.TOO_COMPLEX) from None
    if out != text:
        ctx.add("structure", "whole document", action="converted",
                detail="re-serialised as TOML (UTF-8; comments and layout not kept)")
    dst.write_text(out, encoding="utf-8", newline="")
    return "toml"


def _read_text(src: Path, ctx: Context, limit: int, what: str) -> str:
    if src.stat().st_size > limit:
        raise Rejected(f"The {what} file is larger than {limit // 2**20} MB.",
                       RejectionCode.TOO_LARGE)
    text, encoding = decode(src.read_bytes())
    if encoding != "utf-8":
        ctx.add("encoding", "whole file", action="converted",
                detail=f"{encoding} converted to UTF-8")
    if text.startswith("\ufeff"):
        text = text[1:]
    found = CONTROL_CHARS.findall(text)
    if found:
        ctx.add("control_characters", "text", action="removed",
                detail=f"{len(found)} control or direction-override characters")
        text = CONTROL_CHARS.sub("", text)
    return text


def _output_text(path: Path) -> str:
    """A produced text file as text: strict UTF-8 with no NUL (verify.py imports this module
    for JSON, so these verifiers raise plain errors instead of importing it)."""
    text = path.read_bytes().decode("utf-8")
    if "\x00" in text:
        raise ValueError("a NUL character in a text file")
    return text


def verify_yaml(path: Path, spec: Output) -> None:
    """Re-open a produced YAML file: UTF-8 text that composes within the bounds."""
    try:
        clean_yaml(_output_text(path), Context())
    except Rejected as exc:
        raise ValueError(exc.reason) from None


def verify_toml(path: Path, spec: Output) -> None:
    """Re-open a produced TOML file: UTF-8 text that tomllib parses."""
    import tomllib

    tomllib.loads(_output_text(path))
