# Sourced by the guest suite: assertions, the Bluetooth and USB test benches, daemon helpers.
# Runs as root inside the VM; everything it starts is registered and stopped by `cleanup_all`.
# Expects: INGESTD_BIN (the release binary), VM_DEVICES (Tests/VM), RESULTS (the results share).

PYTHON=/usr/bin/python3
# The stores live in a directory only root may enter: ingestd refuses a store in a directory every
# user may write to (/tmp), as it should.
STORES=/var/lib/ingestd-vm-stores
mkdir -p -m 0700 "$STORES"
PASSED=0
FAILED=0
FAILED_NAMES=()
BACKGROUND_PIDS=()

note() { echo "    $*"; }
section() { echo; echo "== $* (uptime $(cut -d' ' -f1 /proc/uptime) s)"; }

# check NAME COMMAND...: one assertion (its status is the command's); output indented under it.
check() {
    local name=$1; shift
    if "$@"; then
        echo "PASS $name"; PASSED=$((PASSED + 1))
    else
        echo "FAIL $name"; FAILED=$((FAILED + 1)); FAILED_NAMES+=("$name")
        return 1
    fi
}

# expect_samples STORE TYPE SOURCE UNIT [store_check options]: the store holds these samples.
expect_samples() {
    local store=$1 type=$2 source=$3 unit=$4; shift 4
    "$INGESTD_BIN" samples "$type" --source "$source" --unit "$unit" --json --store "$store" > /tmp/samples.json 2> /tmp/samples.err \
        || { note "samples failed: $(cat /tmp/samples.err)"; return 1; }
    "$PYTHON" "$VM_DEVICES/store_check.py" "$@" < /tmp/samples.json
}

# log_has FILE PATTERN: the daemon logged a line matching the extended regular expression.
log_has() { grep -qE "$2" "$1" || { note "no line matching /$2/ in $(basename "$1")"; return 1; }; }
log_lacks() {
    local found
    found=$(grep -E "$2" "$1" | head -3)
    [ -z "$found" ] || { echo "$found" | cut -c1-200 | sed 's/^/    unexpected: /'; return 1; }
}

background() { "$@" & BACKGROUND_PIDS+=($!); }

# wait_for SECONDS COMMAND...: retries the command (every 0.2 s) until it succeeds or the time
# (wall clock: commands start slowly under emulation) is up.
wait_for() {
    local deadline=$((SECONDS + $1)); shift
    while :; do
        "$@" > /dev/null 2>&1 && return 0
        [ $SECONDS -lt "$deadline" ] || return 1
        sleep 0.2
    done
}

running() { kill -0 "$1" 2> /dev/null && ! ps -o stat= -p "$1" 2> /dev/null | grep -q '^Z'; }

# wait_pid PID SECONDS: waits for a child to end, at most SECONDS; its status in WAITED_STATUS
# (124 when it was still running, and then it is killed) and the time it took in WAITED_SECONDS.
wait_pid() {
    local pid=$1 began=$(date +%s%N)
    local deadline=$((SECONDS + $2))
    while running "$pid" && [ $SECONDS -lt "$deadline" ]; do sleep 0.1; done
    if running "$pid"; then
        kill -9 "$pid" 2> /dev/null; wait "$pid" 2> /dev/null; WAITED_STATUS=124
    else
        wait "$pid"; WAITED_STATUS=$?
    fi
    WAITED_SECONDS=$(awk "BEGIN { printf \"%.2f\", ($(date +%s%N) - $began) / 1e9 }")
}

cleanup_all() {
    local pid
    for pid in "${BACKGROUND_PIDS[@]}"; do kill "$pid" 2> /dev/null; done
    for pid in "${BACKGROUND_PIDS[@]}"; do wait "$pid" 2> /dev/null; done
    BACKGROUND_PIDS=()
}

# ---------------------------------------------------------------- Bluetooth

# btmgmt prints nothing when its stdin is /dev/null (its shell needs a pollable input): feed it
# a pipe that stays open for the command's duration.
mgmt() { timeout 20 btmgmt "$@" < <(sleep 20) 2>&1; }

# bt_start COUNT: btvirt with COUNT controllers on one virtual air (hci0 .. hciCOUNT-1). Under
# emulation btvirt sometimes loses a controller to a start-up race (its HCI Reset times out and
# the address stays 00:00:00:00:00:00): detected and retried, at most 6 times. Sets BT_ADDRESS[i].
bt_start() {
    local count=$1 attempt initialised index
    modprobe bluetooth && modprobe hci_vhci || { note "bluetooth modules missing"; return 1; }
    for attempt in 1 2 3 4 5 6; do
        btvirt -l"$count" > /tmp/btvirt.log 2>&1 &
        BTVIRT_PID=$!
        wait_for 15 test -e "/sys/class/bluetooth/hci$((count - 1))"
        initialised=0
        local deadline=$((SECONDS + 12))
        while [ $SECONDS -lt $deadline ]; do
            initialised=$(mgmt info | grep -c 'addr 00:AA:01')
            [ "$initialised" = "$count" ] && break
            sleep 0.5
        done
        if [ "$initialised" = "$count" ]; then
            BT_ADDRESS=()
            for index in $(seq 0 $((count - 1))); do
                BT_ADDRESS[index]=$(mgmt --index "$index" info | awk '/addr / {print $2; exit}')
            done
            note "btvirt: ${BT_ADDRESS[*]} (attempt $attempt)"
            return 0
        fi
        note "btvirt attempt $attempt: $initialised of $count controllers initialised (start-up race); restarting it"
        bt_stop
    done
    return 1
}

bt_stop() {
    [ -n "${BTVIRT_PID:-}" ] || return 0
    kill "$BTVIRT_PID" 2> /dev/null; wait "$BTVIRT_PID" 2> /dev/null
    BTVIRT_PID=""
    wait_for 10 sh -c '! ls /sys/class/bluetooth/ 2> /dev/null | grep -q hci'
}

# controller_has INDEX PATTERN: the controller's current settings match (e.g. 'powered.* le').
controller_has() { mgmt --index "$1" info | grep -qE "current settings:.*$2"; }

# central_ready INDEX: the controller the daemon uses, as bluetoothd would leave it (LE on, powered).
central_ready() {
    mgmt --index "$1" le on > /dev/null
    mgmt --index "$1" power on > /dev/null
}

# peripheral_start INDEX PROFILES UUIDS [ble_peripheral options]: controller INDEX advertises the
# 16-bit service UUIDS (comma separated) connectably and serves the profiles; ADV_DATA (hex AD
# structures, e.g. a complete local name) is added to the advertising data when set.
# Log: $RESULTS/peripheralINDEX.log
peripheral_start() {
    local index=$1 profiles=$2 uuids=$3; shift 3
    local uuid_arguments=()
    for uuid in ${uuids//,/ }; do uuid_arguments+=(-u "$uuid"); done
    [ -z "${ADV_DATA:-}" ] || uuid_arguments+=(-d "$ADV_DATA")
    mgmt --index "$index" power off > /dev/null
    mgmt --index "$index" le on > /dev/null
    mgmt --index "$index" bredr off > /dev/null
    mgmt --index "$index" connectable on > /dev/null
    mgmt --index "$index" power on > /dev/null
    mgmt --index "$index" add-adv -c "${uuid_arguments[@]}" 1 > /dev/null
    background "$PYTHON" "$VM_DEVICES/ble_peripheral.py" --address "${BT_ADDRESS[index]}" --profiles "$profiles" "$@" \
        > "$RESULTS/peripheral$index.log" 2>&1
    # Python starts slowly under emulation on a loaded host (seen: more than 10 s).
    wait_for 40 grep -q serving "$RESULTS/peripheral$index.log" \
        || { note "peripheral $index never served: $(tail -3 "$RESULTS/peripheral$index.log")"; return 1; }
}

# ---------------------------------------------------------------- USB gadgets

GADGET_ROOT=/sys/kernel/config/usb_gadget
declare -A GADGET_PID

usb_modules() {
    modprobe dummy_hcd && modprobe libcomposite && modprobe usb_f_fs || { note "USB gadget modules missing"; return 1; }
    mountpoint -q /sys/kernel/config || mount -t configfs configfs /sys/kernel/config
}

# gadget_start NAME KIND [usb_gadget options]: a configfs gadget with one FunctionFS function
# served by Tests/VM/usb_gadget.py as KIND (ant, omron, temper), then plugged in (bound to the
# dummy UDC). Log: $RESULTS/gadget-NAME.log
gadget_start() {
    local name=$1 kind=$2; shift 2
    usb_modules || return 1
    local gadget=$GADGET_ROOT/$name
    mkdir -p "/dev/ffs-$name"
    "$PYTHON" "$VM_DEVICES/usb_gadget.py" configure --kind "$kind" --gadget "$gadget" || return 1
    mount -t functionfs "$name" "/dev/ffs-$name" || return 1
    "$PYTHON" "$VM_DEVICES/usb_gadget.py" serve --kind "$kind" --ffs "/dev/ffs-$name" --gadget "$gadget" "$@" \
        > "$RESULTS/gadget-$name.log" 2>&1 &
    GADGET_PID[$name]=$!
    wait_for 10 test -e "/dev/ffs-$name/ep1" || { note "gadget $name: endpoints never appeared"; cat "$RESULTS/gadget-$name.log"; return 1; }
    gadget_plug "$name"
}

gadget_plug() {
    local udc
    udc=$(ls /sys/class/udc | head -1)
    echo "$udc" > "$GADGET_ROOT/$1/UDC" || { note "binding gadget $1 to $udc failed"; return 1; }
    wait_for 10 grep -q configured "/sys/class/udc/$udc/state"
}

gadget_unplug() { echo "" > "$GADGET_ROOT/$1/UDC" 2> /dev/null; }

# gadget_stop NAME: unplugs the gadget, stops its server and removes it.
gadget_stop() {
    local name=$1 gadget=$GADGET_ROOT/$1
    [ -d "$gadget" ] || return 0
    gadget_unplug "$name"
    if [ -n "${GADGET_PID[$name]:-}" ]; then
        kill "${GADGET_PID[$name]}" 2> /dev/null; wait "${GADGET_PID[$name]}" 2> /dev/null
        unset "GADGET_PID[$name]"
    fi
    umount "/dev/ffs-$name" 2> /dev/null
    rm -f "$gadget"/configs/c.1/ffs.* 2> /dev/null
    rmdir "$gadget"/configs/c.1/strings/0x409 "$gadget"/configs/c.1 "$gadget"/functions/ffs.* \
        "$gadget"/strings/0x409 "$gadget" 2> /dev/null
}

# ---------------------------------------------------------------- the daemon

# fresh_store PATH SOURCE...: an empty store with every type granted to the sources.
fresh_store() {
    local store=$1; shift
    rm -f "$store" "$store"-wal "$store"-shm
    local source
    for source in "$@"; do "$INGESTD_BIN" auth grant "$source" --all --store "$store" > /dev/null 2>&1 || return 1; done
}

ANT_KEY_OPTION=(--adapter-option ant-network-key=0123456789ABCDEF)

# ---------------------------------------------------------------- MQTT

# mqtt_start: a Mosquitto broker on 127.0.0.1:1883 inside the guest (anonymous, no persistence)
# and a QoS 1 subscriber to ingestd/# writing `topic payload` lines to $RESULTS/mqtt-messages.txt.
# Ready when the port listens and a probe message published on ingestd/probe came back.
mqtt_start() {
    [ -x /usr/sbin/mosquitto ] && command -v mosquitto_sub > /dev/null \
        || { note "mosquitto or mosquitto-clients missing (scripts/bootstrap-tests installs them)"; return 1; }
    mkdir -p /run/mosquitto
    printf '%s\n' 'listener 1883 127.0.0.1' 'allow_anonymous true' 'persistence false' 'user root' \
        "log_dest file $RESULTS/mosquitto.log" 'log_type all' > /run/mosquitto/vm.conf
    background /usr/sbin/mosquitto -c /run/mosquitto/vm.conf > "$RESULTS/mosquitto.out" 2>&1
    # 127.0.0.1:1883 listening: 0100007F:075B, state 0A, in /proc/net/tcp.
    wait_for 20 grep -q ' 0100007F:075B 00000000:0000 0A' /proc/net/tcp \
        || { note "mosquitto is not listening: $(tail -3 "$RESULTS/mosquitto.out")"; return 1; }
    : > "$RESULTS/mqtt-messages.txt"
    background mosquitto_sub -h 127.0.0.1 -p 1883 -q 1 -i vm-subscriber -v -t 'ingestd/#' \
        > "$RESULTS/mqtt-messages.txt" 2> "$RESULTS/mosquitto_sub.err"
    wait_for 20 sh -c 'mosquitto_pub -h 127.0.0.1 -p 1883 -t ingestd/probe -m ready; sleep 0.5;
        grep -q "^ingestd/probe ready" "$0"' "$RESULTS/mqtt-messages.txt" \
        || { note "the subscriber never received the probe: $(cat "$RESULTS/mosquitto_sub.err")"; return 1; }
}
