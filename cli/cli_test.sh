#!/usr/bin/env bash
# Checks vdsolab's command-line contract: a passing default run exits 0,
# bad input exits 2 with a message naming the bad value, --help explains
# the flags, and the same seed prints the same report.
set -u
bin="${TEST_SRCDIR:-.}/vdsolab/cli/vdsolab"
[ -x "$bin" ] || bin="$(dirname "$0")/vdsolab"
failures=0

expect() {  # expect NAME WANT_EXIT WANT_TEXT -- ARGS...
  local name=$1 want_exit=$2 want_text=$3
  shift 4
  local out rc
  out=$("$bin" "$@" 2>&1)
  rc=$?
  if [ "$rc" -ne "$want_exit" ]; then
    echo "FAIL $name: exit $rc, want $want_exit"; echo "$out" | tail -5
    failures=$((failures + 1))
  elif ! grep -qF -- "$want_text" <<<"$out"; then
    echo "FAIL $name: output lacks '$want_text'"; echo "$out" | tail -5
    failures=$((failures + 1))
  else
    echo "ok   $name"
  fi
}

expect short_run 0 "PASS: every read matched" -- --duration=1s --reads_per_tick=5
expect bad_hz 2 "--hz=0: want 10 .. 10000" -- --hz=0
expect bad_ppm 2 "--ntp-freq-ppm=900" -- --ntp_freq_ppm=900
expect negative_duration 2 "--duration=-1s" -- --duration=-1s
expect long_duration 2 "--duration=25h: at most 24h" -- --duration=25h
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
expect default_era_step_back_is_named 1 "[known: era behaviour: before 6.15" -- \
  --variant=6.1 --duration=1s --reads_per_tick=5
expect patch_needs_tree 2 "--patch applies to a --kernel-tree" -- --patch=x.diff
expect bad_boot_realtime 2 "--boot-realtime=yesterday" -- --boot_realtime=yesterday
expect bad_boot_fraction 2 "--boot-realtime=1.1234567891" -- --boot_realtime=1.1234567891
# The 6.15+ coarse-clock step back (docs/findings.md), from the command line.
expect coarse_step_back 1 "_COARSE went backwards" -- \
  --duration=1s --boot_realtime=1764460800 --ntp_at=1ms --ntp_freq_ppm=500
expect replay_line 1 "replay: ./bazelw run //:vdsolab -- --seed=1" -- \
  --duration=1s --boot_realtime=1764460800 --ntp_at=1ms --ntp_freq_ppm=500

# Scenario runs: the built-in scenarios end as documented.
scen="${TEST_SRCDIR:-.}/vdsolab/scenarios"
tmp="${TEST_TMPDIR:-/tmp}"
for s in baseline preempted-readers ntp-settime-pause unordered-rdtsc \
         pause-past-max-cycles; do
  expect "run_$s" 0 "PASS: every property held." -- run "$scen/$s.toml"
done
for s in skewed-cpus narrow-counter; do
  expect "run_$s" 0 "PASS: every property held where its preconditions did." \
    -- run "$scen/$s.toml"
done
expect run_exhaustive 0 "(all of them); 0 failing" -- \
  run "$scen/exhaustive-monotonic.toml"
expect run_coarse_step_back 1 "[known kernel behaviour]" -- \
  run "$scen/coarse-step-back.toml" --replay_out="$tmp/coarse.replay.toml"
expect replay_reproduces 1 "REPRODUCED" -- replay "$tmp/coarse.replay.toml"
expect replay_shows_page 1 "    clock_data[0].cycle_last" -- \
  replay "$tmp/coarse.replay.toml"
expect replay_needs_replay_section 2 "no [replay] section" -- \
  replay "$scen/baseline.toml"
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
printf 'name = "x"\n[kernel]\nhz = 3\n' > "$tmp/bad.toml"
expect run_bad_file 2 "kernel.hz = 3" -- run "$tmp/bad.toml"
expect run_usage 2 "missing SCENARIO (usage: vdsolab run SCENARIO" -- run
expect run_bad_seed 2 "--seed=x1" -- run "$scen/baseline.toml" --seed=x1
expect run_seed_override 0 "seed 42," -- run "$scen/baseline.toml" --seed=42

a=$("$bin" run "$scen/preempted-readers.toml" --seed=5)
b=$("$bin" run "$scen/preempted-readers.toml" --seed=5)
if [ "$a" == "$b" ]; then echo "ok   run_deterministic"; else
  echo "FAIL run_deterministic: two runs of one scenario and seed differ"
  failures=$((failures + 1)); fi

# Ctrl-C stops a long run and still prints what was found.
cat > "$tmp/long.toml" <<'TOML'
name = "long"
[[reader]]
period = "1us"
[run]
duration = "10m"
TOML
"$bin" run "$tmp/long.toml" > "$tmp/long.out" 2>&1 &
pid=$!
sleep 1
kill -INT $pid
wait $pid
rc=$?
if [ $rc -eq 0 ] && grep -q "(stopped early)" "$tmp/long.out"; then
  echo "ok   ctrl_c"; else
  echo "FAIL ctrl_c: exit $rc"; tail -3 "$tmp/long.out"
  failures=$((failures + 1)); fi

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
expect compare_replays 1 "replay: \`vdsolab replay $tmp/cmp/upstream--coarse-step-back" \
  -- compare --variant=upstream --scenarios="$scen" --out="$tmp/cmp"
mkdir -p "$tmp/one" && cp "$scen/baseline.toml" "$tmp/one/"
expect compare_pass 0 "| 6.10 | pass" -- \
  compare --variant=6.10 --scenarios="$tmp/one" --out="$tmp/cmp1"
so="${TEST_SRCDIR:-.}/vdsolab/examples/plugin/libexample_plugin.so"
expect plugin_default_job 0 "the example-c vDSO variant" -- \
  --variant-so="$so" --duration=1s --reads_per_tick=5
expect plugin_run 0 "PASS: every property held." -- \
  run "$scen/baseline.toml" --variant-so="$so" --variant=example-c
bad="${TEST_SRCDIR:-.}/vdsolab/examples/plugin/libmisbehaving"
expect plugin_crash_is_a_finding 1 "the call crashed (SIGSEGV)" -- \
  run "$scen/baseline.toml" --variant-so="${bad}_segv.so" \
  --replay_out="$tmp/segv.replay.toml"
expect plugin_crash_replays 1 "did not return: crashed (SIGSEGV" -- \
  replay "$tmp/segv.replay.toml" --variant-so="${bad}_segv.so"
expect plugin_spin_is_a_finding 1 "the call spun for 0.2 s" -- \
  run "$scen/baseline.toml" --variant-so="${bad}_spin.so" \
  --call-timeout=200ms --replay_out="$tmp/spin.replay.toml"
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

a=$("$bin" --duration=1s --seed=9 --reads_per_tick=3)
b=$("$bin" --duration=1s --seed=9 --reads_per_tick=3)
if [ "$a" == "$b" ]; then echo "ok   deterministic"; else
  echo "FAIL deterministic: two runs with seed 9 differ"; failures=$((failures + 1)); fi

exit $failures
