"""The seccomp filter (classic BPF, x86-64) handed to bwrap with --seccomp.

Defence in depth on top of the namespaces. What it does, in order:

* another architecture's ABI (i386 `int 0x80`) kills the process; x32 numbers answer ENOSYS;
* syscall numbers above the last one reviewed here (LAST_REVIEWED, Linux 6.18) answer ENOSYS,
  as an older kernel would, so a kernel upgrade never opens an unreviewed interface (libc falls
  back on ENOSYS);
* the kernel interfaces a document converter never needs, and that kernel exploits love
  (DENIED_SYSCALLS), answer EPERM;
* `socket` and `socketpair` are an allowlist: only AF_UNIX (descriptor passing, LibreOffice's
  pipes) may be created; every other family (AF_INET/INET6, AF_NETLINK, AF_PACKET, AF_VSOCK,
  AF_ALG, Bluetooth, XDP, ...) answers EACCES;
* `clone` with a namespace flag answers EPERM, and `clone3` (whose flags live in memory BPF
  cannot read) answers ENOSYS so that glibc falls back to `clone`, where the flags are visible;
* `personality` may only query (0xffffffff) or set PER_LINUX (0): no ADDR_NO_RANDOMIZE,
  READ_IMPLIES_EXEC or MMAP_PAGE_ZERO.

Other architectures get no filter (the namespaces still apply).

Why the rest stays a denylist (measured 2026-11-23 with strace -f over the engine test corpus, 94
sandbox runs: every corpus file in basic and advanced mode, office files through LibreOffice
7.4, OCR through tesseract 5.3; tests/sandbox/syscall_census.py repeats the measurement). The
sandboxed programs made 94 distinct syscalls after the sandbox's execve:

    accept access arch_prctl bind brk chdir chmod chown clock_gettime clock_nanosleep clone
    clone3 close close_range connect dup2 epoll_create1 eventfd2 execve exit exit_group
    faccessat2 fadvise64 fcntl fdatasync fstat fstatfs fsync ftruncate futex getcwd getdents64
    getegid geteuid getgid getpeername getpid getppid getrandom getrusage getsockname
    getsockopt gettid getuid ioctl lgetxattr link listen listxattr lseek madvise mkdir mlock
    mmap mprotect mremap munmap newfstatat openat pipe2 poll prctl pread64 prlimit64 pwrite64
    read readlink recvmsg rename rmdir rseq rt_sigaction rt_sigprocmask rt_sigreturn
    sched_getaffinity sendfile set_robust_list set_tid_address setsid shutdown sigaltstack
    socket socketpair stat statfs statx sysinfo uname unlink unlinkat utimensat vfork wait4
    write

Sockets: only AF_UNIX (socket and socketpair); no `personality` call at all; LibreOffice runs
gpgconf, sh, sed, grep... at start-up. That set is what this corpus exercised, not what the
programs can call: error paths (`kill`, `tgkill` on abort, `nanosleep`, `sched_yield`,
`select`, `epoll_wait`...), other document features (fonts, media, threads) and other versions
of glibc, Python, LibreOffice and tesseract call more, and an allowlist that misses one makes
LibreOffice fail on some document as "damaged" with nothing in the logs. So: the network and
the kernel's attack surface are closed by allowlist (sockets; numbers above LAST_REVIEWED) and
denylist (everything in DENIED_SYSCALLS, none of which the census saw), and the ordinary file,
memory, thread, signal and time calls stay open.
"""

from __future__ import annotations

import errno
import platform
import struct

AUDIT_ARCH_X86_64 = 0xC000003E
X32_SYSCALL_BIT = 0x40000000
# The highest x86-64 syscall number reviewed for this filter (file_setattr, Linux 6.17/6.18).
# Anything above answers ENOSYS until someone reviews it and raises this.
LAST_REVIEWED = 469

SYS_CLONE = 56
SYS_SOCKETPAIR = 53
SYS_SOCKET = 41
SYS_PERSONALITY = 135
SYS_CLONE3 = 435

AF_UNIX = 1
ALLOWED_SOCKET_FAMILIES = (AF_UNIX,)
PER_LINUX = 0
PERSONALITY_QUERY = 0xFFFFFFFF
# CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET (CLONE_NEWTIME is
# 0x80, which clone() reads as the exit signal: it exists only for clone3 and unshare).
CLONE_NAMESPACE_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 \
    | 0x20000000 | 0x40000000

DENIED_SYSCALLS = {
    # debugging and reaching into other processes
    "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "kcmp": 312,
    "pidfd_open": 434, "pidfd_getfd": 438, "pidfd_send_signal": 424, "process_madvise": 440,
    "process_mrelease": 448,
    # kernel keyrings, BPF, perf, userfaultfd, io_uring: favourite exploit primitives
    "keyctl": 250, "add_key": 248, "request_key": 249, "bpf": 321, "perf_event_open": 298,
    "userfaultfd": 323, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    # kernel modules and kexec
    "kexec_load": 246, "kexec_file_load": 320, "init_module": 175, "finit_module": 313,
    "delete_module": 176, "create_module": 174, "get_kernel_syms": 177, "query_module": 178,
    # mounts (old and new API), namespaces, root changes
    "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161, "unshare": 272,
    "setns": 308, "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431,
    "fsmount": 432, "fspick": 433, "mount_setattr": 442, "open_tree_attr": 467,
    "statmount": 457, "listmount": 458,
    # file handles and filesystem-wide notification
    "open_by_handle_at": 304, "name_to_handle_at": 303, "fanotify_init": 300,
    "fanotify_mark": 301,
    # machine administration
    "swapon": 167, "swapoff": 168, "reboot": 169, "acct": 163, "quotactl": 179,
    "quotactl_fd": 443, "syslog": 103, "vhangup": 153, "lookup_dcookie": 212,
    "sethostname": 170, "setdomainname": 171, "settimeofday": 164, "clock_settime": 227,
    "clock_adjtime": 305, "adjtimex": 159, "iopl": 172, "ioperm": 173, "nfsservctl": 180,
    # obsolete or rarely used interfaces with a history of kernel bugs
    "uselib": 134, "ustat": 136, "sysfs": 139,
    "_sysctl": 156, "modify_ldt": 154, "remap_file_pages": 216,
    # NUMA memory placement (nothing here is NUMA-aware; mempolicy bugs were exploitable)
    "mbind": 237, "set_mempolicy": 238, "get_mempolicy": 239, "migrate_pages": 256,
    "move_pages": 279, "set_mempolicy_home_node": 450,
    # secret memory and LSM self-attributes
    "memfd_secret": 447, "lsm_get_self_attr": 459, "lsm_set_self_attr": 460,
    "lsm_list_modules": 461,
}

# seccomp_data: nr (u32, offset 0), arch (u32, 4), instruction_pointer (u64, 8), args[6] (u64,
# 16...). Little-endian, so the low 32 bits of args[0] are at offset 16; socket's family,
# personality's persona and clone's namespace flags all fit in them.
_OFFSET_NR, _OFFSET_ARCH, _OFFSET_ARG0_LOW = 0, 4, 16

_LD_ABS_W = 0x20
_JEQ = 0x15
_JGT = 0x25
_JGE = 0x35
_JSET = 0x45
_RET = 0x06
_ALLOW = 0x7FFF0000
_KILL_PROCESS = 0x80000000
_MAX_JUMP = 255  # conditional jump offsets are one byte


def _errno(code: int) -> int:
    return 0x00050000 | code


class _Assembler:
    """Classic BPF with symbolic jump targets: offsets are computed, never written by hand."""

    def __init__(self) -> None:
        self.code: list[tuple[int, int | str, int | str, int]] = []
        self.labels: dict[str, int] = {}

    def label(self, name: str) -> None:
        assert name not in self.labels, name
        self.labels[name] = len(self.code)

    def load(self, offset: int) -> None:
        self.code.append((_LD_ABS_W, 0, 0, offset))

    def jump(self, op: int, k: int, true: int | str = 0, false: int | str = 0) -> None:
        """Compare the accumulator with k; go to label `true`/`false` (0 = the next
        instruction). Labels must come later: classic BPF jumps only forward."""
        self.code.append((op, true, false, k))

    def ret(self, value: int) -> None:
        self.code.append((_RET, 0, 0, value))

    def assemble(self) -> bytes:
        out = []
        for index, (code, jt, jf, k) in enumerate(self.code):
            offsets = []
            for target in (jt, jf):
                if isinstance(target, str):
                    target = self.labels[target] - index - 1
                if not 0 <= target <= _MAX_JUMP:
                    raise ValueError(f"BPF jump out of range at instruction {index}: {target}")
                offsets.append(target)
            out.append(struct.pack("<HBBI", code, offsets[0], offsets[1], k))
        return b"".join(out)


# What the pre-forked template (template.py) needs on top: a job's namespaces and its tmpfs
# and /proc mounts. Each job's worker stacks the full filter before it sees the file.
TEMPLATE_ALLOWED = ("unshare", "mount")


def filter_program(template: bool = False) -> bytes | None:
    """The BPF program bytes, or None where it does not apply. `template`: the filter of the
    pre-forked template, which may also unshare and mount."""
    if platform.machine() not in ("x86_64", "AMD64"):
        return None
    asm = _Assembler()
    asm.load(_OFFSET_ARCH)
    asm.jump(_JEQ, AUDIT_ARCH_X86_64, false="kill")
    asm.load(_OFFSET_NR)
    asm.jump(_JGE, X32_SYSCALL_BIT, true="enosys")
    asm.jump(_JGT, LAST_REVIEWED, true="enosys")
    denied = {number for name, number in DENIED_SYSCALLS.items()
              if not (template and name in TEMPLATE_ALLOWED)}
    for number in sorted(denied):
        asm.jump(_JEQ, number, true="eperm")
    asm.jump(_JEQ, SYS_SOCKET, true="socket_family")
    asm.jump(_JEQ, SYS_SOCKETPAIR, true="socket_family")
    asm.jump(_JEQ, SYS_CLONE, true="clone_flags")
    asm.jump(_JEQ, SYS_CLONE3, true="enosys")
    asm.jump(_JEQ, SYS_PERSONALITY, true="personality")
    asm.ret(_ALLOW)

    asm.label("socket_family")
    asm.load(_OFFSET_ARG0_LOW)
    for family in ALLOWED_SOCKET_FAMILIES:
        asm.jump(_JEQ, family, true="allow")
    asm.ret(_errno(errno.EACCES))

    asm.label("clone_flags")
    asm.load(_OFFSET_ARG0_LOW)
    asm.jump(_JSET, CLONE_NAMESPACE_FLAGS, true="eperm", false="allow")

    asm.label("personality")
    asm.load(_OFFSET_ARG0_LOW)
    asm.jump(_JEQ, PERSONALITY_QUERY, true="allow")
    asm.jump(_JEQ, PER_LINUX, true="allow")

    asm.label("eperm")
    asm.ret(_errno(errno.EPERM))
    asm.label("enosys")
    asm.ret(_errno(errno.ENOSYS))
    asm.label("kill")
    asm.ret(_KILL_PROCESS)
    asm.label("allow")  # last: BPF jumps only forward
    asm.ret(_ALLOW)
    return asm.assemble()
