"""Finding hosts on the LAN (DNS-SD through Avahi), between two network namespaces joined by a veth pair, each with
its own D-Bus system bus and avahi-daemon (docs/testing.md, "Finding hosts in the VM": how they are set up).

`serve` announces itself (`_padbridge._udp`, its key's fingerprint, its pairing window); `hosts` in the other
namespace lists it and `--watch` sees it leave; `pair NAME CODE` and `connect NAME` take the announced name and a
python-evdev reader sees the stand-in pad's taps on the host's virtual pad; a host whose address changed is found
again by its key and paired-hosts follows; an announcement under the paired name with a foreign key
(`avahi-publish -s`) is never tried; without avahi-daemon `serve` keeps serving and says why, `hosts` fails with
the fix."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import threading
import time

import evdev
import pytest
from evdev import ecodes

from conftest import DEADLINE, attached, expect_events, padbridge_binary, pairing_code
from forwarding import HOST_ADDRESS, joined_namespaces, run, xpad_like_source

NAME = "gaming-pc"
MOVED_ADDRESS = "192.0.2.3"


class AvahiSide:
    """One namespace's D-Bus system bus and avahi-daemon. Clients on that side run with `env` (the bus address)
    inside `ip netns exec NAME`."""

    def __init__(self, namespace: str, directory):
        self.namespace = namespace
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self.bus = f"unix:path={directory}/bus"
        self.env = ("env", f"DBUS_SYSTEM_BUS_ADDRESS={self.bus}")
        self.wrapper = (*self.env, "ip", "netns", "exec", namespace)
        self.dbus = self.avahi = None

    @staticmethod
    def start_all(sides: list[AvahiSide]):
        """Starts every side's daemons side by side: each step's waits overlap (avahi-daemon takes seconds to start
        under emulation, most of it its host-name probe's timers)."""
        for side in sides:
            side._launch_bus()
        for side in sides:
            side._wait_bus()
        for side in sides:
            side._launch_avahi()
        for side in sides:
            side._wait_avahi()

    def start(self):
        AvahiSide.start_all([self])

    def _launch_bus(self):
        (self.directory / "bus").unlink(missing_ok=True)   # a bus stopped before left its socket file
        # Debian's system.conf gives the bus its policy (Avahi's included); --address moves only its socket.
        # It prints its address once it listens there (--print-address): that line is what is waited for.
        self.dbus = subprocess.Popen(["ip", "netns", "exec", self.namespace, "dbus-daemon", "--system", "--nofork",
                                      "--nopidfile", f"--address={self.bus}", "--print-address=1"],
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

    def _wait_bus(self):
        # Awaited with a bound: a daemon that neither prints nor exits must fail the test, not hang the suite.
        readable, _, _ = select.select([self.dbus.stdout], [], [], DEADLINE)
        printed = self.dbus.stdout.readline() if readable else ""
        assert printed.startswith(self.bus), \
            f"dbus-daemon in {self.namespace} did not start listening (printed {printed!r}, exit {self.dbus.poll()})"

    def _launch_avahi(self):
        # Each daemon its own host name (both would claim the VM's) and its own /run/avahi-daemon (a daemon refuses
        # to start where another's pid file is): a mount namespace of its own with a tmpfs there.
        config = self.directory / "avahi-daemon.conf"
        config.write_text(f"[server]\nhost-name={self.namespace}\nuse-ipv4=yes\nuse-ipv6=yes\n"
                          "[publish]\npublish-workstation=no\n")
        self.avahi = subprocess.Popen(
            [*self.wrapper, "unshare", "-m", "sh", "-c",
             "mkdir -p /run/avahi-daemon && mount -t tmpfs tmpfs /run/avahi-daemon && "
             f"exec avahi-daemon --no-drop-root --no-chroot --no-rlimits --no-proc-title -f {config}"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def _wait_avahi(self):
        self.log: list[str] = []
        for line in self.avahi.stdout:
            self.log.append(line.rstrip())
            if "Server startup complete" in line:
                break
        else:
            raise AssertionError(f"avahi-daemon in {self.namespace} did not start:\n" + "\n".join(self.log))
        # Its log is read on, so the pipe never fills.
        threading.Thread(target=lambda: [self.log.append(line.rstrip()) for line in self.avahi.stdout],
                         daemon=True).start()

    def stop(self):
        for process in (self.avahi, self.dbus):
            if process is not None and process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


@pytest.fixture
def avahi_namespaces(tmp_path):
    """pbhost and pbclient joined by a veth pair, each with its own bus and avahi-daemon."""
    links = joined_namespaces()
    next(links)
    sides = []
    try:
        sides = [AvahiSide(namespace, tmp_path / f"avahi-{namespace}") for namespace in ("pbhost", "pbclient")]
        AvahiSide.start_all(sides)
        yield {side.namespace: side for side in sides}
    finally:
        for side in sides:
            side.stop()
        next(links, None)


def padbridge_in(side: AvahiSide, *args: str, timeout: float = DEADLINE) -> subprocess.CompletedProcess:
    return subprocess.run([*side.wrapper, padbridge_binary(), *args], capture_output=True, text=True, timeout=timeout)


def host_key(serve) -> str:
    _, listening = serve.wait_event("listening", what="the host's key")
    assert listening["hostKey"].startswith("SHA256:"), listening
    return listening["hostKey"]


def serve_announced(padbridge, side: AvahiSide, config, *extra: str):
    serve = padbridge("--name", NAME, "--config-dir", str(config), *extra, command="serve", wrapper=side.wrapper)
    serve.wait_event("announced", where=lambda e: e["name"] == NAME, what="the announcement")
    return serve


def hosts_json(side: AvahiSide, config, wanted) -> list[dict]:
    """`hosts --json` until `wanted(hosts)` holds (an announcement reaches the other side within a second or so)."""
    deadline = time.monotonic() + DEADLINE
    while True:
        result = padbridge_in(side, "hosts", "--json", "--timeout", "3", "--config-dir", str(config))
        assert result.returncode == 0, result.stderr
        hosts = json.loads(result.stdout)
        if wanted(hosts) or time.monotonic() > deadline:
            return hosts


def pair_by_name(padbridge, sides, tmp_path):
    host_config, client_config = tmp_path / "host", tmp_path / "client"
    serve = serve_announced(padbridge, sides["pbhost"], host_config, "--pair")
    code = pairing_code(serve)
    hosts_json(sides["pbclient"], client_config, lambda hosts: any(h["name"] == NAME for h in hosts))
    paired = padbridge_in(sides["pbclient"], "pair", NAME, code, "--config-dir", str(client_config))
    assert paired.returncode == 0, paired.stderr
    assert f'"{NAME}" is announced on the LAN at {HOST_ADDRESS}:48100' in paired.stderr, paired.stderr
    return serve, host_config, client_config


def paired_hosts(client_config) -> list[str]:
    return [line for line in (client_config / "paired-hosts").read_text().splitlines()
            if line and not line.startswith("#")]


def test_hosts_lists_the_host_with_its_key_and_pairing_window_and_watch_sees_it_leave(padbridge, tmp_path,
                                                                                     avahi_namespaces):
    sides = avahi_namespaces
    serve = serve_announced(padbridge, sides["pbhost"], tmp_path / "host", "--pair")
    key = host_key(serve)

    def both_families(hosts):
        return any(h["name"] == NAME and {a["family"] for a in h["addresses"]} == {"ipv4", "ipv6"} for h in hosts)

    hosts = hosts_json(sides["pbclient"], tmp_path / "client", both_families)
    host = next(h for h in hosts if h["name"] == NAME)
    assert host["fingerprint"] == key, host
    assert host["pairingOpen"] is True, host
    assert host["paired"] is False, host
    assert host["port"] == 48100, host
    assert any(a["address"] == HOST_ADDRESS and a["family"] == "ipv4" for a in host["addresses"]), host
    assert any(a["family"] == "ipv6" for a in host["addresses"]), host  # Avahi resolves the link-local one too

    table = padbridge_in(sides["pbclient"], "hosts", "--timeout", "3", "--config-dir", str(tmp_path / "client"))
    assert table.returncode == 0, table.stderr
    row = next(line for line in table.stdout.splitlines() if NAME in line)
    assert key in row and row.split()[-1] == "open" and HOST_ADDRESS in row, table.stdout

    # --watch: the host is present, then leaves when serve stops (Avahi withdraws its announcement).
    watch = padbridge("--watch", "--config-dir", str(tmp_path / "client"), command="hosts",
                      wrapper=sides["pbclient"].wrapper)
    watch.wait_stdout(lambda line: line.startswith("present") and NAME in line and key in line,
                      what="the host listed as present")
    assert serve.stop() == 0
    watch.wait_stdout(lambda line: line.startswith("remove") and NAME in line, what="the host leaving")


def test_two_hosts_with_one_name_are_both_found_one_renamed_and_watch_json_follows(padbridge, tmp_path,
                                                                                  avahi_namespaces):
    """Two machines serving under one name: DNS-SD's conflict rule renames one of them (and it says so), both are
    listed, each with its own key, and `hosts --watch --json` reports each coming and going as a JSON object a line.
    Which one gives way is the network's timing: the second to announce, when the first's daemon answers its probes
    in time; else the first, once it hears the second's announcement (seen on a busy machine)."""
    sides = avahi_namespaces
    watch = padbridge("--watch", "--json", "--config-dir", str(tmp_path / "watcher"), command="hosts",
                      wrapper=sides["pbclient"].wrapper)
    watch.wait_event("watchingHosts", what="the watch under way")

    def watched(event: str, name: str, key: str | None, since: int = 0) -> dict:
        def matching(line: str):
            try:
                change = json.loads(line)
            except ValueError:
                raise AssertionError(f"hosts --watch --json printed a line that is not JSON: {line!r}")
            host = change["host"]
            wanted = (change["event"], host["name"]) == (event, name) and key in (None, host["fingerprint"])
            return change if wanted else None
        _, change = watch.wait_stdout(matching, since=since, what=f"a {event!r} line for {name!r} ({key or 'any key'})")
        return change

    first = serve_announced(padbridge, sides["pbhost"], tmp_path / "first")
    first_key = host_key(first)
    added = watched("add", NAME, first_key)
    assert added["host"]["port"] == 48100 and not added["host"]["paired"], added

    second = padbridge("--name", NAME, "--config-dir", str(tmp_path / "second"), command="serve",
                       wrapper=sides["pbclient"].wrapper)
    second_key = host_key(second)
    names: dict[str, str] = {}   # by key, as the watch reports them, in order

    def two_names(line: str):
        change = json.loads(line)
        host = change["host"]
        if change["event"] in ("add", "change") and host["fingerprint"] in (first_key, second_key):
            names[host["fingerprint"]] = host["name"]
        apart = len(names) == 2 and names[first_key] != names[second_key] and NAME in names.values()
        return dict(names) if apart else None

    _, final = watch.wait_stdout(two_names, what="both hosts watched, under two names")
    renamed, renamed_key = (first, first_key) if final[first_key] != NAME else (second, second_key)
    new_name = final[renamed_key]
    assert new_name != NAME and new_name.startswith(NAME), final
    renamed.wait_event("announcedRenamed", where=lambda e: (e["from"], e["to"]) == (NAME, new_name),
                       what="the renamed host saying so")
    renamed.wait_event("announced", where=lambda e: e["name"] == new_name, what="the renamed announcement")
    hosts = hosts_json(sides["pbclient"], tmp_path / "watcher", lambda hosts: {
        (final[first_key], first_key), (final[second_key], second_key)} <= {(h["name"], h["fingerprint"]) for h in hosts})
    assert {(final[first_key], first_key), (final[second_key], second_key)} <= \
        {(h["name"], h["fingerprint"]) for h in hosts}, hosts

    mark = watch.stdout_mark()
    assert second.stop() == 0
    watched("remove", final[second_key], None, since=mark)   # (what a removal still knows of the TXT record is not asked)
    mark = watch.stdout_mark()
    assert first.stop() == 0
    watched("remove", final[first_key], None, since=mark)
    assert watch.stop() == 0


def test_pair_by_name_then_connect_by_name_forwards_taps(padbridge, tmp_path, avahi_namespaces):
    sides = avahi_namespaces
    serve, _, client_config = pair_by_name(padbridge, sides, tmp_path)
    # Once paired, hosts says so (by key), and the host's announcement says its window closed (a code works once).
    hosts = hosts_json(sides["pbclient"], client_config,
                       lambda hosts: any(h["paired"] and not h["pairingOpen"] for h in hosts))
    assert [h["name"] for h in hosts if h["paired"]] == [NAME], hosts
    assert [h["pairingOpen"] for h in hosts if h["paired"]] == [False], hosts

    source = xpad_like_source("by name source")
    try:
        client = padbridge(NAME, source.device.path, "--config-dir", str(client_config), command="connect",
                           wrapper=sides["pbclient"].wrapper)
        client.wait_event("connected", what="the client connected by name")
        _, ready = attached(serve)
        virtual = evdev.InputDevice(ready["eventNodes"][0])
        for _ in range(3):
            source.write(ecodes.EV_KEY, ecodes.BTN_A, 1)
            source.syn()
            source.write(ecodes.EV_KEY, ecodes.BTN_A, 0)
            source.syn()
        expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_SOUTH, 1), (ecodes.EV_KEY, ecodes.BTN_SOUTH, 0)] * 3)
    finally:
        source.close()


def test_a_host_whose_address_changed_is_found_by_its_key_and_paired_hosts_follows(padbridge, tmp_path,
                                                                                 avahi_namespaces):
    sides = avahi_namespaces
    serve, _, client_config = pair_by_name(padbridge, sides, tmp_path)
    assert paired_hosts(client_config)[0].startswith(f"{HOST_ADDRESS}:48100 "), paired_hosts(client_config)

    # A new DHCP lease while no client runs: the host's address changes (serve listens on every address).
    run("ip", "-n", "pbhost", "addr", "del", f"{HOST_ADDRESS}/24", "dev", "pbh")
    run("ip", "-n", "pbhost", "addr", "add", f"{MOVED_ADDRESS}/24", "dev", "pbh")
    hosts_json(sides["pbclient"], client_config, lambda hosts: any(
        any(a["address"] == MOVED_ADDRESS for a in h["addresses"]) for h in hosts))

    source = xpad_like_source("moved host source")
    try:
        # By name: the stored address first, which does not answer; then where the LAN announces the paired key.
        client = padbridge(NAME, source.device.path, "--config-dir", str(client_config), command="connect",
                           wrapper=sides["pbclient"].wrapper)
        client.wait_event("connected", where=lambda e: e["address"] == f"{MOVED_ADDRESS}:48100",
                          what="the client connected at the new address")
        client.wait_event("hostFound", where=lambda e: e["previous"] == f"{HOST_ADDRESS}:48100",
                          what="the client saying paired-hosts follows")
        assert paired_hosts(client_config)[0].startswith(f"{MOVED_ADDRESS}:48100 "), paired_hosts(client_config)
        assert len(paired_hosts(client_config)) == 1, paired_hosts(client_config)
        _, ready = attached(serve)
        virtual = evdev.InputDevice(ready["eventNodes"][0])
        source.write(ecodes.EV_KEY, ecodes.BTN_A, 1)
        source.syn()
        source.write(ecodes.EV_KEY, ecodes.BTN_A, 0)
        source.syn()
        expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_SOUTH, 1), (ecodes.EV_KEY, ecodes.BTN_SOUTH, 0)])

        # No host named: the one paired host announced, which connect names, at its new address at once.
        assert client.stop() == 0
        again = padbridge(source.device.path, "--config-dir", str(client_config), command="connect",
                          wrapper=sides["pbclient"].wrapper)
        again.wait_event("hostChosen", where=lambda e: f'the one paired host announced on the LAN: "{NAME}"' in e["note"],
                         what="connect saying which host it chose")
        again.wait_event("connected", where=lambda e: e["address"] == f"{MOVED_ADDRESS}:48100",
                         what="connected with no host named")
    finally:
        source.close()


def test_an_announcement_under_the_paired_name_with_another_key_is_never_connected_to(padbridge, tmp_path,
                                                                                     avahi_namespaces):
    sides = avahi_namespaces
    serve, _, client_config = pair_by_name(padbridge, sides, tmp_path)
    key = host_key(serve)
    assert serve.stop() == 0
    before = paired_hosts(client_config)
    # The stored address answers no more; another machine, at another address, announces the paired name with its
    # own key (were the key not checked, that is where connect would go, as it does for a moved host).
    run("ip", "-n", "pbhost", "addr", "del", f"{HOST_ADDRESS}/24", "dev", "pbh")
    run("ip", "-n", "pbhost", "addr", "add", f"{MOVED_ADDRESS}/24", "dev", "pbh")
    foreign = "0123456789abcdef0123456789abcdef"
    publisher = subprocess.Popen([*sides["pbhost"].wrapper, "avahi-publish", "-s", NAME, "_padbridge._udp", "48100",
                                  "v=1", f"fp={foreign}", "pairing=closed"],
                                 stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        hosts_json(sides["pbclient"], client_config, lambda hosts: any(
            h["name"] == NAME and h["fingerprint"] and h["fingerprint"].replace("-", "").endswith(foreign[-8:])
            and any(a["address"] == MOVED_ADDRESS for a in h["addresses"]) for h in hosts))
        source = xpad_like_source("impostor source")
        try:
            client = padbridge(NAME, source.device.path, "--config-dir", str(client_config), command="connect",
                               wrapper=sides["pbclient"].wrapper)
            _, differs = client.wait_event("keyDiffers", where=lambda e: e["host"] == NAME,
                                           what="the key mismatch named")
            warning = differs["message"]
            assert "WARNING" in warning and key in warning and "not connecting to it" in warning, warning
            assert "paired-hosts" in warning and f"padbridge pair {NAME} CODE" in warning, warning
            # Its address is never tried: the client keeps to the stored one until it says, after 5 s, that nothing
            # answers there; nothing connects meanwhile.
            client.wait_event("noAnswer", where=lambda e: (e["host"], e["address"]) == (NAME, f"{HOST_ADDRESS}:48100"),
                              what="connect still trying the stored address only")
            assert not client.events("connected"), client.describe()
            assert not any(MOVED_ADDRESS in event["address"] for event in client.events("tryingHost")), client.describe()
            lines = client.messages()
            assert not any(MOVED_ADDRESS in line and "trying" in line for line in lines), lines
            assert paired_hosts(client_config) == before
        finally:
            source.close()
        # A start of the name, which only the impostor's announcement matches: refused before anything is opened.
        refused = padbridge_in(sides["pbclient"], "connect", "gaming", "--config-dir", str(client_config))
        assert refused.returncode != 0
        assert "not connecting to it" in refused.stderr and key in refused.stderr, refused.stderr
    finally:
        publisher.send_signal(signal.SIGTERM)
        publisher.wait(10)


def test_announcements_forged_with_the_paired_key_never_keep_connect_from_its_host(padbridge, tmp_path,
                                                                                   avahi_namespaces):
    """The key's fingerprint is public (every announcement carries it): anyone may announce it, under other names,
    at an address of theirs. connect takes them as one paired host and tries its stored address first."""
    sides = avahi_namespaces
    serve, _, client_config = pair_by_name(padbridge, sides, tmp_path)
    (real,) = [h for h in hosts_json(sides["pbclient"], client_config, lambda hosts: any(h["paired"] for h in hosts))
               if h["paired"]]
    fingerprint = real["fingerprint"].removeprefix("SHA256:").replace("-", "").lower()
    # Two forged announcements of the paired key, at the client side's own address, where no host answers.
    forgers = [subprocess.Popen([*sides["pbclient"].wrapper, "avahi-publish", "-s", name, "_padbridge._udp", "48100",
                                 "v=1", f"fp={fingerprint}", "pairing=closed"],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
               for name in ("forged one", "forged two")]
    try:
        hosts_json(sides["pbclient"], client_config,
                   lambda hosts: sum(1 for h in hosts if h["paired"]) == 3)
        source = xpad_like_source("forged announcements source")
        try:
            client = padbridge(source.device.path, "--config-dir", str(client_config), command="connect",
                               wrapper=sides["pbclient"].wrapper)
            client.wait_event("connected", where=lambda e: e["address"] == f"{HOST_ADDRESS}:48100",
                              what="connect reaching the real host at its stored address")
            _, ready = attached(serve)
            virtual = evdev.InputDevice(ready["eventNodes"][0])
            source.write(ecodes.EV_KEY, ecodes.BTN_A, 1)
            source.syn()
            expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_SOUTH, 1)])
            lines = client.messages()
            assert not any("several paired hosts" in line for line in lines), lines
            assert paired_hosts(client_config)[0].startswith(f"{HOST_ADDRESS}:48100 "), paired_hosts(client_config)
        finally:
            source.close()
    finally:
        for forger in forgers:
            forger.send_signal(signal.SIGTERM)
            forger.wait(10)


def tap(source, virtual, timeout: float = DEADLINE):
    source.write(ecodes.EV_KEY, ecodes.BTN_A, 1)
    source.syn()
    source.write(ecodes.EV_KEY, ecodes.BTN_A, 0)
    source.syn()
    expect_events(virtual, [(ecodes.EV_KEY, ecodes.BTN_SOUTH, 1), (ecodes.EV_KEY, ecodes.BTN_SOUTH, 0)], timeout=timeout)


def test_frames_keep_flowing_while_avahi_daemon_is_stuck_and_the_announcement_changes(padbridge, tmp_path,
                                                                                      avahi_namespaces):
    """Avahi's calls are D-Bus round trips that wait for avahi-daemon (up to libdbus's 25 s): serve makes them on a
    thread of its own, so a stuck daemon (or a rival forcing renames) never holds the loop that forwards pads."""
    sides = avahi_namespaces
    serve, host_config, client_config = pair_by_name(padbridge, sides, tmp_path)
    source = xpad_like_source("stuck avahi source")
    try:
        client = padbridge(NAME, source.device.path, "--config-dir", str(client_config), command="connect",
                           wrapper=sides["pbclient"].wrapper)
        client.wait_event("connected", what="the client connected")
        _, ready = attached(serve)
        virtual = evdev.InputDevice(ready["eventNodes"][0])
        tap(source, virtual)
        sides["pbhost"].avahi.send_signal(signal.SIGSTOP)   # avahi-daemon answers nothing now
        try:
            # The pairing window opens: the announcement's TXT records change, a call that waits for the daemon.
            opened = subprocess.run([padbridge_binary(), "pairing-window", "--config-dir", str(host_config)],
                                    capture_output=True, text=True, timeout=DEADLINE)
            assert opened.returncode == 0, opened.stderr
            # (through serve's control socket: "pairing window open ... (asked for on the control socket)")
            serve.wait_event("pairingWindowOpen", where=lambda e: e["by"] != "start", what="the window opened")
            started = time.monotonic()
            for _ in range(5):
                tap(source, virtual, timeout=5)
            seconds = time.monotonic() - started
            print(f"5 taps through the link in {seconds * 1000:.0f} ms while avahi-daemon was stopped")
        finally:
            sides["pbhost"].avahi.send_signal(signal.SIGCONT)
        assert client.stop() == 0
    finally:
        source.close()


def test_serve_announces_again_after_the_system_bus_restarts(padbridge, tmp_path, avahi_namespaces):
    """Avahi's NO_FAIL client covers a daemon that goes away, not a missing bus: serve tries again on a timer."""
    sides = avahi_namespaces
    host = sides["pbhost"]
    serve = serve_announced(padbridge, host, tmp_path / "host")
    mark = len(serve.stderr)
    host.stop()   # avahi-daemon and the namespace's dbus-daemon
    serve.wait_event("notAnnounced", since=mark, what="serve saying it is not announced")
    mark = len(serve.stderr)
    host.start()
    serve.wait_event("announced", where=lambda e: e["name"] == NAME, since=mark, timeout=60,
                     what="serve announced again once the bus and the daemon are back")
    hosts = hosts_json(sides["pbclient"], tmp_path / "client", lambda hosts: any(h["name"] == NAME for h in hosts))
    assert any(h["name"] == NAME for h in hosts), hosts
    assert serve.proc.poll() is None


def test_without_avahi_serve_keeps_serving_and_says_why_and_hosts_fails_with_the_fix(padbridge, tmp_path):
    links = joined_namespaces()
    next(links)
    try:
        # No bus, no daemon on either side (an address where no bus listens: the VM has no system bus either).
        nowhere = ("env", f"DBUS_SYSTEM_BUS_ADDRESS=unix:path={tmp_path}/no-bus")
        serve = padbridge("--name", NAME, "--pair", "--config-dir", str(tmp_path / "host"), command="serve",
                          wrapper=(*nowhere, "ip", "netns", "exec", "pbhost"))
        code = pairing_code(serve)
        _, not_announced = serve.wait_event("notAnnounced", what="why it is not announced")
        line = not_announced["message"]
        assert "avahi-daemon is not running" in line and "systemctl enable --now avahi-daemon" in line, line
        # It keeps serving: pairing by address works.
        paired = subprocess.run([*nowhere, "ip", "netns", "exec", "pbclient", padbridge_binary(), "pair",
                                 f"{HOST_ADDRESS}:48100", code, "--config-dir", str(tmp_path / "client")],
                                capture_output=True, text=True, timeout=DEADLINE)
        assert paired.returncode == 0, paired.stderr
        assert serve.proc.poll() is None

        hosts = subprocess.run([*nowhere, "ip", "netns", "exec", "pbclient", padbridge_binary(), "hosts",
                                "--config-dir", str(tmp_path / "client")],
                               capture_output=True, text=True, timeout=DEADLINE)
        assert hosts.returncode != 0
        assert "avahi-daemon is not running" in hosts.stderr, hosts.stderr
        assert "systemctl enable --now avahi-daemon" in hosts.stderr, hosts.stderr
    finally:
        next(links, None)
