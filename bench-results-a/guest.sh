#!/bin/bash
set -u
results=/work/remap-perf/bench-results-a
cd /work/remap-perf
echo "guest: kernel $(uname -r), $(nproc) CPUs; booted in $(cut -d' ' -f1 /proc/uptime) s"
if ! modprobe -a uinput evdev; then
    echo "guest: modprobe uinput evdev failed" >&2
    echo 98 > "$results/status"; exit 0
fi
export PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
/root/.pyenv/versions/3.11.7/bin/python3 /work/remap-perf/Benchmarks/remap-latency/driver.py --padbridge /work/remap-perf/.build/x86_64-unknown-linux-gnu/release/padbridge --xboxdrv /usr/bin/xboxdrv \
    --raw-forwarder /work/remap-perf/.build/bench-remap/raw-forwarder --json "$results/results.json" --log-dir "$results" \
    --peers padbridge\,raw --rounds 2  2>&1 | tee "$results/driver.log"
echo "${PIPESTATUS[0]}" > "$results/status"
echo "guest: driver done at $(cut -d' ' -f1 /proc/uptime) s"
