"""The sandbox child's idle-time imports (sandbox/child.py), in process: a job waiting on the
socket is never kept waiting for them; an idle child does them and says "warm"."""

from __future__ import annotations

import socket
import sys

from sanitas.sandbox import child


def _probe_module(tmp_path, monkeypatch, name: str) -> str:
    (tmp_path / f"{name}.py").write_text("LOADED = True\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, name, raising=False)
    return name


def test_job_already_waiting_skips_the_imports(tmp_path, monkeypatch):
    name = _probe_module(tmp_path, monkeypatch, "idle_probe_waiting")
    events: list[dict] = []
    parent, sock = socket.socketpair()
    parent.sendall(b'{"mode": "basic"}\n')
    child._import_while_idle(sock, (name,), events.append)
    assert name not in sys.modules and events == []
    parent.close()
    sock.close()


def test_idle_child_imports_after_the_grace_and_says_warm(tmp_path, monkeypatch):
    name = _probe_module(tmp_path, monkeypatch, "idle_probe_idle")
    monkeypatch.setattr(child, "IDLE_GRACE", 0.01)
    events: list[dict] = []
    parent, sock = socket.socketpair()
    child._import_while_idle(sock, (name, "no_such_module_here"), events.append)
    assert sys.modules[name].LOADED and events == [{"event": "warm"}]
    parent.close()
    sock.close()
