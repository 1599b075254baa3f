#!/usr/bin/env bash
# Instructions per steady-state engine update (one pose and one UWB or Channel Sounding update,
# outputs and convergence included), counted by valgrind's callgrind: the same binary and
# inputs give the same count whatever else the machine is doing, unlike the wall-clock times
# of `swift package benchmark`. Runs SteadyStateUpdates with 1,000 and 3,000 updates and
# divides the difference by 2,000, so start-up and the simulation of the fixture cancel out;
# then the hand-written C EKF step on the same updates, and the range + direction update's
# instructions over the C step's (the time ratio also depends on how many instructions each
# retires per cycle: "Still tag, tracked" in `swift package benchmark` times the two interleaved).
#   Benchmarks/instructions.sh            (needs valgrind: apt-get install valgrind)
set -euo pipefail
cd "$(dirname "$0")"
command -v valgrind >/dev/null || { echo "instructions.sh needs valgrind (apt-get install valgrind)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
swift build -c release --product SteadyStateUpdates >"$work/build.log" 2>&1 || { cat "$work/build.log" >&2; exit 1; }
# valgrind 3.19 cannot read the toolchain's DWARF 5: count a copy without debug information.
cp .build/release/SteadyStateUpdates "$work/steady"
strip --strip-debug "$work/steady"
count() {
  valgrind --tool=callgrind --callgrind-out-file="$work/out" "$work/steady" "$1" "$2" 2>&1 >/dev/null \
    | sed -n 's/.*Collected : *\([0-9]*\).*/\1/p'
}
for mode in range+direction range channel-sounding c-reference; do
  a=$(count 1000 "$mode")
  b=$(count 3000 "$mode")
  per=$(( (b - a) / 2000 ))
  if [ "$mode" = c-reference ]; then
    echo "C reference EKF step (range + direction): $per instructions per step"
    echo "range+direction over the C reference step: $(awk -v e="$engine" -v c="$per" 'BEGIN { printf "%.1f", e / c }') x (instructions)"
  else
    echo "$mode: $per instructions per update"
  fi
  [ "$mode" = range+direction ] && engine=$per
done
