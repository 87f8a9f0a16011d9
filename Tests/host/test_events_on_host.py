"""`--events json` on the host (no pad, no avahi-daemon needed): every line padbridge writes on standard error is one
JSON object naming its event, with the sentence the text form says; a failure after start is a `failed` event that
carries the exit status. The kernel suite waits on these events (Tests/kernel/conftest.py), never on sentences."""

import json
import os
import subprocess

BINARY = os.environ.get("PADBRIDGE_BIN", ".build/debug/padbridge")
# A bus address where nothing listens: `hosts` fails the same way whether or not this machine runs a system bus.
NO_BUS = {**os.environ, "DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/padbridge-test-bus"}


def events(stderr: str) -> list[dict]:
    """Every stderr line as an event; a line that is not a JSON object with an event name fails the test."""
    parsed = []
    for line in stderr.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            raise AssertionError(f"a stderr line is not JSON: {line!r}") from None
        assert isinstance(event, dict) and isinstance(event.get("event"), str), line
        assert isinstance(event.get("message"), str), line
        parsed.append(event)
    return parsed


def test_a_failure_after_start_is_a_failed_event_with_the_sentence_of_the_text_form(tmp_path):
    def run(*extra):
        return subprocess.run([BINARY, "hosts", "--config-dir", str(tmp_path), *extra], capture_output=True,
                              text=True, timeout=60, env=NO_BUS)

    as_json, as_text = run("--events", "json"), run()
    assert as_json.returncode == as_text.returncode == 1, (as_json.stderr, as_text.stderr)
    said = events(as_json.stderr)
    failed = [event for event in said if event["event"] == "failed"]
    assert len(failed) == 1 and failed[0]["exitCode"] == 1, said
    assert "sudo systemctl enable --now avahi-daemon" in failed[0]["message"], failed
    assert f"Error: {failed[0]['message']}" in as_text.stderr, (failed, as_text.stderr)


def test_list_says_each_line_as_an_event_and_the_same_sentences_in_text(tmp_path):
    as_json = subprocess.run([BINARY, "list", "--events", "json"], capture_output=True, text=True, timeout=120)
    as_text = subprocess.run([BINARY, "list"], capture_output=True, text=True, timeout=120)
    assert as_json.returncode == as_text.returncode == 0, (as_json.stderr, as_text.stderr)
    said = events(as_json.stderr)
    if as_json.stdout == "":  # no pad on this machine (the usual host): said as an event
        assert [event["event"] for event in said if event["event"] == "noPads"] == ["noPads"], said
    status = [event for event in said if "level" not in event]  # the commands' own lines (log records aside)
    text_lines = [line for line in as_text.stderr.splitlines() if line.startswith("padbridge: ")]
    assert ["padbridge: " + event["message"] for event in status] == text_lines, (said, as_text.stderr)


def test_a_refusal_before_start_stays_argument_parser_text():
    """Options are read before the format is known: a wrong one is the usual text, whatever --events says."""
    result = subprocess.run([BINARY, "list", "--events", "xml"], capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "--events" in result.stderr and "json" in result.stderr, result.stderr
