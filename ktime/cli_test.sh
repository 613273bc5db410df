#!/usr/bin/env bash
# vdsolab conform-model end to end (docs/ktime.md): the Debian 6.12 tree
# agrees with the model; a patch to ntp.c, made from the tree at test time,
# is a difference shrunk to boot with a replay command; bad input is exit 2.
set -u
bin="${TEST_SRCDIR:-.}/vdsolab/cli/vdsolab"
tmp="${TEST_TMPDIR:-/tmp}"
export VDSOLAB_CACHE_DIR="$tmp/cache"
t612=/usr/src/linux-source-6.12.tar.xz
failures=0

# shellcheck source=testing/cli_expect.sh
source "${TEST_SRCDIR:-.}/vdsolab/testing/cli_expect.sh"

if [ ! -r "$t612" ]; then
  echo "skipped: $t612 is not installed"
  exit 0
fi

expect agrees 0 "no difference" -- \
  conform-model --kernel-tree="$t612" --ops=3000 --seed=5
expect agrees_json 0 '"ops_compared": 3000' -- \
  conform-model --kernel-tree="$t612" --ops=3000 --seed=5 --format=json

# ntp.c booting with STA_PLL set: ntp.time_status differs at boot.
mkdir -p "$tmp/p/a/kernel/time" "$tmp/p/b/kernel/time"
tar -xOf "$t612" --wildcards --no-wildcards-match-slash \
  '*/kernel/time/ntp.c' > "$tmp/p/a/kernel/time/ntp.c"
sed 's/^static int\t\t\ttime_status = STA_UNSYNC;/static int\t\t\ttime_status = STA_UNSYNC | STA_PLL;/' \
  "$tmp/p/a/kernel/time/ntp.c" > "$tmp/p/b/kernel/time/ntp.c"
(cd "$tmp/p" && diff -u a/kernel/time/ntp.c b/kernel/time/ntp.c) \
  > "$tmp/ntp-pll.diff"
expect patched_differs 1 "boot: ntp.time_status: model 64, tree 65" -- \
  conform-model --kernel-tree="$t612" --patch="$tmp/ntp-pll.diff" --ops=500
expect patched_replay 1 "replay: vdsolab conform-model --kernel-tree=" -- \
  conform-model --kernel-tree="$t612" --patch="$tmp/ntp-pll.diff" --ops=500

# Its WARN()s go on after the trap, as in the kernel: seed 1 drives
# timekeeping_apply_adjustment() into its mult overflow WARN_ON_ONCE().
expect warn_goes_on 0 "the tree's WARN() fired" -- \
  conform-model --kernel-tree="$t612" --ops=25000 --seed=1

# A patch whose code crashes is a difference of the sequence, not the end
# of vdsolab: do_settimeofday64() dereferences NULL.
mkdir -p "$tmp/c/a/kernel/time" "$tmp/c/b/kernel/time"
tar -xOf "$t612" --wildcards --no-wildcards-match-slash \
  '*/kernel/time/timekeeping.c' > "$tmp/c/a/kernel/time/timekeeping.c"
awk '{ print } /^int do_settimeofday64\(/ { f = 1 }
     f && /^\{$/ { print "\t*(volatile int *)0 = 0;"; f = 0 }' \
  "$tmp/c/a/kernel/time/timekeeping.c" > "$tmp/c/b/kernel/time/timekeeping.c"
(cd "$tmp/c" && diff -u a/kernel/time/timekeeping.c b/kernel/time/timekeeping.c) \
  > "$tmp/settime-null.diff"
expect crash_is_a_difference 1 \
  "the tree's do_settimeofday64() crashed (SIGSEGV" -- \
  conform-model --kernel-tree="$t612" --patch="$tmp/settime-null.diff" \
  --ops=2000

# The tree's syscall-path readers are compared with the model's (ABI v7):
# ktime_get_raw_ts64() a second ahead, ktime_get_ts64() a nanosecond
# ahead. Nothing called them before; both patches passed.
t61=/usr/src/linux-source-6.1.tar.xz
reader_patch() {  # TREE NAME SED-EXPRESSION: sets $patch to the diff
  local tree=$1 name=$2 expr=$3 d="$tmp/r-$2-$(basename "$1" .tar.xz)"
  mkdir -p "$d/a/kernel/time" "$d/b/kernel/time"
  tar -xOf "$tree" --wildcards --no-wildcards-match-slash \
    '*/kernel/time/timekeeping.c' > "$d/a/kernel/time/timekeeping.c"
  sed "$expr" "$d/a/kernel/time/timekeeping.c" \
    > "$d/b/kernel/time/timekeeping.c"
  (cd "$d" && diff -u a/kernel/time/timekeeping.c b/kernel/time/timekeeping.c) \
    > "$d.diff"
  if [ ! -s "$d.diff" ]; then
    echo "FAIL $name: the patch could not be made from $tree"
    failures=$((failures + 1))
  fi
  patch="$d.diff"
}
raw_sec='s/^\t\tts->tv_sec = tk->raw_sec;$/\t\tts->tv_sec = tk->raw_sec + 1;/'
mono_ns='s/^\ttimespec64_add_ns(ts, nsec + tomono.tv_nsec);$/\ttimespec64_add_ns(ts, nsec + tomono.tv_nsec + 1);/'
for tree in "$t612" "$t61"; do
  v=$(basename "$tree" .tar.xz)
  if [ ! -r "$tree" ]; then
    echo "skipped: raw_reader_${v}, mono_reader_${v} ($tree is not installed)"
    continue
  fi
  reader_patch "$tree" raw-sec "$raw_sec"
  expect "raw_reader_${v}" 1 "ktime_get_raw_ts64() at counter 0x" -- \
    conform-model --kernel-tree="$tree" --ops=200 --patch="$patch"
  reader_patch "$tree" mono-ns "$mono_ns"
  expect "mono_reader_${v}" 1 "ktime_get_ts64() at counter 0x" -- \
    conform-model --kernel-tree="$tree" --ops=200 --patch="$patch"
done
# The generator's rare corners, reached at conform-model's defaults (seed
# 1, 100,000 operations): a counter stall past max_cycles before a
# settimeofday, offset injection or suspend (6.10+ forwards it in
# max_cycles chunks; unchunked, the multiply overflows), and a leap
# second deleted at midnight (its sign flipped, the clock steps back).
kt_patch() {  # TREE FILE NAME SED-EXPRESSION: prints the diff's path
  local tree=$1 file=$2 name=$3 expr=$4 d="$tmp/k-$3"
  mkdir -p "$d/a/kernel/time" "$d/b/kernel/time"
  tar -xOf "$tree" --wildcards --no-wildcards-match-slash \
    "*/kernel/time/$file" > "$d/a/kernel/time/$file"
  sed "$expr" "$d/a/kernel/time/$file" > "$d/b/kernel/time/$file"
  (cd "$d" && diff -u "a/kernel/time/$file" "b/kernel/time/$file") \
    > "$d.diff"
  echo "$d.diff"
}
unchunked=$(kt_patch "$t612" timekeeping.c unchunked \
  's/^\t\tu64 incr = delta < max ? delta : max;$/\t\tu64 incr = delta < max ? delta : delta;/')
expect unchunked_forward_caught 1 "DIFFERENCE (shrunk to" -- \
  conform-model --kernel-tree="$t612" --patch="$unchunked"
leap_sign=$(kt_patch "$t612" ntp.c leap-sign \
  's/^\t\t\tleap = 1;$/\t\t\tleap = -1;/')
expect leap_deletion_caught 1 "Clock: deleting leap second 23:59:59 UTC" -- \
  conform-model --kernel-tree="$t612" --patch="$leap_sign"
# __do_adjtimex() at the end of an inserted second, before the tick moves
# TIME_OOP on, answers TIME_WAIT from the time; one answering TIME_OOP
# passed every check until the generator read adjtimex() there.
leap_oop=$(kt_patch "$t612" ntp.c leap-oop \
  '/(ts->tv_sec == ntp_next_leap_sec)) {$/{n;s/result = TIME_WAIT;/result = TIME_OOP;/}')
expect leap_readback_caught 1 "adjtimex return: model 4, tree 3" -- \
  conform-model --kernel-tree="$t612" --patch="$leap_oop"
# A WARN where the model prints only a notice (the leap second's) is a
# difference: the model's printk()s are not WARN()s.
leap_warn=$(kt_patch "$t612" ntp.c leap-warn \
  '/^\t\t\t\t"Clock: inserting leap second 23:59:60 UTC\\n");$/a \\t\t\tWARN_ON_ONCE(1);')
expect leap_notice_warn_differs 1 \
  "fired; the model warns of nothing in this operation" -- \
  conform-model --kernel-tree="$t612" --patch="$leap_warn"
# clocksource_delta() without its check (6.12.118: `ret > max_delta`), and
# with the pre-6.13 MSB check in place of the max-raw-delta backport: the
# generator's TSC steps back and its stalls past a narrow counter's MSB
# find both; the second also says the patch moved the profile probe (which
# judged it by the older profile, silently, before).
no_clamp=$(kt_patch "$t612" timekeeping_internal.h no-clamp \
  's/^\treturn ret > max_delta ? 0 : ret;$/\treturn ret;/')
expect negative_motion_caught 1 "(the counter steps back)" -- \
  conform-model --kernel-tree="$t612" --patch="$no_clamp"
msb=$(kt_patch "$t612" timekeeping_internal.h msb \
  's/^\treturn ret > max_delta ? 0 : ret;$/\treturn (ret \& ~(mask >> 1)) ? 0 : ret;/')
expect backport_reverted_caught 1 "DIFFERENCE (shrunk to" -- \
  conform-model --kernel-tree="$t612" --patch="$msb"
expect backport_reverted_noted 1 "judged by the unpatched tree's profile" -- \
  conform-model --kernel-tree="$t612" --patch="$msb"
# A patch that changes no code, or only code vdsolab never runs, says so.
comment=$(kt_patch "$t612" timekeeping.c comment \
  's/^ \* ktime_get_boot_fast_ns - NMI safe/ * ktime_get_boot_fast_ns - NMI-safe/')
expect comment_noted 0 "compiles to exactly the code of the unpatched tree" -- \
  conform-model --kernel-tree="$t612" --patch="$comment" --ops=500
dead=$(kt_patch "$t612" timekeeping.c dead \
  's/^\treturn (ktime_get_mono_fast_ns() + ktime_to_ns(data_race(tk->offs_boot)));$/\treturn (ktime_get_mono_fast_ns() - ktime_to_ns(data_race(tk->offs_boot)));/')
expect unrun_code_noted 0 "changes only ktime_get_boot_fast_ns() of the tree's kernel/time code, which vdsolab never runs" -- \
  conform-model --kernel-tree="$t612" --patch="$dead" --ops=500
# ...and one that changes code vdsolab runs does not.
if "$bin" conform-model --kernel-tree="$t612" --patch="$no_clamp" --ops=10 2>&1 |
    grep -q -e "compiles to exactly" -e "which vdsolab never runs"; then
  echo "FAIL run_code_not_noted"; failures=$((failures + 1))
else
  echo "ok   run_code_not_noted"
fi
for p in "$unchunked" "$leap_sign" "$leap_warn" "$leap_oop" "$no_clamp" \
  "$msb" "$comment" "$dead"; do
  if [ ! -s "$p" ]; then
    echo "FAIL $p: the patch could not be made from the tree"
    failures=$((failures + 1))
  fi
done
expect agrees_612_defaults 0 "no difference" -- \
  conform-model --kernel-tree="$t612"

if [ -r "$t61" ]; then
  expect agrees_61 0 "no difference" -- \
    conform-model --kernel-tree="$t61" --ops=3000 --seed=5
else
  echo "skipped: agrees_61 ($t61 is not installed)"
fi

expect no_such_tree 2 "--kernel-tree=/nonexistent" -- \
  conform-model --kernel-tree=/nonexistent
expect no_tree 2 "--kernel-tree is required" -- conform-model
printf -- '--- a/nothing.c\n+++ b/nothing.c\n@@ -1 +1 @@\n-x\n+y\n' \
  > "$tmp/bogus.diff"
expect bad_patch 2 "bogus.diff" -- \
  conform-model --kernel-tree="$t612" --patch="$tmp/bogus.diff"

# A patch to a file the build does not compile (hrtimer.c) would run the
# unpatched tree under its name: bad input. Beside a compiled change, a
# note names it.
mkdir -p "$tmp/h/a/kernel/time" "$tmp/h/b/kernel/time"
tar -xOf "$t612" --wildcards --no-wildcards-match-slash \
  '*/kernel/time/hrtimer.c' > "$tmp/h/a/kernel/time/hrtimer.c"
sed '1a /* vdsolab test: a change nothing here compiles */' \
  "$tmp/h/a/kernel/time/hrtimer.c" > "$tmp/h/b/kernel/time/hrtimer.c"
(cd "$tmp/h" && diff -u a/kernel/time/hrtimer.c b/kernel/time/hrtimer.c) \
  > "$tmp/hrtimer.diff"
expect uncompiled_patch 2 \
  "hrtimer.diff: changes none of the files the kernel/time build compiles" -- \
  conform-model --kernel-tree="$t612" --patch="$tmp/hrtimer.diff" --ops=500
cat "$tmp/ntp-pll.diff" "$tmp/hrtimer.diff" > "$tmp/ntp-and-hrtimer.diff"
expect uncompiled_file_noted 1 \
  "also change kernel/time/hrtimer.c, which the kernel/time build does not" -- \
  conform-model --kernel-tree="$t612" --patch="$tmp/ntp-and-hrtimer.diff" \
  --ops=500

# A WARN() the model has no warning for is a difference, though the kernel
# (and the guarded call) goes on after it: timekeeping_adjust() warning
# whenever it rounds the NTP error up.
mkdir -p "$tmp/w/a/kernel/time" "$tmp/w/b/kernel/time"
cp "$tmp/c/a/kernel/time/timekeeping.c" "$tmp/w/a/kernel/time/timekeeping.c"
sed '/^\ttk->ntp_err_mult = tk->ntp_error > 0 ? 1 : 0;$/a \\tWARN_ON(tk->ntp_err_mult);' \
  "$tmp/w/a/kernel/time/timekeeping.c" > "$tmp/w/b/kernel/time/timekeeping.c"
(cd "$tmp/w" && diff -u a/kernel/time/timekeeping.c b/kernel/time/timekeeping.c) \
  > "$tmp/warn-adjust.diff"
if [ ! -s "$tmp/warn-adjust.diff" ]; then
  echo "FAIL warn_adjust: the patch could not be made from the tree"
  failures=$((failures + 1))
fi
expect unmodelled_warn_differs 1 \
  "fired; the model warns of nothing in this operation" -- \
  conform-model --kernel-tree="$t612" --patch="$tmp/warn-adjust.diff" \
  --ops=3000

# A BUG() is a crash named by its source place, not by an offset into the
# object: update_wall_time() hitting one at its first line.
mkdir -p "$tmp/g/a/kernel/time" "$tmp/g/b/kernel/time"
cp "$tmp/c/a/kernel/time/timekeeping.c" "$tmp/g/a/kernel/time/timekeeping.c"
awk '{ print } /^void update_wall_time\(void\)$/ { getline; print; print "\tBUG();" }' \
  "$tmp/g/a/kernel/time/timekeeping.c" > "$tmp/g/b/kernel/time/timekeeping.c"
(cd "$tmp/g" && diff -u a/kernel/time/timekeeping.c b/kernel/time/timekeeping.c) \
  > "$tmp/bug.diff"
expect bug_named 1 \
  "update_wall_time() hit BUG() at kernel/time/timekeeping.c:" -- \
  conform-model --kernel-tree="$t612" --patch="$tmp/bug.diff" --ops=500

# A diff made without a/ and b/ (patch -p0's paths): bad input that says
# how its paths are read.
(cd "$tmp/g/b" && diff -u "$tmp/g/a/kernel/time/timekeeping.c" \
  kernel/time/timekeeping.c | sed "s|^--- $tmp/g/a/|--- |") > "$tmp/p0.diff"
expect p0_patch_explained 2 "read as patch -p1 reads them" -- \
  conform-model --kernel-tree="$t612" --patch="$tmp/p0.diff" --ops=500

# A cache under a directory with a space in its name: the compiler's -MD
# lists escape it, and a patch to what is compiled is still taken as one.
VDSOLAB_CACHE_DIR="$tmp/ca che" expect cache_path_with_space 1 \
  "boot: ntp.time_status: model 64, tree 65" -- \
  conform-model --kernel-tree="$t612" --patch="$tmp/ntp-pll.diff" --ops=500

exit $failures
