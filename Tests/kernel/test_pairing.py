"""Pairing over loopback inside the VM: `padbridge serve --pair` shows a one-time code, `padbridge pair` uses it, and
both machines (two config directories here) end up with the other's public key; wrong codes are refused and three
close the window; a private key others can read is refused, as ssh refuses one."""

from __future__ import annotations

import os
import re
import stat
import subprocess

from conftest import DEADLINE, padbridge_binary, pairing_code
from forwarding import PORT, pair


def start_serve(padbridge, config, *extra: str):
    serve = padbridge("--listen", f"127.0.0.1:{PORT}", "--config-dir", str(config), "--name", "test host", *extra,
                      command="serve")
    _, listening = serve.wait_event("listening", what="the host listening")
    host_fingerprint = listening["hostKey"]
    assert re.fullmatch(r"SHA256:[0-9a-f-]+", host_fingerprint), listening
    return serve, host_fingerprint


def keys_in(path) -> list[str]:
    if not path.exists():
        return []
    return [line.split()[0 if path.name == "paired-clients" else 1]
            for line in path.read_text().splitlines() if line and not line.startswith("#")]


def test_pairing_stores_each_sides_key(padbridge, tmp_path):
    host, client = tmp_path / "host", tmp_path / "client"
    serve, host_fingerprint = start_serve(padbridge, host, "--pair")
    result = pair(client, pairing_code(serve).lower().replace("-", " "), "--name", "couch deck")
    assert result.returncode == 0, result.stderr
    assert f"host key {host_fingerprint}" in result.stderr, result.stderr
    _, paired = serve.wait_event("paired", what="the host's paired event")
    assert paired["client"] == "couch deck", paired

    host_key = (host / "identity").read_text().split()[1]
    assert len(keys_in(client / "paired-hosts")) == 1
    assert (client / "paired-hosts").read_text().splitlines()[1].startswith(f"127.0.0.1:{PORT} ")
    assert len(keys_in(host / "paired-clients")) == 1
    for path in (host / "identity", client / "identity", client / "paired-hosts", host / "paired-clients"):
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600, path
    assert host_key not in keys_in(client / "paired-hosts"), "the private key must never be written elsewhere"

    # one-time: the same code does not pair another client
    again = pair(tmp_path / "other", pairing_code(serve))
    assert again.returncode != 0 and "no pairing window" in again.stderr, again.stderr
    assert len(keys_in(host / "paired-clients")) == 1


def test_three_wrong_codes_close_the_window(padbridge, tmp_path):
    host, client = tmp_path / "host", tmp_path / "client"
    serve, _ = start_serve(padbridge, host, "--pair")
    code = pairing_code(serve)
    wrong = "00000-00000-00000" if code != "00000-00000-00000" else "11111-11111-11111"
    for attempt in range(3):
        result = pair(client, wrong)
        assert result.returncode != 0, result.stderr
        assert ("refused the code" if attempt < 2 else "closed its pairing window") in result.stderr, result.stderr
    serve.wait_event("wrongCode", where=lambda e: e["triesLeft"] == 0, what="the host closing the window")
    right = pair(client, code)
    assert right.returncode != 0 and "closed its pairing window" in right.stderr, right.stderr
    assert keys_in(host / "paired-clients") == [] and keys_in(client / "paired-hosts") == []


def test_without_a_window_pairing_is_refused(padbridge, tmp_path):
    serve, _ = start_serve(padbridge, tmp_path / "host")
    result = pair(tmp_path / "client", "ZW0AM-N8J6H-B7H6N")
    assert result.returncode != 0 and "no pairing window" in result.stderr, result.stderr


def test_a_private_key_others_can_read_is_refused(padbridge, tmp_path):
    host = tmp_path / "host"
    serve, _ = start_serve(padbridge, host)
    assert serve.stop() == 0
    os.chmod(host / "identity", 0o644)
    result = subprocess.run([padbridge_binary(), "serve", "--listen", f"127.0.0.1:{PORT}", "--config-dir", str(host)],
                            capture_output=True, text=True, timeout=DEADLINE)
    assert result.returncode != 0
    assert f"chmod 600 {host / 'identity'}" in result.stderr, result.stderr


def test_pairing_window_opens_on_a_running_host(padbridge, tmp_path):
    """A host serving as a service gets a pairing window from `padbridge pairing-window`, without a restart."""
    host, client = tmp_path / "host", tmp_path / "client"
    serve, _ = start_serve(padbridge, host)
    opened = subprocess.run([padbridge_binary(), "pairing-window", "--config-dir", str(host)],
                            capture_output=True, text=True, timeout=DEADLINE)
    assert opened.returncode == 0, opened.stderr
    code = re.search(r"pairing code (\S+)", opened.stderr).group(1)
    serve.wait_event("pairingWindowOpen", what="the running host opening the window")
    assert not (host / "pairing-request").exists(), "the request is taken once"
    result = pair(client, code)
    assert result.returncode == 0, result.stderr
    assert len(keys_in(host / "paired-clients")) == 1
