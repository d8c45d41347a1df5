"""The seccomp filter: its BPF program checked instruction by instruction (an independent
interpreter, so a wrong jump offset shows), and its effect inside the real sandbox."""

from __future__ import annotations

import errno
import json
import re
import struct
import textwrap
from pathlib import Path

import pytest

from sanitas.sandbox import seccomp
from sanitas.sandbox.bwrap import probe

pytestmark = pytest.mark.skipif(seccomp.filter_program() is None, reason="x86-64 only")

ALLOW = 0x7FFF0000
KILL_PROCESS = 0x80000000
AUDIT_ARCH_I386 = 0x40000003

# socket families (linux/socket.h)
AF_UNIX, AF_INET, AF_AX25, AF_INET6, AF_NETLINK, AF_PACKET = 1, 2, 3, 10, 16, 17
AF_BLUETOOTH, AF_ALG, AF_VSOCK, AF_XDP, AF_MAX = 31, 38, 40, 44, 46

# What the census (syscall_census.py) saw the engine, LibreOffice and tesseract call.
MEASURED = [
    "accept", "access", "arch_prctl", "bind", "brk", "chdir", "chmod", "chown", "clock_gettime",
    "clock_nanosleep", "clone", "close", "close_range", "connect", "dup2", "epoll_create1",
    "eventfd2", "execve", "exit", "exit_group", "faccessat2", "fadvise64", "fcntl", "fdatasync",
    "fstat", "fstatfs", "fsync", "ftruncate", "futex", "getcwd", "getdents64", "getegid",
    "geteuid", "getgid", "getpeername", "getpid", "getppid", "getrandom", "getrusage",
    "getsockname", "getsockopt", "gettid", "getuid", "ioctl", "lgetxattr", "link", "listen",
    "listxattr", "lseek", "madvise", "mkdir", "mlock", "mmap", "mprotect", "mremap", "munmap",
    "newfstatat", "openat", "pipe2", "poll", "prctl", "pread64", "prlimit64", "pwrite64",
    "read", "readlink", "recvmsg", "rename", "rmdir", "rseq", "rt_sigaction", "rt_sigprocmask",
    "rt_sigreturn", "sched_getaffinity", "sendfile", "set_robust_list", "set_tid_address",
    "setsid", "shutdown", "sigaltstack", "socket", "socketpair", "stat", "statfs", "statx",
    "sysinfo", "uname", "unlink", "unlinkat", "utimensat", "vfork", "wait4", "write",
]
# ...plus what error paths and other documents plausibly need (must stay allowed).
ORDINARY = [
    "kill", "tgkill", "nanosleep", "sched_yield", "select", "pselect6", "epoll_wait",
    "epoll_ctl", "ppoll", "dup", "dup3", "pipe", "readv", "writev", "sendmsg", "recvfrom",
    "sendto", "fchmod", "fchown", "umask", "memfd_create", "fallocate", "flock", "msync",
    "mincore", "membarrier", "setitimer", "timer_create", "getpgrp", "setpgid", "seccomp",
    "landlock_create_ruleset", "fchmodat2", "futex_waitv", "mseal", "cachestat",
]


def _table() -> dict[str, int]:
    header = Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h")
    names = {}
    if header.exists():
        for match in re.finditer(r"#define __NR_(\w+) (\d+)", header.read_text()):
            names[match.group(1)] = int(match.group(2))
    # newer than the Debian 12 headers (checked against Linux 6.18 here)
    names.update({"fchmodat2": 452, "mseal": 462, "cachestat": 451, "futex_waitv": 449,
                  "landlock_create_ruleset": 444})
    return names


def run_bpf(program: bytes, nr: int, args: tuple[int, ...] = (),
            arch: int = seccomp.AUDIT_ARCH_X86_64) -> int:
    """A classic-BPF interpreter for the instructions the filter uses."""
    data = struct.pack("<IIQ6Q", nr, arch, 0, *(list(args) + [0] * (6 - len(args))))
    insns = [struct.unpack("<HBBI", program[i:i + 8]) for i in range(0, len(program), 8)]
    acc, pc, steps = 0, 0, 0
    while True:
        steps += 1
        assert steps <= len(insns), "a loop (classic BPF only jumps forward)"
        code, jt, jf, k = insns[pc]
        if code == 0x20:  # ld [k]
            acc = struct.unpack_from("<I", data, k)[0]
            pc += 1
        elif code in (0x15, 0x25, 0x35, 0x45):
            taken = {0x15: acc == k, 0x25: acc > k, 0x35: acc >= k, 0x45: bool(acc & k)}[code]
            pc += 1 + (jt if taken else jf)
        elif code == 0x06:
            return k
        else:
            raise AssertionError(f"unexpected BPF opcode {code:#x}")
        assert pc < len(insns), "jumped past the end of the program"


def _errno(code: int) -> int:
    return 0x00050000 | code


@pytest.fixture(scope="module")
def program() -> bytes:
    program = seccomp.filter_program()
    assert program is not None and len(program) % 8 == 0
    return program


def test_denied_syscall_numbers_match_the_kernel_headers():
    table = _table()
    if "ptrace" not in table:
        pytest.skip("no x86-64 kernel headers to compare with")
    wrong = {name: (number, table[name]) for name, number in seccomp.DENIED_SYSCALLS.items()
             if name in table and table[name] != number}
    assert wrong == {}
    for name, number in (("socket", seccomp.SYS_SOCKET), ("socketpair", seccomp.SYS_SOCKETPAIR),
                         ("clone", seccomp.SYS_CLONE), ("clone3", seccomp.SYS_CLONE3),
                         ("personality", seccomp.SYS_PERSONALITY)):
        assert table[name] == number


def test_program_decisions(program):
    table = _table()
    if "ptrace" not in table:
        pytest.skip("no x86-64 kernel headers for the syscall names")
    # other ABIs
    assert run_bpf(program, table["read"], arch=AUDIT_ARCH_I386) == KILL_PROCESS
    assert run_bpf(program, seccomp.X32_SYSCALL_BIT | table["read"]) == _errno(errno.ENOSYS)
    # unreviewed (future) numbers behave like an older kernel
    assert run_bpf(program, seccomp.LAST_REVIEWED + 1) == _errno(errno.ENOSYS)
    assert run_bpf(program, 0xFFFFFFFF) == _errno(errno.ENOSYS)
    for number in seccomp.DENIED_SYSCALLS.values():
        assert run_bpf(program, number) == _errno(errno.EPERM), number
    for name in MEASURED + ORDINARY:
        if name in ("socket", "socketpair", "clone"):
            continue
        assert run_bpf(program, table[name]) == ALLOW, name
    # sockets: AF_UNIX only, for socket and socketpair alike; the high bits of the int
    # argument are ignored by the kernel, so they must not matter here either
    for nr in (seccomp.SYS_SOCKET, seccomp.SYS_SOCKETPAIR):
        assert run_bpf(program, nr, (AF_UNIX, 1, 0)) == ALLOW
        assert run_bpf(program, nr, ((7 << 32) | AF_UNIX, 1, 0)) == ALLOW
        for family in range(AF_MAX + 2):
            if family != AF_UNIX:
                assert run_bpf(program, nr, (family, 1, 0)) == _errno(errno.EACCES), family
    # clone: threads and fork yes, new namespaces no; clone3 falls back to clone
    assert run_bpf(program, seccomp.SYS_CLONE, (0x3D0F00,)) == ALLOW  # pthread_create
    assert run_bpf(program, seccomp.SYS_CLONE, (0x01200011,)) == ALLOW  # fork
    for flag in (0x00020000, 0x02000000, 0x04000000, 0x08000000, 0x10000000, 0x20000000,
                 0x40000000):
        assert run_bpf(program, seccomp.SYS_CLONE, (flag | 17,)) == _errno(errno.EPERM), flag
    assert run_bpf(program, seccomp.SYS_CLONE3) == _errno(errno.ENOSYS)
    # personality: query and PER_LINUX only
    assert run_bpf(program, seccomp.SYS_PERSONALITY, (0xFFFFFFFF,)) == ALLOW
    assert run_bpf(program, seccomp.SYS_PERSONALITY, (0,)) == ALLOW
    for persona in (0x0040000, 0x0400000, 0x0100000, 0x0008):  # no ASLR, RIE, page 0, ...
        assert run_bpf(program, seccomp.SYS_PERSONALITY, (persona,)) == _errno(errno.EPERM)


def test_assembler_refuses_backward_and_long_jumps():
    asm = seccomp._Assembler()
    asm.label("start")
    asm.load(0)
    asm.jump(0x15, 1, true="start")
    with pytest.raises(ValueError, match="out of range"):
        asm.assemble()
    asm = seccomp._Assembler()
    asm.jump(0x15, 1, true="far")
    for _ in range(300):
        asm.load(0)
    asm.label("far")
    asm.ret(0)
    with pytest.raises(ValueError, match="out of range"):
        asm.assemble()


def test_inside_the_sandbox(sandbox_settings):
    """The kernel applies the filter as the interpreter above says."""
    code = textwrap.dedent("""
        import ctypes, json, os, socket, subprocess, threading
        libc = ctypes.CDLL(None, use_errno=True)
        def syscall(number, *args):
            if libc.syscall(number, *args) == -1:
                return ctypes.get_errno()
            return "allowed"
        def make(family, kind):
            try:
                socket.socket(family, kind, 0).close()
                return "allowed"
            except OSError as exc:
                return exc.errno
        pair = ctypes.create_string_buffer(8)
        families = {"unix": (1, 1), "inet": (2, 1), "inet6": (10, 2), "netlink": (16, 3),
                    "packet": (17, 3), "bluetooth": (31, 1), "alg": (38, 5), "vsock": (40, 1),
                    "xdp": (44, 3), "ax25": (3, 2)}
        outcome = {name: make(*args) for name, args in families.items()}
        outcome["socketpair_unix"] = syscall(53, 1, 1, 0, pair)
        outcome["socketpair_inet"] = syscall(53, 2, 1, 0, pair)
        outcome["socketpair_vsock"] = syscall(53, 40, 1, 0, pair)
        outcome["kcmp"] = syscall(312, os.getpid(), os.getpid(), 0, 0, 0)
        outcome["pidfd_open"] = syscall(434, os.getpid(), 0)
        outcome["pidfd_getfd"] = syscall(438, 0, 0, 0)
        outcome["process_madvise"] = syscall(440, 0, 0, 0, 0, 0)
        outcome["personality_query"] = syscall(135, 0xFFFFFFFF)
        outcome["personality_linux"] = syscall(135, 0)
        outcome["personality_no_aslr"] = syscall(135, 0x0040000)
        outcome["clone_newns"] = syscall(56, 0x00020000 | 17, 0, 0, 0, 0)
        outcome["clone3"] = syscall(435, 0, 0)
        outcome["unreviewed"] = syscall(470)
        outcome["mount_api"] = syscall(430, 0, 0)  # fsopen
        # what a job does every day still works: fork, threads, a subprocess, AF_UNIX pairs
        pid = os.fork()
        if pid == 0:
            os._exit(7)
        outcome["fork"] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        thread = threading.Thread(target=lambda: None)
        thread.start(); thread.join()
        outcome["subprocess"] = subprocess.run(["/bin/sh", "-c", "exit 3"]).returncode
        a, b = socket.socketpair()
        socket.send_fds(a, [b"x"], [0])
        outcome["fd_passing"] = len(socket.recv_fds(b, 1, 1)[1])
        print(json.dumps(outcome))
    """)
    proc = probe(code, sandbox_settings)
    assert proc.returncode == 0, proc.stderr.decode()
    outcome = json.loads(proc.stdout.decode().strip().splitlines()[-1])
    for family in ("inet", "inet6", "netlink", "packet", "bluetooth", "alg", "vsock", "xdp",
                   "ax25"):
        assert outcome[family] == errno.EACCES, (family, outcome[family])
    assert outcome["unix"] == "allowed" and outcome["socketpair_unix"] == "allowed"
    assert outcome["socketpair_inet"] == outcome["socketpair_vsock"] == errno.EACCES
    for name in ("kcmp", "pidfd_open", "pidfd_getfd", "process_madvise",
                 "personality_no_aslr", "clone_newns", "mount_api"):
        assert outcome[name] == errno.EPERM, (name, outcome[name])
    assert outcome["personality_query"] == outcome["personality_linux"] == "allowed"
    assert outcome["clone3"] == outcome["unreviewed"] == errno.ENOSYS
    assert outcome["fork"] == 7 and outcome["subprocess"] == 3 and outcome["fd_passing"] == 1


def test_office_conversion_works_under_the_filter(sandbox_settings, tmp_path):
    """LibreOffice (threads, fork+exec, AF_UNIX pipes) converts inside the filtered sandbox."""
    import shutil

    if shutil.which("soffice") is None:
        pytest.skip("LibreOffice is not installed")
    from sanitas.sandbox import run_sanitizer
    from tests.engine import corpus_office

    source = tmp_path / "letter.docx"
    source.write_bytes(corpus_office.clean_docx())
    result = run_sanitizer(source, tmp_path / "out", mode="advanced", settings=sandbox_settings,
                           prewarm=False)
    assert result.status == "ok", result.reason
    # advanced mode: LibreOffice renders the document to PDF, which is then rebuilt from pixels
    assert result.output_type == "pdf"
    assert Path(result.output).read_bytes().startswith(b"%PDF-")
