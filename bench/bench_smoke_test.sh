#!/usr/bin/env bash
# Runs the benchmark binary in --quick mode and checks the report it writes:
# every section is there and every reader has a figure. Wall-clock values
# are not asserted (they depend on the machine).
set -u
bin="${TEST_SRCDIR:-.}/vdsolab/bench/bench"
out="${TEST_TMPDIR:-/tmp}/benchmarks.md"
# The file being replaced has a hand-written part, which must survive.
printf 'old figures\n\n<!-- Hand-written below this line: --report keeps it. -->\nkept by hand\n' >"$out"
if ! "$bin" --quick --report_out="$out" --benchmark_filter='host_vdso/CLOCK_MONOTONIC$|counter/|reader/upstream/|reader/perf-mmap/|reader/x86-4.16/|reader/tsc-calibration/|sim/' >/dev/null 2>"$out.err"; then
  echo "FAIL: bench exited non-zero"; tail -5 "$out.err"; exit 1
fi
failures=0
for want in "## The host" "## vdsolab's readers" "## The seeds' own measures" \
            "## The simulator" "## Targets" "**Machine:**" \
            "| upstream | CLOCK_MONOTONIC |" "| perf-mmap | perf_time |" \
            "timer_latency" "Calls in an interval" "Cycles per call" \
            "Where a simulated read" "| one-call | 1 |" "| two-readers | 2 |"; do
  if grep -qF -- "$want" "$out"; then echo "ok   report has '$want'"; else
    echo "FAIL report lacks '$want'"; failures=$((failures + 1)); fi
done
if grep -qF -- "kept by hand" "$out" && ! grep -qF -- "old figures" "$out"; then
  echo "ok   hand-written part kept, old figures replaced"; else
  echo "FAIL hand-written part lost or old figures kept"; failures=$((failures + 1)); fi
# A reader row carries a positive figure, not a dash.
if grep -E '^\| upstream \| CLOCK_MONOTONIC \| [0-9]+(\.[0-9])? \|' "$out" >/dev/null; then
  echo "ok   upstream has a figure"; else
  echo "FAIL upstream row: $(grep -F '| upstream | CLOCK_MONOTONIC |' "$out")"
  failures=$((failures + 1)); fi
# The simulated read's ratios to the host vDSO, paired (the targets' figures).
for row in "no injection" "random injection"; do
  if grep -F "| simulated reads per second, $row" "$out" | grep -E 'paired: [0-9]+\.[0-9]{2}×\) \|$' >/dev/null &&
     grep -E "^\| simulated read \($row\) ÷ host vDSO MONOTONIC \| [0-9]+\.[0-9]{2}× \|" "$out" >/dev/null; then
    echo "ok   $row: paired ratio and target"; else
    echo "FAIL $row: $(grep -F "$row" "$out")"; failures=$((failures + 1)); fi
done
# A read's time split into engine and checker by the paired run (its
# ratio a figure; the checker's share may print as a dash where --quick's
# short runs leave it within noise).
if grep -E '^Where a simulated read .* [0-9.]+ ns per read, so the checker .* adds ([0-9.]+|—) ns \(paired: .* [0-9]+\.[0-9]{2}×\)\.$' "$out" >/dev/null; then
  echo "ok   engine and checker split by the paired run"; else
  echo "FAIL split: $(grep -F 'Where a simulated read' "$out")"; failures=$((failures + 1)); fi
# With repetitions, a paired figure is their median and names their range,
# which holds it.
rout="${TEST_TMPDIR:-/tmp}/repetitions.md"
if "$bin" --quick --report_out="$rout" --benchmark_repetitions=5 \
     --benchmark_filter='host_vdso/CLOCK_MONOTONIC$|sim/paired_host/no_injection|sim/random_no_injection' \
     >/dev/null 2>"$rout.err"; then
  line=$(grep -F "| simulated reads per second, no injection" "$rout")
  if [[ "$line" =~ paired:\ ([0-9]+\.[0-9]{2})×\ \(repetitions\ ([0-9]+\.[0-9]{2})–([0-9]+\.[0-9]{2})\)\)\ \|$ ]] &&
     awk -v m="${BASH_REMATCH[1]}" -v lo="${BASH_REMATCH[2]}" -v hi="${BASH_REMATCH[3]}" \
       'BEGIN { exit !(lo <= m && m <= hi && lo < hi) }'; then
    echo "ok   paired figure with its repetitions' range"; else
    echo "FAIL repetitions: $line"; failures=$((failures + 1)); fi
else
  echo "FAIL bench with repetitions exited non-zero"; tail -5 "$rout.err"
  failures=$((failures + 1))
fi
# A report that cannot be written fails with the path named; an empty
# path is refused.
if "$bin" --quick --report_out=/nonexistent-dir/x.md \
     --benchmark_filter='counter/rdtsc$' >/dev/null 2>"$out.err2"; then
  echo "FAIL unwritable report path accepted"; failures=$((failures + 1))
elif grep -qF "/nonexistent-dir/x.md" "$out.err2"; then
  echo "ok   unwritable report path refused by name"; else
  echo "FAIL no path in: $(cat "$out.err2")"; failures=$((failures + 1)); fi
"$bin" --report_out= >/dev/null 2>&1
if [ $? -eq 2 ]; then echo "ok   empty report path refused"; else
  echo "FAIL empty report path not refused with 2"; failures=$((failures + 1)); fi
# A kernel tree against its era's reader: the table row with the paired
# ratio, and the target judged by it (a figure, not "not measured").
tree=/usr/src/linux-source-6.12.tar.xz
if [ -r "$tree" ]; then
  tout="${TEST_TMPDIR:-/tmp}/trees.md"
  if XDG_CACHE_HOME="${TEST_TMPDIR:-/tmp}/cache" "$bin" --quick \
       --kernel-tree="$tree" --report_out="$tout" \
       --benchmark_filter='host_vdso/CLOCK_MONOTONIC$|sim/tree' \
       >/dev/null 2>"$tout.err"; then
    if grep -E '^\| 6\.12\.[0-9]+ \| [0-9.]+M \| 6\.10 \| [0-9.]+M \| [0-9.]+× \| [0-9]+\.[0-9]{2}× \|$' "$tout" >/dev/null; then
      echo "ok   tree row has a paired ratio"; else
      echo "FAIL tree row: $(grep -F '| 6.12.' "$tout")"; failures=$((failures + 1)); fi
    if grep -E '^\| kernel tree 6\.12\.[0-9]+@6\.10 simulated ÷ its era.s built-in reader \| [0-9]+\.[0-9]{2}× \|' "$tout" >/dev/null; then
      echo "ok   tree target judged"; else
      echo "FAIL tree target: $(grep -F 'kernel tree' "$tout")"; failures=$((failures + 1)); fi
  else
    echo "FAIL bench with a kernel tree exited non-zero"; tail -5 "$tout.err"
    failures=$((failures + 1))
  fi
else
  echo "skip no $tree: the kernel-tree rows are not checked"
fi
# Bad flags are refused.
if "$bin" --benchmark_nosuchflag=1 >/dev/null 2>&1; then
  echo "FAIL unknown flag accepted"; failures=$((failures + 1)); else
  echo "ok   unknown flag refused"; fi
exit $failures
