# Lifecycle: signals with sessions open (a BLE connection and a USB receiver), kill -9 in the
# middle of a history download and a restart.

# stop_with SIGNAL: the daemon (both backends) with a BLE peripheral connected and an ANT stick
# streaming, then SIGNAL; exit status and time from the signal to the exit.
stop_with() {
    local signal=$1 store=$STORES/signal-$1.sqlite log=$RESULTS/ingestd-$1.log
    fresh_store $store gatt-health ant-plus
    INGESTD_LOG_LEVEL=info "$INGESTD_BIN" run --hci 0 --store $store "${ANT_KEY_OPTION[@]}" > "$log" 2>&1 &
    local daemon=$!
    # Every connected device goes through a conversation: the log says "connected (gatt-health, conversation)".
    wait_for 60 grep -qE 'connected \(gatt-health[,)]' "$log"
    wait_for 60 sh -c "'$INGESTD_BIN' samples heartRate --source ant-plus --json --store $store | grep -q value"
    check "$signal: sessions open (BLE connected, ANT streaming)" \
        sh -c "grep -qE 'connected \\(gatt-health[,)]' '$log' && grep -q 'ant-plus.*arrived' '$log'"
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

# kill_mid_download STORE LOG: starts the daemon, kills it with SIGKILL once the gadget was asked
# for day 2 of the history (the download is slowed by --day-delay), then replugs the pedometer.
kill_mid_download() {
    local store=$1 log=$2 asked
    asked=$(grep -c 'OUT omron 475444000002' "$RESULTS/gadget-omron.log")
    INGESTD_LOG_LEVEL=info "$INGESTD_BIN" run --no-ble --store $store "${OMRON_OPTIONS[@]}" > "$log" 2>&1 &
    local daemon=$!
    wait_for 120 sh -c "[ \$(grep -c 'OUT omron 475444000002' '$RESULTS/gadget-omron.log') -gt $asked ]"
    kill -9 $daemon
    wait $daemon 2> /dev/null
    # Out and in again, as the pedometer is handled between downloads; the emulated one is
    # restarted too: the answer FunctionFS was writing when the host died cannot be withdrawn and
    # would be the first thing the next session reads.
    omron_plug_in
}

omron_plug_in() {
    gadget_stop omron
    gadget_start omron omron --capture "$OMRON_CAPTURES/pedometerLog1-session.pcapng" --day-delay 1
}

# The Omron session commits the whole history at its end, each hour under a sync identifier: a
# kill -9 before that commit loses nothing the device still has, and reading again after a
# commit replaces nothing and duplicates nothing.
scenario_kill_restart() {
    section "kill -9 in the middle of Omron history downloads, then restarts"
    check "kill: pedometer plugged in" omron_plug_in || { gadget_stop omron; return; }
    local store=$STORES/kill.sqlite
    fresh_store $store omron-hj720it
    kill_mid_download $store "$RESULTS/ingestd-kill-1.log"
    check "kill: the first download was killed before its commit" \
        expect_samples $store stepCount omron-hj720it count --count 0
    INGESTD_LOG_LEVEL=info timeout 300 "$INGESTD_BIN" run --once --listen 240 --no-ble --store $store "${OMRON_OPTIONS[@]}" \
        > "$RESULTS/ingestd-restart-1.log" 2>&1
    check "kill: the restart reads the history and exits 0" [ $? = 0 ]
    check "kill: every day equals the vendor export" omron_days_match $store
    kill_mid_download $store "$RESULTS/ingestd-kill-2.log"
    # The killed daemon's half-done transfer can make the host reset the device: read again only
    # once the pedometer is back on the bus (--once with no device present ends at once).
    wait_for 30 sh -c 'lsusb -d 0590:0028 | grep -q .'
    INGESTD_LOG_LEVEL=info timeout 300 "$INGESTD_BIN" run --once --listen 240 --no-ble --store $store "${OMRON_OPTIONS[@]}" \
        > "$RESULTS/ingestd-restart-2.log" 2>&1
    check "kill: killed again, restarted, exit 0" [ $? = 0 ]
    check "kill: every day still equals the vendor export" omron_days_match $store
    check "kill: nothing duplicated (61 hours with steps)" expect_samples $store stepCount omron-hj720it count --count 61
    check "kill: nothing duplicated (7 daily distances)" expect_samples $store distanceWalkingRunning omron-hj720it m --count 7
    check "kill: the second reading was recognised as duplicates" log_has "$RESULTS/ingestd-restart-2.log" 'stopped: 0 written, 68 duplicate'
    gadget_stop omron
}
