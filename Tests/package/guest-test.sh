#!/bin/bash
# scripts/test-package's checks, run as root by padbridge-package-test.service inside a clean Debian 12 system booted
# with systemd as PID 1, where the package was installed with apt. Each check prints "padbridge-test: ok NAME" or
# "padbridge-test: FAIL NAME: WHY" on the console (the host reads them), the last line the totals.
# /root/package-test holds this script, pads.py, version (the package's version), upgrade.deb (the same package
# rebuilt with a higher version).
set -u
cd /root/package-test
version=$(cat version)
upgrade_version=$(cat upgrade-version)
passed=0 failed=0
ok() { echo "padbridge-test: ok $1"; passed=$((passed + 1)); }
fail() {
    echo "padbridge-test: FAIL $1: $2"
    failed=$((failed + 1))
}
# check NAME COMMAND...: ok when COMMAND succeeds; its output (the last 30 lines) shows when it does not.
check() {
    local name=$1 output
    shift
    if output=$("$@" 2>&1); then ok "$name"; else fail "$name" "$(tail -n 30 <<<"$output")"; fi
}
# waits until COMMAND succeeds, at most SECONDS (under emulation a start takes seconds)
wait_for() {
    local seconds=$1
    shift
    local deadline=$((SECONDS + seconds))
    until "$@" >/dev/null 2>&1; do
        ((SECONDS < deadline)) || return 1
        sleep 0.5
    done
}
tester_uid=$(id -u tester)
as_tester() { runuser -u tester -- env XDG_RUNTIME_DIR=/run/user/$tester_uid HOME=/home/tester "$@"; }
user_journal() { journalctl --no-pager -o cat _SYSTEMD_USER_UNIT="$1" _UID="$tester_uid"; }
serve_journal() { journalctl --no-pager -o cat -u padbridge-serve.service; }
main_pid() { systemctl show -p MainPID --value padbridge-serve; }

echo "padbridge-test: kernel $(uname -r), systemd $(systemctl --version | head -n1), PID 1 is $(cat /proc/1/comm)"

# -- the package as installed --------------------------------------------------------------------------------------
check "padbridge --version prints the package's version" bash -c "[[ \$(padbridge --version) == '$version' ]]"
check "dpkg knows padbridge $version" bash -c "[[ \$(dpkg-query -W -f='\${Version}' padbridge) == '$version' ]]"
check "man padbridge-connect renders" bash -c 'out=$(MANWIDTH=100 man -P cat padbridge-connect 2>&1) &&
    grep -q "padbridge connect" <<<"$out" && grep -q -- "--all" <<<"$out" && grep -q "SYNOPSIS" <<<"$out"'
check "man padbridge-console renders; its user unit is installed and not enabled" bash -c '
    out=$(MANWIDTH=100 man -P cat padbridge-console 2>&1) && grep -q -- "--listen" <<<"$out" &&
    test -s /usr/lib/systemd/user/padbridge-console.service && ! systemctl --global is-enabled --quiet padbridge-console'
check "man padbridge shows the three uses" bash -c 'out=$(MANWIDTH=100 man -P cat padbridge 2>&1) &&
    grep -q Forwarding <<<"$out" && grep -q Remapping <<<"$out" && grep -q Diagnostics <<<"$out"'
check "bash-completion loads padbridge's completion and completes commands" bash -c '
    source /usr/share/bash-completion/bash_completion
    __load_completion padbridge || exit 1
    function=$(complete -p padbridge | sed -n "s/.*-F \([^ ]*\) .*/\1/p")
    [[ -n $function ]] || exit 1
    COMP_WORDS=(padbridge con); COMP_CWORD=1; COMP_LINE="padbridge con"; COMP_POINT=${#COMP_LINE}
    "$function" padbridge con padbridge
    printf "%s\n" "${COMPREPLY[@]}" | grep -qx connect'
check "zsh and fish completions are where they load from" \
    test -s /usr/share/zsh/vendor-completions/_padbridge -a -s /usr/share/fish/vendor_completions.d/padbridge.fish
check "the padbridge system user exists" bash -c 'getent passwd padbridge | grep -q "^padbridge:"'
check "/var/lib/padbridge is the padbridge user's, mode 0700" \
    bash -c '[[ $(stat -c "%U %a" /var/lib/padbridge) == "padbridge 700" ]]'
check "uinput and uhid are loaded" bash -c 'test -c /dev/uinput && test -c /dev/uhid && grep -q "^uinput " /proc/modules && grep -q "^uhid " /proc/modules'
check "/dev/uinput and /dev/uhid belong to group padbridge" \
    bash -c '[[ $(stat -c %G /dev/uinput) == padbridge && $(stat -c %G /dev/uhid) == padbridge ]]'
check "no service was enabled or started by installing" bash -c '
    ! systemctl is-enabled --quiet padbridge-serve && ! systemctl is-active --quiet padbridge-serve &&
    ! systemctl --global is-enabled --quiet padbridge-remap padbridge-serve'

# -- the logged-in user (autologin on tty1: a seat session, as at a desk) -----------------------------------------
if wait_for 120 bash -c "loginctl show-user tester -p State --value | grep -qx active"; then
    ok "tester is logged in on seat0"
else
    fail "tester is logged in on seat0" "$(loginctl list-sessions 2>&1)"
fi
wait_for 60 test -S "/run/user/$tester_uid/systemd/private" || true
check "the logged-in user may use /dev/uinput without sudo, and doctor says how to opt in to /dev/uhid" bash -c "
    out=\$(runuser -u tester -- env XDG_RUNTIME_DIR=/run/user/$tester_uid padbridge doctor 2>&1) || { echo \"\$out\"; exit 1; }
    grep -q '^ok *  /dev/uinput: present and writable' <<<\"\$out\" && grep -q 'usermod -aG padbridge' <<<\"\$out\" ||
        { echo \"\$out\"; exit 1; }"
usermod -aG padbridge tester
check "a user in the padbridge group may use /dev/uhid (padbridge doctor)" bash -c "
    runuser -u tester -- padbridge doctor 2>&1 | grep -q '^ok *  /dev/uhid: present and writable'"
gpasswd -d tester padbridge >/dev/null

# -- the host: padbridge-serve as the padbridge user --------------------------------------------------------------
systemctl start padbridge-serve
if wait_for 60 bash -c "journalctl -o cat -u padbridge-serve.service | grep -q 'listening on'"; then
    ok "systemctl start padbridge-serve: listening"
else
    fail "systemctl start padbridge-serve: listening" "$(systemctl status --no-pager padbridge-serve 2>&1 | tail -n 20)"
fi
pid=$(main_pid)
check "padbridge-serve runs as the padbridge user" bash -c "[[ \$(ps -o user= -p $pid) == padbridge ]]"
check "padbridge-serve's /dev holds /dev/uinput and /dev/uhid and no input or hidraw nodes" bash -c "
    ls /proc/$pid/root/dev/uinput /proc/$pid/root/dev/uhid && ! ls /proc/$pid/root/dev/input 2>/dev/null &&
    ! ls /proc/$pid/root/dev/ | grep -q hidraw"
security=$(systemd-analyze security --no-pager padbridge-serve.service 2>&1)
echo "$security" | sed 's/^/padbridge-test: security: /'
exposure=$(sed -n 's/.*Overall exposure level for padbridge-serve.service: *\([0-9.]*\) *\([A-Z]*\).*/\1 \2/p' <<<"$security")
echo "padbridge-test: systemd-analyze security padbridge-serve: $exposure"
check "systemd-analyze security padbridge-serve is OK or better ($exposure)" bash -c "[[ '$exposure' =~ (OK|SAFE)$ ]]"

# -- pairing on the running service, the documented way ------------------------------------------------------------
code=$(sudo -u padbridge padbridge pairing-window --config-dir /var/lib/padbridge 2>&1 |
    sed -n 's/^padbridge: pairing code \(.*\)$/\1/p')
if [[ -n $code ]] && wait_for 30 bash -c "journalctl -o cat -u padbridge-serve.service | grep -q 'pairing window open'"; then
    ok "sudo -u padbridge padbridge pairing-window opens a window on the running service"
else
    fail "sudo -u padbridge padbridge pairing-window opens a window on the running service" "code '$code'; $(serve_journal | tail -n 10)"
fi
check "the logged-in user pairs with the service (padbridge pair 127.0.0.1 CODE)" \
    as_tester padbridge pair 127.0.0.1 "$code" --name tester-laptop

# -- the client as a user unit: a pad plugged in after it started is forwarded ----------------------------------
as_tester systemctl --user start padbridge-connect@127.0.0.1
if wait_for 60 bash -c "journalctl -o cat _UID=$tester_uid | grep -q 'padbridge: connected to 127.0.0.1'"; then
    ok "padbridge-connect@127.0.0.1 connects with no pad plugged in"
else
    fail "padbridge-connect@127.0.0.1 connects with no pad plugged in" "$(journalctl -o cat _UID=$tester_uid | tail -n 20)"
fi
check "a pad plugged in later is forwarded: python-evdev reads its taps on the service's virtual pad" \
    python3 pads.py forward BTN_A
check "the service made that virtual pad" bash -c "journalctl -o cat -u padbridge-serve.service | grep -q 'pad attached'"
as_tester systemctl --user stop padbridge-connect@127.0.0.1

# -- remap --all as a user unit, each pad's profile from the profiles directory -----------------------------------
pad_id=$(python3 pads.py id)
profiles=/home/tester/.config/padbridge/profiles
install -d -o tester -g tester /home/tester/.config /home/tester/.config/padbridge "$profiles"
printf '[map]\na = "b"\n' > "$profiles/$pad_id.toml"
printf '[map]\na = "x"\n' > "$profiles/xbox360.toml"
printf '[map]\na = "y"\n' > "$profiles/default.toml"
chown tester:tester "$profiles"/*.toml
as_tester systemctl --user start padbridge-remap
if wait_for 60 bash -c "journalctl -o cat _UID=$tester_uid | grep -q 'no pad yet'"; then
    ok "padbridge-remap starts with no pad plugged in"
else
    fail "padbridge-remap starts with no pad plugged in" "$(journalctl -o cat _UID=$tester_uid | tail -n 20)"
fi
check "padbridge-remap bridges the pad plugged in through its own profile (A comes out as B)" \
    python3 pads.py forward BTN_B
check "padbridge-remap says which profile the pad got ($pad_id.toml)" \
    bash -c "journalctl -o cat _UID=$tester_uid | grep -q 'remapped by $profiles/$pad_id.toml'"
as_tester systemctl --user stop padbridge-remap

# -- the hiding service: remap hides the pad it bridges from the user's other programs ----------------------------
# What the hiding service and remap said (shown when a check of this section fails).
# (Each line marked, so that the host, which keeps only the console's padbridge-test lines, shows it.)
hiding_journal() {
    {
        journalctl --no-pager -o short -u padbridge-hide.service | tail -n 25
        user_journal padbridge-remap.service | tail -n 30
    } | sed 's/^/padbridge-test: log: /'
}
hide_before=$(systemd-analyze security --no-pager padbridge-hide.service 2>&1 | sed -n 's/.*Overall exposure level for padbridge-hide.service: *\([0-9.]*\) *\([A-Z]*\).*/\1 \2/p')
echo "padbridge-test: systemd-analyze security padbridge-hide: $hide_before"
check "systemd-analyze security padbridge-hide is OK or better ($hide_before)" bash -c "[[ '$hide_before' =~ (OK|SAFE)$ ]]"
systemctl start padbridge-hide.socket
check "padbridge-hide.socket listens" test -S /run/padbridge/hide.socket
as_tester systemctl --user start padbridge-remap
name="while padbridge-remap bridges a pad, padbridge-hide hides its node, and gives it back when remap stops"
if output=$(python3 pads.py hidden runuser -u tester -- env XDG_RUNTIME_DIR=/run/user/$tester_uid systemctl --user stop padbridge-remap 2>&1); then
    ok "$name"
else
    fail "$name" "$(tail -n 10 <<<"$output"; hiding_journal)"
fi
as_tester systemctl --user stop padbridge-remap   # (stopped already when the check passed)
check "padbridge-hide ran with CAP_CHOWN alone, other processes invisible to it" bash -c "
    [[ \$(systemctl show -p CapabilityBoundingSet --value padbridge-hide.service) == cap_chown ]] &&
    [[ \$(systemctl show -p ProtectProc --value padbridge-hide.service) == invisible ]] &&
    [[ \$(systemctl show -p DevicePolicy --value padbridge-hide.service) == closed ]]"
check "padbridge-hide's state files are root's alone (UMask 0077)" bash -c "
    [[ \$(systemctl show -p UMask --value padbridge-hide.service) == 0077 ]]"

# -- apt upgrade to a rebuilt package: keys kept, the service restarted, the pairing still works ------------------
identity_before=$(sha256sum /var/lib/padbridge/identity)
pid_before=$(main_pid)
check "apt upgrades to the rebuilt package ($upgrade_version)" bash -c "
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q /root/package-test/upgrade.deb &&
    [[ \$(dpkg-query -W -f='\${Version}' padbridge) == '$upgrade_version' ]]"
check "the upgrade kept the host's key" bash -c "[[ \$(sha256sum /var/lib/padbridge/identity) == '$identity_before' ]]"
check "the upgrade restarted the running service" bash -c "
    systemctl is-active --quiet padbridge-serve && [[ \$(systemctl show -p MainPID --value padbridge-serve) != $pid_before ]]"
as_tester systemctl --user start padbridge-connect@127.0.0.1
check "after the upgrade the pairing still works: a forwarded pad's taps reach the service's virtual pad" \
    python3 pads.py forward BTN_A
as_tester systemctl --user stop padbridge-connect@127.0.0.1

# -- remove keeps the keys, purge deletes them ---------------------------------------------------------------------
check "apt remove stops the services and the hiding socket and keeps /var/lib/padbridge" bash -c '
    systemctl start padbridge-hide.socket &&
    DEBIAN_FRONTEND=noninteractive apt-get remove -y -q padbridge && test -f /var/lib/padbridge/identity &&
    ! systemctl is-active --quiet padbridge-serve && ! systemctl is-active --quiet padbridge-hide.socket &&
    ! systemctl is-active --quiet padbridge-hide.service && ! test -e /run/padbridge/hide.socket'
check "apt purge deletes /var/lib/padbridge" bash -c '
    DEBIAN_FRONTEND=noninteractive apt-get purge -y -q padbridge && ! test -e /var/lib/padbridge'

echo "padbridge-test: $passed passed, $failed failed"
