"""The host's web console (issue 29) in a real browser: Debian's chromium, headless, driven by chromedriver (selenium),
against `padbridge console` on loopback in front of a `serve` whose virtual pads the kernel makes. The page is read as
a person would: the pairing code from the page pairs a client, its pad appears and a held button lights up, a game's
rumble shows, and revoking from the page takes the pad away (python-evdev sees the node go). Access as issue 42 left it:
the token in the address's fragment (printed only to a terminal; `padbridge console --print-url` otherwise), never a
cookie. Screenshots go to the suite's results directory (KERNEL_SUITE_RESULTS/console-*.png) for a person to look at.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
import urllib.error
import urllib.request

import evdev
import pytest
from evdev import ecodes
from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

from conftest import DEADLINE, attached, padbridge_binary, read_until_gone, rumble_effect, start_xbox
from forwarding import PORT, connect, pair


def screenshot(browser, tmp_path, name: str):
    directory = os.environ.get("KERNEL_SUITE_RESULTS") or str(tmp_path)
    path = os.path.join(directory, f"console-{name}.png")
    browser.save_screenshot(path)
    print(f"screenshot: {path}")


def wait_for(browser, what: str, condition, timeout: float = DEADLINE):
    """Polls `condition(browser)` every 20 ms (elements the page's script replaces are looked up again)."""
    def attempt(driver):
        try:
            return condition(driver)
        except StaleElementReferenceException:
            return False
    try:
        return WebDriverWait(browser, timeout, poll_frequency=0.02).until(attempt)
    except Exception as error:
        raise AssertionError(f"the page never showed {what} within {timeout:.0f} s; it shows:\n"
                             f"{browser.find_element(By.TAG_NAME, 'body').text}") from error


@pytest.fixture
def browser(tmp_path):
    """Chromium, headless, started here and attached to by chromedriver: under the VM's emulation its first start
    takes over a minute (most of it reading the browser over 9p), longer than chromedriver waits for a browser it
    starts itself."""
    profile = tmp_path / "chromium"
    # A home of its own: the guest's /root is the host's, read-only here, and chromium's crash handler wants to
    # write under ~/.config ("chrome_crashpad_handler: --database is required", then no DevTools line, on a
    # machine whose /root/.config/chromium did not exist yet).
    home = tmp_path / "home"
    home.mkdir()
    environment = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
                   "XDG_CACHE_HOME": str(home / ".cache")}
    chromium = subprocess.Popen(
        ["/usr/bin/chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--window-size=1200,1000", "--no-first-run", f"--user-data-dir={profile}", "--remote-debugging-port=0",
         "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, errors="replace", env=environment)
    try:
        # Once ready, chromium says on standard error where its DevTools listen: that line is waited for (its other
        # lines, D-Bus complaints in the VM, are kept for the failure message).
        said: list[str] = []
        ready = threading.Event()

        def read_stderr():
            for line in chromium.stderr:
                said.append(line.rstrip())
                if line.startswith("DevTools listening on ws://"):
                    ready.set()
            ready.set()  # it ended: the wait below says so
        threading.Thread(target=read_stderr, daemon=True).start()
        assert ready.wait(300), "chromium was not ready within 300 s:\n" + "\n".join(said[-20:])
        listening = [line for line in said if line.startswith("DevTools listening on ws://")]
        assert listening, f"chromium exited with status {chromium.poll()} before it was ready:\n" + "\n".join(said[-20:])
        port = int(listening[0].split("ws://", 1)[1].split("/", 1)[0].rsplit(":", 1)[1])
        options = webdriver.ChromeOptions()
        options.debugger_address = f"127.0.0.1:{port}"
        driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
        # A page load (and chromedriver's wait for the renderer) may take long with another VM beside this one: a busy
        # run failed with "Timed out receiving message from renderer: 18.352" under the suite's 30 s.
        driver.set_page_load_timeout(max(DEADLINE, 120))
        yield driver
        driver.quit()
    finally:
        chromium.kill()
        chromium.wait()


def console_address(console, host_config) -> str:
    """The address with its token. The console's standard output is a pipe here, not a terminal, so it prints only the
    plain address (the token would land in a service's journal) and names `--print-url`, which prints the whole one."""
    _, line = console.wait_stdout(lambda line: line if "console for" in line and " at http://" in line else None,
                                  what="the console's address")
    assert "token" not in line.split(" (", 1)[0], f"the token was printed to a pipe: {line}"
    assert "--print-url" in line, line
    plain = line.split(" at ", 1)[1].split()[0]
    listen = plain.split("//", 1)[1].rstrip("/")
    printed = subprocess.run([padbridge_binary(), "console", "--print-url", "--listen", listen, "--config-dir", str(host_config)],
                             capture_output=True, text=True, timeout=DEADLINE)
    assert printed.returncode == 0, printed.stderr
    address = printed.stdout.strip()
    assert address.startswith(plain + "#token="), address
    return address


def test_the_console_pairs_shows_a_pad_live_and_revokes_it_in_a_real_browser(padbridge, browser, tmp_path):
    host = tmp_path / "host"
    serve = padbridge("--listen", f"127.0.0.1:{PORT}", "--config-dir", str(host), command="serve")
    console = padbridge("--config-dir", str(host), "--listen", "127.0.0.1:0", command="console")
    address = console_address(console, host)
    base, token = address.split("#token=", 1)
    token_file = host / "console-token"
    assert oct(token_file.stat().st_mode & 0o777) == "0o600" and token_file.read_text().strip() == token

    # Without the token: the page is a shell that says what is missing; the host's data, the live view and a change are
    # refused to a plain client, even with the cookie the console used to set (a browser sends a cookie to every
    # loopback port); and no answer sets a cookie.
    browser.get(base)
    assert "no token" in wait_for(browser, "the refusal", lambda b: b.find_element(By.ID, "refusal").text)
    assert browser.get_cookies() == [], browser.get_cookies()
    screenshot(browser, tmp_path, "refused")
    with urllib.request.urlopen(base, timeout=DEADLINE) as shell:
        assert shell.headers.get("Set-Cookie") is None
        assert "pairing" not in shell.read().decode().lower()
    old_cookie = {"Cookie": f"padbridge-console-{base.rsplit(':', 1)[1].strip('/')}={token}"}
    upgrade = {"Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
               "Sec-WebSocket-Version": "13"}
    for path, headers, method in (("fragment/host", {}, "GET"), ("fragment/host", old_cookie, "GET"),
                                  ("events", upgrade, "GET"), ("events", {**upgrade, **old_cookie}, "GET"),
                                  (f"events?token={token}", upgrade, "GET"), ("pairing/open", old_cookie, "POST")):
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(urllib.request.Request(base + path, headers=headers, method=method,
                                                          data=b"" if method == "POST" else None), timeout=DEADLINE)
        assert refused.value.code == 403, (path, headers)
        assert refused.value.headers.get("Set-Cookie") is None

    # With it: the page (the token leaves the address bar for the tab's storage); open pairing and read the code off
    # the page.
    browser.get(address)
    wait_for(browser, "the pairing button", lambda b: b.find_element(By.ID, "open-pairing"))
    assert "token" not in browser.current_url, browser.current_url
    assert browser.get_cookies() == [], browser.get_cookies()
    assert browser.execute_script("return sessionStorage.getItem('padbridge-console-token')") == token
    wait_for(browser, "the pairing button", lambda b: b.find_element(By.ID, "open-pairing")).click()
    code = wait_for(browser, "the pairing code", lambda b: b.find_element(By.ID, "pairing-code").text)
    screenshot(browser, tmp_path, "pairing")
    result = pair(tmp_path / "client", code)
    assert result.returncode == 0, result.stderr
    wait_for(browser, "the new client", lambda b: b.find_elements(By.CSS_SELECTOR, "tr.client"))

    # Its pad forwarded: drawn on the page; a held button lights up on the drawing within a second.
    stand_in, _, node = start_xbox(padbridge, "--name", "console pad")
    connect(padbridge, tmp_path / "client", node.path)
    _, ready = attached(serve)
    gamepad = evdev.InputDevice(ready["eventNodes"][0])
    wait_for(browser, "the pad's drawing", lambda b: b.find_elements(By.CSS_SELECTOR, "article.pad"))
    held = '[data-button="a"].held'
    assert not browser.find_elements(By.CSS_SELECTOR, held)
    # The page notes when A lights up (the wall clock, which this process shares), so the figure is the page's,
    # not the time chromedriver takes to look.
    browser.execute_script("""
        const part = document.querySelector('[data-button="a"]');
        new MutationObserver((changes, observer) => {
          if (part.classList.contains("held")) { window.aLitAt = Date.now(); observer.disconnect(); }
        }).observe(part, { attributes: true, attributeFilter: ["class"] });""")
    pressed = time.time()
    stand_in.button("a", True)
    lit_at = wait_for(browser, "button A held", lambda b: b.execute_script("return window.aLitAt || null"))
    lit = lit_at / 1000 - pressed
    print(f"button A lit on the page {lit * 1000:.0f} ms after the stand-in pressed it")
    assert lit < 1.0, f"button A lit on the page only after {lit * 1000:.0f} ms"
    stand_in.axis("leftx", 32767)
    wait_for(browser, "the left stick moved",
             lambda b: float(b.find_element(By.CSS_SELECTOR, '[data-stick="left"]').get_attribute("cx")) > 125)

    # A game rumbles the virtual pad: the drawing says so.
    effect = gamepad.upload_effect(rumble_effect(0xC000, 0x4000))
    gamepad.write(ecodes.EV_FF, effect, 1)
    wait_for(browser, "the rumble indicator", lambda b: b.find_elements(By.CSS_SELECTOR, "article.pad.rumbling"))
    rows = browser.find_elements(By.CSS_SELECTOR, "tr.client")
    assert "connected" in rows[0].text and "console pad" in rows[0].text, rows[0].text
    wait_for(browser, "the link's round trip", lambda b: "ms" in b.find_element(By.CSS_SELECTOR, "td.round-trip").text)
    screenshot(browser, tmp_path, "live")

    # Revoke from the page: the pad is released, then goes; the page shows no pad and no client. The pad is read from
    # before the click: by the time the page shows the change the node may be gone, and events still queued on a node
    # that went cannot be read.
    seen: dict = {}
    reader = threading.Thread(target=lambda: seen.setdefault("events", read_until_gone(gamepad)), daemon=True)
    reader.start()
    wait_for(browser, "the revoke button", lambda b: b.find_element(By.CSS_SELECTOR, "button.revoke")).click()
    reader.join(DEADLINE)
    assert "events" in seen, "the virtual pad was still there after the revoke"
    events = seen["events"]
    assert any(e.type == ecodes.EV_KEY and e.code == ecodes.BTN_A and e.value == 0 for e in events), events
    wait_for(browser, "no pad", lambda b: not b.find_elements(By.CSS_SELECTOR, "article.pad"))
    wait_for(browser, "no client", lambda b: not b.find_elements(By.CSS_SELECTOR, "tr.client"))
    screenshot(browser, tmp_path, "revoked")
