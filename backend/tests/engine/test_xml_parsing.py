"""Untrusted XML never makes the engine open a file: a DOCTYPE naming a local path (here a
FIFO nobody writes to, so a read would block forever) is not followed by any family."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest


@pytest.mark.parametrize("family", ["svg", "ooxml_part", "xml", "verify", "check"])
def test_a_doctype_naming_a_local_file_is_not_opened(family, tmp_path):
    fifo = tmp_path / "blocking.dtd"
    os.mkfifo(fifo)
    document = (f'<?xml version="1.0"?><!DOCTYPE svg SYSTEM "{fifo}">'
                '<svg xmlns="http://www.w3.org/2000/svg"><rect width="1" height="1"/></svg>')
    code = textwrap.dedent(f"""
        from pathlib import Path
        from sanitas.engine.report import Context, Rejected
        data = {document.encode()!r}
        family = {family!r}
        try:
            if family == "svg":
                from sanitas.engine.svg import sanitize_svg_bytes
                sanitize_svg_bytes(data, Context())
            elif family == "ooxml_part":
                from sanitas.engine.xmlsafe import parse_xml
                parse_xml(data, "part.xml")
            elif family == "check":
                from sanitas.engine.xmlsafe import xml_problem
                assert xml_problem(data) is not None
            elif family == "xml":
                from sanitas.engine.text import parse_untrusted_xml
                parse_untrusted_xml(data, "file.xml", lambda kind, what: None)
            else:
                from sanitas.engine import verify
                verify._parse(data, "output")
        except Rejected:
            pass  # refusing is fine; opening the FIFO is not
        except Exception as exc:
            if type(exc).__name__ != "Invalid":
                raise
        print("done")
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "done"


# Documents a parse that builds a tree refuses for each reason, and ones it takes.
_BROKEN = [b"", b"   ", b"<a>", b"<a/><b/>", b"<a/>junk", b"<a>&foo;</a>", b"<a>&#1;</a>",
           b"<a b='1' b='2'/>", b"\xef\xbb\xbf<a>\xff</a>", b"<a><x:b/></a>",
           b"<a xmlns:x=''><x:b/></a>", b"<a xmlns:r='u'><b r:id='1' foo:bar='2'/></a>",
           b"<a>" * 300 + b"</a>" * 300]
_FINE = [b"<a/>", b"<?xml version='1.0' encoding='UTF-8' standalone='yes'?>\r\n<a>x&amp;y</a>",
         b"<w:d xmlns:w='urn:w'><w:p w:x='1'><!-- c --><?pi x?></w:p></w:d>"]


@pytest.mark.parametrize("data", _BROKEN + _FINE)
def test_the_tree_free_check_agrees_with_a_parse(data):
    from lxml import etree

    from sanitas.engine.xmlsafe import xml_parser, xml_problem

    try:
        etree.fromstring(data, xml_parser())
        parses = True
    except etree.XMLSyntaxError:
        parses = False
    problem = xml_problem(data)
    assert parses is (data in _FINE)
    assert (problem is None) is parses, problem
    if problem is not None:
        assert problem.startswith("it is not well-formed XML (")


@pytest.mark.parametrize("data", [b"<!DOCTYPE a><a/>", b"<!DOCTYPE a [<!ENTITY e 'x'>]><a>&e;</a>",
                                  b"<!-- " + b"x" * 70_000 + b" --><!DOCTYPE a [<!ENTITY e "
                                  b"SYSTEM '/etc/passwd'>]><a>&e;</a>"])
def test_the_tree_free_check_names_a_dtd(data):
    from sanitas.engine.xmlsafe import DECLARES_DTD, xml_problem

    assert xml_problem(data) == DECLARES_DTD
