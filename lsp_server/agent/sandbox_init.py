"""The first process of the unshare-based sandbox (run as ``python -I -S sandbox_init.py CONFIG``).

It starts as PID 1 of fresh mount, PID, network, IPC and UTS namespaces (and a user namespace when
codedraft does not run as root). It builds a new root on a tmpfs from the layout in CONFIG (read-only
binds of the system and tools, the writable scratch copy, a private ``/tmp``, ``/proc`` and a few
devices), enters it, gives up every privilege (an unprivileged uid when started as real root, else
an empty capability set; no_new_privs either way), sets the resource limits, runs the check and
exits with its status, which ends every process left in the PID namespace.

Standard library only: it runs before the new root exists, with no site-packages.
"""

from __future__ import annotations

import ctypes
import fcntl
import json
import os
import resource
import socket
import struct
import sys

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 16384, 1 << 18
# statvfs flags share their values with the mount flags; a remount inside a user namespace must keep
# the ones the host locked.
KEPT_FLAGS = MS_NOSUID | MS_NODEV | MS_NOEXEC | 1024 | 2048 | 4096
PR_SET_NO_NEW_PRIVS, PR_CAPBSET_DROP = 38, 24
DEVICES = ("null", "zero", "full", "random", "urandom")

libc = ctypes.CDLL(None, use_errno=True)


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    def encode(text: str | None) -> bytes | None:
        return text.encode() if text is not None else None

    if libc.mount(encode(source), encode(target), encode(fstype), ctypes.c_ulong(flags), encode(data)) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"mount {source} on {target}: {os.strerror(error)}")


def _bind(source: str, target: str, read_only: bool) -> None:
    if os.path.isdir(source):
        os.makedirs(target, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        if not os.path.exists(target):
            open(target, "w").close()
    _mount(source, target, None, MS_BIND | MS_REC)
    if read_only:
        kept = os.statvfs(target).f_flag & KEPT_FLAGS
        _mount(None, target, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | kept)


def build_root(root: str, layout: list[list[str]]) -> None:
    """Mounts the layout's entries under ``root`` in order."""
    _mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing done here reaches the host
    _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=755,size=64m")
    for kind, *rest in layout:
        target = root + rest[-1]
        if kind in ("ro", "rw"):
            _bind(rest[0], target, read_only=kind == "ro")
        elif kind == "symlink":
            os.makedirs(os.path.dirname(target), exist_ok=True)
            os.symlink(rest[0], target)
        elif kind == "tmpfs":
            os.makedirs(target, exist_ok=True)
            _mount("tmpfs", target, "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=512m")
        elif kind == "proc":
            os.makedirs(target, exist_ok=True)
            _mount("proc", target, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
        elif kind == "dev":
            os.makedirs(target, exist_ok=True)
            for device in DEVICES:
                _bind(f"/dev/{device}", f"{target}/{device}", read_only=False)
    _mount(None, root, None, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV)


def loopback_up() -> None:
    """Brings ``lo`` up in the new network namespace, as bubblewrap does (tests often bind it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(sock, 0x8913, request))[1]  # SIOCGIFFLAGS
        fcntl.ioctl(sock, 0x8914, struct.pack("16sH14x", b"lo", flags | 1))  # SIOCSIFFLAGS, IFF_UP


def drop_privileges(uid: int | None) -> None:
    """To ``uid`` (which clears every capability) or, inside a user namespace, to no capabilities."""
    if uid is not None:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    else:
        for cap in range(64):
            libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
        header = (ctypes.c_uint32 * 2)(0x20080522, 0)
        data = (ctypes.c_uint32 * 6)()
        if libc.capset(header, data) != 0:
            raise OSError(ctypes.get_errno(), "capset")
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "no_new_privs")


def main(config: dict) -> int:
    build_root(config["root"], config["layout"])
    loopback_up()
    os.chroot(config["root"])
    os.chdir(config["cwd"])
    drop_privileges(config.get("uid"))
    for name, value in config["rlimits"].items():
        resource.setrlimit(getattr(resource, name), (value, value))
    child = os.fork()
    if child == 0:
        os.execve("/bin/sh", ["sh", "-c", config["command"]], config["env"])
    while True:  # as PID 1, reap everything until the check itself exits
        pid, status = os.wait()
        if pid == child:
            code = os.waitstatus_to_exitcode(status)
            return code if code >= 0 else 128 - code


if __name__ == "__main__":
    try:
        sys.exit(main(json.loads(sys.argv[1])))
    except OSError as error:
        print(f"codedraft sandbox: {error}", file=sys.stderr)
        sys.exit(125)
