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
expect bad_hz 2 "HZ 0" -- --hz=0
expect bad_ppm 2 "--ntp_freq_ppm=900" -- --ntp_freq_ppm=900
expect negative_duration 2 "--duration=-1s" -- --duration=-1s
expect ntp_after_end 2 "--ntp_at=5s" -- --duration=1s --ntp_at=5s
expect bad_flag_value 1 "hz" -- --hz=lots
expect unknown_flag 1 "nosuchflag" -- --nosuchflag=1
expect stray_argument 2 "unexpected argument 'frobnicate'" -- frobnicate
expect help 1 "--ntp_freq_ppm" -- --help
expect bad_boot_realtime 2 "--boot_realtime=yesterday" -- --boot_realtime=yesterday
expect bad_boot_fraction 2 "--boot_realtime=1.1234567891" -- --boot_realtime=1.1234567891
# The 6.15+ coarse-clock step back (docs/findings.md), from the command line.
expect coarse_step_back 1 "_COARSE went backwards" -- \
  --duration=1s --boot_realtime=1764460800 --ntp_at=1ms --ntp_freq_ppm=500
expect replay_line 1 "replay: ./bazelw run //:vdsolab -- --seed=1" -- \
  --duration=1s --boot_realtime=1764460800 --ntp_at=1ms --ntp_freq_ppm=500

a=$("$bin" --duration=1s --seed=9 --reads_per_tick=3)
b=$("$bin" --duration=1s --seed=9 --reads_per_tick=3)
if [ "$a" == "$b" ]; then echo "ok   deterministic"; else
  echo "FAIL deterministic: two runs with seed 9 differ"; failures=$((failures + 1)); fi

exit $failures
