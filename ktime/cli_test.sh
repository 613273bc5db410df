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

exit $failures
