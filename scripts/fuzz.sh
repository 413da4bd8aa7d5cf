#!/usr/bin/env bash
# Builds and runs the libFuzzer targets of Tests/Fuzz/ with a seed corpus from the adapter fixtures.
#
#   scripts/fuzz.sh TARGET|all SECONDS
#
# TARGET is one of: btsnoop pcap pcapng hci gatt xiaomi mibeacon bthome records units plugin-output redaction
# mqtt-topics zip (product fuzz-TARGET).
# Targets run one after another (one core each). Release build with libFuzzer and AddressSanitizer
# (FUZZ_ASAN=0 to leave ASan out) in a scratch directory of its own, so normal builds are untouched.
# Work files go to $FUZZ_WORK (default .build/fuzz): seeds/, corpus/<target>/ (kept between runs),
# artifacts/<target>/ (crash-*, timeout-*, oom-* inputs), logs/<target>.log.
# Replay a crash with a plain build: swift build --product fuzz-gatt && .build/debug/fuzz-gatt FILE
# Exit status: 0 when every target ran its time without a finding, 1 otherwise.
set -uo pipefail

ALL=(btsnoop pcap pcapng hci gatt xiaomi mibeacon bthome records units plugin-output redaction mqtt-topics zip)
if [[ $# -ne 2 || ! $2 =~ ^[0-9]+$ ]]; then
    echo "usage: $0 TARGET|all SECONDS   (targets: ${ALL[*]})" >&2
    exit 64
fi
if [[ $1 == all ]]; then targets=("${ALL[@]}"); else targets=("$1"); fi
seconds=$2

root=$(cd "$(dirname "$0")/.." && pwd)
work=${FUZZ_WORK:-$root/.build/fuzz}
scratch=$root/.build/fuzz-build
sanitizers=(--sanitize=fuzzer)
if [[ ${FUZZ_ASAN:-1} != 0 ]]; then sanitizers+=(--sanitize=address); fi

max_len() {
    case $1 in
        btsnoop|pcap|pcapng|hci|zip) echo 8192 ;;
        records|plugin-output) echo 4096 ;;
        units) echo 256 ;;
        redaction|mqtt-topics) echo 1024 ;;
        *) echo 2048 ;;
    esac
}

python3 "$root/scripts/fuzz-seeds.py" "$work/seeds" || exit 1
mkdir -p "$work/logs"
status=0
for target in "${targets[@]}"; do
    if [[ ! " ${ALL[*]} " =~ " $target " ]]; then
        echo "unknown target $target (targets: ${ALL[*]})" >&2
        exit 64
    fi
    product=fuzz-$target
    echo "== $product: building" >&2
    if ! swift build -c release --scratch-path "$scratch" "${sanitizers[@]}" -Xswiftc -DFUZZING \
            --product "$product" --package-path "$root" >"$work/logs/$target.build.log" 2>&1; then
        echo "== $product: build failed, see $work/logs/$target.build.log" >&2
        status=1
        continue
    fi
    binary=$(swift build -c release --scratch-path "$scratch" --package-path "$root" --show-bin-path)/$product
    mkdir -p "$work/corpus/$target" "$work/artifacts/$target"
    echo "== $product: fuzzing for ${seconds}s" >&2
    start=$(date +%s)
    SWIFT_BACKTRACE=enable=no ASAN_OPTIONS=detect_leaks=0:${ASAN_OPTIONS:-} \
        "$binary" -max_total_time="$seconds" -max_len="$(max_len "$target")" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$work/artifacts/$target/" \
        "$work/corpus/$target" "$work/seeds/$target" >"$work/logs/$target.log" 2>&1
    result=$?
    elapsed=$(( $(date +%s) - start ))
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/logs/$target.log" | grep -o '[0-9]*$')
    if [[ $result -eq 0 ]]; then
        echo "== $product: ran ${elapsed}s, ${runs:-?} inputs, no finding" >&2
    else
        status=1
        echo "== $product: FINDING after ${elapsed}s (exit $result); inputs in $work/artifacts/$target/" >&2
        grep -E 'ERROR|Fatal error|deadly signal|SUMMARY|Test unit written' "$work/logs/$target.log" | head -20 >&2
    fi
done
exit $status
