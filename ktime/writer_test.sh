#!/usr/bin/env bash
# A kernel tree's kernel/time as the simulation's writer (--kernel-time,
# docs/ktime.md): the Debian trees publish pages every reader of their
# layout reads correctly; patches made from the tree at test time are
# caught (a vsyscall.c store outside the seq window by the readers, a
# timekeeping.c change by the lockstep comparison with the model), their
# replays reproduce, and the unpatched tree fixes them; what the tree
# writer cannot run is refused with exit 2.
set -u
bin="${TEST_SRCDIR:-.}/vdsolab/cli/vdsolab"
scen="${TEST_SRCDIR:-.}/vdsolab/scenarios"
tmp="${TEST_TMPDIR:-/tmp}"
export VDSOLAB_CACHE_DIR="$tmp/cache"
t612=/usr/src/linux-source-6.12.tar.xz
t61=/usr/src/linux-source-6.1.tar.xz
failures=0

# shellcheck source=testing/cli_expect.sh
source "${TEST_SRCDIR:-.}/vdsolab/testing/cli_expect.sh"

if [ ! -r "$t612" ]; then
  echo "skipped: $t612 is not installed"
  exit 0
fi

expect clean_612 0 "operations ran on it and on the model: no difference" -- \
  run "$scen/baseline.toml" --kernel-time="$t612"
# The tree's point release is whatever Debian has installed: its Makefile's.
v612="6.12.$(tar -xJOf "$t612" linux-source-6.12/Makefile 2>/dev/null |
  sed -n 's/^SUBLEVEL = //p' | head -1)"
expect clean_612_reader 0 "variant 6.10@ktime-$v612" -- \
  run "$scen/preempted-readers.toml" --kernel-time="$t612"
# A reader named as paired with another build of the tree: bad input.
expect paired_other_tree 2 "but --kernel-time loaded ktime-$v612" -- \
  run "$scen/baseline.toml" --kernel-time="$t612" \
  --variant="6.10@ktime-$v612+other"
# compare runs every built-in scenario with the tree as the writer; the
# one it cannot run (kvm-clock's clocksource changes) is said, not failed.
expect compare_612 0 "Not run: kvm-clock (ktime-$v612 does not run" -- \
  compare --scenarios="$scen" --kernel-time="$t612" --out="$tmp/cmp612"
# In JSON, per variant, as data a script can read (docs/json.md).
mkdir -p "$tmp/kvm"
cp "$scen/kvm-clock.toml" "$tmp/kvm/"
expect compare_612_json_not_run 0 \
  '"not_run": [{"scenario": "kvm-clock", "why": "ktime-'"$v612"' does not run' -- \
  compare --scenarios="$tmp/kvm" --kernel-time="$t612" --format=json \
  --out="$tmp/cmpkvm"
expect clean_612_exhaustive 0 "PASS" -- \
  run "$scen/exhaustive-monotonic.toml" --kernel-time="$t612"
# ...and says that it compared no timekeeper state there.
expect exhaustive_says_no_lockstep 0 \
  "does not compare its state with the model's" -- \
  run "$scen/exhaustive-monotonic.toml" --kernel-time="$t612"
expect clean_612_json 0 '"first_difference": ""' -- \
  run "$scen/baseline.toml" --kernel-time="$t612" --format=json
if [ -r "$t61" ]; then
  # The 6.1 reader's 64-bit multiply wraps after the 20-minute pause: a
  # known era behaviour, which the built-in 6.1 reader shows the same.
  expect clean_61 0 "no difference" -- \
    run "$scen/ntp-settime-pause.toml" --kernel-time="$t61" --accept=known
fi

# vsyscall.c ends the seq window before the high-resolution data.
mkdir -p "$tmp/v/a/kernel/time" "$tmp/v/b/kernel/time"
tar -xOf "$t612" --wildcards --no-wildcards-match-slash \
  '*/kernel/time/vsyscall.c' > "$tmp/v/a/kernel/time/vsyscall.c"
awk '
  /^\tif \(clock_mode != VDSO_CLOCKMODE_NONE\)$/ && !done {
    print "\tvdso_write_end(vdata);\n"; moved = 1
  }
  /^\tvdso_write_end\(vdata\);$/ && moved && !done { done = 1; next }
  { print }
' "$tmp/v/a/kernel/time/vsyscall.c" > "$tmp/v/b/kernel/time/vsyscall.c"
(cd "$tmp/v" && diff -u a/kernel/time/vsyscall.c b/kernel/time/vsyscall.c) \
  > "$tmp/late-end.diff"
if [ ! -s "$tmp/late-end.diff" ]; then
  echo "FAIL late_end: the patch could not be made from the tree"
  failures=$((failures + 1))
fi
cd "$tmp" || exit 1
expect late_end_caught 1 "replay it: vdsolab replay" -- \
  run "$scen/exhaustive-monotonic.toml" --kernel-time="$t612" \
  --patch="$tmp/late-end.diff"
# The reader is not the only suspect when the tree writes the page.
expect late_end_blames_the_writer_too 1 "or the tree writer's" -- \
  run "$scen/exhaustive-monotonic.toml" --kernel-time="$t612" \
  --patch="$tmp/late-end.diff"
expect late_end_replay 1 "REPRODUCED" -- \
  replay "$tmp/exhaustive-monotonic-6.10-ktime-$v612+late-end-seed1.replay.toml"
expect late_end_fixed 0 "FIXED" -- \
  replay "$tmp/exhaustive-monotonic-6.10-ktime-$v612+late-end-seed1.replay.toml" \
  --kernel-time="$t612"

# timekeeping.c: RAW gains one shifted nanosecond per tick.
mkdir -p "$tmp/t/a/kernel/time" "$tmp/t/b/kernel/time"
tar -xOf "$t612" --wildcards --no-wildcards-match-slash \
  '*/kernel/time/timekeeping.c' > "$tmp/t/a/kernel/time/timekeeping.c"
sed 's/\ttk->tkr_raw.xtime_nsec += tk->raw_interval << shift;/\ttk->tkr_raw.xtime_nsec += (tk->raw_interval + 1) << shift;/' \
  "$tmp/t/a/kernel/time/timekeeping.c" > "$tmp/t/b/kernel/time/timekeeping.c"
(cd "$tmp/t" && diff -u a/kernel/time/timekeeping.c b/kernel/time/timekeeping.c) \
  > "$tmp/raw-fast.diff"
expect raw_fast_differs 1 "first difference: tick at" -- \
  run "$scen/baseline.toml" --kernel-time="$t612" --patch="$tmp/raw-fast.diff"
# No reader call failed, so no replay file: the command that reruns it.
expect raw_fast_rerun 1 "rerun it: vdsolab run " -- \
  run "$scen/baseline.toml" --kernel-time="$t612" --patch="$tmp/raw-fast.diff"
expect raw_fast_field 1 "tkr_raw.xtime_nsec" -- \
  run "$scen/baseline.toml" --kernel-time="$t612" --patch="$tmp/raw-fast.diff"

# timekeeping.c's ktime_get_raw_ts64() a second ahead: the syscall clocks
# the tree's own readers give are compared with the model's after each
# writer operation (ABI v7); nothing called them before.
sed 's/^\t\tts->tv_sec = tk->raw_sec;$/\t\tts->tv_sec = tk->raw_sec + 1;/' \
  "$tmp/t/a/kernel/time/timekeeping.c" > "$tmp/t/b/kernel/time/timekeeping.c"
(cd "$tmp/t" && diff -u a/kernel/time/timekeeping.c b/kernel/time/timekeeping.c) \
  > "$tmp/raw-reader.diff"
expect raw_reader_differs 1 "ktime_get_raw_ts64() at counter 0x" -- \
  run "$scen/baseline.toml" --kernel-time="$t612" --patch="$tmp/raw-reader.diff"

# timekeeping_apply_adjustment() with ntp_error's sign flipped: the run
# stops at the lockstep's difference, and nothing past it is blamed on the
# reader (it was, as exact and torn defects, before).
sed 's/^\ttk->ntp_error += offset << tk->ntp_error_shift;$/\ttk->ntp_error -= offset << tk->ntp_error_shift;/' \
  "$tmp/t/a/kernel/time/timekeeping.c" > "$tmp/t/b/kernel/time/timekeeping.c"
(cd "$tmp/t" && diff -u a/kernel/time/timekeeping.c b/kernel/time/timekeeping.c) \
  > "$tmp/ntp-error.diff"
out=$("$bin" run "$scen/baseline.toml" --kernel-time="$t612" \
  --patch="$tmp/ntp-error.diff" --replay-out="$tmp/unused.toml" 2>&1)
if [ ! -s "$tmp/ntp-error.diff" ]; then
  echo "FAIL ntp_error_patch: the patch could not be made from the tree"
  failures=$((failures + 1))
elif grep -q "stopped early: the kernel tree's timekeeper differs from the model (adjtimex_frequency" <<<"$out" &&
    grep -q "ntp_error: model" <<<"$out" && ! grep -q "\[defect\]" <<<"$out"; then
  echo "ok   writer_difference_stops_the_run"
else
  echo "FAIL writer_difference_stops_the_run: $(grep -e stopped -e defect <<<"$out" | head -3)"
  failures=$((failures + 1))
fi
# ...and compare lists it under the variant, and fails, with a column that
# says so (the properties' cells read "pass": the difference stopped the
# run).
mkdir -p "$tmp/one" && cp "$scen/baseline.toml" "$tmp/one/"
expect compare_writer_column 1 "| DIFFERS 1 (baseline) |" -- \
  compare --scenarios="$tmp/one" --kernel-time="$t612" \
  --kernel-time-patch="$tmp/ntp-error.diff" --out="$tmp/cmp-out-col"
expect compare_writer_difference 1 "writer, scenario baseline: [difference]" -- \
  compare --scenarios="$tmp/one" --kernel-time="$t612" \
  --patch="$tmp/ntp-error.diff" --out="$tmp/cmp-ntp"

# vsyscall.c never publishing the raw record's clock_mode: no timekeeper
# state differs, the page does (the readers of MONOTONIC_RAW just fell back).
mkdir -p "$tmp/v/a/kernel/time" "$tmp/v/b/kernel/time"
tar -xOf "$t612" --wildcards --no-wildcards-match-slash \
  '*/kernel/time/vsyscall.c' > "$tmp/v/a/kernel/time/vsyscall.c"
sed '/^\tvdata\[CS_RAW\].clock_mode[[:space:]]*= clock_mode;$/d' \
  "$tmp/v/a/kernel/time/vsyscall.c" > "$tmp/v/b/kernel/time/vsyscall.c"
(cd "$tmp/v" && diff -u a/kernel/time/vsyscall.c b/kernel/time/vsyscall.c) \
  > "$tmp/raw-mode.diff"
if [ ! -s "$tmp/raw-mode.diff" ]; then
  echo "FAIL raw_mode_patch: the patch could not be made from the tree"
  failures=$((failures + 1))
fi
expect page_field_differs 1 \
  "page field vvar+" -- \
  run "$scen/baseline.toml" --kernel-time="$t612" --patch="$tmp/raw-mode.diff"
expect page_field_named 1 "vdso_data[1].clock_mode (u32): model 0x1, tree 0" -- \
  run "$scen/baseline.toml" --kernel-time="$t612" --patch="$tmp/raw-mode.diff"

# A tree that crashes or spins in update_wall_time() at its 100th tick:
# contained, a finding of the run (exit 1), never the end of vdsolab.
awk '{ print } /^void update_wall_time\(void\)$/ { getline; print;
  print "\tstatic int vdsolab_n;\n\tif (++vdsolab_n == 100)\n\t\t*(volatile int *)0 = 1;" }' \
  "$tmp/t/a/kernel/time/timekeeping.c" > "$tmp/t/b/kernel/time/timekeeping.c"
(cd "$tmp/t" && diff -u a/kernel/time/timekeeping.c b/kernel/time/timekeeping.c) \
  > "$tmp/crash.diff"
expect tree_crash 1 "update_wall_time() crashed (SIGSEGV" -- \
  run "$scen/baseline.toml" --kernel-time="$t612" --patch="$tmp/crash.diff"
# The run stops at the tree's fault: the readers' calls after it would fail
# against the model for the tree's sake (a kernel would have oopsed).
expect tree_crash_stops 1 "stopped early: the kernel tree's timekeeper faulted" \
  -- run "$scen/baseline.toml" --kernel-time="$t612" --patch="$tmp/crash.diff"
expect tree_crash_not_the_readers 1 \
  "FAIL: the kernel tree's timekeeper and the model differ" -- \
  run "$scen/baseline.toml" --kernel-time="$t612" --patch="$tmp/crash.diff"
awk '{ print } /^void update_wall_time\(void\)$/ { getline; print;
  print "\tstatic int vdsolab_n;\n\tif (++vdsolab_n == 100)\n\t\tfor (;;)\n\t\t\tbarrier();" }' \
  "$tmp/t/a/kernel/time/timekeeping.c" > "$tmp/t/b/kernel/time/timekeeping.c"
(cd "$tmp/t" && diff -u a/kernel/time/timekeeping.c b/kernel/time/timekeeping.c) \
  > "$tmp/spin.diff"
expect tree_spin 1 "update_wall_time() spun for" -- \
  run "$scen/baseline.toml" --kernel-time="$t612" --patch="$tmp/spin.diff" \
  --call-timeout=200ms
printf -- '--- a/kernel/time/ntp.c\n+++ b/kernel/time/ntp.c\n@@ -1 +1 @@\n-no such line\n+x\n' \
  > "$tmp/bogus.diff"
expect bad_patch 2 "bogus.diff" -- \
  run "$scen/baseline.toml" --kernel-time="$t612" --patch="$tmp/bogus.diff"

# What it cannot run.
expect other_layout 2 "reads another" -- \
  run "$scen/baseline.toml" --kernel-time="$t612" --variant=upstream
expect clocksource_change 2 "clocksource changes" -- \
  run "$scen/kselftest/clocksource-switch.toml" --kernel-time="$t612"
expect time_patch_alone 2 "--kernel-time-patch applies to a --kernel-time" -- \
  run "$scen/baseline.toml" --kernel-time-patch="$tmp/raw-fast.diff"
expect default_job 2 "the default job publishes with the timekeeper model" -- \
  --kernel-time="$t612"
expect no_such_tree 2 "--kernel-time=/nonexistent" -- \
  run "$scen/baseline.toml" --kernel-time=/nonexistent

exit $failures
