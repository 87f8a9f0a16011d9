"""padbridge monitor --view in a real terminal: tmux runs it in an 80x24 pane, `capture-pane` reads the picture
after the DualSense stand-in produces input, and the terminal is checked to be given back (the picture gone, the
line discipline's echo and canonical mode restored) after q, Ctrl-C and SIGTERM. The pane is read again each time
tmux reports output to it (a control-mode client's `%output` notifications), not on a timer."""
import contextlib
import re
import subprocess
import threading
import time

import pytest

from conftest import DEADLINE, padbridge_binary, start_dualsense

SOCKET = "padbridge-view-test"


def tmux(*args: str) -> str:
    return subprocess.run(["tmux", "-L", SOCKET, *args], check=True, capture_output=True, text=True,
                          timeout=DEADLINE).stdout


def screen() -> str:
    return tmux("capture-pane", "-p", "-t", "view")


class PaneOutput:
    """A tmux control-mode client on the test's session: tmux reports every output a pane gets to it as an
    `%output` line, so a test waits for the pane to change instead of polling it. It does not size the window
    (`ignore-size`) and sends nothing to it (`read-only`)."""

    def __init__(self):
        self.proc = subprocess.Popen(["tmux", "-L", SOCKET, "-C", "attach-session", "-t", "view", "-f",
                                      "ignore-size,read-only"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True, errors="replace")
        self.outputs = 0
        self.closed = False
        self.changed = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            if line.startswith("%output "):
                with self.changed:
                    self.outputs += 1
                    self.changed.notify_all()
        with self.changed:
            self.closed = True
            self.changed.notify_all()

    def mark(self) -> int:
        with self.changed:
            return self.outputs

    def wait_after(self, mark: int, timeout: float):
        """Returns once output came after `mark`, the client ended, or `timeout` passed."""
        with self.changed:
            self.changed.wait_for(lambda: self.outputs > mark or self.closed, timeout=timeout)

    def close(self):
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.terminate()
        self.proc.wait(timeout=DEADLINE)


pane_output: PaneOutput | None = None

# tmux parses a pane's output before it reports it to control clients, so a read after a report sees it; reading
# again at least this often is only a safety net.
REREAD_S = 0.5


def wait_screen(predicate, what: str, timeout: float = DEADLINE) -> str:
    """Reads the pane until `predicate(text)` holds: again each time tmux reports output to it."""
    assert pane_output is not None, "no tmux session to watch"
    deadline = time.monotonic() + timeout
    while True:
        mark = pane_output.mark()
        text = screen()
        if predicate(text):
            return text
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"no {what} within {timeout:.0f} s; the pane shows:\n{text}")
        pane_output.wait_after(mark, min(left, REREAD_S))


@contextlib.contextmanager
def view_of_a_dualsense(padbridge, *extra: str):
    """A DualSense stand-in, and `monitor --view` of it (with `extra` options) in an 80x24 tmux pane."""
    pad, ready, _ = start_dualsense(padbridge, "--seed", "view", name="padbridge viewed DualSense")
    subprocess.run(["tmux", "-L", SOCKET, "kill-server"], capture_output=True)
    # The shell keeps the pane after monitor ends, so what it left behind can be read; its INT trap keeps it
    # alive through Ctrl-C (a trap, unlike an ignored signal, is not inherited by monitor).
    command = (f"trap true INT; {padbridge_binary()} monitor {ready['hidraw']} --view {' '.join(extra)}; "
               "echo EXITED $?; stty -a; exec sleep 3600")
    global pane_output
    tmux("new-session", "-d", "-s", "view", "-x", "80", "-y", "24", command)
    pane_output = PaneOutput()
    try:
        wait_screen(lambda text: "padbridge monitor  padbridge viewed DualSense" in text, "pad picture")
        yield pad
    finally:
        subprocess.run(["tmux", "-L", SOCKET, "kill-server"], capture_output=True)
        pane_output.close()
        pane_output = None


@pytest.fixture
def view_pane(padbridge):
    with view_of_a_dualsense(padbridge) as pad:
        yield pad


def exited_and_stty_ran(text: str) -> bool:
    return "EXITED" in text and re.search(r"(^|\s)-?icanon(\s|$)", text) is not None


def assert_terminal_given_back(text: str):
    assert "EXITED 0" in text, text
    assert "left stick" not in text, f"the picture is still on screen:\n{text}"
    flags = set(text.split())
    assert "icanon" in flags and "echo" in flags, f"line discipline not restored:\n{text}"


def test_the_view_shows_a_held_button_a_stick_and_a_touch_and_q_gives_the_terminal_back(view_pane):
    pad = view_pane
    assert "[A]" not in screen()
    pad.button("a", True)
    wait_screen(lambda text: "[A]" in text, "held A")
    pad.axis("leftx", 32767)
    text = wait_screen(lambda text: re.search(r"x (\d+) y 0", text) and int(re.search(r"x (\d+) y 0", text)[1]) > 30000,
                       "left stick at the right")
    assert " B " in text and "[B]" not in text
    pad.send(type="touch", contact=0, active=True, x=0.5, y=0.25)
    wait_screen(lambda text: re.search(r"#0 id \d+ \(0\.5\d, 0\.2\d\)", text), "touch contact 0")
    pad.button("a", False)
    wait_screen(lambda text: "[A]" not in text and " A " in text, "A released")
    tmux("send-keys", "-t", "view", "q")
    assert_terminal_given_back(wait_screen(exited_and_stty_ran, "monitor's exit and stty's report"))


@pytest.mark.parametrize("ending", ["C-c", "SIGTERM", "unplug"])
def test_ctrl_c_sigterm_and_unplugging_give_the_terminal_back(view_pane, ending):
    if ending == "C-c":
        tmux("send-keys", "-t", "view", "C-c")
    elif ending == "unplug":
        assert view_pane.stop() == 0
        text = wait_screen(exited_and_stty_ran, "monitor's exit and stty's report")
        assert "was unplugged" in text.replace("\n", ""), f"no word of the unplugged pad:\n{text}"
    else:
        # Only the padbridge process: its command line starts with the binary (the shell's and tmux's do not).
        subprocess.run(["pkill", "-TERM", "-f", f"^{padbridge_binary()} monitor "], check=True)
    assert_terminal_given_back(wait_screen(exited_and_stty_ran, "monitor's exit and stty's report"))


def test_a_window_smaller_than_80x24_is_told_so(view_pane):
    tmux("resize-window", "-t", "view", "-x", "60", "-y", "20")
    wait_screen(lambda text: "needs a window of at least 80x24; this one is 60x20" in text.replace("\n", ""),
                "too-small message")
    tmux("resize-window", "-t", "view", "-x", "80", "-y", "24")
    wait_screen(lambda text: "left stick" in text, "the picture again")


def test_the_view_shows_a_profiles_deadzone_what_it_makes_of_the_left_stick_and_its_keys(padbridge, tmp_path):
    profile = tmp_path / "deadzone.toml"
    profile.write_text("[sticks.left]\ndeadzone = 0.3\n[map]\na = \"key:space\"\n")
    with view_of_a_dualsense(padbridge, "--profile", str(profile)) as pad:
        wait_screen(lambda text: "left dz 0.30" in text and "right dz 0.00" in text and re.search(r"\|\s*:+o:+\s*\|", text),
                    "the profile's deadzones, the left one drawn around the centred dot")
        pad.axis("leftx", 6554)  # a fifth of full deflection: inside the deadzone, so the profile keeps it centred
        wait_screen(lambda text: (m := re.search(r"x (\d+) y -?\d+", text)) and int(m[1]) > 3000
                    and "profile L 0,0 " in text, "a moved left stick that the profile reads as centred")
        pad.axis("leftx", 32767)
        wait_screen(lambda text: (m := re.search(r"profile L (\d+),-?\d+ ", text)) and int(m[1]) > 30000,
                    "the left stick at the right, past the deadzone")
        # What the profile's keyboard would do (nothing is pressed for real: monitor makes no device).
        wait_screen(lambda text: "keys/mouse: -  pointer 0,0" in text, "the profile's keyboard, idle")
        pad.button("a", True)
        wait_screen(lambda text: "keys/mouse: key:space " in text, "a holding the profile's space key")
        tmux("send-keys", "-t", "view", "q")
        text = wait_screen(exited_and_stty_ran, "monitor's exit and stty's report")
        assert "EXITED 0" in text and "profile L" not in text, text

