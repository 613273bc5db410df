#!/usr/bin/env bash
# Checks vdsolab's command-line contract: a passing default run exits 0,
# bad input exits 2 with a message naming the bad value, --help explains
# the flags, and the same seed prints the same report.
set -u
bin="${TEST_SRCDIR:-.}/vdsolab/cli/vdsolab"
[ -x "$bin" ] || bin="$(dirname "$0")/vdsolab"
failures=0

# shellcheck source=testing/cli_expect.sh
source "${TEST_SRCDIR:-.}/vdsolab/testing/cli_expect.sh"

expect short_run 0 "PASS: every read matched" -- --duration=1s --reads_per_tick=5
# Then it races the page's clocks against updates (cli/default_races.h).
expect short_run_races 0 \
  "races: CLOCK_MONOTONIC, one call against every interleaving of the next two updates" \
  -- --duration=1s --reads_per_tick=5
expect short_run_races_random 0 \
  "800 ms of two preempted readers on two CPUs against a stalling writer, relaxed ordering" \
  -- --duration=1s --reads_per_tick=5
# ...and reads the page's counted clocks on a CPU whose counter is behind
# the timekeeping CPU's: some reads must really see a counter behind
# cycle_last.
out=$("$bin" --duration=1s --reads_per_tick=5 2>&1)
if grep -qE 'negative motion\): [0-9]+ calls \([1-9][0-9]* with the counter behind cycle_last\), every property held' <<<"$out"; then
  echo "ok   short_run_negative_motion"
else
  echo "FAIL short_run_negative_motion"; grep '^races' <<<"$out"
  failures=$((failures + 1))
fi
expect bad_hz 2 "--hz=0: want 10 .. 10000" -- --hz=0
expect bad_ppm 2 "--ntp-freq-ppm=900" -- --ntp_freq_ppm=900
expect negative_duration 2 "--duration=-1s" -- --duration=-1s
expect ntp_after_end 2 "--ntp-at=5s" -- --duration=1s --ntp_at=5s
expect bad_flag_value 2 "--hz=lots: want a decimal integer" -- --hz=lots
expect unknown_flag 2 "unknown flag --nosuchflag" -- --nosuchflag=1
expect unknown_command 2 "unknown command 'frobnicate'" -- frobnicate
expect help 0 "--ntp-freq-ppm" -- --help
expect help_lists_commands 0 "vdsolab compare" -- --help
expect help_command 0 "usage: vdsolab run SCENARIO" -- run --help
expect help_via_help 0 "usage: vdsolab compare" -- help compare
expect version 0 "vdsolab 0." -- --version
expect unused_flag_is_an_error 2 "unknown flag --seed for 'replay'" -- replay x.toml --seed=1
expect default_unknown_variant 2 'unknown variant "nope"' -- --variant=nope
expect default_runs_the_variant 0 "the 6.15 vDSO variant" -- --variant=6.15 --duration=1s --reads_per_tick=5
# Accepted, the era's step backs are listed as such, not as FAIL lines.
out=$("$bin" --variant=6.1 --duration=1s --reads_per_tick=5 --accept=known 2>&1)
if [ $? -eq 0 ] && grep -q '^accepted: .*\[known: era behaviour' <<<"$out" &&
   ! grep -q '^FAIL' <<<"$out"; then echo "ok   default_accepted_not_fail"; else
  echo "FAIL default_accepted_not_fail"; echo "$out" | tail -5
  failures=$((failures + 1)); fi
expect default_era_step_back_is_named 1 "[known: era behaviour: before 6.15" -- \
  --variant=6.1 --duration=1s --reads_per_tick=5
expect patch_needs_tree 2 "--patch applies to a --kernel-tree" -- --patch=x.diff
# The default job refuses --kernel-time before building anything.
expect default_refuses_kernel_time 2 \
  "--kernel-time-patch: the default job publishes with the timekeeper model" -- \
  --kernel-time-patch=/nonexistent.diff
expect bad_boot_realtime 2 "--boot-realtime=yesterday" -- --boot_realtime=yesterday
expect bad_boot_fraction 2 "--boot-realtime=1.1234567891" -- --boot_realtime=1.1234567891
# A boot time the kernel refuses (it would boot at 0) is bad input, by flag
# and in a scenario; so are a counter start the counter cannot hold and a
# counter step without its size.
expect boot_realtime_past_settod 2 "timekeeping_init() refuses" -- \
  --boot_realtime=8277292036
# The 6.15+ coarse-clock step back (docs/findings.md), from the command line.
expect coarse_step_back 1 "_COARSE went backwards" -- \
  --duration=1s --boot_realtime=1764460800 --ntp_at=1ms --ntp_freq_ppm=500
# ...which is the era's documented behaviour: --accept=known passes it.
expect coarse_step_back_accepted 0 "accepted: CLOCK_" -- \
  --duration=1s --boot_realtime=1764460800 --ntp_at=1ms --ntp_freq_ppm=500 \
  --accept=known
# The replay line is a vdsolab command line, through ./bazelw only when
# run by `bazel run` (which sets BUILD_WORKING_DIRECTORY).
expect replay_line 1 "replay: vdsolab --seed=1" -- \
  --duration=1s --boot_realtime=1764460800 --ntp_at=1ms --ntp_freq_ppm=500
out=$(BUILD_WORKING_DIRECTORY=$PWD "$bin" --duration=1s \
  --boot_realtime=1764460800 --ntp_at=1ms --ntp_freq_ppm=500 2>&1)
if grep -qF "replay: ./bazelw run //:vdsolab -- --seed=1" <<<"$out"; then
  echo "ok   replay_line_under_bazel_run"
else
  echo "FAIL replay_line_under_bazel_run"; echo "$out" | tail -4
  failures=$((failures + 1))
fi

# Scenario runs: the built-in scenarios end as documented.
scen="${TEST_SRCDIR:-.}/vdsolab/scenarios"
tmp="${TEST_TMPDIR:-/tmp}"
# (Scenario files for the boot-time, counter-start and step checks above.)
printf 'name = "x"\n[kernel]\nboot_realtime = "8277292036"\n' > "$tmp/late.toml"
expect run_boot_realtime_past_settod 2 "late.toml:3:17: kernel.boot_realtime" -- \
  run "$tmp/late.toml"
printf 'name = "x"\n[machine]\nwidth_bits = 32\ncounter_start = 4294967296\n' \
  > "$tmp/start.toml"
expect run_counter_start_past_width 2 "more than a 32-bit counter holds" -- \
  run "$tmp/start.toml"
printf 'name = "x"\n[[machine.cpu]]\nsteps = [ { at = "1ms" } ]\n' > "$tmp/step.toml"
expect run_step_needs_cycles 2 "steps[0].cycles: missing" -- \
  run "$tmp/step.toml"
for s in baseline preempted-readers ntp-settime-pause unordered-rdtsc \
         pause-past-max-cycles long-idle nsec-boundary offsets-change \
         timens-second-boundary kvm-stable-toggle; do
  expect "run_$s" 0 "PASS: every property held." -- run "$scen/$s.toml"
done
for s in skewed-cpus narrow-counter; do
  expect "run_$s" 0 "PASS: every property held where its preconditions did." \
    -- run "$scen/$s.toml"
done
expect run_exhaustive 0 "(all of them); 0 failing" -- \
  run "$scen/exhaustive-monotonic.toml"
# Plain enumeration of 3 updates runs for minutes: said before it starts
# (the test stops the run after 5 s).
printf 'name = "x"\n[run]\nstrategy = "exhaustive"\nexhaustive_updates = 3\n' \
  > "$tmp/plain3.toml"
out=$(timeout 5 "$bin" run "$tmp/plain3.toml" 2>&1)
if grep -qF "plain3.toml:4:22: run.exhaustive_updates = 3 without reduction" \
    <<<"$out"; then echo "ok   exhaustive_plain_warns"; else
  echo "FAIL exhaustive_plain_warns"; echo "$out" | tail -3
  failures=$((failures + 1)); fi
expect run_coarse_step_back 1 "[known kernel behaviour]" -- \
  run "$scen/coarse-step-back.toml" --replay_out="$tmp/coarse.replay.toml"
expect replay_reproduces 1 "REPRODUCED" -- replay "$tmp/coarse.replay.toml"
expect replay_shows_page 1 "    clock_data[0].cycle_last" -- \
  replay "$tmp/coarse.replay.toml"
expect replay_needs_replay_section 2 "no [replay] section" -- \
  replay "$scen/baseline.toml"
# A replay naming a call its run never makes is bad input, not a fix.
sed 's/^call = .*/call = 999999999/' "$tmp/coarse.replay.toml" \
  > "$tmp/far.replay.toml"
expect replay_call_never_made 2 "replay.call = 999999999: reader" -- \
  replay "$tmp/far.replay.toml"
# The kernel's timer selftests as scenarios (docs/kselftest-map.md).
for s in leap-a-day skew-consistency set-tai valid-adjtimex set-2038 \
         suspend-resume clocksource-switch; do
  expect "run_kselftest_$s" 0 "PASS: every property held." -- \
    run "$scen/kselftest/$s.toml"
done
expect run_kselftest_aux 1 "[known kernel behaviour] exact" -- \
  run "$scen/kselftest/aux-clocks.toml" --replay_out="$tmp/aux.replay.toml"
expect replay_aux 1 "REPRODUCED" -- replay "$tmp/aux.replay.toml"
# Defects the kernel shipped: caught with the defect, clean without it.
for s in coarse-back-6.14 boottime-shift-5.3 suspend-without-forward \
         max-raw-delta-zero ntp-input-2024; do
  expect "run_history_$s" 1 "FAIL: " -- run "$scen/history/$s.toml" \
    --replay_out="$tmp/$s.replay.toml"
  grep -v -e '^defects' -e '^era' "$scen/history/$s.toml" \
    > "$tmp/$s-fixed.toml"
  expect "run_history_${s}_fixed" 0 "PASS: every property held" -- \
    run "$tmp/$s-fixed.toml"
done
# Readers in a time namespace (docs/scenarios.md): judged against the
# syscall plus the offsets; a variant without the TIMENS path is refused.
expect run_timens 0 "time namespace: " -- run "$scen/timens/namespace.toml"
expect run_timens_pass 0 "PASS: every property held." -- \
  run "$scen/timens/namespace.toml"
expect run_timens_refused 2 "does not model time namespaces" -- \
  run "$scen/timens/namespace.toml" --variant=6.1
# Errors found after the file parsed still name its line and key.
printf 'name = "x"\n[[reader]]\n[[reader]]\ntimens = true\n' \
  > "$tmp/timens-second.toml"
expect run_timens_refused_names_the_key 2 \
  "timens-second.toml:4:10: reader[1].timens: variant 6.1 does not" -- \
  run "$tmp/timens-second.toml" --variant=6.1
printf 'name = "x"\n[run]\nduration = "1ms"\nreader = "nope"\n' \
  > "$tmp/bad-reader.toml"
expect run_unknown_reader_names_the_key 2 \
  'bad-reader.toml:4:10: run.reader: unknown variant "nope"' -- \
  run "$tmp/bad-reader.toml"
# A run that checks nothing is not a PASS; a key that never acts warns.
printf 'name = "x"\n[[reader]]\nperiod = "2s"\n[run]\nduration = "1s"\n' \
  > "$tmp/no-calls.toml"
expect run_nothing_checked 2 \
  "no-calls.toml:5:12: run.duration = 1s: no reader made a call" -- \
  run "$tmp/no-calls.toml"
expect run_long_period_warns 2 \
  "warning: $tmp/no-calls.toml:3:10: reader[0].period (2s) is not shorter" -- \
  run "$tmp/no-calls.toml"
printf 'name = "x"\n[[machine.cpu]]\nsteps = [{at = "2s", cycles = 9}]\n[run]\nduration = "1ms"\n' \
  > "$tmp/late-step.toml"
expect run_late_step_warns 0 \
  "late-step.toml:3:10: machine.cpu[0].steps[0] (at 2s) is at or after" -- \
  run "$tmp/late-step.toml"
printf 'name = "x"\n[kernel]\ntimens_monotonic = "-2"\n[[reader]]\ntimens = true\n' \
  > "$tmp/bad-timens.toml"
expect run_bad_timens 2 "returns -ERANGE" -- run "$tmp/bad-timens.toml"
printf 'name = "x"\n[kernel]\nera = "6.2"\n' > "$tmp/bad-era.toml"
expect run_bad_era 2 'unknown kernel era "6.2"' -- run "$tmp/bad-era.toml"
printf 'name = "x"\n[[event]]\nkind = "set_tai"\ntai = -1\n' \
  > "$tmp/bad-tai.toml"
expect run_bad_tai 2 "the kernel ignores ADJ_TAI outside" -- \
  run "$tmp/bad-tai.toml"
printf 'name = "x"\n[[event]]\nkind = "aux_enable"\n' > "$tmp/no-aux.toml"
expect run_aux_needs_config 2 "set kernel.aux_clocks = true" -- \
  run "$tmp/no-aux.toml"

expect run_missing_file 2 "cannot open scenario file" -- run "$tmp/nope.toml"
expect replay_missing_file 2 "cannot open replay file" -- replay "$tmp/nope.toml"
# The default job's stages are built in code: a failing stage's replay
# names the stage's scenario, written beside it, as its origin (what a
# diverged replay of a fix is judged by), and that file runs as the stage.
mkdir -p "$tmp/dj"
(cd "$tmp/dj" && "$bin" --variant=x86-4.16 --duration=1s --reads_per_tick=5 \
  >/dev/null 2>&1)
dj_replay="$tmp/dj/default-counter-top-x86-4.16-seed1.replay.toml"
dj_origin="$tmp/dj/default-counter-top-x86-4.16-seed1.origin.toml"
if grep -qF "origin = \"$dj_origin\"" "$dj_replay" 2>/dev/null &&
  grep -q '^origin_sha256 = "[0-9a-f]\{64\}"' "$dj_replay"; then
  echo "ok   default_job_replay_names_its_origin"
else
  echo "FAIL default_job_replay_names_its_origin"; ls "$tmp/dj"
  failures=$((failures + 1))
fi
expect default_job_origin_fails_as_the_stage 1 "scenario \"default-counter-top\"" \
  -- run "$dj_origin" --variant=x86-4.16
expect default_job_origin_passes_upstream 0 "PASS" \
  -- run "$dj_origin" --variant=upstream
# A replay run again with `run` is no origin of the new replay (its run is
# minimised): the new one keeps the old one's origin, or has none.
grep -v '^origin' "$dj_replay" > "$tmp/dj/no-origin.replay.toml"
"$bin" run "$tmp/dj/no-origin.replay.toml" \
  --replay-out="$tmp/dj/again.replay.toml" >/dev/null 2>&1
if [ -f "$tmp/dj/again.replay.toml" ] &&
  ! grep -q '^origin = ' "$tmp/dj/again.replay.toml"; then
  echo "ok   replay_of_replay_has_no_origin"
else
  echo "FAIL replay_of_replay_has_no_origin"
  grep '^origin' "$tmp/dj/again.replay.toml"
  failures=$((failures + 1))
fi
printf 'name = "x"\n[kernel]\nhz = 3\n' > "$tmp/bad.toml"
expect run_bad_file 2 "bad.toml:3:6: kernel.hz: 3 is outside 10 .. 10000" -- \
  run "$tmp/bad.toml"
# Bad input is refused naming the file, line and field.
expect run_device 2 "/dev/zero: not a scenario file" -- run /dev/zero
expect run_directory 2 "not a scenario file (a directory)" -- run "$tmp"
: > "$tmp/empty.toml"
expect run_empty 2 "empty.toml: empty" -- run "$tmp/empty.toml"
printf 'name = "x"\nbogus = 1\n' > "$tmp/top.toml"
expect run_unknown_top_key 2 'top.toml:2:1: unknown key "bogus"' -- \
  run "$tmp/top.toml"
# A section given as another type is refused, not ignored with its
# defaults left in force.
printf 'name = "x"\nkernel = 5\n' > "$tmp/sect_int.toml"
expect run_section_not_a_table 2 \
  'sect_int.toml:2:10: kernel: want a [kernel] table' -- run "$tmp/sect_int.toml"
printf 'name = "x"\n[[run]]\nduration = "10ms"\n' > "$tmp/sect_array.toml"
expect run_section_as_array 2 'sect_array.toml:2:1: run: want a [run] table' \
  -- run "$tmp/sect_array.toml"
# A value the TOML parser itself refuses still names its key.
printf 'name = "x"\n[[reader]]\n[[reader]]\ncpu = 99999999999999999999\n' \
  > "$tmp/huge.toml"
expect run_parse_error_names_key 2 \
  "huge.toml:4:27: reader[1].cpu: Error while parsing decimal integer" -- \
  run "$tmp/huge.toml"
printf 'name = "x"\n[kernel]\ntimekeeping_cpu = 5\n' > "$tmp/sem.toml"
expect run_semantic_error_has_line 2 "sem.toml:3:" -- run "$tmp/sem.toml"
printf 'name = "x"\n[run]\nduration = "169h"\n' > "$tmp/long.toml"
expect run_one_duration_limit 2 "longer than 7 days" -- run "$tmp/long.toml"
expect default_one_duration_limit 2 "--duration=169h: at most 168h" -- \
  --duration=169h
printf 'name = "x"\n[run]\nduration = "1s"\n[[event]]\nkind = "pause"\nat = "500ms"\nduration = "10s"\n' \
  > "$tmp/pause.toml"
expect run_pause_past_end_warns 0 "lasts past the run's end" -- \
  run "$tmp/pause.toml"
printf 'name = "x"\n[[event]]\nkind = "suspend"\nat = "3ms"\nduration = "10m"\n[[event]]\nkind = "settime"\nat = "5ms"\nrealtime = "1764470000.25"\n[run]\nduration = "10ms"\n' \
  > "$tmp/suspend.toml"
expect run_suspend_past_end_warns 0 \
  "(suspend at 3ms for 10m) lasts past the run's end (10ms): no reader runs after 3ms, and event[1] never happens" -- \
  run "$tmp/suspend.toml"
# A run in which the variant answered every call with an error no check
# judges tested nothing of it: perf's time on unsynchronised counters (the
# kernel turns cap_user_time off) is bad input, not a PASS.
printf 'name = "x"\n[[machine.cpu]]\noffset_cycles = 0\n[[machine.cpu]]\noffset_cycles = -2600000000\n[run]\nduration = "20ms"\n' \
  > "$tmp/skewed.toml"
expect run_nothing_answered_is_bad_input 2 \
  "variant perf-mmap answered every one of the run's" -- \
  run "$tmp/skewed.toml" --variant=perf-mmap
sed 's/-2600000000/0/' "$tmp/skewed.toml" > "$tmp/synced.toml"
expect run_perf_on_synchronised_counters 0 "PASS" -- \
  run "$tmp/synced.toml" --variant=perf-mmap
# A search cut at its budget is no verdict: INCOMPLETE, exit 1.
expect run_exhaustive_cut_is_incomplete 1 "INCOMPLETE: the search stopped" -- \
  run "$scen/exhaustive-monotonic.toml" --max-interleavings=10
expect run_exhaustive_whole_passes 0 "(all of them); 0 failing" -- \
  run "$scen/exhaustive-monotonic.toml"
# No task runs in a suspended machine or a paused VM: an event placed
# there is run at its time all the same, and the run says so.
printf 'name = "x"\n[[event]]\nkind = "suspend"\nat = "2ms"\nduration = "4ms"\n[[event]]\nkind = "settime"\nat = "5ms"\nrealtime = "1764470000.25"\n[run]\nduration = "10ms"\n' \
  > "$tmp/inside.toml"
expect run_event_inside_suspend_warns 0 \
  "inside.toml:6:1: event[1] (settime at 5ms) falls inside event[0] (suspend at 2ms for 4ms): no task runs while the machine is suspended" -- \
  run "$tmp/inside.toml"
sed -i 's/"suspend"/"pause"/' "$tmp/inside.toml"
expect run_event_inside_pause_warns 0 \
  "an idle event stops the ticks while tasks run" -- run "$tmp/inside.toml"
printf 'name = "x"\n[run]\nstrategy = "exhaustive"\n[faults]\nreorder_ppm = 5\n' \
  > "$tmp/reorder.toml"
expect run_exhaustive_refuses_reordering 2 "faults.reorder_ppm" -- \
  run "$tmp/reorder.toml"
mkdir -p "$tmp/mixed" && cp "$scen/baseline.toml" "$tmp/mixed/" &&
  cp "$tmp/sem.toml" "$tmp/mixed/"
expect compare_names_the_bad_file 2 "mixed/sem.toml:3:" -- \
  compare --scenarios="$tmp/mixed"
cp "$scen/exhaustive-monotonic.toml" "$tmp/badreplay.toml"
printf '\n[replay]\nreader = 0\ncall = 0\nproperty = "torn"\ndecisions = [99, 0]\n' \
  >> "$tmp/badreplay.toml"
expect replay_bad_decisions 2 "replay.decisions: decision 0 is 99" -- \
  replay "$tmp/badreplay.toml"
sed -i 's/property = "torn"/property = "bogus"/' "$tmp/badreplay.toml"
expect replay_bad_property 2 'replay.property = "bogus": want one of' -- \
  replay "$tmp/badreplay.toml"
expect run_usage 2 "missing SCENARIO (usage: vdsolab run SCENARIO" -- run
expect run_bad_seed 2 "--seed=x1" -- run "$scen/baseline.toml" --seed=x1
expect run_seed_override 0 "seed 42," -- run "$scen/baseline.toml" --seed=42
# A seed is what a replay file's run.seed holds: 0 .. 2^63-1.
expect run_seed_too_big 2 \
  "--seed=9223372036854775808: want 0 .. 9223372036854775807" -- \
  run "$scen/coarse-step-back.toml" --seed=9223372036854775808 \
  --replay_out="$tmp/bigseed.replay.toml"
expect default_seed_too_big 2 "--seed=18446744073709551615: want 0 .. " -- \
  --seed=18446744073709551615
# replay.decisions are checked as written, before narrowing to 32 bits.
sed 's/^decisions = .*/decisions = [4294967296, 0]/' "$tmp/badreplay.toml" \
  > "$tmp/wide.replay.toml"
expect replay_decisions_not_narrowed 2 \
  "replay.decisions[0]: 4294967296 is outside 0 .. 2147483647" -- \
  replay "$tmp/wide.replay.toml"
cp "$tmp/coarse.replay.toml" "$tmp/negdecision.replay.toml"
echo 'decisions = [-5]' >> "$tmp/negdecision.replay.toml"
expect replay_random_negative_decision 2 \
  "negdecision.replay.toml:" -- replay "$tmp/negdecision.replay.toml"
expect replay_random_negative_decision_key 2 \
  "replay.decisions[0]: -5 is outside" -- replay "$tmp/negdecision.replay.toml"
# A replay that fails only at a syscall event's expectation names it (a
# minimised replay may keep an expectation that depended on an event it
# cut): not "a syscall event's expectation or the timekeeper model".
printf 'name = "x"\n[[event]]\nkind = "adjtimex"\nat = "5ms"\nexpect_ret = 4\n[[reader]]\nclocks = ["MONOTONIC"]\nperiod = "100us"\n[run]\nduration = "20ms"\n[replay]\nreader = 0\ncall = 3\nproperty = "exact"\n' \
  > "$tmp/expectation.replay.toml"
expect replay_names_expectation 1 \
  "the run fails otherwise: event 0, clock_adjtime(REALTIME, modes 0) at" -- \
  replay "$tmp/expectation.replay.toml"
# A [replay] without its property: exit 2, not "NOT REPRODUCED".
grep -v '^property = ' "$tmp/coarse.replay.toml" > "$tmp/noprop.replay.toml"
expect replay_needs_property 2 "replay.property: missing" -- \
  replay "$tmp/noprop.replay.toml"
# The default replay file name comes from the scenario's name made a safe
# file name: in the working directory, one shell word, not a flag.
mkdir -p "$tmp/names/sub"
abs_bin=$(realpath "$bin")
for n in '../esc ape' '/esc ape' 'esc/ape' '-esc ape' '.esc\\nape'; do
  sed "1s|.*|name = \"$n\"|" "$scen/coarse-step-back.toml" \
    > "$tmp/names/sub/named.toml"
  rm -f "$tmp/names/sub/esc-ape-seed1.replay.toml"
  out=$(cd "$tmp/names/sub" && "$abs_bin" run named.toml 2>&1)
  if [ -f "$tmp/names/sub/esc-ape-seed1.replay.toml" ] &&
     grep -qxF "replay it: vdsolab replay esc-ape-seed1.replay.toml" <<<"$out"
  then echo "ok   replay_name_safe ($n)"; else
    echo "FAIL replay_name_safe ($n): $(tail -3 <<<"$out")"
    failures=$((failures + 1)); fi
done
sed '1s|.*|name = ""|' "$scen/coarse-step-back.toml" > "$tmp/names/sub/named.toml"
out=$(cd "$tmp/names/sub" && "$abs_bin" run named.toml 2>&1)
if grep -qxF "replay it: vdsolab replay scenario-seed1.replay.toml" <<<"$out"
then echo "ok   replay_name_empty"; else
  echo "FAIL replay_name_empty: $(tail -3 <<<"$out")"; failures=$((failures + 1)); fi
# A reader paired with a kernel tree's timekeeper ("6.10@ktime-...", as a
# replay of a --kernel-time run names it) without that tree loaded: bad
# input, not a run of the plain reader under the model's writer.
expect paired_name_without_tree 2 "which no --kernel-time loaded" -- \
  run "$scen/baseline.toml" --variant=6.10@ktime-6.12.118+fix
expect paired_name_without_tree_compare 2 "which no --kernel-time loaded" -- \
  compare --scenarios="$scen" --variant=upstream,6.10@ktime-6.12.118
printf 'name = "p"\n[run]\nreader = "6.10@ktime-6.12.118"\n' \
  > "$tmp/paired.toml"
expect paired_name_without_tree_key 2 \
  'paired.toml:3:10: run.reader = "6.10@ktime-6.12.118": reader 6.10' -- \
  run "$tmp/paired.toml"
# A replay of such a run names the paired reader: with a variant flag it
# runs that variant (the file's reader is not used); without one, or the
# tree, it is bad input.
sed 's/^reader = "upstream"$/reader = "6.10@ktime-6.12.118"/' \
  "$tmp/coarse.replay.toml" > "$tmp/paired.replay.toml"
expect paired_replay_with_variant 1 "REPRODUCED with variant 6.15" -- \
  replay "$tmp/paired.replay.toml" --variant=6.15
expect paired_replay_without_tree 2 "which no --kernel-time loaded" -- \
  replay "$tmp/paired.replay.toml"
# With a variant given by flag the default name carries it: one scenario
# run against two variants in turn keeps both replays, each reproducing
# against its own variant.
rm -f "$tmp/names/sub/"coarse-step-back*.replay.toml
for v in upstream 6.15; do
  out=$(cd "$tmp/names/sub" && "$abs_bin" run "$scen/coarse-step-back.toml" \
    --variant=$v 2>&1)
  f="coarse-step-back-$v-seed1.replay.toml"
  if grep -qxF "replay it: vdsolab replay $f" <<<"$out" &&
     [ -f "$tmp/names/sub/$f" ]; then echo "ok   replay_name_variant ($v)"
  else echo "FAIL replay_name_variant ($v): $(tail -3 <<<"$out")"
    failures=$((failures + 1)); fi
done
for v in upstream 6.15; do
  expect "replay_name_variant_reproduces_$v" 1 "REPRODUCED" -- \
    replay "$tmp/names/sub/coarse-step-back-$v-seed1.replay.toml"
  if grep -qxF "reader = \"$v\"" \
      "$tmp/names/sub/coarse-step-back-$v-seed1.replay.toml"; then
    echo "ok   replay_name_variant_is_$v"; else
    echo "FAIL replay_name_variant_is_$v"; failures=$((failures + 1)); fi
done
if [ -e "$tmp/names/sub/coarse-step-back-seed1.replay.toml" ]; then
  echo "FAIL replay_name_variant: the name without the variant was written"
  failures=$((failures + 1)); else echo "ok   replay_name_variant_only"; fi
# An explicit path that needs quoting is quoted: the printed command pastes.
out=$("$bin" run "$scen/coarse-step-back.toml" \
  --replay_out="$tmp/names/it's a replay.toml" 2>&1)
cmd=$(sed -n 's/^replay it: vdsolab //p' <<<"$out")
eval "\"\$bin\" $cmd" > /dev/null 2>&1
rc=$?
if [ "$rc" -eq 1 ]; then echo "ok   replay_command_quoted"; else
  echo "FAIL replay_command_quoted: '$cmd' exits $rc"; failures=$((failures + 1)); fi
# The default job's replay command sets the same frequency, to the bit.
expect replay_line_exact_ppm 1 "--ntp-freq-ppm=499.0003967285156 " -- \
  --duration=1s --boot_realtime=1764460800 --ntp_at=1ms --ntp_freq_ppm=499.0004

a=$("$bin" run "$scen/preempted-readers.toml" --seed=5)
b=$("$bin" run "$scen/preempted-readers.toml" --seed=5)
if [ "$a" == "$b" ]; then echo "ok   run_deterministic"; else
  echo "FAIL run_deterministic: two runs of one scenario and seed differ"
  failures=$((failures + 1)); fi

# Ctrl-C stops a long run and still prints what was found; a run cut
# short with nothing failed is no verdict: it ends by the signal (status
# 130, SIGTERM 143), never exit 0 with PASS.
cat > "$tmp/long.toml" <<'TOML'
name = "long"
[[reader]]
period = "1us"
[run]
duration = "10m"
TOML
stop_run() {  # NAME SIGNAL WANT_RC FORMAT WANT_TEXT [COMMAND...]
  local name=$1 sig=$2 want=$3 format=$4 text=$5
  shift 5
  [ $# -gt 0 ] || set -- run "$tmp/long.toml"
  "$bin" "$@" --format="$format" > "$tmp/long.out" 2>&1 &
  local pid=$!
  sleep 1
  kill "-$sig" $pid
  wait $pid
  local rc=$?
  if [ $rc -eq "$want" ] && ! grep -q "PASS" "$tmp/long.out" &&
     grep -q "$text" "$tmp/long.out"; then
    echo "ok   $name"; else
    echo "FAIL $name: exit $rc, want $want and \"$text\" without PASS"
    tail -3 "$tmp/long.out"; failures=$((failures + 1)); fi
}
stop_run ctrl_c INT 130 text "(stopped early: interrupted)"
stop_run ctrl_c_verdict INT 130 text "STOPPED: interrupted before the end"
stop_run ctrl_c_says_why INT 130 text "stopped by SIGINT before the end"
stop_run sigterm TERM 143 text "STOPPED: interrupted before the end"
stop_run ctrl_c_json INT 130 json '"exit": 130,.*"interrupted": true'
stop_run ctrl_c_tap INT 130 tap "^Bail out! interrupted"
# compare: the table so far, marked incomplete (two copies of the long
# scenario, so that a second run is still to come).
mkdir -p "$tmp/longdir"
cp "$tmp/long.toml" "$tmp/longdir/a.toml"
cp "$tmp/long.toml" "$tmp/longdir/b.toml"
stop_run compare_ctrl_c INT 130 text "the table is incomplete" \
  compare --variant=upstream --scenarios="$tmp/longdir" --out="$tmp/longcmp"

# On a terminal, a run shows progress on stderr.
if command -v script >/dev/null; then
  cat > "$tmp/mid.toml" <<'TOML'
name = "mid"
[[reader]]
period = "1us"
[run]
duration = "2s"
TOML
  if script -qec "$bin run $tmp/mid.toml" /dev/null | tr '\r' '\n' |
     grep -q '^\[run\] .* calls/s, 0 failing'; then
    echo "ok   progress_on_tty"; else
    echo "FAIL progress_on_tty"; failures=$((failures + 1)); fi
fi

# Variants: listed with provenance, compared side by side, bad names named.
# Before 6.10 the vDSO's multiply wrapped past max_cycles: an era behaviour.
expect run_era_overflow 1 "before 6.10 the vDSO" -- \
  run "$scen/pause-past-max-cycles.toml" --variant=6.1 \
  --replay_out="$tmp/era.replay.toml"
expect variants_list 0 "provenance: seed 000" -- variants
expect run_unknown_variant 2 'unknown variant "nosuch"' -- \
  run "$scen/baseline.toml" --variant=nosuch
expect compare_unknown_variant 2 'unknown variant "nosuch"' -- \
  compare --variant=upstream,nosuch
expect compare_bad_dir 2 "--scenarios=/nonexistent" -- \
  compare --scenarios=/nonexistent
expect compare_table 1 "| perf-mmap | n/a |" -- \
  compare --variant=upstream,perf-mmap --scenarios="$scen" --out="$tmp/cmp"
expect compare_replays 1 "replay: \`vdsolab replay $tmp/cmp/upstream--coarse-step-back--" \
  -- compare --variant=upstream --scenarios="$scen" --out="$tmp/cmp"
mkdir -p "$tmp/one" && cp "$scen/baseline.toml" "$tmp/one/"
# --out: a directory compare can make, refused up front otherwise; a replay
# file that cannot be written is said on stderr.
expect compare_out_unmakeable 2 \
  "--out=/nonexistent/dir: cannot create it: /nonexistent does not exist" -- \
  compare --variant=upstream --scenarios="$tmp/one" --out=/nonexistent/dir
mkdir -p "$tmp/csb" && cp "$scen/coarse-step-back.toml" "$tmp/csb/"
mkdir -p "$tmp/cmpbad/upstream--coarse-step-back--cross_clock.replay.toml"
expect compare_replay_unwritable 1 "cannot write the replay file" -- \
  compare --variant=upstream --scenarios="$tmp/csb" --out="$tmp/cmpbad"
rm -rf "$tmp/cmp new"
expect compare_out_made_and_quoted 1 "replay: \`vdsolab replay '$tmp/cmp new/" \
  -- compare --variant=upstream --scenarios="$tmp/csb" --out="$tmp/cmp new"
expect compare_pass 0 "| 6.10 | pass" -- \
  compare --variant=6.10 --scenarios="$tmp/one" --out="$tmp/cmp1"
so="${TEST_SRCDIR:-.}/vdsolab/examples/plugin/libexample_plugin.so"
expect plugin_default_job 0 "the example-c vDSO variant" -- \
  --variant-so="$so" --duration=1s --reads_per_tick=5
# ...and, having held every check, is timed natively against the built-in
# reader of its layout (a figure, not a check: only the line is asserted).
expect plugin_default_job_speed 0 \
  "speed: example-c answers CLOCK_MONOTONIC natively in " -- \
  --variant-so="$so" --duration=1s --reads_per_tick=5
expect plugin_run 0 "PASS: every property held." -- \
  run "$scen/baseline.toml" --variant-so="$so" --variant=example-c
# A [variant] section is loaded as `replay` loads it; run.reader must name
# what it loaded (left at "upstream", the run would silently be upstream's).
printf 'name = "x"\n[run]\nduration = "10ms"\n[variant]\nplugin = "%s"\n' \
  "$(realpath "$so")" > "$tmp/variant_upstream.toml"
expect run_variant_section_names_reader 2 \
  'the [variant] section loads variant example-c; name it here' -- \
  run "$tmp/variant_upstream.toml"
printf 'name = "x"\n[run]\nduration = "10ms"\nreader = "example-c"\n[variant]\nplugin = "%s"\n' \
  "$(realpath "$so")" > "$tmp/variant_named.toml"
expect run_variant_section_loads 0 "variant example-c" -- \
  run "$tmp/variant_named.toml"
bad="${TEST_SRCDIR:-.}/vdsolab/examples/plugin/libmisbehaving"
expect plugin_crash_is_a_finding 1 "the call crashed (SIGSEGV)" -- \
  run "$scen/baseline.toml" --variant-so="${bad}_segv.so" \
  --replay_out="$tmp/segv.replay.toml"
expect plugin_crash_replays 1 "did not return: crashed (SIGSEGV" -- \
  replay "$tmp/segv.replay.toml" --variant-so="${bad}_segv.so"
# A plugin that changes the working directory does not move the replay
# file away from where vdsolab says it wrote it.
mkdir -p "$tmp/cd"
rm -f "$tmp/cd/"*.toml
abs_bad=$(realpath "${bad}_chdir.so")
out=$(cd "$tmp/cd" && "$abs_bin" run "$scen/baseline.toml" \
  --variant-so="$abs_bad" 2>&1)
f=baseline-misbehaving-chdir-seed1.replay.toml
if grep -qxF "replay it: vdsolab replay $f" <<<"$out" && [ -f "$tmp/cd/$f" ]
then echo "ok   plugin_chdir_replay_stays"; else
  echo "FAIL plugin_chdir_replay_stays: $(tail -3 <<<"$out")"
  failures=$((failures + 1)); fi
# A compare replay names its origin relative (scenarios/NAME.toml, the
# built-in one): replayed from elsewhere with a fix whose calls take other
# times, that origin is found among the built-in scenarios and run whole.
abs_cmp=$(realpath "${TEST_SRCDIR:-.}/vdsolab/docs/compare-replays/6.1--ntp-settime-pause--exact.replay.toml")
out=$(cd "$tmp/cd" && "$abs_bin" replay "$abs_cmp" --variant=upstream 2>&1)
rc=$?
if [ $rc -eq 0 ] &&
  grep -qF "it was cut from, scenarios/ntp-settime-pause.toml, run whole with seed 11 and variant upstream" <<<"$out" &&
  grep -qxF "FIXED: no defect there, every property held" <<<"$out"; then
  echo "ok   relative_origin_is_the_builtin"; else
  echo "FAIL relative_origin_is_the_builtin: exit $rc"; tail -4 <<<"$out"
  failures=$((failures + 1)); fi
# An origin edited since the replay was written is still run, and the
# verdict says the file changed (its hash is in the replay).
cp "$scen/ntp-settime-pause.toml" "$tmp/cd/origin.toml"
sed "s|^origin = .*|origin = \"$tmp/cd/origin.toml\"|" "$abs_cmp" \
  > "$tmp/cd/moved.replay.toml"
same=$(cd "$tmp/cd" && "$abs_bin" replay moved.replay.toml --variant=upstream 2>&1)
echo "# edited" >> "$tmp/cd/origin.toml"
out=$(cd "$tmp/cd" && "$abs_bin" replay moved.replay.toml --variant=upstream 2>&1)
if ! grep -qF "changed since the replay was written" <<<"$same" &&
  grep -qF "$tmp/cd/origin.toml (the file changed since the replay was written)" <<<"$out"; then
  echo "ok   origin_changed_since_is_said"; else
  echo "FAIL origin_changed_since_is_said"; grep -F "cut from" <<<"$same$out"
  failures=$((failures + 1)); fi
# A clock only the syscall can answer (CPU time, an invalid id) answered
# from the page is inexact whatever the value.
expect plugin_unserved_clock 1 \
  "the vDSO answered a clock only the syscall can" -- \
  run "$scen/invalid-clock-ids.toml" --variant-so="${bad}_unserved_zero.so"
# Going on after may_retry() said stop is a livelock.
printf 'name = "x"\n[[reader]]\nclocks = ["MONOTONIC"]\n[run]\nduration = "5ms"\n' \
  > "$tmp/mono.toml"
expect plugin_ignores_budget 1 \
  "the reader went on looping after its loop budget was spent" -- \
  run "$tmp/mono.toml" --variant-so="${bad}_ignore_budget.so" \
  --replay-out="$tmp/budget.replay.toml"
# Its replay's trace has some 20,000 steps: the first and last are shown,
# with how many were left out, and a run of equal choices is one entry.
out=$("$bin" replay "$tmp/budget.replay.toml" \
  --variant-so="${bad}_ignore_budget.so" 2>&1)
if grep -qE '^  \.\.\. [0-9]{4,} steps not shown \(`vdsolab replay FILE --trace=OUT.json` writes every one\)$' <<<"$out" &&
  [ "$(wc -l <<<"$out")" -lt 400 ]; then
  echo "ok   long_trace_is_abbreviated"; else
  echo "FAIL long_trace_is_abbreviated: $(wc -l <<<"$out") lines"
  grep -m3 'not shown' <<<"$out"; failures=$((failures + 1)); fi
# A plugin is judged by the semantics it declares: where they are not its
# layout's built-in reader's, the run says so.
expect plugin_declared_semantics_noted 0 \
  "declares masked63, delta * mult may wrap, coarse from coarse_nsec; its layout's built-in reader (upstream)" -- \
  run "$tmp/mono.toml" \
  --variant-so="${TEST_SRCDIR:-.}/vdsolab/examples/plugin/libbad_v2_plugin_10.so"
# A plugin that keeps state between calls: its minimal replay, rerun by a
# fresh process, shows nothing, and the run says so rather than hand over
# a replay that says NOT REPRODUCED.
expect plugin_state_replay_warned 1 \
  "does not reproduce in a fresh process: plugin misbehaving-max_cache" -- \
  run "$scen/skewed-cpus.toml" --variant-so="${bad}_max_cache.so" \
  --replay-out="$tmp/max_cache.replay.toml"
expect plugin_state_replay_not_reproduced 0 "NOT REPRODUCED" -- \
  replay "$tmp/max_cache.replay.toml"
# Giving up before may_retry() said stop is one too, and is not described
# as a budget spent.
expect plugin_gives_up_early 1 \
  "the reader gave up without an answer" -- \
  run "$tmp/mono.toml" --variant-so="${bad}_give_up.so"
# Callbacks called from a thread the plugin started (through a copy of the
# table, with the call's context, then a dead frame's) touch nothing of
# vdsolab's and are the plugin's fault; a crash on such a thread ends
# vdsolab with exit 1 and one line, not by the signal.
expect plugin_stray_callbacks 1 \
  "the call did what a vDSO call cannot (vdsolab's callbacks outside the call)" -- \
  run "$tmp/mono.toml" --variant-so="${bad}_stray_thread.so"
expect plugin_thread_crash 1 \
  "a thread the code under test started crashed (SIGSEGV) outside any call" -- \
  run "$tmp/mono.toml" --variant-so="${bad}_thread_crash.so"
# A thread the plugin started sets SIGSEGV back to its default outside any
# call: refused (said once), so the plugin's next crash is still a finding,
# not vdsolab's end by the signal. A constructor's change is refused too,
# and the plugin with it.
expect plugin_thread_signal 1 \
  "a thread the code under test started called signal(SIGSEGV) outside any call: refused" -- \
  run "$tmp/mono.toml" --variant-so="${bad}_thread_signal.so"
expect plugin_thread_signal_crash 1 "crashed (SIGSEGV" -- \
  run "$tmp/mono.toml" --variant-so="${bad}_thread_signal.so"
expect plugin_constructor_signal 2 \
  "called signal(SIGPIPE) while loading (in a constructor of it or of a library it needs): vdsolab refused it" -- \
  run "$scen/baseline.toml" --variant-so="${bad}_constructor_signal.so"
expect plugin_bad_counter_kind 1 \
  "the call did what a vDSO call cannot (read_counter() with an unknown kind)" -- \
  run "$tmp/mono.toml" --variant-so="${bad}_bad_counter_kind.so"
# A version-3 plugin's other entry points are probed on settled pages, in
# both views of a time namespace scenario (sim/entry_points.h): a correct
# one passes; a crash in gettimeofday() is a finding; a wrong time() or
# clock_getres() fails exact; a config_hz no kernel has is bad input.
ep="${TEST_SRCDIR:-.}/vdsolab/examples/plugin/libentry_points_plugin"
expect entry_points_plugin_runs 0 "PASS: every property held." -- \
  run "$scen/time-namespace.toml" --variant-so="${ep}_0.so"
expect entry_points_gettimeofday_crash 1 \
  "the vDSO's gettimeofday() crashed (SIGSEGV" -- \
  run "$tmp/mono.toml" --variant-so="${ep}_1.so"
expect entry_points_time_late 1 \
  "the vDSO's time() differs from the model's system call" -- \
  run "$tmp/mono.toml" --variant-so="${ep}_2.so"
expect entry_points_bad_config_hz 2 "config_hz 5: want 0 or 10 .. 10000" -- \
  run "$tmp/mono.toml" --variant-so="${ep}_3.so"
expect entry_points_getres_invalid_id 1 \
  "the vDSO's clock_getres(-2147483648) differs from the model's system call" -- \
  run "$tmp/mono.toml" --variant-so="${ep}_4.so"
# A version-4 plugin's own clocks are raced by the default job as the
# kernel's are: its twin of MONOTONIC_RAW without the seq re-check fails
# the exhaustive stage of that clock; the right one holds it; its speed is
# timed on that clock against RAW.
own="${TEST_SRCDIR:-.}/vdsolab/examples/plugin/libown_clock_plugin"
out=$(cd "$tmp" && "$bin" --variant-so="${own}.so" --duration=1s \
  --reads_per_tick=5 2>&1)
code=$?
if [ "$code" = 0 ] &&
   grep -q "races: CLOCK_EXAMPLE_TRACE, one call against every interleaving.*every property held" <<<"$out" &&
   grep -q "races: example_tsc_ns, one call against every interleaving.*every property held" <<<"$out" &&
   grep -q "answers CLOCK_EXAMPLE_TRACE natively in .* upstream CLOCK_MONOTONIC_RAW in" <<<"$out"; then
  echo "ok   own_clocks_default_job"; else
  echo "FAIL own_clocks_default_job (exit $code)"; echo "$out" | grep -E "races|speed|PASS|FAIL"
  failures=$((failures + 1)); fi
out=$(cd "$tmp" && "$bin" --variant-so="${own}_bug1.so" --duration=1s \
  --reads_per_tick=5 2>&1)
code=$?
if [ "$code" = 1 ] &&
   grep -q "races: CLOCK_EXAMPLE_TRACE, one call against every interleaving.*FAILED" <<<"$out"; then
  echo "ok   own_clocks_default_job_torn"; else
  echo "FAIL own_clocks_default_job_torn (exit $code)"; echo "$out" | grep -E "races|PASS|FAIL"
  failures=$((failures + 1)); fi
# Bug 3's wrap declared (VDSOLAB_OWN_NOT_MONOTONIC): nothing fails, the
# oracle check's step-back count included; the twin's clock_getres() is
# RAW's, and example_tsc_ns's own (1 ns) is not judged.
expect own_clocks_declared_wrap 0 "PASS: every read matched the syscall" -- \
  --variant-so="${own}_bug3_declared.so" --duration=1s --reads_per_tick=5
# A version-4 record's own clock the header does not allow is bad input.
if command -v cc >/dev/null; then
  cat > "$tmp/bad_own.c" <<'CEOF'
#include "vdsolab_plugin.h"
static int32_t get(const struct vdsolab_ops* ops, const uint8_t* page,
                   int32_t clock, struct vdsolab_timespec* ts) {
  (void)page;
  return ops->fallback(ops->ctx, clock, ts);
}
static const struct vdsolab_own_clock kOwn[] = {
    {16, "mine", VDSOLAB_OWN_MEASURED, 0, 0}};
static const struct vdsolab_plugin4 kP = {
    {{VDSOLAB_PLUGIN_ABI_V4, "bad-own", 0, 0, "upstream", 0, 0, get, 0, 0,
      0, 0, 0}, 0, 0, 0, 0},
    kOwn, 1};
const struct vdsolab_plugin4* vdsolab_plugin_v4(void) { return &kP; }
CEOF
  hdr="${TEST_SRCDIR:-.}/vdsolab/variants/plugin"
  if cc -shared -fPIC -I"$hdr" -o "$tmp/libbad_own.so" "$tmp/bad_own.c"; then
    expect plugin_bad_own_clock_id 2 \
      "own_clocks[0].id 16: ids 0 .. 31 are the kernel's clocks" -- \
      run "$scen/baseline.toml" --variant-so="$tmp/libbad_own.so"
  else
    echo "FAIL plugin_bad_own_clock_id (cc)"; failures=$((failures + 1))
  fi
else
  echo "FAIL plugin_bad_own_clock_id: no cc to build the plugin"
  failures=$((failures + 1))
fi
# checks.exact = false turns their exact check off too.
printf 'name = "x"\n[[reader]]\nclocks = ["MONOTONIC"]\n[checks]\nexact = false\n[run]\nduration = "5ms"\n' \
  > "$tmp/noexact.toml"
expect entry_points_exact_off 0 "PASS" -- \
  run "$tmp/noexact.toml" --variant-so="${ep}_2.so"
# A plugin with only some of them is probed on those alone.
expect entry_points_partial 0 "PASS: every property held." -- \
  run "$scen/time-namespace.toml" --variant-so="${ep}_5.so"
# One that spins is stopped once (one watchdog bound, 0.2 s here), and that
# entry point is not probed again: the run ends.
expect entry_points_spin 1 \
  "the vDSO's clock_getres(-2147483648) spun" -- \
  run "$tmp/mono.toml" --variant-so="${ep}_6.so" --call-timeout=200ms
# checks.sane = false turns the check off (it was always on).
printf 'name = "x"\n[[reader]]\nclocks = ["MONOTONIC"]\n[checks]\nsane = false\n[run]\nduration = "5ms"\n' \
  > "$tmp/nosane.toml"
out=$("$bin" run "$tmp/nosane.toml" --variant-so="${bad}_bad_nsec.so" 2>&1)
if grep -qE '^4 +sane +0 +0 ' <<<"$out" &&
   "$bin" run "$tmp/mono.toml" --variant-so="${bad}_bad_nsec.so" 2>&1 |
     grep -qE '^4 +sane +[1-9][0-9]* +[1-9]'; then
  echo "ok   sane_switch"; else
  echo "FAIL sane_switch"; echo "$out" | grep sane; failures=$((failures + 1)); fi
# Another variant that fails the replay's run otherwise is not a fix.
expect plugin_other_failure_not_fixed 1 \
  "NOT FIXED: variant misbehaving-destructor_exit does not show" -- \
  replay "$tmp/segv.replay.toml" --variant-so="${bad}_destructor_exit.so"
# A plugin's exit(3) is a finding, not vdsolab's exit status; a plugin
# that dies inside dlopen() is bad input, and vdsolab still ends (the
# loader's lock it left held would hang exit()'s handlers).
expect plugin_exit_is_a_finding 1 "tried to end the process (exit(3))" -- \
  run "$scen/baseline.toml" --variant-so="${bad}_exit.so"
# A name --variant, reports and replay files could not carry is refused.
expect plugin_bad_name 2 \
  "name \"--variant=upstream, second\": starts with '-'" -- \
  run "$scen/baseline.toml" --variant-so="${bad}_bad_name.so"
# An entry point that is a data object, not a function, is named as such
# (built here: a user's mistake, not one of the example plugins).
if command -v cc >/dev/null; then
  printf 'const int vdsolab_plugin_v1[4] = {1, 2, 3, 4};\n' > "$tmp/data_symbol.c"
  cc -shared -fPIC -o "$tmp/libdata_symbol.so" "$tmp/data_symbol.c"
  expect plugin_entry_point_is_data 2 \
    "vdsolab_plugin_v1 is not a function (ELF symbol type OBJECT)" -- \
    run "$scen/baseline.toml" --variant-so="$tmp/libdata_symbol.so"
fi
expect plugin_constructor_crash 2 "crashed (SIGSEGV at 0x10) while loading" -- \
  run "$scen/baseline.toml" --variant-so="${bad}_constructor.so"
expect plugin_spin_is_a_finding 1 "the call spun for 0.2 s" -- \
  run "$scen/baseline.toml" --variant-so="${bad}_spin.so" \
  --call-timeout=200ms --replay_out="$tmp/spin.replay.toml"
# The replay file keeps the run's --call-timeout: replayed without the
# flag, the call is bounded as in the run (not by the 1 s default).
expect plugin_spin_replay_keeps_timeout 1 "the call spun for 0.2 s" -- \
  replay "$tmp/spin.replay.toml"
# A replay whose run stops before its call (here: every call spins) says
# so and fails; it is neither REPRODUCED nor a fix.
expect plugin_spin_replay_not_reached 1 "NOT REACHED: the run failed" -- \
  replay "$tmp/coarse.replay.toml" --variant-so="${bad}_spin.so" \
  --call-timeout=50ms
# A plugin's destructor runs in exit(), after the report: its _exit(0)
# must not turn the failing run's exit 1 into 0.
expect plugin_destructor_keeps_exit 1 "FAIL" -- \
  run "$scen/baseline.toml" --variant-so="${bad}_destructor_exit.so" \
  --replay_out="$tmp/dtor.replay.toml"
# A plugin named relative to the working directory: the replay file
# records where it is, so the replay works from anywhere.
plugin_dir=$(cd "$(dirname "${bad}_segv.so")" && pwd)
abs_scen=$(cd "$scen" && pwd)
(cd "$plugin_dir" && "$bin" run "$abs_scen/baseline.toml" \
  --variant-so=libmisbehaving_segv.so --replay_out="$tmp/rel.replay.toml" \
  >/dev/null 2>&1)
expect plugin_relative_path_replays 1 "REPRODUCED" -- \
  replay "$tmp/rel.replay.toml"
# A --replay-out nobody can write is bad input before the run, not a lost
# replay after it.
expect replay_out_unwritable 2 "--replay-out=/nonexistent/dir/x.toml: cannot write there" -- \
  run "$scen/baseline.toml" --replay-out=/nonexistent/dir/x.toml
expect plugin_listed 0 "example-c" -- variants --variant-so="$so"
expect plugin_bad_file 2 "--variant-so=/nonexistent.so" -- \
  variants --variant-so=/nonexistent.so
if command -v python3 >/dev/null; then
  "$bin" compare --variant=upstream,perf-mmap --scenarios="$scen" \
     --out="$tmp/cmp" --format=json > "$tmp/cmp.json"
  if python3 -m json.tool < "$tmp/cmp.json" >/dev/null; then
    echo "ok   compare_json"; else
    echo "FAIL compare_json: not valid JSON"; failures=$((failures + 1)); fi
fi

# A failed race in the default job's JSON says what failed, as run's does.
if command -v python3 >/dev/null; then
  (cd "$tmp/dj" && "$bin" --variant=x86-4.16 --duration=1s \
    --reads_per_tick=5 --format=json > "$tmp/dj.json" 2>/dev/null)
  if python3 - "$tmp/dj.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
bad = [r for r in d["races"] if not r["held"]]
assert bad, "no failed race"
for r in bad:
    props = r["properties"]
    first = r["first_failure"]
    assert first["property"] in props, first
    p = props[first["property"]]
    assert p["defects"] + p["known"] > 0, (first, p)
PY
  then echo "ok   default_job_json_race_failure"; else
    echo "FAIL default_job_json_race_failure"; failures=$((failures + 1)); fi
fi

# The host's live page: inspect and conform need an x86-64 vDSO; elsewhere
# they must fail with a message, never crash.
expect inspect_bad_format 2 '--format=xml: want "text", "json"' -- inspect --format=xml
expect inspect_bad_samples 2 "--samples=-1: want a non-negative" -- inspect --samples=-1
expect conform_no_samples 2 "--samples=0: want 1 .. 10000000" -- conform --samples=0
expect conform_no_watch 2 "unknown flag --watch for 'conform'" -- conform --watch
expect conform_bad_seed 2 "--seed=abc" -- conform --seed=abc
if "$bin" inspect >"$tmp/inspect.out" 2>&1; then
  expect inspect_text 0 "clock_data[0] (CS_HRES_COARSE) at offset 0" -- inspect
  expect inspect_updates 0 "200 samples, " -- \
    inspect --samples=200
  if command -v python3 >/dev/null; then
    if "$bin" inspect --format=json --samples=50 | python3 -m json.tool \
       >/dev/null; then echo "ok   inspect_json"; else
      echo "FAIL inspect_json: not valid JSON"; failures=$((failures + 1)); fi
  fi
  expect conform_small 0 "PASS: bit-exact agreement with the host vDSO." -- \
    conform --samples=20
else
  rc=$?
  if [ $rc -eq 1 ] && grep -q "^vdsolab: " "$tmp/inspect.out"; then
    echo "skip inspect/conform: $(head -1 "$tmp/inspect.out")"; else
    echo "FAIL inspect: exit $rc"; tail -3 "$tmp/inspect.out"
    failures=$((failures + 1)); fi
fi

# Output for scripts: every command's JSON parses and carries the envelope;
# TAP has one test point per property; pictures are well-formed.
if command -v python3 >/dev/null; then
  json_ok() {  # json_ok NAME WANT_COMMAND WANT_EXIT -- ARGS...
    local name=$1 cmd=$2 want=$3
    shift 4
    "$bin" "$@" > "$tmp/$name.json" 2>/dev/null
    local rc=$?
    if [ $rc -eq "$want" ] && python3 - "$tmp/$name.json" "$cmd" "$want" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["command"] == sys.argv[2], d["command"]
assert d["exit"] == int(sys.argv[3]), d["exit"]
assert d["schema"] == 1 and d["vdsolab"]
PY
    then echo "ok   $name"; else
      echo "FAIL $name: exit $rc"; head -c 300 "$tmp/$name.json"
      failures=$((failures + 1)); fi
  }
  json_ok json_default check 0 -- --duration=1s --format=json
  json_ok json_run run 0 -- run "$scen/baseline.toml" --format=json
  json_ok json_run_fail run 1 -- run "$scen/coarse-step-back.toml" \
    --format=json --replay-out="$tmp/cs.replay.toml"
  json_ok json_replay replay 1 -- replay "$tmp/cs.replay.toml" --format=json
  json_ok json_variants variants 0 -- variants --format=json
  json_ok json_compare compare 0 -- compare --variant=6.10 \
    --scenarios="$tmp/one" --out="$tmp/cmp1" --format=json
fi
"$bin" run "$scen/coarse-step-back.toml" --format=tap > "$tmp/tap.out"
# One test point per property, and a plan that counts them.
points=$(grep -cE '^(not )?ok [0-9]+ - ' "$tmp/tap.out")
if [ "$points" -ge 10 ] && grep -qx "1..$points" "$tmp/tap.out" &&
   grep -q '^ok 10 - fast_path' "$tmp/tap.out" &&
   grep -q '^not ok 2 - monotonic' "$tmp/tap.out" &&
   head -1 "$tmp/tap.out" | grep -qx 'TAP version 13'; then
  echo "ok   tap_run"; else
  echo "FAIL tap_run"; cat "$tmp/tap.out"; failures=$((failures + 1)); fi
expect accept_known 0 "ok 2 - monotonic" -- \
  run "$scen/coarse-step-back.toml" --format=tap --accept=known
# A run under --accept=known says so in its replay files, and a replay
# judges as its run did: documented kernel behaviour at the call is no
# recurrence, by the file's field or by the flag.
"$bin" run "$scen/coarse-step-back.toml" --variant-so="${bad}_bad_nsec.so" \
  --accept=known --replay-out="$tmp/acc1.replay.toml" >/dev/null 2>&1
"$bin" run "$scen/coarse-step-back.toml" --variant-so="${bad}_bad_nsec.so" \
  --replay-out="$tmp/acc0.replay.toml" >/dev/null 2>&1
if grep -qx 'accept_known = true' "$tmp/acc1.replay.toml" &&
  ! grep -q 'accept_known' "$tmp/acc0.replay.toml"; then
  echo "ok   accept_recorded_in_replay"; else
  echo "FAIL accept_recorded_in_replay"; failures=$((failures + 1)); fi
# Edited random replays: choices are refused, not ignored; a call the run
# never makes says what may have been edited.
sed '/^\[replay\]$/a decisions = [0, 1]' "$tmp/acc0.replay.toml" \
  > "$tmp/with-decisions.replay.toml"
expect random_replay_refuses_decisions 2 \
  "replay.decisions: only an exhaustive run's replay has choices" -- \
  replay "$tmp/with-decisions.replay.toml"
sed 's/^call = .*/call = 99999999/' "$tmp/acc0.replay.toml" \
  > "$tmp/no-such-call.replay.toml"
expect replay_no_such_call 2 \
  "was the file's seed, a duration or a reader edited since it was written?" -- \
  replay "$tmp/no-such-call.replay.toml"
known_replay="${TEST_SRCDIR:-.}/vdsolab/docs/compare-replays/6.1--counter-wrap--monotonic.replay.toml"
expect replay_known_reproduced 1 "REPRODUCED" -- replay "$known_replay"
expect replay_accepts_known_by_flag 0 \
  "ACCEPTED: at the call the variant shows only documented kernel behaviour" -- \
  replay "$known_replay" --accept=known
sed '/^\[replay\]$/a accept_known = true' "$known_replay" \
  > "$tmp/known-accepted.replay.toml"
expect replay_accepts_known_by_file 0 \
  "ACCEPTED: at the call the variant shows only documented kernel behaviour" -- \
  replay "$tmp/known-accepted.replay.toml"
# ...and against another variant showing the same, not FIXED.
expect replay_accepted_not_fixed 0 \
  "ACCEPTED: at the call variant upstream shows only documented kernel behaviour" -- \
  replay "${TEST_SRCDIR:-.}/vdsolab/docs/compare-replays/6.15--coarse-step-back--monotonic.replay.toml" \
  --variant=upstream --accept=known
expect replay_pictures 1 "REPRODUCED" -- replay "$tmp/cs.replay.toml" \
  --svg="$tmp/cs.svg" --trace="$tmp/cs.trace.json"
# compare's first failure per property is a defect where there is one: an
# era's documented behaviour in an earlier scenario does not hide it (nor
# keep its replay file).
mkdir -p "$tmp/kd"
cp "$scen/coarse-step-back.toml" "$tmp/kd/a-coarse.toml"
cp "$scen/skewed-cpus.toml" "$tmp/kd/b-skewed.toml"
out=$("$bin" compare --scenarios="$tmp/kd" --variant-so="${bad}_max_cache.so" \
  --variant=misbehaving-max_cache --out="$tmp/kd-out" 2>&1)
if grep -qF -- "- **misbehaving-max_cache**, cross_clock, scenario b-skewed: [defect]" <<<"$out" &&
  [ -f "$tmp/kd-out/misbehaving-max_cache--b-skewed--cross_clock.replay.toml" ] &&
  [ ! -e "$tmp/kd-out/misbehaving-max_cache--a-coarse--cross_clock.replay.toml" ]; then
  echo "ok   compare_lists_the_defect_first"; else
  echo "FAIL compare_lists_the_defect_first"; grep -F -- "- **" <<<"$out"
  ls "$tmp/kd-out"; failures=$((failures + 1)); fi
# ...and, as run does, says when a plugin's replay does not reproduce in a
# fresh process (this one caches across calls).
if grep -qE '^  warning: the minimal replay .*--b-skewed--cross_clock.replay.toml does not reproduce in a fresh process: plugin misbehaving-max_cache' <<<"$out"; then
  echo "ok   compare_warns_of_a_stale_replay"; else
  echo "FAIL compare_warns_of_a_stale_replay"; failures=$((failures + 1)); fi
# perf-mmap reads with a bare rdtsc: baseline's two readers fail causality
# (exit 1); the plots are written all the same.
expect compare_plots 1 "perf_time" -- compare --variant=perf-mmap \
  --scenarios="$tmp/one" --out="$tmp/cmp2" --svg="$tmp/plots"
if command -v python3 >/dev/null &&
   python3 -c 'import sys, xml.etree.ElementTree as E
plot, call = (E.parse(f).getroot() for f in sys.argv[1:])
assert plot.tag.endswith("svg") and call.tag.endswith("svg")
assert any(e.tag.endswith("polyline") for e in plot.iter())
assert any(e.get("class") == "load" for e in call.iter())' \
     "$tmp/plots/perf-mmap--perf_time.svg" "$tmp/cs.svg"; then
  echo "ok   svg_files_parse"; else
  echo "FAIL svg_files_parse"; failures=$((failures + 1)); fi
if grep -q '^<svg ' "$tmp/cs.svg" && grep -q '"traceEvents"' "$tmp/cs.trace.json"; then
  echo "ok   replay_picture_files"; else
  echo "FAIL replay_picture_files"; failures=$((failures + 1)); fi

# Every replay docs/compare.md references is in the repository and shows
# its failure again.
docs="${TEST_SRCDIR:-.}/vdsolab"
replays=$(grep -o 'vdsolab replay [^`]*' "$docs/docs/compare.md" | awk '{print $3}')
missing=0
for r in $replays; do
  if [ ! -f "$docs/$r" ]; then
    echo "FAIL docs_replay_missing: $r"; missing=$((missing + 1)); continue; fi
  "$bin" replay "$docs/$r" > /dev/null 2>&1
  [ $? -eq 1 ] || { echo "FAIL docs_replay_not_reproduced: $r"; missing=$((missing + 1)); }
done
if [ -n "$replays" ] && [ $missing -eq 0 ]; then
  echo "ok   docs_replays ($(wc -w <<<"$replays") reproduced)"; else
  failures=$((failures + missing + 1)); fi

a=$("$bin" --duration=1s --seed=9 --reads_per_tick=3)
b=$("$bin" --duration=1s --seed=9 --reads_per_tick=3)
if [ "$a" == "$b" ]; then echo "ok   deterministic"; else
  echo "FAIL deterministic: two runs with seed 9 differ"; failures=$((failures + 1)); fi

exit $failures
