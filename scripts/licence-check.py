#!/usr/bin/env python3
"""Licence report of every Python and npm dependency, checked against Sanitas's licence.

Sanitas is AGPL-3.0-or-later (LICENSE; docs/licences.md says why and what fits). This reads
what is installed, offline: the backend venv through pip-licenses, frontend/node_modules
through license-checker-rseidelsohn. Each package's declared licence is normalised to SPDX
(PEP 639 License-Expression, the License field, trove classifiers; npm's "license"), every
licence it names must be on the allow-list, and a package whose metadata names no licence, or
only an ambiguous family such as "BSD", must have an entry in OVERRIDES: the licence a person
verified from the package's own licence files, tied to the exact metadata it was verified
against (changed metadata fails until it is reviewed again). Nothing is skipped.

Python packages are grouped by uv.lock (runtime: the closure of the project's dependencies;
dev: the dev group's), npm packages by package-lock.json ("dev": true). Runtime and
production packages make up the service and must be compatible with the AGPL; dev-only tools
are run, never combined with Sanitas nor shipped, and may also use DEV_ONLY_ALLOWED.

Usage (from the repository root; scripts/run-tests.sh runs it with the backend's venv):
    backend/.venv/bin/python scripts/licence-check.py [--verbose]
        [--python-json FILE] [--npm-json FILE]   # read these reports instead of running the tools
Exit status 0 when every package fits, 1 when one does not (each named), 2 on a usage error.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tomllib
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BACKEND = ROOT / "backend"
FRONTEND = ROOT / "frontend"
PROJECT_LICENCE = "AGPL-3.0-or-later"

# Licences whose terms let the code be combined with AGPL-3.0-or-later code and the whole
# conveyed (or offered over a network) under the AGPL: permissive licences, weak copyleft
# that permits relicensing or linking, and GPL-3.0 (AGPL-3.0 section 13 / GPL-3.0 section 13).
ALLOWED = {
    "0BSD", "AGPL-3.0-only", "AGPL-3.0-or-later", "Apache-2.0", "BlueOak-1.0.0",
    "BSD-2-Clause", "BSD-3-Clause", "BSL-1.0", "CC-BY-4.0", "CC0-1.0", "GPL-2.0-or-later",
    "GPL-3.0-only", "GPL-3.0-or-later", "HPND", "ISC", "LGPL-2.1-only", "LGPL-2.1-or-later",
    "LGPL-3.0-only", "LGPL-3.0-or-later", "MIT", "MIT-0", "MIT-CMU", "MPL-2.0", "PSF-2.0",
    "Python-2.0", "Unlicense", "X11", "Zlib", "LicenseRef-Public-Domain",
}
# Tools used only to build and test (never part of what is run as Sanitas or shipped to a
# browser) need a licence that allows their use, not one compatible with combining. Still no
# proprietary, non-commercial or unknown licence there.
DEV_ONLY_ALLOWED = {
    "CC-BY-3.0",     # spdx-exceptions / spdx-ranges (data read by license-checker)
    "CNRI-Python",   # regex (through cfn-lint, through moto): Python's old CNRI terms
}

# Deprecated SPDX ids and the strings packages write in their License field, each mapped to
# the one licence it names. A family without a version ("BSD", "Apache", "GPL") maps to a
# prefix: it is resolved only by a more specific licence named elsewhere in the metadata.
ALIASES = {
    "mit": "MIT", "mit license": "MIT", "the mit license": "MIT", "expat": "MIT",
    "apache 2": "Apache-2.0", "apache 2.0": "Apache-2.0", "apache-2": "Apache-2.0",
    "apache license 2.0": "Apache-2.0", "apache license, version 2.0": "Apache-2.0",
    "apache software license 2.0": "Apache-2.0", "new bsd": "BSD-3-Clause",
    "new bsd license": "BSD-3-Clause", "modified bsd": "BSD-3-Clause",
    "simplified bsd": "BSD-2-Clause", "bsd 2-clause license": "BSD-2-Clause",
    "psfl": "PSF-2.0", "psf": "PSF-2.0", "cc0": "CC0-1.0",
    "unlicense": "Unlicense", "the unlicense": "Unlicense", "isc license": "ISC",
    "mpl 2.0": "MPL-2.0", "zlib/libpng": "Zlib",
    # deprecated SPDX ids
    "gpl-2.0": "GPL-2.0-only", "gpl-2.0+": "GPL-2.0-or-later", "gpl-3.0": "GPL-3.0-only",
    "gpl-3.0+": "GPL-3.0-or-later", "lgpl-2.1": "LGPL-2.1-only", "lgpl-2.1+": "LGPL-2.1-or-later",
    "lgpl-3.0": "LGPL-3.0-only", "lgpl-3.0+": "LGPL-3.0-or-later", "agpl-3.0": "AGPL-3.0-only",
    "gpl-2.0-only": "GPL-2.0-only",
}
FAMILIES = {"bsd": "BSD-", "bsd license": "BSD-", "apache": "Apache-", "gpl": "GPL-",
            "lgpl": "LGPL-"}
CLASSIFIERS = {
    "MIT License": "MIT", "MIT No Attribution License (MIT-0)": "MIT-0",
    "ISC License (ISCL)": "ISC", "The Unlicense (Unlicense)": "Unlicense",
    "Mozilla Public License 2.0 (MPL 2.0)": "MPL-2.0", "Python Software Foundation License":
    "PSF-2.0", "Zope Public License": "ZPL-2.1", "Apache Software License": "Apache-",
    "BSD License": "BSD-", "GNU General Public License (GPL)": "GPL-",
    "GNU General Public License v2 (GPLv2)": "GPL-2.0-only",
    "GNU General Public License v2 or later (GPLv2+)": "GPL-2.0-or-later",
    "GNU General Public License v3 (GPLv3)": "GPL-3.0-only",
    "GNU General Public License v3 or later (GPLv3+)": "GPL-3.0-or-later",
    "GNU Affero General Public License v3": "AGPL-3.0-only",
    "GNU Affero General Public License v3 or later (AGPLv3+)": "AGPL-3.0-or-later",
    "GNU Lesser General Public License v2 or later (LGPLv2+)": "LGPL-2.0-or-later",
    "GNU Lesser General Public License v3 (LGPLv3)": "LGPL-3.0-only",
    "GNU Lesser General Public License v3 or later (LGPLv3+)": "LGPL-3.0-or-later",
    "Public Domain": "LicenseRef-Public-Domain",
    "DFSG approved": None, "OSI Approved": None,  # statements about a licence, not licences
}


@dataclass(frozen=True)
class Override:
    declared: str   # the package's metadata as this report prints it, when it was verified
    licence: str    # SPDX expression of what its licence files say
    why: str


# Reviewed by reading each package's licence files in backend/.venv (dist-info/licenses).
OVERRIDES: dict[str, Override] = {
    "amqp": Override("License: BSD; classifiers: BSD License", "BSD-3-Clause",
                     "LICENSE: 'The BSD License (3 Clause, also known as the new BSD license)'"),
    "antlr4-python3-runtime": Override("License: BSD", "BSD-3-Clause",
                                       "no licence file in the wheel; ANTLR 4 is BSD-3-Clause"),
    "billiard": Override("License: BSD; classifiers: BSD License", "BSD-3-Clause",
                         "LICENSE.txt: three clauses, the third on endorsement"),
    "easygui": Override("License: BSD; classifiers: BSD License", "BSD-3-Clause",
                        "LICENSE: three clauses, the third on endorsement"),
    "extract-msg": Override("License: GPL", "GPL-3.0-or-later",
                            "LICENSE.txt: GPL version 3; extract_msg/__init__.py: 'either "
                            "version 3 of the License, or (at your option) any later version'"),
    "itsdangerous": Override("classifiers: BSD License", "BSD-3-Clause", "LICENSE.txt (Pallets)"),
    "jinja2": Override("classifiers: BSD License", "BSD-3-Clause", "LICENSE.txt (Pallets)"),
    "kubernetes-validate": Override("License: Apache", "Apache-2.0",
                                    "LICENSE: 'Licensed under the Apache License, Version 2.0'"),
    "mpmath": Override("License: BSD; classifiers: BSD License", "BSD-3-Clause",
                       "LICENSE: clauses a-c, c on endorsement"),
    "olefile": Override("License: BSD; classifiers: BSD License", "BSD-2-Clause AND HPND",
                        "LICENSE.txt: two-clause BSD, plus the PIL (HPND) terms of the code it "
                        "came from"),
    "oletools": Override("License: BSD; classifiers: BSD License", "BSD-2-Clause",
                         "LICENSE.md: two-clause BSD for oletools; its thirdparty/ folder "
                         "carries its own notices"),
    "prompt-toolkit": Override("classifiers: BSD License", "BSD-3-Clause",
                               "LICENSE: three clauses, the third on endorsement"),
    "pycryptodomex": Override("License: BSD, Public Domain; classifiers: BSD License; Public "
                              "Domain", "BSD-2-Clause AND LicenseRef-Public-Domain",
                              "LICENSE.rst: partly public domain, partly BSD 2-Clause"),
    "pypdfium2": Override("License: BSD-3-Clause, Apache-2.0, dependency licenses",
                          "BSD-3-Clause AND Apache-2.0 AND CC-BY-4.0",
                          "License-File: LICENSES/{BSD-3-Clause,Apache-2.0,CC-BY-4.0}.txt; the "
                          "bundled PDFium's own are in BUILD_LICENSES/"),
    "python-dateutil": Override("License: Dual License; classifiers: Apache Software License; "
                                "BSD License", "Apache-2.0 AND BSD-3-Clause",
                                "LICENSE: Apache-2.0 for changes since 2017, BSD-3-Clause "
                                "before"),
    "reportlab": Override("License: BSD license (see license.txt for details), Copyright (c) "
                          "2000-2025, ReportLab Inc.; classifiers: BSD License", "BSD-3-Clause",
                          "LICENSE: three clauses, the third on endorsement"),
    "sympy": Override("License: BSD; classifiers: BSD License", "BSD-3-Clause",
                      "LICENSE: clauses a-c for SymPy (bundled parts: BSD-3-Clause too)"),
    "uvloop": Override("License: MIT License; classifiers: Apache Software License; MIT License",
                       "MIT OR Apache-2.0", "licenses/LICENSE-MIT and LICENSE-APACHE (2.0)"),
    "vine": Override("License: BSD; classifiers: BSD License", "BSD-3-Clause",
                     "LICENSE: 'The BSD License (3 Clause, also known as the new BSD license)'"),
}

# Wheels that bundle native libraries under licences other than the package's own: those
# libraries are part of what runs, so their licences are checked as well.
BUNDLED: dict[str, tuple[str, str]] = {
    "pillow-heif": ("LGPL-3.0-or-later AND GPL-2.0-or-later",
                    "LICENSES_bundled.txt: libheif and libde265 (LGPLv3), x265 (GPLv2 or later)"),
}


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


# --- SPDX expressions --------------------------------------------------------------------

TOKEN = re.compile(r"\s*(\(|\)|[A-Za-z0-9.+:-]+)")


def parse_expression(text: str) -> object:
    """A tiny SPDX expression parser: ids, AND, OR, WITH, parentheses; ValueError when not one."""
    tokens = TOKEN.findall(text)
    if "".join(tokens) != re.sub(r"\s+", "", text):
        raise ValueError(text)
    pos = 0

    def peek() -> str | None:
        return tokens[pos] if pos < len(tokens) else None

    def take() -> str:
        nonlocal pos
        pos += 1
        return tokens[pos - 1]

    def atom() -> object:
        tok = take() if peek() is not None else ""
        if tok == "(":
            node = disjunction()
            if take() != ")":
                raise ValueError(text)
            return node
        if not tok or tok.upper() in {"AND", "OR", "WITH", ")"}:
            raise ValueError(text)
        lic = ALIASES.get(tok.lower(), tok)
        if (peek() or "").upper() == "WITH":  # an exception only adds permissions
            take()
            take()
        return lic

    def conjunction() -> object:
        node = atom()
        while (peek() or "").upper() == "AND":
            take()
            node = ("AND", node, atom())
        return node

    def disjunction() -> object:
        node = conjunction()
        while (peek() or "").upper() == "OR":
            take()
            node = ("OR", node, conjunction())
        return node

    tree = disjunction()
    if pos != len(tokens):
        raise ValueError(text)
    return tree


def looks_spdx(text: str) -> bool:
    try:
        tree = parse_expression(text)
    except (ValueError, IndexError):
        return False

    def ids(node: object) -> list[str]:
        return [node] if isinstance(node, str) else ids(node[1]) + ids(node[2])  # type: ignore[index]

    return all(re.fullmatch(r"[A-Za-z0-9.+-]+", i) and any(c.isdigit() or c.isupper() for c in i)
               and i.lower() not in FAMILIES for i in ids(tree))


def fits(node: object, allowed: set[str]) -> bool:
    if isinstance(node, str):
        return node in allowed
    op, left, right = node  # type: ignore[misc]
    if op == "OR":
        return fits(left, allowed) or fits(right, allowed)
    return fits(left, allowed) and fits(right, allowed)


def named(node: object) -> list[str]:
    return [node] if isinstance(node, str) else named(node[1]) + named(node[2])  # type: ignore[index]


# --- Resolving one package's licence ------------------------------------------------------

@dataclass
class Package:
    ecosystem: str   # "python" or "npm"
    name: str
    version: str
    group: str       # runtime / dev (python), production / dev (npm)
    declared: str
    licence: str | None = None   # the SPDX expression checked; None: unresolved
    problem: str | None = None
    overridden: str | None = None


def resolve_python(entry: dict[str, str]) -> tuple[str, str | None, str | None]:
    """(declared, SPDX expression or None, why not) for one pip-licenses --from=all entry."""
    expression = entry.get("License-Expression", "UNKNOWN").strip()
    field = entry.get("License-Metadata", "UNKNOWN").strip()
    classifiers = [c.strip() for c in entry.get("License-Classifier", "UNKNOWN").split(";")]
    parts = []
    if expression != "UNKNOWN":
        parts.append(f"License-Expression: {expression}")
    if field != "UNKNOWN":
        parts.append(f"License: {' '.join(field.split())[:200]}")
    if classifiers != ["UNKNOWN"]:
        parts.append(f"classifiers: {'; '.join(classifiers)}")
    declared = "; ".join(parts) or "UNKNOWN"

    specific: list[str] = []   # expressions, all of which apply (fail closed: AND)
    families: list[str] = []
    unknown: list[str] = []
    if expression != "UNKNOWN":
        (specific if looks_spdx(expression) else unknown).append(expression)
    if field != "UNKNOWN":
        key = " ".join(field.split()).lower()
        if key in ALIASES:
            specific.append(ALIASES[key])
        elif key in FAMILIES:
            families.append(FAMILIES[key])
        elif looks_spdx(field):
            specific.append(field)
        else:
            unknown.append(field)
    for classifier in classifiers:
        if classifier == "UNKNOWN":
            continue
        mapped = CLASSIFIERS.get(classifier, "?")
        if mapped is None:
            continue
        if mapped == "?":
            unknown.append(classifier)
        elif mapped.endswith("-"):
            families.append(mapped)
        else:
            specific.append(mapped)
    if unknown:
        return declared, None, f"not a licence this check can read: {unknown[0][:80]!r}"
    ids = [i for s in specific for i in named(parse_expression(s))]
    for family in families:
        if not any(i.startswith(family) for i in ids):
            return declared, None, f"names only the family {family.rstrip('-')!r}, not which one"
    if not specific:
        return declared, None, "no licence in its metadata"
    unique = list(dict.fromkeys(specific))
    return declared, " AND ".join(f"({s})" if " " in s else s for s in unique), None


def resolve_npm(licences: object) -> tuple[str, str | None, str | None]:
    items = licences if isinstance(licences, list) else [licences]
    declared = " AND ".join(str(i) for i in items)
    exprs = []
    for item in items:
        text = str(item).strip()
        if text.endswith("*"):   # guessed by license-checker from a README or LICENSE file
            return declared, None, "licence guessed from a file, not declared"
        text = ALIASES.get(text.lower(), text)
        if not looks_spdx(text):
            return declared, None, f"not an SPDX licence: {text[:80]!r}"
        exprs.append(f"({text})" if " " in text else text)
    if not exprs:
        return declared, None, "no licence declared"
    return declared, " AND ".join(exprs), None


def check(pkg: Package, expression: str | None, why: str | None) -> None:
    dev = pkg.group == "dev"
    allowed = ALLOWED | DEV_ONLY_ALLOWED if dev else ALLOWED
    override = OVERRIDES.get(canonical(pkg.name)) if pkg.ecosystem == "python" else None
    if override is not None:
        if override.declared != pkg.declared:
            pkg.problem = (f"its metadata changed since the override was reviewed "
                           f"(was {override.declared!r}): check its licence files again")
            return
        expression, why = override.licence, None
        pkg.overridden = override.why
    if expression is None:
        pkg.problem = f"{why}: verify its licence files and add it to OVERRIDES"
        return
    bundled = BUNDLED.get(canonical(pkg.name)) if pkg.ecosystem == "python" else None
    if bundled is not None:
        expression = f"({expression}) AND ({bundled[0]})"
    pkg.licence = expression
    tree = parse_expression(expression)
    if not fits(tree, allowed):
        bad = sorted({i for i in named(tree) if i not in allowed})
        pkg.problem = (f"{', '.join(bad)} is not compatible with {PROJECT_LICENCE}"
                       if not dev else f"{', '.join(bad)} is not on the allow-list")


# --- Collecting the packages --------------------------------------------------------------

def python_groups() -> tuple[str, dict[str, str]]:
    """The project's name and each locked package's group, from backend/uv.lock."""
    lock = tomllib.loads((BACKEND / "uv.lock").read_text())
    project = tomllib.loads((BACKEND / "pyproject.toml").read_text())["project"]["name"]
    by_name = {canonical(p["name"]): p for p in lock["package"]}

    def closure(roots: list[dict[str, object]]) -> set[str]:
        seen: set[tuple[str, str]] = set()
        todo = [(canonical(str(d["name"])), e) for d in roots
                for e in ["", *d.get("extra", [])]]  # type: ignore[union-attr]
        while todo:
            name, extra = todo.pop()
            if (name, extra) in seen or name not in by_name:
                continue
            seen.add((name, extra))
            pkg = by_name[name]
            deps = pkg.get("optional-dependencies", {}).get(extra, []) if extra else \
                pkg.get("dependencies", [])
            todo += [(canonical(d["name"]), e) for d in deps for e in ["", *d.get("extra", [])]]
        return {n for n, _ in seen}

    me = by_name[canonical(project)]
    runtime = closure(me.get("dependencies", []))
    dev = closure([d for g in me.get("dev-dependencies", {}).values() for d in g]) - runtime
    return canonical(project), {**{n: "dev" for n in dev}, **{n: "runtime" for n in runtime}}


def python_packages(report: Path | None) -> list[Package]:
    if report is not None:
        entries = json.loads(report.read_text())
    else:
        out = subprocess.run(  # noqa: S603 - the venv's own pip-licenses, fixed arguments
            [str(BACKEND / ".venv/bin/pip-licenses"), "--from=all", "--with-system",
             "--format=json", f"--python={BACKEND / '.venv/bin/python'}"],
            check=True, capture_output=True, text=True).stdout
        entries = json.loads(out)
    project, groups = python_groups()
    packages = []
    for entry in entries:
        name = canonical(entry["Name"])
        if name == project:
            continue
        # Installed but in neither group (left over in the venv): held to the runtime rules.
        pkg = Package("python", entry["Name"], entry["Version"], groups.get(name, "runtime"), "")
        pkg.declared, expression, why = resolve_python(entry)
        check(pkg, expression, why)
        packages.append(pkg)
    return packages


def npm_packages(report: Path | None) -> list[Package]:
    if report is not None:
        entries = json.loads(report.read_text())
    else:
        tool = FRONTEND / "node_modules/.bin/license-checker-rseidelsohn"
        out = subprocess.run(  # noqa: S603 - the frontend's own license-checker, fixed arguments
            [str(tool), "--json", "--excludePrivatePackages", "--start", str(FRONTEND)],
            check=True, capture_output=True, text=True).stdout
        entries = json.loads(out)
    lock = json.loads((FRONTEND / "package-lock.json").read_text())["packages"]
    packages = []
    for key, info in entries.items():
        name, _, version = key.rpartition("@")
        path = Path(info.get("path", ""))
        try:
            lock_key = path.relative_to(FRONTEND).as_posix()
        except ValueError:
            lock_key = ""
        group = "dev" if lock.get(lock_key, {}).get("dev") else "production"
        pkg = Package("npm", name, version, group, "")
        pkg.declared, expression, why = resolve_npm(info.get("licenses", "UNKNOWN"))
        check(pkg, expression, why)
        packages.append(pkg)
    return packages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python-json", type=Path, help="pip-licenses --from=all JSON to read")
    parser.add_argument("--npm-json", type=Path, help="license-checker --json output to read")
    parser.add_argument("--verbose", action="store_true", help="list every package")
    args = parser.parse_args(argv)

    # The two tools run at once: each takes a few seconds of reading metadata files.
    with ThreadPoolExecutor(max_workers=2) as pool:
        python = pool.submit(python_packages, args.python_json)
        npm = pool.submit(npm_packages, args.npm_json)
        packages = python.result() + npm.result()
    groups = Counter((p.ecosystem, p.group) for p in packages)
    print(f"licence report against {PROJECT_LICENCE}: " + ", ".join(
        f"{eco} {group} {n}" for (eco, group), n in sorted(groups.items())) + " packages")
    licences = Counter(p.licence for p in packages if p.licence and not p.problem)
    if args.verbose:
        for p in sorted(packages, key=lambda p: (p.ecosystem, p.group, p.name.lower())):
            note = f"  [override: {p.overridden}]" if p.overridden else ""
            print(f"  {p.ecosystem:6} {p.group:10} {p.name}=={p.version}: {p.licence}{note}")
        for lic, n in licences.most_common():
            print(f"  {n:4} {lic}")
    print(f"  {sum(1 for p in packages if p.overridden)} resolved by reviewed overrides, "
          f"{sum(1 for p in packages if canonical(p.name) in BUNDLED and p.ecosystem == 'python')}"
          " with bundled native libraries checked")
    failures = [p for p in packages if p.problem]
    for p in failures:
        print(f"LICENCE: {p.ecosystem} {p.group} {p.name}=={p.version} ({p.declared}): "
              f"{p.problem}", file=sys.stderr)
    stale = set(OVERRIDES) - {canonical(p.name) for p in packages if p.ecosystem == "python"}
    if stale and args.python_json is None:
        print(f"  note: overrides for packages no longer installed: {', '.join(sorted(stale))}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
