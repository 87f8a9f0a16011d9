#!/bin/bash
# Records udev's view of real kernel nodes for RecordedUdevTests: run inside the test VM, e.g.
#   vng -r /boot/vmlinuz-* --disable-kvm --rwdir Tests/PadCoreTests/Discovery/Recorded \
#       --exec "PYTHON=$(python3 -c 'import sys; print(sys.executable)') \
#               Tests/PadCoreTests/Discovery/Recorded/record.sh $PWD/Tests/PadCoreTests/Discovery/Recorded"
# (after `swift build`). Makes a Bluetooth and a USB virtual DualSense, a virtual Xbox 360 pad and a generic
# "Logitech Dual Action" (python-evdev), then writes records.json (padbridge list --udev-records) and
# list.json / list.txt (padbridge list) from the same moment.
set -euo pipefail
out=$1
binary=${PADBRIDGE_BIN:-$(dirname "$0")/../../../../.build/debug/padbridge}
modprobe -a uinput uhid evdev hid-playstation
work=$(mktemp -d)
for pad in bt usb xbox; do mkfifo "$work/$pad.in"; done
"$binary" virtual --type dualsense --seed recorded-bt <"$work/bt.in" >/dev/null 2>"$work/bt.err" &
exec 3>"$work/bt.in"
"$binary" virtual --type dualsense --bus usb --seed recorded-usb <"$work/usb.in" >/dev/null 2>"$work/usb.err" &
exec 4>"$work/usb.in"
"$binary" virtual --type xbox360 <"$work/xbox.in" >/dev/null 2>"$work/xbox.err" &
exec 5>"$work/xbox.in"
"${PYTHON:-python3}" - "$work/generic.ready" <<'PY' &
import sys, signal, evdev
from evdev import ecodes
stick = evdev.AbsInfo(value=128, min=0, max=255, fuzz=0, flat=15, resolution=0)
hat = evdev.AbsInfo(value=0, min=-1, max=1, fuzz=0, flat=0, resolution=0)
pad = evdev.UInput({ecodes.EV_KEY: list(range(ecodes.BTN_TRIGGER, ecodes.BTN_BASE6 + 1)),
                    ecodes.EV_ABS: [(ecodes.ABS_X, stick), (ecodes.ABS_Y, stick), (ecodes.ABS_Z, stick),
                                    (ecodes.ABS_RZ, stick), (ecodes.ABS_HAT0X, hat), (ecodes.ABS_HAT0Y, hat)]},
                   name="Logitech Logitech Dual Action", vendor=0x046D, product=0xC216, version=0x0110,
                   bustype=ecodes.BUS_USB)
open(sys.argv[1], "w").close()
signal.pause()
PY
generic=$!
# A one-off recording, not a test: polling for the ready lines is fine here.
for pad in bt usb xbox; do
    until grep -q "padbridge: ready" "$work/$pad.err"; do sleep 0.2; done
done
until [[ -e $work/generic.ready ]]; do
    kill -0 "$generic" 2>/dev/null || { echo "record.sh: the python-evdev pad did not start (${PYTHON:-python3})" >&2; exit 1; }
    sleep 0.2
done
udevadm settle
"$binary" list --udev-records >"$out/records.json"
"$binary" list --json >"$out/list.json"
"$binary" list >"$out/list.txt"
exec 3>&- 4>&- 5>&-
kill "$generic"
wait
