"""Landlock confinement for the dream agent, and the tiny launcher that applies it.

The dream process never confines itself. It starts this file as a separate
program (`python -I -S sandbox.py --write DIR … -- /bin/sh -c CMD`); the launcher
restricts its own filesystem writes with Landlock, proves the restriction holds
with a probe write that must fail with EACCES, and only then execs the agent.
Landlock survives exec and is inherited by every child, so the agent and all it
starts write only beneath the granted paths, and, with `--confine-read`, read only
beneath the `--read` folders and `--read-file` files (dream/readable.py builds that
allow-list); the probe proves it too: reading `--read-probe` (a file of the memory's
git dir) and listing its folder must fail with EACCES.

Why a launcher and not `preexec_fn`: the restriction must be set up in a
single-threaded process right before exec (Landlock applies to the calling
thread), and `preexec_fn` is unsafe in a threaded parent.

This file is stdlib-only and runs as a plain script, so the launcher starts in a
few milliseconds and imports nothing from the package. The dream code imports it
as `gitmemfs.dream.sandbox` for `probe_abi()` and `launcher_argv()`.

Landlock does not mediate changing a file's mode, owner, extended attributes
(ACLs) or inode flags, so an agent could still `chmod 000` (or `chmod 644` a private
key) any file it can reach by path. With
`--deny-chmod` the launcher also installs a seccomp filter, on x86-64 and arm64,
that fails chmod, chown, setxattr/removexattr (every variant), the chattr ioctls
with EPERM and io_uring_setup with ENOSYS (io_uring can set xattrs without a
syscall the filter sees); a process of any other architecture is killed. The
probe proves it too: changing the probe's mode must fail with EPERM.

The network (Landlock ABI 4, Linux 6.7): with `--allow-port N` (repeatable) the
agent may open TCP connections only to those ports (443 by default: a model's API),
on any host; loopback services on other ports (`git memory mcp --http`, a database, a
debugger) refuse it with EACCES. The probe proves it: a connection to a port the
launcher itself listens on must fail. UDP and other protocols are not mediated. From
ABI 6, abstract unix sockets outside the sandbox are out of reach too
(LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET).

Unix sockets with a path: Landlock does not mediate connect(2) to them, so with
`--hide-sockets` (given only inside the fresh mount namespace of dream/pidns.py) the
launcher first covers every listening one (from /proc/net/unix: the person's
ssh-agent and gpg-agent, the session bus, …) with a bind mount of /dev/null, then
drops the capabilities the namespace gave it. Connecting to any of them then fails;
the host's mounts are untouched. A socket created after the agent started is not
covered.

Protocol with the parent: `--status-fd N` names a pipe; the launcher writes
`ok` just before exec (the fd is close-on-exec, so the parent then sees EOF) or
`error: <why>` and exits 125 without running the agent.
"""
from __future__ import annotations

import ctypes
import errno
import os
import platform
import socket
import stat
import sys
from typing import Sequence

# Syscall numbers from the unified table (x86-64, arm64, riscv, …).
_SYS = {"create_ruleset": 444, "add_rule": 445, "restrict_self": 446}
_CREATE_RULESET_VERSION = 1 << 0
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

# LANDLOCK_ACCESS_FS_*
EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13        # ABI 2: rename/link across directories
TRUNCATE = 1 << 14     # ABI 3
SCOPE_ABSTRACT_UNIX = 1 << 0  # ABI 6: no abstract unix sockets outside the domain
SCOPE_SIGNAL = 1 << 1  # ABI 6: no signals to processes outside the domain
CONNECT_TCP = 1 << 1   # LANDLOCK_ACCESS_NET_CONNECT_TCP, ABI 4
_RULE_NET_PORT = 2
NET_ABI = 4
_MS_BIND = 4096
_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL = 47, 4

MIN_ABI = 2  # without REFER every cross-directory rename fails (git writes objects that way)

# Device files a confined program may still write: shells redirect to /dev/null,
# terminals and ptys for agent CLIs that want one.
DEVICE_FILES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/random", "/dev/urandom",
                "/dev/ptmx")
DEVICE_DIRS = ("/dev/pts",)


class SandboxError(Exception):
    """Landlock is missing, too old, or did not confine the probe."""


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    libc.prctl.restype = ctypes.c_int
    return libc


def _syscall_numbers() -> dict[str, int]:
    # Every Linux architecture that got Landlock after the table unification uses
    # 444-446; alpha and ia64 (which differ) do not run this tool.
    return _SYS


def probe_abi() -> tuple[int, str]:
    """(ABI version, reason). ABI 0 means unavailable and `reason` says why."""
    if not sys.platform.startswith("linux"):
        return 0, f"Landlock needs Linux (this is {platform.system() or sys.platform})"
    try:
        libc = _libc()
    except OSError as exc:
        return 0, f"cannot load libc: {exc}"
    nr = _syscall_numbers()["create_ruleset"]
    abi = libc.syscall(ctypes.c_long(nr), None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    if abi < 0:
        err = ctypes.get_errno()
        why = {errno.ENOSYS: "the kernel has no Landlock support (ENOSYS; kernel too old, or a sandbox "
                             "such as gVisor or a seccomp filter blocks it)",
               errno.EOPNOTSUPP: "Landlock is built in but disabled at boot (EOPNOTSUPP; add landlock to "
                                 "the lsm= kernel parameter)",
               errno.EPERM: "a seccomp filter forbids Landlock (EPERM)"}.get(err, f"errno {err}")
        return 0, f"Landlock unavailable on kernel {platform.release()}: {why}"
    # Tests (and cautious users) can pretend the kernel is older; never newer.
    cap = os.environ.get("GIT_DREAM_LANDLOCK_ABI", "").strip()
    if cap.isdigit() and int(cap) < abi:
        if int(cap) == 0:
            return 0, "Landlock is switched off by GIT_DREAM_LANDLOCK_ABI=0"
        return int(cap), ""
    return int(abi), ""


READS = READ_FILE | READ_DIR  # ABI 1


def handled_rights(abi: int, reads: bool = False) -> int:
    """Every write-like right this ABI knows, and with `reads` reading files and
    listing folders; execute stays unrestricted (running a file needs READ_FILE)."""
    rights = (WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_CHAR | MAKE_DIR | MAKE_REG | MAKE_SOCK
              | MAKE_FIFO | MAKE_BLOCK | MAKE_SYM | (READS if reads else 0))
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    return rights


def file_rights(abi: int, reads: bool = False) -> int:
    """The subset that may be granted on a single file (the rest need a directory)."""
    return WRITE_FILE | (TRUNCATE if abi >= 3 else 0) | (READ_FILE if reads else 0)


def confine(write_dirs: Sequence[str], write_files: Sequence[str] = (), *, scope_signals: bool = True,
            allow_ports: Sequence[int] | None = None, read_dirs: Sequence[str] | None = None,
            read_files: Sequence[str] = ()) -> int:
    """Restrict this thread (and everything it execs) to writing beneath `write_dirs`
    and to the existing files `write_files`, with `read_dirs` (None: reads are not
    confined) to reading beneath them, `read_files` and what it may write, and, with
    `allow_ports` on ABI 4 or later, to TCP connections to those ports. Returns the ABI
    used. Raises SandboxError."""
    abi, reason = probe_abi()
    if abi < MIN_ABI:
        raise SandboxError(reason or f"Landlock ABI {abi} is too old; ABI {MIN_ABI} (Linux 5.19) or newer "
                                     "is needed for git to write objects")
    libc = _libc()
    nr = _syscall_numbers()
    reads = read_dirs is not None
    handled = handled_rights(abi, reads)

    class RulesetAttr(ctypes.Structure):
        _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                    ("scoped", ctypes.c_uint64)]

    class PathBeneath(ctypes.Structure):
        _pack_ = 1
        _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]

    class NetPort(ctypes.Structure):
        _fields_ = [("allowed_access", ctypes.c_uint64), ("port", ctypes.c_uint64)]

    net = CONNECT_TCP if (allow_ports is not None and abi >= NET_ABI) else 0
    scoped = (SCOPE_SIGNAL | SCOPE_ABSTRACT_UNIX) if (scope_signals and abi >= 6) else 0
    attr = RulesetAttr(handled, net, scoped)
    # The kernel accepts a prefix of the struct: 8 bytes before ABI 4, 24 from ABI 6.
    size = 24 if abi >= 6 else (16 if abi >= 4 else 8)
    ruleset = libc.syscall(ctypes.c_long(nr["create_ruleset"]), ctypes.byref(attr), ctypes.c_size_t(size),
                           ctypes.c_uint32(0))
    if ruleset < 0:
        raise SandboxError(f"landlock_create_ruleset failed: {os.strerror(ctypes.get_errno())}")
    try:
        rules = [(path, handled, "write") for path in write_dirs]
        rules += [(path, file_rights(abi, reads), "write") for path in write_files]
        rules += [(path, READS, "read") for path in read_dirs or ()]
        rules += [(path, READ_FILE, "read") for path in read_files]
        for path, rights, what in rules:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except FileNotFoundError:
                if what == "read":
                    continue  # gone since the plan: one grant fewer
                raise SandboxError(f"cannot grant write access to {path}: it does not exist") from None
            except OSError as exc:
                raise SandboxError(f"cannot grant {what} access to {path}: {exc.strerror}") from None
            if what == "read" and not stat.S_ISDIR(os.fstat(fd).st_mode):
                rights = READ_FILE  # a folder's rights on a file are refused (EINVAL)
            try:
                rule = PathBeneath(rights, fd)
                if libc.syscall(ctypes.c_long(nr["add_rule"]), ctypes.c_int(ruleset),
                                ctypes.c_int(_RULE_PATH_BENEATH), ctypes.byref(rule), ctypes.c_uint32(0)) < 0:
                    raise SandboxError(f"landlock_add_rule({path}) failed: {os.strerror(ctypes.get_errno())}")
            finally:
                os.close(fd)
        for port in (allow_ports or ()) if net else ():
            port_rule = NetPort(CONNECT_TCP, port)
            if libc.syscall(ctypes.c_long(nr["add_rule"]), ctypes.c_int(ruleset), ctypes.c_int(_RULE_NET_PORT),
                            ctypes.byref(port_rule), ctypes.c_uint32(0)) < 0:
                raise SandboxError(f"landlock_add_rule(port {port}) failed: {os.strerror(ctypes.get_errno())}")
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise SandboxError(f"prctl(PR_SET_NO_NEW_PRIVS) failed: {os.strerror(ctypes.get_errno())}")
        if libc.syscall(ctypes.c_long(nr["restrict_self"]), ctypes.c_int(ruleset), ctypes.c_uint32(0)) < 0:
            raise SandboxError(f"landlock_restrict_self failed: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(ruleset)
    return abi


# -- seccomp: what Landlock does not cover ------------------------------------------------

_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2
_RET_KILL_PROCESS = 0x80000000
_RET_ERRNO = 0x00050000
_RET_ALLOW = 0x7FFF0000
_LD_W_ABS, _JEQ_K, _JGE_K, _RET_K = 0x20, 0x15, 0x35, 0x06
_X32_BIT = 0x40000000
# (audit arch, syscalls that change modes, owners, xattrs) from the kernel's tables;
# fchmodat2 (452), setxattrat (463) and removexattrat (466) are shared by both.
_ARCHES = {
    "x86_64": (0xC000003E, {"chmod": 90, "fchmod": 91, "chown": 92, "fchown": 93, "lchown": 94,
                            "setxattr": 188, "lsetxattr": 189, "fsetxattr": 190, "removexattr": 197,
                            "lremovexattr": 198, "fremovexattr": 199, "fchownat": 260, "fchmodat": 268,
                            "fchmodat2": 452, "setxattrat": 463, "removexattrat": 466},
               {"ioctl": 16, "io_uring_setup": 425}),
    "aarch64": (0xC00000B7, {"setxattr": 5, "lsetxattr": 6, "fsetxattr": 7, "removexattr": 14,
                             "lremovexattr": 15, "fremovexattr": 16, "fchmod": 52, "fchmodat": 53,
                             "fchownat": 54, "fchown": 55, "fchmodat2": 452, "setxattrat": 463,
                             "removexattrat": 466},
                {"ioctl": 29, "io_uring_setup": 425}),
}
# Setting explicit timestamps (touch -d, os.utime with times): (syscall, index of the
# times argument). Landlock has no right for it. A NULL times argument ("now", what a
# plain `touch` and every write do) stays allowed, so agents can still touch files.
_UTIME = {"x86_64": ((132, 1), (235, 1), (261, 2), (280, 2)),   # utime utimes futimesat utimensat
          "aarch64": ((88, 2),)}                                 # utimensat
_UTIME["arm64"] = _UTIME["aarch64"]
_UTIME["amd64"] = _UTIME["x86_64"]
_ARCHES["arm64"] = _ARCHES["aarch64"]
_ARCHES["amd64"] = _ARCHES["x86_64"]
# FS_IOC_SETFLAGS (long and int argument) and FS_IOC_FSSETXATTR: chattr +i and friends.
_FLAG_IOCTLS = (0x40086602, 0x40046602, 0x401C5820)


def chmod_filter_supported(machine: str | None = None) -> bool:
    return (machine or platform.machine()).lower() in _ARCHES


def chmod_filter(machine: str | None = None) -> list[tuple[int, int, int, int]]:
    """The classic-BPF program as (code, jt, jf, k) instructions."""
    arch, denied, special = _ARCHES[(machine or platform.machine()).lower()]
    code: list[tuple[int, str | int, str | int, int]] = [
        (_LD_W_ABS, 0, 0, 4),                       # seccomp_data.arch
        (_JEQ_K, 0, "kill", arch),
        (_LD_W_ABS, 0, 0, 0),                       # seccomp_data.nr
    ]
    if arch == _ARCHES["x86_64"][0]:
        code.append((_JGE_K, "enosys", 0, _X32_BIT))  # x32 system calls
    for nr, arg in _UTIME.get((machine or platform.machine()).lower(), ()):
        code += [(_JEQ_K, 0, 4, nr),                # not this call: skip its four checks
                 (_LD_W_ABS, 0, 0, 16 + 8 * arg),   # times pointer, low half
                 (_JEQ_K, 0, "eperm", 0),
                 (_LD_W_ABS, 0, 0, 20 + 8 * arg),   # high half
                 (_JEQ_K, "allow", "eperm", 0)]     # NULL ("now") is allowed
    code += [(_JEQ_K, "eperm", 0, nr) for nr in sorted(denied.values())]
    code += [(_JEQ_K, "enosys", 0, special["io_uring_setup"]),
             (_JEQ_K, 0, "allow", special["ioctl"]),
             (_LD_W_ABS, 0, 0, 24)]                 # low 32 bits of args[1]: the request
    code += [(_JEQ_K, "eperm", 0, request) for request in _FLAG_IOCTLS]
    labels = {"allow": len(code), "eperm": len(code) + 1, "enosys": len(code) + 2, "kill": len(code) + 3}
    code += [(_RET_K, 0, 0, _RET_ALLOW), (_RET_K, 0, 0, _RET_ERRNO | errno.EPERM),
             (_RET_K, 0, 0, _RET_ERRNO | errno.ENOSYS), (_RET_K, 0, 0, _RET_KILL_PROCESS)]

    def offset(at: int, target: str | int) -> int:
        return target if isinstance(target, int) else labels[target] - at - 1

    return [(c, offset(i, jt), offset(i, jf), k) for i, (c, jt, jf, k) in enumerate(code)]


def deny_chmod() -> None:
    """Install the filter on this thread (inherited across exec and by every child).
    Needs no_new_privs, which `confine` has set. Raises SandboxError."""
    if not chmod_filter_supported():
        raise SandboxError(f"no chmod filter for {platform.machine()}")
    program = chmod_filter()

    class SockFilter(ctypes.Structure):
        _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8),
                    ("k", ctypes.c_uint32)]

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(SockFilter))]

    filters = (SockFilter * len(program))(*[SockFilter(*insn) for insn in program])
    prog = SockFprog(len(program), filters)
    libc = _libc()
    if libc.prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        raise SandboxError(f"cannot install the seccomp filter against chmod: {os.strerror(ctypes.get_errno())}")


def self_test_chmod(probe: str) -> None:
    """Setting `probe`'s mode to what it already is must fail with EPERM."""
    mode = os.stat(probe).st_mode & 0o7777
    try:
        os.chmod(probe, mode)
    except PermissionError:
        return
    except OSError as exc:
        raise SandboxError(f"sandbox self-test: chmod {probe} failed with "
                           f"{errno.errorcode.get(exc.errno or 0, exc.errno)} instead of EPERM") from None
    raise SandboxError("sandbox self-test failed: chmod still works after the seccomp filter was installed")


def self_test_utime(probe: str) -> None:
    """Setting `probe`'s timestamps to what they already are must fail with EPERM."""
    st = os.stat(probe)
    try:
        os.utime(probe, ns=(st.st_atime_ns, st.st_mtime_ns))
    except PermissionError:
        return
    except OSError as exc:
        raise SandboxError(f"sandbox self-test: utime {probe} failed with "
                           f"{errno.errorcode.get(exc.errno or 0, exc.errno)} instead of EPERM") from None
    raise SandboxError("sandbox self-test failed: setting timestamps still works after the seccomp filter "
                       "was installed")


def _must_be_denied(target: str, flags: int, what: str, still: str, setting: str) -> None:
    """Opening `target` with `flags` must fail with EACCES (nothing is read or written
    even if it opens)."""
    try:
        fd = os.open(target, flags | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno == errno.EACCES:
            return
        raise SandboxError(f"sandbox self-test: opening {target} for {what} failed with "
                           f"{errno.errorcode.get(exc.errno or 0, exc.errno)} instead of EACCES") from None
    os.close(fd)
    raise SandboxError(f"sandbox self-test failed: {target} is still {still} after "
                       f"confinement (is it under a {setting} path?)")


def self_test(probe: str) -> None:
    """Opening `probe` (an existing file outside the granted set) for writing must
    fail with EACCES."""
    _must_be_denied(probe, os.O_WRONLY | os.O_APPEND, "writing", "writable", "dream.sandbox.allowWrite")


def self_test_read(probe: str) -> None:
    """Reading `probe` (an existing file outside the readable set) and listing its
    folder must both fail with EACCES."""
    for target, flags in ((probe, os.O_RDONLY), (os.path.dirname(probe), os.O_RDONLY | os.O_DIRECTORY)):
        _must_be_denied(target, flags, "reading", "readable", "dream.sandbox.allowRead")


def _beneath(path: str, folders: Sequence[str]) -> bool:
    return any(path == f or path.startswith(f.rstrip("/") + "/") for f in folders)


def hide_sockets(keep: Sequence[str]) -> list[str]:
    """Cover every listening unix socket with a path (but those beneath `keep`, the
    agent's own folders) with /dev/null, then drop the namespace's capabilities.
    Only in a private mount namespace. Returns the paths covered. Raises SandboxError."""
    try:
        with open("/proc/net/unix", encoding="utf-8", errors="surrogateescape") as fh:
            lines = fh.read().splitlines()[1:]
    except OSError as exc:
        raise SandboxError(f"cannot list unix sockets (/proc/net/unix): {exc.strerror}") from None
    libc = _libc()
    covered: list[str] = []
    for line in lines:
        fields = line.split(None, 7)
        if len(fields) < 8 or not fields[7].startswith("/") or fields[7] in covered:
            continue
        path = fields[7]
        if _beneath(path, keep):
            continue
        try:
            if not stat.S_ISSOCK(os.lstat(path).st_mode):
                continue
        except OSError:
            continue  # gone, another namespace's, or in a folder we cannot enter (nor can the agent)
        if libc.mount(b"/dev/null", os.fsencode(path), None, ctypes.c_ulong(_MS_BIND), None) != 0:
            raise SandboxError(f"cannot hide the unix socket {path}: {os.strerror(ctypes.get_errno())}")
        covered.append(path)
    libc.prctl(_PR_CAP_AMBIENT, _PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)  # the agent gets none of them
    return covered


def net_probe(allow_ports: Sequence[int]) -> socket.socket:
    """A listening TCP socket on loopback, on a port not allowed (made before confining)."""
    for _ in range(20):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        if sock.getsockname()[1] not in allow_ports:
            sock.listen(1)
            return sock
        sock.close()
    raise SandboxError("no free loopback port for the network self-test")


def self_test_net(listener: socket.socket) -> None:
    """Connecting to the probe's port must fail with EACCES once confined."""
    port = listener.getsockname()[1]
    client = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        client.connect(("127.0.0.1", port))
    except PermissionError:
        return
    except OSError as exc:
        raise SandboxError(f"sandbox self-test: connecting to 127.0.0.1:{port} failed with "
                           f"{errno.errorcode.get(exc.errno or 0, exc.errno)} instead of EACCES") from None
    finally:
        client.close()
        listener.close()
    raise SandboxError(f"sandbox self-test failed: 127.0.0.1:{port} is still reachable after confinement")


def launcher_argv(python: str, write_dirs: Sequence[str], *, probe: str, status_fd: int,
                  command: Sequence[str], write_files: Sequence[str] = (), deny_chmod: bool = False,
                  allow_ports: Sequence[int] | None = None, hide_sockets: bool = False,
                  read_dirs: Sequence[str] | None = None, read_files: Sequence[str] = (),
                  read_probe: str = "") -> list[str]:
    """The command line that runs `command` confined (see the module docstring).
    `allow_ports` None: the network is not confined; `read_dirs` None: reads are not."""
    # -I -S: no environment, user site or site-packages; the launcher needs only the stdlib.
    argv = [python, "-I", "-S", os.path.abspath(__file__), "--status-fd", str(status_fd), "--probe", probe]
    if deny_chmod:
        argv.append("--deny-chmod")
    if hide_sockets:
        argv.append("--hide-sockets")
    if allow_ports is not None:
        argv.append("--confine-net")
        for port in allow_ports:
            argv += ["--allow-port", str(port)]
    if read_dirs is not None:
        argv += ["--confine-read", "--read-probe", read_probe]
        for path in read_dirs:
            argv += ["--read", path]
        for path in read_files:
            argv += ["--read-file", path]
    for path in write_dirs:
        argv += ["--write", path]
    for path in write_files:
        argv += ["--write-file", path]
    return argv + ["--", *command]


class _Args:
    def __init__(self) -> None:
        self.status_fd, self.probe, self.read_probe = -1, "", ""
        self.dirs: list[str] = []
        self.files: list[str] = []
        self.read_dirs: list[str] = []
        self.read_files: list[str] = []
        self.no_chmod = self.hide_sockets = self.confine_net = self.confine_read = False
        self.ports: list[int] = []
        self.command: list[str] = []


def _parse(argv: list[str]) -> _Args:
    args = _Args()
    switches = {"--deny-chmod": "no_chmod", "--hide-sockets": "hide_sockets", "--confine-net": "confine_net",
                "--confine-read": "confine_read"}
    lists = {"--write": "dirs", "--write-file": "files", "--read": "read_dirs", "--read-file": "read_files"}
    i = 0
    while i < len(argv) and argv[i] != "--":
        flag, value = argv[i], argv[i + 1] if i + 1 < len(argv) else ""
        if flag in switches:
            setattr(args, switches[flag], True)
            i += 1
            continue
        if flag == "--allow-port":
            args.ports.append(int(value))
        elif flag == "--status-fd":
            args.status_fd = int(value)
        elif flag == "--probe":
            args.probe = value
        elif flag == "--read-probe":
            args.read_probe = value
        elif flag in lists:
            getattr(args, lists[flag]).append(value)
        else:
            raise SystemExit(f"sandbox launcher: unknown option {flag}")
        i += 2
    args.command = argv[i + 1:]
    return args


def main(argv: list[str]) -> int:
    args = _parse(argv)
    status_fd, probe, dirs, files, no_chmod, command = (args.status_fd, args.probe, args.dirs, args.files,
                                                       args.no_chmod, args.command)

    def report(text: str) -> None:
        if status_fd >= 0:
            try:
                os.write(status_fd, text.encode("utf-8", "replace") + b"\n")
            except OSError:
                pass

    if not command:
        report("error: no command to run")
        return 125
    try:
        if args.hide_sockets:
            hide_sockets(dirs)
        ports = args.ports if args.confine_net else None
        listener = net_probe(args.ports) if ports is not None and probe_abi()[0] >= NET_ABI else None
        devices = [p for p in DEVICE_FILES if os.path.exists(p)]
        confine(dirs + [d for d in DEVICE_DIRS if os.path.isdir(d)], files + devices, allow_ports=ports,
                read_dirs=args.read_dirs if args.confine_read else None, read_files=args.read_files)
        if listener is not None:
            self_test_net(listener)
        if no_chmod:
            deny_chmod()
        if probe:
            self_test(probe)
            if no_chmod:
                self_test_chmod(probe)
                if platform.machine().lower() in _UTIME:
                    self_test_utime(probe)
        if args.confine_read:
            if not args.read_probe:
                raise SandboxError("reads are confined but no --read-probe was given")
            self_test_read(args.read_probe)
    except SandboxError as exc:
        report(f"error: {exc}")
        return 125
    if status_fd >= 0:
        os.set_inheritable(status_fd, False)
    report("ok")
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        sys.stderr.write(f"git dream: cannot run {command[0]}: {exc.strerror}\n")
        return 127
    return 127  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
