"""A small seccomp filter (classic BPF, x86-64) handed to bwrap with --seccomp.

Defence in depth on top of the namespaces: the kernel interfaces a document converter never
needs, and that kernel exploits love, answer EPERM; Internet and raw sockets cannot even be
created (EACCES). Other architectures get no filter (the namespaces still apply).
"""

from __future__ import annotations

import errno
import platform
import struct

AUDIT_ARCH_X86_64 = 0xC000003E
X32_SYSCALL_BIT = 0x40000000
SYS_SOCKET = 41
DENIED_SOCKET_FAMILIES = (2, 10, 17)  # AF_INET, AF_INET6, AF_PACKET
DENIED_SYSCALLS = {
    "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "keyctl": 250,
    "add_key": 248, "request_key": 249, "bpf": 321, "perf_event_open": 298,
    "userfaultfd": 323, "kexec_load": 246, "kexec_file_load": 320, "init_module": 175,
    "finit_module": 313, "delete_module": 176, "mount": 165, "umount2": 166, "pivot_root": 155,
    "swapon": 167, "swapoff": 168, "reboot": 169, "acct": 163, "unshare": 272, "setns": 308,
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "open_by_handle_at": 304, "name_to_handle_at": 303, "fanotify_init": 300,
    "quotactl": 179, "syslog": 103, "vhangup": 153, "lookup_dcookie": 212,
}

_LD_ABS_W = 0x20
_JEQ = 0x15
_JGE = 0x35
_RET = 0x06
_ALLOW = 0x7FFF0000
_KILL_PROCESS = 0x80000000


def _errno(code: int) -> int:
    return 0x00050000 | code


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("<HBBI", code, jt, jf, k)


def filter_program() -> bytes | None:
    """The BPF program bytes, or None where it does not apply."""
    if platform.machine() not in ("x86_64", "AMD64"):
        return None
    prog = [
        _insn(_LD_ABS_W, 0, 0, 4),  # seccomp_data.arch
        _insn(_JEQ, 1, 0, AUDIT_ARCH_X86_64),
        _insn(_RET, 0, 0, _KILL_PROCESS),
        _insn(_LD_ABS_W, 0, 0, 0),  # seccomp_data.nr
        _insn(_JGE, 0, 1, X32_SYSCALL_BIT),
        _insn(_RET, 0, 0, _errno(errno.ENOSYS)),
    ]
    for number in sorted(DENIED_SYSCALLS.values()):
        prog += [_insn(_JEQ, 0, 1, number), _insn(_RET, 0, 0, _errno(errno.EPERM))]
    families = DENIED_SOCKET_FAMILIES
    prog.append(_insn(_JEQ, 0, len(families) + 2, SYS_SOCKET))
    prog.append(_insn(_LD_ABS_W, 0, 0, 16))  # seccomp_data.args[0], low 32 bits
    for index, family in enumerate(families):
        remaining = len(families) - index - 1
        prog.append(_insn(_JEQ, remaining, 1 if remaining == 0 else 0, family))
    prog.append(_insn(_RET, 0, 0, _errno(errno.EACCES)))
    prog.append(_insn(_RET, 0, 0, _ALLOW))
    return b"".join(prog)
