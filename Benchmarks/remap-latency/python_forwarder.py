"""The python-evdev floor of the remap latency benchmark: `read_loop` + `write`, nothing else.

Grabs the source, creates a uinput device with the source's capabilities (`UInput.from_device`) under NAME, and
writes every event it reads (EV_SYN included) to it. This is what a minimal Python forwarder costs.

Usage: python3 python_forwarder.py /dev/input/eventN NAME
"""

import sys

import evdev


def main(source_path: str, name: str) -> None:
    source = evdev.InputDevice(source_path)
    source.grab()
    with evdev.UInput.from_device(source, name=name, vendor=0x1209, product=0x0bf1, version=1) as target:
        for event in source.read_loop():
            target.write(event.type, event.code, event.value)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(f"usage: {sys.argv[0]} /dev/input/eventN NAME")
    try:
        main(sys.argv[1], sys.argv[2])
    except KeyboardInterrupt:
        pass
