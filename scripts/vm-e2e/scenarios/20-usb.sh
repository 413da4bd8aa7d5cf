# USB on the real kernel stack: dummy_hcd + configfs + FunctionFS gadgets (Tests/VM/usb_gadget.py)
# seen by the kernel's USB host side and libusb, read by the release ingestd.

OMRON_CAPTURES=$VM_DEVICES/../AdapterTests/Captures/omron-hj720it
OMRON_OPTIONS=(--tz UTC --adapter-option omron-today=2009-05-20)

# sum_of STORE TYPE SOURCE UNIT: the sum of the stored values (printed).
sum_of() {
    "$INGESTD_BIN" samples "$2" --source "$3" --unit "$4" --json --store "$1" 2> /dev/null \
        | "$PYTHON" -c 'import json,sys; print(sum(json.loads(l)["value"] for l in sys.stdin if l.strip()))'
}

# The ANT+ stick's three sensors in the store: the strap's 64 bpm, the scale's 72.35 kg once, and
# the foot pod's steps and distance, which the gadget advances by one stride (2 steps) and 1.5 m
# per page: distance = 0.75 m per step, exactly, whatever the number of pages heard.
ant_store_holds_the_sensors() {
    local store=$1 label=$2
    check "$label: ANT+ heart rate 64 bpm stored" expect_samples $store heartRate ant-plus count/min --min-count 1 --value 64
    check "$label: ANT+ scale 72.35 kg stored once" expect_samples $store bodyMass ant-plus kg --count 1 --value 72.35
    local steps distance
    steps=$(sum_of $store stepCount ant-plus count)
    distance=$(sum_of $store distanceWalkingRunning ant-plus m)
    note "foot pod: $steps steps, $distance m"
    check "$label: ANT+ foot pod steps and distance agree (0.75 m a step)" \
        "$PYTHON" -c "import sys; s, d = $steps, $distance; sys.exit(0 if s >= 2 and s % 2 == 0 and abs(d - 0.75 * s) < 1e-6 else 1)"
}

scenario_usb_ant() {
    section "USB: ANT+ stick (FunctionFS), run --no-ble until SIGINT"
    check "usb-ant: stick plugged in" gadget_start ant ant --bpm 64 --kg 72.35 || { gadget_stop ant; return; }
    check "usb-ant: lsusb lists it (0fcf:1008)" wait_for 10 lsusb -d 0fcf:1008
    local store=$STORES/usb-ant.sqlite log=$RESULTS/ingestd-usb-ant.log
    fresh_store $store ant-plus
    INGESTD_LOG_LEVEL=info "$INGESTD_BIN" run --no-ble --store $store "${ANT_KEY_OPTION[@]}" \
        --adapter-option ant-batch-seconds=2 > "$log" 2>&1 &
    local daemon=$!
    wait_for 60 sh -c "$INGESTD_BIN samples bodyMass --json --store $store 2> /dev/null | grep -q value"
    sleep 6
    kill -INT $daemon
    wait_pid $daemon 10
    check "usb-ant: SIGINT exits 0" [ "$WAITED_STATUS" = 0 ]
    check "usb-ant: the session started and finished" log_has "$log" 'session finished'
    ant_store_holds_the_sensors $store usb-ant
    gadget_stop ant
}

# Issue 12's first finding: `run --once` never ended while an ANT stick was present.
scenario_usb_once() {
    section "USB: run --once --listen 8 with a streaming ANT+ stick and a TEMPer"
    gadget_start ant ant --bpm 64 --kg 72.35 || { gadget_stop ant; return; }
    local store=$STORES/usb-once.sqlite log=$RESULTS/ingestd-usb-once.log
    fresh_store $store ant-plus
    local began=$(date +%s)
    INGESTD_LOG_LEVEL=info timeout 90 "$INGESTD_BIN" run --once --listen 8 --no-ble --store $store "${ANT_KEY_OPTION[@]}" \
        > "$log" 2>&1
    local status=$? took=$(( $(date +%s) - began ))
    note "exit $status after $took s"
    check "usb-once: run --once ends by itself, exit 0" [ $status = 0 ]
    check "usb-once: the ANT session was stopped after --listen" log_has "$log" 'stopping the sessions still running'
    ant_store_holds_the_sensors $store usb-once
    gadget_stop ant
}

scenario_usb_temper() {
    section "USB: TEMPer thermometer, run --once --listen 6"
    gadget_start temper temper --celsius 21.5 || { gadget_stop temper; return; }
    local store=$STORES/usb-temper.sqlite log=$RESULTS/ingestd-usb-temper.log
    fresh_store $store temper
    INGESTD_LOG_LEVEL=info timeout 90 "$INGESTD_BIN" run --once --listen 6 --no-ble --store $store \
        --adapter-option temper-interval=1 > "$log" 2>&1
    local status=$?
    check "temper: run --once exits 0" [ $status = 0 ]
    check "temper: ambient temperature 21.5 degC stored" \
        expect_samples $store ambientTemperature temper degC --min-count 1 --value 21.5
    check "temper: nothing stored as body temperature" expect_samples $store bodyTemperature temper degC --count 0
    gadget_stop temper
}

omron_days_match() {
    local store=$1; shift
    "$INGESTD_BIN" samples stepCount --source omron-hj720it --unit count --json --store $store > /tmp/omron-steps.json
    "$INGESTD_BIN" samples distanceWalkingRunning --source omron-hj720it --unit m --json --store $store > /tmp/omron-distance.json
    "$PYTHON" "$VM_DEVICES/omron_check.py" --csv "$OMRON_CAPTURES/pedometerData1.csv" \
        --steps /tmp/omron-steps.json --distance /tmp/omron-distance.json "$@"
}

scenario_usb_omron() {
    section "USB: Omron HJ-720IT answering from the vendor session, run --once"
    gadget_start omron omron --capture "$OMRON_CAPTURES/pedometerLog1-session.pcapng" || { gadget_stop omron; return; }
    local store=$STORES/usb-omron.sqlite log=$RESULTS/ingestd-usb-omron.log
    fresh_store $store omron-hj720it
    INGESTD_LOG_LEVEL=info timeout 180 "$INGESTD_BIN" run --once --listen 150 --no-ble --store $store "${OMRON_OPTIONS[@]}" \
        > "$log" 2>&1
    local status=$?
    check "omron: run --once exits 0 when the history is read" [ $status = 0 ]
    check "omron: the session finished by itself" log_has "$log" 'session finished'
    check "omron: every day equals the vendor's CSV export" omron_days_match $store
    gadget_stop omron
}

scenario_usb_omron_unplug() {
    section "USB: Omron pulled out (gadget unbound) when day 3 is asked for"
    gadget_start omron omron --capture "$OMRON_CAPTURES/pedometerLog1-session.pcapng" --unplug-at-day 3 \
        || { gadget_stop omron; return; }
    local store=$STORES/usb-unplug.sqlite log=$RESULTS/ingestd-usb-unplug.log
    fresh_store $store omron-hj720it
    INGESTD_LOG_LEVEL=info "$INGESTD_BIN" run --no-ble --store $store "${OMRON_OPTIONS[@]}" > "$log" 2>&1 &
    local daemon=$!
    check "unplug: the gadget was pulled out mid-history" wait_for 120 grep -q 'pulled out' "$RESULTS/gadget-omron.log"
    check "unplug: the host saw it leave (lsusb)" wait_for 30 sh -c '! lsusb -d 0590:0028' 
    check "unplug: the session ended (device gone)" wait_for 30 grep -q 'device gone' "$log"
    check "unplug: a device that is gone is not retried" log_lacks "$log" 'retrying' 
    sleep 2
    check "unplug: the daemon lives on" kill -0 $daemon
    kill -TERM $daemon
    wait_pid $daemon 10
    check "unplug: SIGTERM then exits 0" [ "$WAITED_STATUS" = 0 ]
    check "unplug: days 0-2 kept and equal the vendor export, day 3 not stored" \
        omron_days_match $store --days 2009-05-18,2009-05-19,2009-05-20 --absent 2009-05-17,2009-05-16
    gadget_stop omron
}
