#!/usr/bin/env bash
# Builds the fuzz targets and replays every minimized crasher
# (fuzz/regressions/<target>/) and the seed corpus (fuzz/seeds/<target>/, and
# testdata/golden + testdata/corrupt for the reader targets) under libFuzzer
# with AddressSanitizer, then fuzzes each target briefly from there.
#
#   fuzz/replay.sh              # replay + 10 s of fuzzing per target
#   FUZZ_SECONDS=0 fuzz/replay.sh   # replay only
#
# Long runs are manual: RUSTC_BOOTSTRAP=1 cargo fuzz run TARGET -- -max_total_time=N
# (from fuzz/; see fuzz/RESULTS.md). cargo-fuzz is installed at a pinned
# version if missing; stable Rust runs it with RUSTC_BOOTSTRAP=1.
set -euo pipefail
cd "$(dirname "$0")"

CARGO_FUZZ_VERSION=0.13.2
FUZZ_SECONDS=${FUZZ_SECONDS:-10}
TARGETS=(open_any open_mutated roundtrip decode_parity logs_open logs_roundtrip)
export RUSTC_BOOTSTRAP=1

if ! cargo fuzz --version 2>/dev/null | grep -qF "$CARGO_FUZZ_VERSION"; then
    echo "fuzz/replay.sh: installing cargo-fuzz $CARGO_FUZZ_VERSION"
    cargo install cargo-fuzz --version "$CARGO_FUZZ_VERSION" --locked
fi

cargo fuzz build

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for t in "${TARGETS[@]}"; do
    corpus="$work/$t"
    mkdir -p "$corpus"
    dirs=("seeds/$t" "regressions/$t")
    case "$t" in open_*) dirs+=(../testdata/golden ../testdata/corrupt) ;; esac
    n=0
    for d in "${dirs[@]}"; do
        [ -d "$d" ] || continue
        for f in "$d"/*; do
            case "$(basename "$f")" in *.md | *.values | .*) continue ;; esac
            [ -f "$f" ] || continue
            cp "$f" "$corpus/$(basename "$d")-$(basename "$f")"
            n=$((n + 1))
        done
    done
    echo "fuzz/replay.sh: $t: replaying $n inputs, then fuzzing ${FUZZ_SECONDS}s"
    # -runs=0 executes the corpus once (libFuzzer's INITED pass) and stops.
    if [ "$FUZZ_SECONDS" -gt 0 ]; then
        limit=(-max_total_time="$FUZZ_SECONDS")
    else
        limit=(-runs=0)
    fi
    log="$work/$t.log"
    if ! cargo fuzz run "$t" "$corpus" -- "${limit[@]}" -timeout=30 -rss_limit_mb=4096 \
        -print_final_stats=1 >"$log" 2>&1; then
        tail -n 80 "$log" >&2
        echo "fuzz/replay.sh: $t FAILED; the input is in fuzz/artifacts/$t/: minimize it" \
            "(cargo fuzz tmin $t FILE), add it to fuzz/regressions/$t/ and fix the bug" >&2
        exit 1
    fi
    grep -E '(INITED|DONE|stat::number_of_executed_units|stat::peak_rss_mb)' "$log" || true
done
echo "fuzz/replay.sh: all ${#TARGETS[@]} targets replayed clean"
