"""The mail chain of the e2e Mail scenario: an SMTP sink on SINK_PORT (standing for Postfix's
re-injection listener, which the e2e server also releases to), `sanitas mail` on FILTER_PORT
with the server's data directory and environment, and one hostile message sent through it.
Writes {"delivered": n, "released": n} to STATE as the sink receives messages, until its
stdin closes. Usage: mail_chain.py SINK_PORT FILTER_PORT STATE"""

import json
import smtplib
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "backend"))
from tests.mail.mailkit import (
    BIN,
    Sink,
    message,
    samples,
    stop_server,
)

sink_port, filter_port, state = int(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])


def write_state(sink: Sink) -> None:
    got = list(sink.handler.messages)
    released = sum(1 for m in got if m.data.startswith(b"X-Sanitas-Released:"))
    state.write_text(json.dumps({"delivered": len(got) - released, "released": released}))


def main() -> None:
    import os
    import socket
    import subprocess
    import tempfile
    import time

    files = samples(Path(tempfile.mkdtemp(prefix="e2e-mail-")))
    with Sink(sink_port) as sink:
        log = open(Path(os.environ["SANITAS_DATA_DIR"]) / "mail.log", "ab")  # noqa: SIM115
        proc = subprocess.Popen([str(BIN / "sanitas"), "mail", "--listen",
                                 f"127.0.0.1:{filter_port}", "--next-hop",
                                 f"127.0.0.1:{sink_port}", "--no-migrate"],
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            deadline = time.monotonic() + 90
            while True:
                try:
                    socket.create_connection(("127.0.0.1", filter_port), timeout=1).close()
                    break
                except OSError:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        raise SystemExit("sanitas mail did not start") from None
                    time.sleep(0.2)
            data = message({"invoice.docm": files["macro.docm"], "tool.exe": files["tool.exe"]},
                           subject="Invoice e2e")
            with smtplib.SMTP("127.0.0.1", filter_port, timeout=120) as client:
                client.sendmail("alice@example.org", ["bob@example.net"], data)
            stop = threading.Event()
            threading.Thread(target=lambda: (sys.stdin.read(), stop.set()), daemon=True).start()
            while not stop.is_set():
                write_state(sink)
                stop.wait(0.2)
        finally:
            stop_server(proc)


main()
