"""A private Postfix instance for the mail tests: its own configuration and queue folders
under a temporary directory, listening on loopback ports only, with the mail filter as its
after-queue content filter (master.cf: the `scan` transport and the re-injection listener,
as docs/mail.md shows) and every message relayed to a local sink. Started and stopped with
`postfix -c DIR start|stop`; nothing of the system's Postfix (or port 25) is used."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

MASTER_CF = """\
127.0.0.1:{smtp_port} inet n - n - - smtpd
scan      unix  -       -       n       -       4       smtp
  -o smtp_send_xforward_command=yes
  -o disable_mime_output_conversion=yes
  -o smtp_generic_maps=
127.0.0.1:{reinject_port} inet n - n - 10 smtpd
  -o content_filter=
  -o receive_override_options=no_unknown_recipient_checks,no_header_body_checks,no_milters
  -o smtpd_helo_restrictions=
  -o smtpd_client_restrictions=
  -o smtpd_sender_restrictions=
  -o smtpd_recipient_restrictions=permit_mynetworks,reject
  -o mynetworks=127.0.0.0/8
  -o smtpd_authorized_xforward_hosts=127.0.0.0/8
pickup    unix  n       -       n       60      1       pickup
cleanup   unix  n       -       n       -       0       cleanup
qmgr      unix  n       -       n       300     1       qmgr
rewrite   unix  -       -       n       -       -       trivial-rewrite
bounce    unix  -       -       n       -       0       bounce
defer     unix  -       -       n       -       0       bounce
trace     unix  -       -       n       -       0       bounce
verify    unix  -       -       n       -       1       verify
flush     unix  n       -       n       1000?   0       flush
proxymap  unix  -       -       n       -       -       proxymap
smtp      unix  -       -       n       -       -       smtp
relay     unix  -       -       n       -       -       smtp
showq     unix  n       -       n       -       -       showq
error     unix  -       -       n       -       -       error
retry     unix  -       -       n       -       -       error
discard   unix  -       -       n       -       -       discard
anvil     unix  -       -       n       -       1       anvil
scache    unix  -       -       n       -       1       scache
postlog   unix-dgram n  -       n       -       1       postlogd
"""

MAIN_CF = """\
compatibility_level = 3.6
queue_directory = {root}/queue
data_directory = {root}/data
maillog_file = {root}/maillog
maillog_file_prefixes = {root}
mail_owner = postfix
setgid_group = postdrop
myhostname = mx.sanitas.test
mydomain = sanitas.test
myorigin = $myhostname
inet_interfaces = 127.0.0.1
inet_protocols = ipv4
mydestination =
local_recipient_maps =
alias_maps =
alias_database =
mynetworks = 127.0.0.0/8
smtpd_relay_restrictions = permit_mynetworks, reject
relayhost = [127.0.0.1]:{sink_port}
content_filter = scan:[127.0.0.1]:{filter_port}
message_size_limit = 104857600
smtp_tls_security_level = none
smtpd_tls_security_level = none
queue_run_delay = 1s
minimal_backoff_time = 1s
maximal_backoff_time = 2s
smtp_connect_timeout = 5s
smtp_data_done_timeout = 300s
biff = no
"""


@dataclass
class Postfix:
    root: Path
    smtp_port: int  # where mail comes in (swaks sends here)
    reinject_port: int  # the filter's next hop

    @property
    def conf(self) -> Path:
        return self.root / "conf"

    def run(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(argv, capture_output=True, text=True, check=check, timeout=60)

    def queue(self) -> str:
        """`postqueue -p` of this instance ("Mail queue is empty" when empty)."""
        return self.run("postqueue", "-c", str(self.conf), "-p").stdout

    def flush(self) -> None:
        self.run("postqueue", "-c", str(self.conf), "-f", check=False)

    @property
    def log(self) -> str:
        path = self.root / "maillog"
        return path.read_text(errors="replace") if path.exists() else ""

    def stop(self) -> None:
        self.run("postfix", "-c", str(self.conf), "stop", check=False)
        pid_file = self.root / "queue" / "pid" / "master.pid"
        deadline = time.monotonic() + 20
        while pid_file.exists() and time.monotonic() < deadline:
            try:
                os.kill(int(pid_file.read_text().strip()), 0)
            except (OSError, ValueError):
                break
            time.sleep(0.1)


def start_postfix(root: Path, *, smtp_port: int, reinject_port: int, filter_port: int,
                  sink_port: int) -> Postfix:
    """Write the configuration under `root` and start the instance (root privileges are
    needed, as for any Postfix)."""
    conf = root / "conf"
    conf.mkdir(parents=True)
    (root / "data").mkdir()
    (root / "queue").mkdir()
    shutil.chown(root / "data", "postfix")
    (conf / "main.cf").write_text(MAIN_CF.format(root=root, sink_port=sink_port,
                                                 filter_port=filter_port))
    (conf / "master.cf").write_text(MASTER_CF.format(smtp_port=smtp_port,
                                                     reinject_port=reinject_port))
    postfix = Postfix(root, smtp_port, reinject_port)
    started = postfix.run("postfix", "-c", str(conf), "start", check=False)
    if started.returncode != 0:
        raise RuntimeError(f"postfix -c {conf} start failed: {started.stderr}{started.stdout}"
                           f"{postfix.log}")
    return postfix
