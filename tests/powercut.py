"""A filesystem that keeps only what was synced, for cutting the power (LazyFS-like).

    python tests/powercut.py BACKING MOUNTPOINT CONTROL [--cut-at N]

A FUSE passthrough to BACKING (through mfusepy, over libfuse). Every change reaches
BACKING at once, as it would reach the page cache; beside it the filesystem keeps what
a disk would still hold after losing power, as strictly as POSIX allows:

- a file's bytes (and size) are kept as of its last fsync; a file never fsynced is empty;
- a folder's names (create, rename, unlink, mkdir, rmdir, link, symlink) are kept as of
  its last fsync; a name never made durable that way is gone, and so is everything below it.

The N-th change (write, truncate, create, mkdir, unlink, rmdir, rename, link, symlink,
chmod, fsync or fsyncdir, counted from the mount; one thread, so the count is the same
on every run) is the power cut: what the disk holds is written to CONTROL/image,
CONTROL/cut says so, and that request and every later one wait until CONTROL/release
appears (the test kills the writer first, as the cut would have), then fail with EIO.
Without a cut, CONTROL/image is written at unmount: the power cut right after
everything ran. CONTROL/count gets the number of changes seen, at unmount.
"""
from __future__ import annotations

import errno
import os
import shutil
import stat
import sys
import time

import mfusepy as fuse

Model = dict


class PowerCut(fuse.Operations):  # type: ignore[misc]
    use_ns = True

    def __init__(self, backing: str, control: str, cut_at: int | None):
        self.backing = os.path.realpath(backing)
        self.control = control
        self.cut_at = cut_at
        self.count = 0
        self.cut = False
        self.next_id = 0
        self.ids: dict[int, int] = {}         # backing inode -> identity (a new file gets a new one)
        self.kind: dict[int, str] = {}        # identity -> "d", "f" or "l"
        self.mode: dict[int, int] = {}
        self.data: dict[int, bytes] = {}      # identity -> a file's bytes as last fsynced
        self.target_of: dict[int, str] = {}        # identity -> a symlink's target
        self.names: dict[int, dict[str, int]] = {}  # identity -> a folder's names as last fsynced
        self.root = self._load(self.backing)

    # -- the durable model -------------------------------------------------------------

    def _new(self, path: str) -> int:
        st = os.lstat(path)
        self.next_id += 1
        ident = self.next_id
        self.ids[st.st_ino] = ident
        self.mode[ident] = stat.S_IMODE(st.st_mode)
        if stat.S_ISDIR(st.st_mode):
            self.kind[ident] = "d"
        elif stat.S_ISLNK(st.st_mode):
            self.kind[ident] = "l"
            self.target_of[ident] = os.readlink(path)
        else:
            self.kind[ident] = "f"
        return ident

    def _id(self, path: str) -> int:
        st = os.lstat(path)
        return self.ids.get(st.st_ino) or self._new(path)

    def _load(self, path: str) -> int:
        """Everything on the disk at mount time is durable."""
        ident = self._new(path)
        if self.kind[ident] == "d":
            self.names[ident] = {name: self._load(os.path.join(path, name)) for name in sorted(os.listdir(path))}
        elif self.kind[ident] == "f":
            with open(path, "rb") as fh:
                self.data[ident] = fh.read()
        return ident

    def write_image(self) -> None:
        image = os.path.join(self.control, "image")
        tmp = image + ".tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        os.mkdir(tmp)
        self._render(self.root, tmp, set())
        os.rename(tmp, image)

    def _render(self, ident: int, path: str, seen: set[int]) -> None:
        if ident in seen:  # a folder durable under two names: once is enough
            return
        seen = seen | {ident}
        for name, child in self.names.get(ident, {}).items():
            target = os.path.join(path, name)
            kind = self.kind[child]
            if kind == "d":
                os.mkdir(target)
                self._render(child, target, seen)
                os.chmod(target, self.mode[child])
            elif kind == "l":
                os.symlink(self.target_of[child], target)
            else:
                with open(target, "wb") as fh:
                    fh.write(self.data.get(child, b""))
                os.chmod(target, self.mode[child])

    # -- counting, and the cut -------------------------------------------------------

    def _change(self) -> None:
        if self.cut:
            self._wait()
        self.count += 1
        if self.cut_at is not None and self.count >= self.cut_at:
            self.cut = True
            self.write_image()
            with open(os.path.join(self.control, "cut"), "w") as fh:
                fh.write(str(self.count))
            self._wait()

    def _wait(self) -> None:
        while not os.path.exists(os.path.join(self.control, "release")):
            time.sleep(0.02)
        raise fuse.FuseOSError(errno.EIO)

    def destroy(self, path: str) -> None:
        if not self.cut:
            self.write_image()
        with open(os.path.join(self.control, "count"), "w") as fh:
            fh.write(str(self.count))

    # -- passthrough -------------------------------------------------------------------

    def _full(self, path: str) -> str:
        return os.path.join(self.backing, path.lstrip("/"))

    def getattr(self, path: str, fh: int | None = None) -> dict[str, int]:
        st = os.fstat(fh) if fh is not None else os.lstat(self._full(path))
        out = {key: getattr(st, key) for key in ("st_mode", "st_nlink", "st_size", "st_uid", "st_gid")}
        for key in ("st_atime", "st_mtime", "st_ctime"):
            out[key] = getattr(st, key + "_ns")
        return out

    def readdir(self, path: str, fh: int) -> list[str]:
        return [".", "..", *os.listdir(self._full(path))]

    def readlink(self, path: str) -> str:
        return os.readlink(self._full(path))

    def statfs(self, path: str) -> dict[str, int]:
        st = os.statvfs(self._full(path))
        return {key: getattr(st, key) for key in ("f_bavail", "f_bfree", "f_blocks", "f_bsize", "f_favail",
                                                   "f_ffree", "f_files", "f_flag", "f_frsize", "f_namemax")}

    def access(self, path: str, amode: int) -> int:
        if not os.access(self._full(path), amode):
            raise fuse.FuseOSError(errno.EACCES)
        return 0

    def open(self, path: str, flags: int) -> int:
        if flags & (os.O_WRONLY | os.O_RDWR) and flags & os.O_TRUNC:
            self._change()
        return os.open(self._full(path), flags)

    def create(self, path: str, mode: int, fi: object = None) -> int:
        self._change()
        full = self._full(path)
        fd = os.open(full, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        self._new(full)
        return fd

    def read(self, path: str, size: int, offset: int, fh: int) -> bytes:
        return os.pread(fh, size, offset)

    def write(self, path: str, data: bytes, offset: int, fh: int) -> int:
        self._change()
        return os.pwrite(fh, data, offset)

    def truncate(self, path: str, length: int, fh: int | None = None) -> int:
        self._change()
        if fh is not None:
            os.ftruncate(fh, length)
        else:
            os.truncate(self._full(path), length)
        return 0

    def flush(self, path: str, fh: int) -> int:
        return 0

    def release(self, path: str, fh: int) -> int:
        os.close(fh)
        return 0

    def fsync(self, path: str, datasync: int, fh: int) -> int:
        self._change()
        os.fsync(fh)
        ident = self.ids.get(os.fstat(fh).st_ino)
        if ident is not None:
            fd = os.open(f"/proc/self/fd/{fh}", os.O_RDONLY)  # the descriptor may be write-only
            try:
                chunks = []
                while True:
                    chunk = os.read(fd, 1 << 20)
                    if not chunk:
                        break
                    chunks.append(chunk)
            finally:
                os.close(fd)
            self.data[ident] = b"".join(chunks)
        return 0

    def opendir(self, path: str) -> int:
        return 0

    def releasedir(self, path: str, fh: int) -> int:
        return 0

    def fsyncdir(self, path: str, datasync: int, fh: int) -> int:
        self._change()
        full = self._full(path)
        names = {}
        for name in os.listdir(full):
            child = self._id(os.path.join(full, name))
            names[name] = child
            if self.kind[child] == "d":
                self.names.setdefault(child, {})
        self.names[self._id(full)] = names
        return 0

    def mkdir(self, path: str, mode: int) -> int:
        self._change()
        os.mkdir(self._full(path), mode)
        self._new(self._full(path))
        return 0

    def rmdir(self, path: str) -> int:
        self._change()
        os.rmdir(self._full(path))
        return 0

    def unlink(self, path: str) -> int:
        self._change()
        os.unlink(self._full(path))
        return 0

    def rename(self, old: str, new: str) -> int:
        self._change()
        os.rename(self._full(old), self._full(new))
        return 0

    def link(self, target: str, source: str) -> int:
        self._change()
        os.link(self._full(source), self._full(target))
        return 0

    def symlink(self, target: str, source: str) -> int:
        self._change()
        os.symlink(source, self._full(target))
        self._new(self._full(target))
        return 0

    def chmod(self, path: str, mode: int) -> int:
        self._change()
        os.chmod(self._full(path), mode)
        ident = self.ids.get(os.lstat(self._full(path)).st_ino)
        if ident is not None:
            self.mode[ident] = stat.S_IMODE(mode)
        return 0

    def chown(self, path: str, uid: int, gid: int) -> int:
        os.lchown(self._full(path), uid, gid)
        return 0

    def utimens(self, path: str, times: tuple[int, int] | None = None) -> int:
        os.utime(self._full(path), ns=times, follow_symlinks=False)
        return 0


def main(argv: list[str]) -> None:
    backing, mountpoint, control = (os.path.abspath(a) for a in argv[:3])  # libfuse may chdir to /
    cut_at = int(argv[4]) if len(argv) > 4 and argv[3] == "--cut-at" else None
    ops = PowerCut(backing, control, cut_at)
    with open(os.path.join(control, "ready"), "w"):
        pass
    fuse.FUSE(ops, mountpoint, foreground=True, nothreads=True)


if __name__ == "__main__":
    main(sys.argv[1:])
