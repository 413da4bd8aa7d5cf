# Lifecycle: signals with sessions open (a BLE connection and a USB receiver), kill -9 in the
# middle of a history download and a restart.

# stop_with SIGNAL: the daemon (both backends) with a BLE peripheral connected and an ANT stick
# streaming, then SIGNAL; exit status and time from the signal to the exit.
stop_with() {
    local signal=$1 store=/tmp/signal-$1.sqlite log=$RESULTS/ingestd-$1.log
    fresh_store $store gatt-health ant-plus
    INGESTD_LOG_LEVEL=info "$INGESTD_BIN" run --hci 0 --store $store "${ANT_KEY_OPTION[@]}" > "$log" 2>&1 &
    local daemon=$!
    wait_for 60 grep -q 'connected (gatt-health)' "$log"
    wait_for 60 sh -c "'$INGESTD_BIN' samples heartRate --source ant-plus --json --store $store | grep -q value"
    check "$signal: sessions open (BLE connected, ANT streaming)" \
        sh -c "grep -q 'connected (gatt-health)' '$log' && grep -q 'ant-plus.*arrived' '$log'"
    kill -"$signal" $daemon
    wait_pid $daemon 10
    note "exit $WAITED_STATUS after $WAITED_SECONDS s"
    check "$signal: exit 0" [ "$WAITED_STATUS" = 0 ]
    check "$signal: within 2 s" awk "BEGIN { exit !($WAITED_SECONDS < 2) }"
    check "$signal: the shutdown was orderly (stopped: totals)" log_has "$log" 'stopped: [0-9]+ written'
}

scenario_signals() {
    section "Signals: SIGTERM and SIGINT with a BLE connection and a USB session open"
    check "signals: bench up" ble_bench || { bt_stop; return; }
    central_ready 0
    gadget_start ant ant --bpm 64 --kg 72.35 || { gadget_stop ant; bt_stop; return; }
    stop_with TERM
    stop_with INT
    gadget_stop ant
    cleanup_all
    bt_stop
}

scenario_kill_restart() {
    section "kill -9 in the middle of an Omron history download, then a restart"
    gadget_start omron omron --capture "$OMRON_CAPTURES/pedometerLog1-session.pcapng" --day-delay 1.5 \
        || { gadget_stop omron; return; }
    local store=/tmp/kill.sqlite log=$RESULTS/ingestd-kill.log
    fresh_store $store omron-hj720it
    INGESTD_LOG_LEVEL=info "$INGESTD_BIN" run --no-ble --store $store "${OMRON_OPTIONS[@]}" > "$log" 2>&1 &
    local daemon=$!
    check "kill: some days committed" wait_for 120 grep -q 'committed' "$log"
    sleep 1.5
    kill -9 $daemon
    wait $daemon 2> /dev/null
    local before
    before=$("$INGESTD_BIN" samples stepCount --source omron-hj720it --json --store $store | grep -c value)
    note "killed with $before hourly samples committed"
    check "kill: killed mid-history (some but not all hours stored)" test "$before" -gt 0 -a "$before" -lt 61
    INGESTD_LOG_LEVEL=info timeout 300 "$INGESTD_BIN" run --once --listen 240 --no-ble --store $store "${OMRON_OPTIONS[@]}" \
        > "$RESULTS/ingestd-restart.log" 2>&1
    check "kill: the restart reads the history and exits 0" [ $? = 0 ]
    check "kill: every day equals the vendor export" omron_days_match $store
    check "kill: nothing duplicated (61 hours with steps)" expect_samples $store stepCount omron-hj720it count --count 61
    check "kill: nothing duplicated (7 daily distances)" expect_samples $store distanceWalkingRunning omron-hj720it m --count 7
    gadget_stop omron
}
