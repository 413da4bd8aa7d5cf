# Hotplug and permissions: systemd-udevd in the guest with the project's udev/70-ingestd.rules;
# the daemon runs as an unprivileged member of the ingestd group.

REPO_ROOT=$(cd "$VM_DEVICES/../.." && pwd)

# usb_node VID: the /dev/bus/usb node of the first device with this vendor id.
usb_node() {
    local device
    for device in /sys/bus/usb/devices/*; do
        [ "$(cat "$device/idVendor" 2> /dev/null)" = "$1" ] || continue
        printf '/dev/bus/usb/%03d/%03d\n' "$(cat "$device/busnum")" "$(cat "$device/devnum")"
        return 0
    done
    return 1
}

# node_has_mode NODE "GROUP MODE": whether the device node exists with that group and mode.
node_has_mode() { [ -n "$1" ] && [ "$(stat -c '%G %a' "$1" 2> /dev/null)" = "$2" ]; }

# user_prefix USER: sets AS_USER to the command prefix that runs a program as USER with USER's
# groups (setpriv and env exec it: the pid, and the signals sent to it, are the program's).
user_prefix() { AS_USER=(setpriv --reuid="$1" --regid="$(id -g "$1")" --init-groups env HOME="/tmp/home-$1"); }
as_user() { local AS_USER; user_prefix "$1"; shift; "${AS_USER[@]}" "$@"; }

# open_errno USER NODE: what opening the node read-write as USER gives ("ok" or the errno name).
open_errno() {
    as_user "$1" "$PYTHON" -c "
import errno, sys
try:
    open(sys.argv[1], 'r+b').close(); print('ok')
except OSError as failure:
    print(errno.errorcode.get(failure.errno, failure.errno))" "$2"
}

scenario_udev_permissions() {
    section "Hotplug and permissions: systemd-udevd + udev/70-ingestd.rules, daemon as a user of group ingestd"
    groupadd --system ingestd
    useradd --system --no-create-home --no-user-group --gid nogroup --groups ingestd vm-daemon
    useradd --system --no-create-home --no-user-group --gid nogroup vm-outsider
    mkdir -p /tmp/home-vm-daemon /tmp/home-vm-outsider /etc/udev/rules.d
    chown vm-daemon /tmp/home-vm-daemon; chown vm-outsider /tmp/home-vm-outsider
    install -m 644 "$REPO_ROOT/udev/70-ingestd.rules" /etc/udev/rules.d/
    /lib/systemd/systemd-udevd --daemon
    udevadm trigger --action=add > /dev/null 2>&1
    udevadm settle --timeout=60
    local store=/tmp/home-vm-daemon/health.sqlite log=$RESULTS/ingestd-udev.log
    as_user vm-daemon "$INGESTD_BIN" auth grant ant-plus --all --store $store > /dev/null 2>&1
    as_user vm-daemon "$INGESTD_BIN" auth grant omron-hj720it --all --store $store > /dev/null 2>&1
    local AS_USER
    user_prefix vm-daemon
    INGESTD_LOG_LEVEL=info "${AS_USER[@]}" "$INGESTD_BIN" run --no-ble --store $store "${ANT_KEY_OPTION[@]}" \
        --adapter-option ant-batch-seconds=2 "${OMRON_OPTIONS[@]}" > "$log" 2>&1 &
    local daemon=$!
    wait_for 30 grep -q 'started' "$log"
    # Plugged in after the daemon started: libusb's hotplug (udev's netlink events) reports it.
    check "udev: stick plugged in while the daemon runs" gadget_start ant ant --bpm 64 --kg 72.35 || { kill $daemon; gadget_stop ant; return; }
    # The gadget side says "configured" a moment before the host's sysfs entry and node exist
    # (seen once in CI): wait for the host's device, then for udev's rule to have been applied.
    wait_for 30 usb_node 0fcf
    udevadm settle --timeout=60
    local node
    node=$(usb_node 0fcf)
    wait_for 15 node_has_mode "$node" "ingestd 660"
    note "node $node: $(stat -c '%U:%G %a' "$node" 2> /dev/null)"
    check "udev: the node is group ingestd, mode 0660" node_has_mode "$node" "ingestd 660"
    check "udev: a member of ingestd opens it" [ "$(open_errno vm-daemon "$node")" = ok ]
    check "udev: a user outside the group cannot (EACCES)" [ "$(open_errno vm-outsider "$node")" = EACCES ]
    check "udev: hotplug arrival started a session" wait_for 60 grep -q 'ant-plus.*arrived: starting its session' "$log"
    check "udev: the unprivileged daemon stored the strap's 64 bpm" \
        wait_for 90 sh -c "'$INGESTD_BIN' samples heartRate --unit count/min --json --store $store | grep -q value"
    expect_samples $store heartRate ant-plus count/min --min-count 1 --value 64 > /dev/null \
        || check "udev: stored heart rate is 64 bpm" false
    # What an outsider's daemon says about the device it cannot open:
    local outsider_log=$RESULTS/ingestd-udev-outsider.log
    user_prefix vm-outsider
    INGESTD_LOG_LEVEL=info timeout 60 "${AS_USER[@]}" "$INGESTD_BIN" run --once --listen 3 --no-ble \
        --store /tmp/home-vm-outsider/health.sqlite "${ANT_KEY_OPTION[@]}" > "$outsider_log" 2>&1
    check "udev: an outsider's daemon says access is denied and how to fix it" \
        log_has "$outsider_log" "access denied.*udev-rules"
    # Hotplug both ways: the stick pulled out ends its session; a history device plugged in is
    # read, and read again each time it is plugged in again (nothing duplicated).
    gadget_stop ant
    check "udev: unplugging the stick ends its session" wait_for 30 grep -qE 'ant-plus.*(session finished|device gone)' "$log"
    local plug
    for plug in 1 2; do
        gadget_stop omron
        gadget_start omron omron --capture "$OMRON_CAPTURES/pedometerLog1-session.pcapng" || break
        check "udev: pedometer plugged in ($plug): read to the end" \
            wait_for 90 sh -c "[ \$(grep -c 'omron-hj720it.*session finished' '$log') = $plug ]"
    done
    check "udev: its days equal the vendor export" omron_days_match $store
    check "udev: read twice, stored once (61 hours)" expect_samples $store stepCount omron-hj720it count --count 61
    gadget_stop omron
    kill -TERM $daemon
    wait_pid $daemon 10
    check "udev: SIGTERM, exit 0" [ "$WAITED_STATUS" = 0 ]
    gadget_stop ant
    udevadm control --exit 2> /dev/null
}
