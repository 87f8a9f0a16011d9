"""Running things as another user than root (the VM runs the suite as root, which file modes do not stop): the user
nobody (NOBODY), a command run as nobody (AS_NOBODY) or as nobody in the group input (AS_NOBODY_IN_INPUT), and a
forked child of the test running as a given user (Child)."""

from __future__ import annotations

import grp
import json
import os
import select
import signal
import time

from conftest import DEADLINE

NOBODY = 65534
AS_NOBODY = ("setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups")
AS_NOBODY_IN_INPUT = ("setpriv", "--reuid=65534", "--regid=65534", f"--groups={grp.getgrnam('input').gr_gid}")


class Child:
    """A forked child of this process running `work(report)` as user `uid`; each `report(obj)` comes back as one JSON
    line (`next()`). Killed at `close()`."""

    def __init__(self, uid: int, work):
        read_end, write_end = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            os.close(read_end)

            def report(obj):
                os.write(write_end, (json.dumps(obj) + "\n").encode())

            status = 0
            try:
                os.setgroups([])
                os.setgid(uid)
                os.setuid(uid)
                work(report)
            except BaseException as error:  # noqa: BLE001 - reported to the parent, which fails the test
                report({"error": repr(error)})
                status = 1
            os._exit(status)
        os.close(write_end)
        self.pipe = read_end
        self.buffer = b""

    def next(self, timeout: float = DEADLINE) -> dict:
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            assert left > 0, f"the child reported nothing within {timeout:.0f} s"
            ready, _, _ = select.select([self.pipe], [], [], left)
            if ready:
                chunk = os.read(self.pipe, 65536)
                assert chunk, "the child ended without reporting"
                self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        obj = json.loads(line)
        assert "error" not in obj, f"in the child: {obj['error']}"
        return obj

    def close(self):
        try:
            os.kill(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(self.pid, 0)
        os.close(self.pipe)
