#!/usr/bin/python3
"""scripts/test-package --bench-startup, inside the booted VM: how long `padbridge remap` takes from its start to the
first event out of its virtual pad, with the Swift runtime shipped in /usr/lib/padbridge (/usr/bin/padbridge, as the
package installs it) and linked into the binary (--static-swift-stdlib: padbridge-static here), interleaved: each
round runs both, in alternating order, each cold (page cache dropped just before) and then warm (again at once).

The clock starts just before Popen; the stand-in pad (pads.py's) taps A every 5 ms until a key event comes out of the
new virtual pad, read as it arrives. Prints one "padbridge-bench: VARIANT STATE SECONDS" line a start, then the
minimum, median and maximum of each.
"""

import os
import select
import signal
import statistics
import subprocess
import sys
import time

import evdev
from evdev import ecodes as e

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pads import stand_in  # noqa: E402

VARIANTS = {"shared": "/usr/bin/padbridge", "static": os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                     "padbridge-static")}
DEADLINE_SECONDS = 60


def drop_caches() -> None:
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as control:
        control.write("3\n")


def first_event_seconds(binary: str, pad, pad_path: str) -> float:
    before = set(evdev.list_devices())
    log = open("/tmp/startup-bench.log", "ab")
    started = time.monotonic()
    remap = subprocess.Popen([binary, "remap", pad_path, "--as", "xbox360", "--profiles", "/nonexistent"],
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log)
    try:
        target = None
        pressed = False
        next_tap = started
        while time.monotonic() - started < DEADLINE_SECONDS:
            now = time.monotonic()
            if now >= next_tap:
                pressed = not pressed
                pad.write(e.EV_KEY, e.BTN_A, int(pressed))
                pad.syn()
                next_tap = now + 0.005
            if target is None:
                for path in set(evdev.list_devices()) - before:
                    try:
                        device = evdev.InputDevice(path)
                    except OSError:
                        continue
                    if (device.phys or "").startswith("padbridge-output/"):
                        target = device
                if target is None:
                    time.sleep(0.002)
                    continue
            ready, _, _ = select.select([target.fd], [], [], 0.002)
            if ready:
                for event in target.read():
                    if event.type == e.EV_KEY:
                        return time.monotonic() - started
        raise SystemExit(f"padbridge-bench: {binary} remap forwarded nothing within {DEADLINE_SECONDS} s")
    finally:
        remap.send_signal(signal.SIGTERM)
        remap.wait(30)
        pad.write(e.EV_KEY, e.BTN_A, 0)
        pad.syn()


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    results: dict[tuple[str, str], list[float]] = {}
    with stand_in() as pad:
        pad_path = pad.device.path
        for round_number in range(rounds):
            order = list(VARIANTS) if round_number % 2 == 0 else list(reversed(VARIANTS))
            for variant in order:
                for state in ("cold", "warm"):
                    if state == "cold":
                        drop_caches()
                    seconds = first_event_seconds(VARIANTS[variant], pad, pad_path)
                    results.setdefault((variant, state), []).append(seconds)
                    print(f"padbridge-bench: {variant} {state} {seconds:.3f}", flush=True)
    for (variant, state), values in sorted(results.items()):
        print(f"padbridge-bench: summary {variant} {state}: min {min(values):.2f} s, median "
              f"{statistics.median(values):.2f} s, max {max(values):.2f} s ({len(values)} starts)", flush=True)
    print("padbridge-bench: done", flush=True)


if __name__ == "__main__":
    main()
