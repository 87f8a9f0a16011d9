"""Command lines padbridge refuses before it touches a device, on the host (no pad, no /dev/uinput needed): each
refusal names what is wrong and what to do instead, and exits non-zero without a trace of a crash."""

import os
import subprocess

BINARY = os.environ.get("PADBRIDGE_BIN", ".build/debug/padbridge")


def refused(*arguments: str) -> str:
    result = subprocess.run([BINARY, *arguments], capture_output=True, text=True, timeout=60)
    assert result.returncode != 0, f"{arguments}: accepted: {result.stdout}{result.stderr}"
    assert "Fatal error" not in result.stderr and "Traceback" not in result.stderr, result.stderr
    return result.stderr


def test_a_broken_profile_is_refused_before_monitor_view_looks_for_a_pad(tmp_path):
    profile = tmp_path / "broken.toml"
    profile.write_text("[sticks.left]\ndeadzon = 0.3\n")
    error = refused("monitor", "--view", "--profile", str(profile))
    assert f"{profile}: line 2" in error and "allowed here: deadzone" in error, error


def test_monitor_profile_needs_view():
    assert "add --view" in refused("monitor", "--profile", "any.toml")


def test_record_from_needs_evemu_and_no_pad():
    assert "add --evemu" in refused("record", "--from", "x.rec")
    assert "give no PAD" in refused("record", "0", "--evemu", "--from", "x.rec")


def test_record_evemu_from_a_file_that_is_not_a_recording_names_its_line(tmp_path):
    path = tmp_path / "notes.txt"
    path.write_text("# a comment\nhello\n")
    error = refused("record", "--evemu", "--from", str(path), "-o", str(tmp_path / "out.evemu"))
    assert f"{path}: line 2" in error, error
    assert not (tmp_path / "out.evemu").exists(), "nothing is written from a broken recording"


def test_serve_names_the_line_of_a_paired_clients_file_it_cannot_read(tmp_path):
    # serve listens on 127.0.0.1 only; it is stopped as soon as it has said what is wrong.
    config = tmp_path / "host"
    config.mkdir(mode=0o700)
    (config / "paired-clients").write_text("# clients\nnot-a-key laptop\n")
    serve = subprocess.Popen([BINARY, "serve", "--listen", "127.0.0.1:0", "--config-dir", str(config)],
                             stdin=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = []
        for line in serve.stderr:
            lines.append(line)
            if "paired clients" in line:
                break
        problem = lines[-1]
        assert f"{config / 'paired-clients'}: line 2" in problem and "every client is refused" in problem, lines
    finally:
        serve.terminate()
        serve.wait(30)


def recording_file(tmp_path):
    path = tmp_path / "pad.rec"
    path.write_text("padbridge-recording 1\n"
                    "pad id=0123456789ab kind=generic bus=usb vendor=046d product=c216 version=0110 name=pad\n")
    return path


def test_durations_and_speeds_that_are_no_number_of_seconds_are_refused(tmp_path):
    """Values that would not fit the timers (infinite, astronomically large, vanishingly small) are refused by name
    before anything runs, instead of trapping when converted to nanoseconds."""
    for value in ("inf", "1e20", "nan"):
        error = refused("record", "--duration", value)
        assert "--duration" in error, (value, error)
    recording = str(recording_file(tmp_path))
    for option, value in (("--delay", "1e20"), ("--delay", "inf"), ("--speed", "1e-300"), ("--speed", "inf")):
        error = refused("replay", recording, option, value)
        assert option in error, (option, value, error)


def test_remap_takes_one_profile_or_a_profiles_directory_not_both(tmp_path):
    error = refused("remap", "--all", "--profile", str(tmp_path / "one.toml"), "--profiles", str(tmp_path))
    assert "use one" in error, error
