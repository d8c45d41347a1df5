"""scripts/licence-check.py, the licence report `make test` runs, fed package lists it must
refuse: it is run as scripts/run-tests.sh runs it, on reports in pip-licenses' and
license-checker's formats instead of the installed packages."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "licence-check.py"
NODE_MODULES = ROOT / "frontend" / "node_modules"


def python_entry(name: str, expression: str = "UNKNOWN", field: str = "UNKNOWN",
                 classifiers: str = "UNKNOWN") -> dict[str, str]:
    return {"Name": name, "Version": "1.0", "License-Expression": expression,
            "License-Metadata": field, "License-Classifier": classifiers}


def npm_entry(name: str, licences: object) -> tuple[str, dict[str, object]]:
    return f"{name}@1.0.0", {"licenses": licences, "path": str(NODE_MODULES / name)}


FINE_PYTHON = [
    python_entry("fastapi", expression="MIT"),
    python_entry("pillow-jxl-plugin", expression="GPL-3.0-or-later"),
    python_entry("psycopg", expression="LGPL-3.0-only"),
    python_entry("cryptography", expression="Apache-2.0 OR BSD-3-Clause"),
    python_entry("httpx", field="BSD-3-Clause", classifiers="BSD License"),
    python_entry("h11", field="MIT", classifiers="MIT License"),
    python_entry("pillow_heif", field="BSD-3-Clause"),
    python_entry("jinja2", classifiers="BSD License"),   # reviewed override
    python_entry("regex", expression="Apache-2.0 AND CNRI-Python"),   # dev only
]
FINE_NPM = dict([npm_entry("react", "MIT"), npm_entry("vite", "MIT"),
                 npm_entry("caniuse-lite", "CC-BY-4.0"), npm_entry("@scope/x", "(MIT OR CC0-1.0)")])


def run(tmp_path: Path, python: list[dict[str, str]],
        npm: Mapping[str, object]) -> subprocess.CompletedProcess[str]:
    (tmp_path / "pip.json").write_text(json.dumps(python))
    (tmp_path / "npm.json").write_text(json.dumps(npm))
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--python-json", str(tmp_path / "pip.json"),
         "--npm-json", str(tmp_path / "npm.json"), "--verbose"],
        capture_output=True, text=True, timeout=60, check=False)


def test_compatible_licences_pass(tmp_path: Path) -> None:
    result = run(tmp_path, FINE_PYTHON, FINE_NPM)
    assert result.returncode == 0, result.stderr
    assert "python runtime 8" in result.stdout and "python dev 1" in result.stdout
    # @scope/x is not in package-lock.json: held to the production rules
    assert "npm dev 2, npm production 2" in result.stdout
    # pillow-heif's wheel bundles x265: its bundled licences are part of what is checked
    assert "pillow_heif==1.0: (BSD-3-Clause) AND (LGPL-3.0-or-later AND GPL-2.0-or-later)" \
        in result.stdout
    assert "jinja2==1.0: BSD-3-Clause  [override:" in result.stdout


@pytest.mark.parametrize(("entry", "message"), [
    (python_entry("evil", expression="GPL-2.0-only"), "GPL-2.0-only is not compatible"),
    (python_entry("evil", field="GPL-2.0"), "GPL-2.0-only is not compatible"),
    (python_entry("evil", classifiers="GNU General Public License v2 (GPLv2)"),
     "GPL-2.0-only is not compatible"),
    (python_entry("evil", expression="SSPL-1.0"), "SSPL-1.0 is not compatible"),
    (python_entry("evil", expression="MIT AND BUSL-1.1"), "BUSL-1.1 is not compatible"),
    (python_entry("evil"), "no licence in its metadata"),
    (python_entry("evil", field="BSD", classifiers="BSD License"), "names only the family 'BSD'"),
    (python_entry("evil", field="Proprietary, all rights reserved"), "not a licence this check"),
    (python_entry("evil", classifiers="Other/Proprietary License"), "not a licence this check"),
    # an override holds only for the metadata it was reviewed against
    (python_entry("jinja2", classifiers="GNU General Public License v2 (GPLv2)"),
     "its metadata changed since the override was reviewed"),
    # licences fine for a test tool are not fine in the service itself
    (python_entry("fastapi", expression="Apache-2.0 AND CNRI-Python"),
     "CNRI-Python is not compatible"),
])
def test_python_package_that_does_not_fit_fails(tmp_path: Path, entry: dict[str, str],
                                                message: str) -> None:
    result = run(tmp_path, [*FINE_PYTHON, entry], FINE_NPM)
    assert result.returncode == 1
    assert f"{entry['Name']}==1.0" in result.stderr and message in result.stderr


@pytest.mark.parametrize(("name", "licences", "message"), [
    ("react-dom", "GPL-2.0", "GPL-2.0-only is not compatible"),
    ("react-dom", "CC-BY-NC-4.0", "CC-BY-NC-4.0 is not compatible"),
    ("react-dom", "UNLICENSED", "UNLICENSED is not compatible"),
    ("react-dom", "UNKNOWN", "UNKNOWN is not compatible"),
    ("react-dom", "MIT*", "licence guessed from a file"),
    ("react-dom", "Custom: https://example.com/terms", "not an SPDX licence"),
    ("react-dom", ["MIT", "SSPL-1.0"], "SSPL-1.0 is not compatible"),
    ("vite", "CC-BY-NC-4.0", "CC-BY-NC-4.0 is not on the allow-list"),
])
def test_npm_package_that_does_not_fit_fails(tmp_path: Path, name: str, licences: object,
                                             message: str) -> None:
    key, info = npm_entry(name, licences)
    result = run(tmp_path, FINE_PYTHON, {**FINE_NPM, key: info})
    assert result.returncode == 1
    assert f"{name}==1.0.0" in result.stderr and message in result.stderr
