"""Code run inside the real sandbox by the boundary and budget tests, and the helper that runs
it and reads its last line as JSON."""

from __future__ import annotations

import json
import textwrap

from sanitas.sandbox.bwrap import probe


def run_json(code: str, settings, **kwargs) -> dict:
    proc = probe(textwrap.dedent(code), settings, **kwargs)
    assert proc.returncode == 0, proc.stderr.decode()
    return json.loads(proc.stdout.decode().strip().splitlines()[-1])


# Forks up to 200 sleeping children; prints how many it got and the error that stopped it.
FORK_UP_TO_200 = """
    import json, os, time
    children, error = [], None
    for _ in range(200):
        try:
            pid = os.fork()
        except OSError as exc:
            error = type(exc).__name__
            break
        if pid == 0:
            time.sleep(5)
            os._exit(0)
        children.append(pid)
    for pid in children:
        os.kill(pid, 9)
    print(json.dumps({"forked": len(children), "error": error}))
"""
