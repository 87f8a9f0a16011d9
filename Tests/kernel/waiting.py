"""The one way the kernel tests wait: on a condition variable that a reader thread notifies, with a deadline."""

from __future__ import annotations

import threading
import time
from typing import Callable, Optional, Sequence


def wait_for_item(cond: threading.Condition, items: Sequence, since: int, match: Callable, timeout: float,
                  fail: Callable[[str], None], closed: Optional[Callable[[], Optional[str]]] = None,
                  pump: Optional[Callable[[], None]] = None):
    """Blocks until `match(items[i])` is truthy for some i >= since; returns (i, that value).

    A reader thread appends to `items` and notifies `cond`. `closed()` returns a reason once no more items can
    come; `fail(reason)` raises. `pump`, when given, runs between waits of at most 50 ms (SDL only sends once
    its events are pumped)."""
    deadline = time.monotonic() + timeout
    index = since
    with cond:
        while True:
            while index < len(items):
                value = match(items[index])
                if value:
                    return index, value
                index += 1
            reason = closed() if closed else None
            if reason:
                fail(reason)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                fail(f"nothing within {timeout:.0f} s")
            if pump is None:
                cond.wait(remaining)
            else:
                cond.wait(min(remaining, 0.05))
                cond.release()
                try:
                    pump()
                finally:
                    cond.acquire()
