#!/usr/bin/env bash
# Runs the scaling binary's short cases: every sweep makes rows of figures
# and every case runs in its own child. Wall-clock values and memory are
# not asserted (they depend on the machine and its load).
set -u
bin="${TEST_SRCDIR:-.}/vdsolab/bench/scaling"
out="${TEST_TMPDIR:-/tmp}/scaling.md"
if ! "$bin" --quick --sweep=duration >"$out" 2>"$out.err"; then
  echo "FAIL: scaling exited non-zero"; tail -5 "$out.err"; exit 1
fi
failures=0
for want in "**Machine:**" "| sweep | readers | CPUs |" \
            "| duration | 2 | 2 | 1 s |" "| duration | 2 | 2 | 1 min |"; do
  if grep -qF -- "$want" "$out"; then echo "ok   table has '$want'"; else
    echo "FAIL table lacks '$want'"; failures=$((failures + 1)); fi
done
# A row's figures are numbers: calls, then wall seconds.
if grep -E '^\| duration \| 2 \| 2 \| 1 min \| [0-9]+ \| [0-9]+ \| [0-9.]+ \|' \
     "$out" >/dev/null; then echo "ok   rows carry figures"; else
  echo "FAIL no figures: $(cat "$out")"; failures=$((failures + 1)); fi
if "$bin" --nosuchflag >/dev/null 2>&1; then
  echo "FAIL unknown flag accepted"; failures=$((failures + 1)); else
  echo "ok   unknown flag refused"; fi
exit $failures
