#!/usr/bin/env bash
# The command line with kernel trees (docs/kernel-trees.md): what a kernel
# developer does with a patch, end to end. Patches are made from the
# Debian trees at test time (ktree/testing/defect_patches.h).
set -u
bin="${TEST_SRCDIR:-.}/vdsolab/cli/vdsolab"
make_patch="${TEST_SRCDIR:-.}/vdsolab/ktree/make_patch"
scen="${TEST_SRCDIR:-.}/vdsolab/scenarios"
tmp="${TEST_TMPDIR:-/tmp}"
export VDSOLAB_CACHE_DIR="$tmp/cache"
t612=/usr/src/linux-source-6.12.tar.xz
t61=/usr/src/linux-source-6.1.tar.xz
failures=0

# shellcheck source=testing/cli_expect.sh
source "${TEST_SRCDIR:-.}/vdsolab/testing/cli_expect.sh"

# The unpatched tree builds into a plugin, runs clean, and says what it is.
expect build_variant 0 "page layout: of variant 6.10" -- \
  build-variant --kernel-tree="$t612" -o "$tmp/t612.so"
expect build_variant_cached 0 "from the cache" -- \
  build-variant --kernel-tree="$t612" -o "$tmp/t612.so"
expect tree_plugin_runs 0 "PASS: every property held." -- \
  run "$scen/baseline.toml" --variant-so="$tmp/t612.so"
expect tree_exhaustive 0 "(all of them); 0 failing" -- \
  run "$scen/exhaustive-monotonic.toml" --kernel-tree="$t612"
# 6.12 is before 6.15: its coarse clocks step back after an adjtimex().
expect tree_default_job 1 "[known: era behaviour: before 6.15" -- \
  --kernel-tree="$t612" --duration=1s --reads_per_tick=5
expect tree_default_job_accepting 0 "only as the variant's era documents" -- \
  --kernel-tree="$t612" --duration=1s --reads_per_tick=5 --accept=known
# The default job races too: without its seq retry the tree still answers
# every read between updates right; a race finds it, and writes a replay
# file (in the working directory) that reproduces.
patch=$("$make_patch" "$t612" no-seq-retry "$tmp")
pushd "$tmp" >/dev/null || exit 1
rm -f default-*.replay.toml
expect default_job_races_find_a_missing_retry 1 \
  "but the races with updates" -- \
  --kernel-tree="$t612" --patch="$patch" --duration=1s --reads_per_tick=5 \
  --accept=known
race_replay=$(find . -maxdepth 1 -name 'default-*no-seq-retry*.replay.toml' | head -1)
expect default_job_race_replays 1 "REPRODUCED" -- replay "$tmp/${race_replay:-none}"
popd >/dev/null || exit 1
# A patch that sends CLOCK_MONOTONIC to the syscall answers every read
# right and loses the vDSO's fast path: the default job fails it.
slowpath=$("$make_patch" "$t612" monotonic-to-syscall "$tmp")
expect default_job_finds_a_lost_fast_path 1 \
  "CLOCK_MONOTONIC: every one of its" -- \
  --kernel-tree="$t612" --patch="$slowpath" --duration=1s --reads_per_tick=5 \
  --accept=known

# A patch that changes no compiled code is named as such; one that does
# is not.
patch=$("$make_patch" "$t612" comment "$tmp")
expect unchanged_code_noted 0 "compiles to exactly the code of the unpatched tree" -- \
  run "$scen/exhaustive-monotonic.toml" --kernel-tree="$t612" --patch="$patch"
expect build_variant_unchanged_code_noted 0 \
  "compiles to exactly the code of the unpatched tree" -- \
  build-variant --kernel-tree="$t612" --patch="$patch" -o "$tmp/comment.so"
patch=$("$make_patch" "$t612" no-seq-retry "$tmp")
if "$bin" run "$scen/exhaustive-monotonic.toml" --kernel-tree="$t612" \
    --patch="$patch" --replay-out="$tmp/unused.toml" 2>&1 |
    grep -q -e "compiles to exactly the code" -e "which vdsolab never runs"; then
  echo "FAIL changed_code_not_noted"; failures=$((failures + 1))
else
  echo "ok   changed_code_not_noted"
fi
# A patch to gettimeofday() fails both strategies: the other entry points
# are probed on settled pages (sim/entry_points.h).
gtod=$("$make_patch" "$t612" gettimeofday-usec "$tmp")
expect gettimeofday_patch_fails_random 1 \
  "the vDSO's gettimeofday() differs from the model's CLOCK_REALTIME in microseconds" -- \
  run "$scen/baseline.toml" --kernel-tree="$t612" --patch="$gtod" \
  --replay-out="$tmp/gtod.replay.toml"
expect gettimeofday_patch_fails_exhaustive 1 \
  "FAIL: 2 answer(s) of the other entry points are wrong" -- \
  run "$scen/exhaustive-monotonic.toml" --kernel-tree="$t612" --patch="$gtod"
expect gettimeofday_patch_replays 1 "REPRODUCED" -- \
  replay "$tmp/gtod.replay.toml"
# ...and says the failing answer is the probe's, not the call it traces.
expect gettimeofday_replay_names_the_probe 1 \
  "the failing answer above is the probe of the other entry points" -- \
  replay "$tmp/gtod.replay.toml"
# The default job samples the tree's other entry points beside its clocks.
expect gettimeofday_patch_fails_default_job 1 "FAIL: gettimeofday() at true time" -- \
  --kernel-tree="$t612" --patch="$gtod" --duration=1s --reads_per_tick=5 \
  --accept=known
expect tree_default_job_samples_entry_points 0 "clock_getres()" -- \
  --kernel-tree="$t612" --duration=1s --reads_per_tick=5 --accept=known
# A patch to code vdsolab compiles but never calls (x86's exported
# __vdso_time() wrapper) is named as untested, with the function it changed.
wrap=$("$make_patch" "$t612" vdso-time-wrapper "$tmp")
expect unreached_code_noted 0 \
  "changes only __vdso_time() of the tree's code, which vdsolab never runs" -- \
  run "$scen/exhaustive-monotonic.toml" --kernel-tree="$t612" --patch="$wrap"
# A hunk outside the vDSO build (kernel/time) is said to be left out.
{ cat "$wrap"; printf -- '--- /dev/null\n+++ b/kernel/time/vdsolab-test.c\n@@ -0,0 +1 @@\n+/* test */\n'; } \
  > "$tmp/mixed.diff"
expect outside_hunks_noted 0 \
  "the patches also change kernel/time/vdsolab-test.c, outside the vDSO build" -- \
  run "$scen/exhaustive-monotonic.toml" --kernel-tree="$t612" \
  --patch="$tmp/mixed.diff"
# A file the vDSO subset holds but its compile never reads (the kernel's
# own code around the vDSO, such as vma.c): alone, the patch tests nothing
# (bad input, as a kernel/time-only patch); beside a real change, a note.
printf -- '--- /dev/null\n+++ b/arch/x86/entry/vdso/vdsolab-test.c\n@@ -0,0 +1 @@\n+/* test */\n' \
  > "$tmp/uncompiled.diff"
expect uncompiled_only_refused 2 \
  "changes none of the files the vDSO build compiles: it changes arch/x86/entry/vdso/vdsolab-test.c" -- \
  run "$scen/exhaustive-monotonic.toml" --kernel-tree="$t612" \
  --patch="$tmp/uncompiled.diff"
{ cat "$patch"; cat "$tmp/uncompiled.diff"; } > "$tmp/mixed-uncompiled.diff"
expect uncompiled_hunks_noted 1 \
  "the patches also change arch/x86/entry/vdso/vdsolab-test.c, which the compiled vDSO code never reads" -- \
  run "$scen/exhaustive-monotonic.toml" --kernel-tree="$t612" \
  --patch="$tmp/mixed-uncompiled.diff" --replay-out="$tmp/unused2.toml"
# Calls slow but each under the bound make compare slow: it says why.
slow=$("$make_patch" "$t612" slow-loop "$tmp")
mkdir -p "$tmp/short"
printf 'name = "short"\n[[reader]]\nclocks = ["MONOTONIC"]\nperiod = "20us"\n[run]\nduration = "10ms"\n' \
  > "$tmp/short/short.toml"
if "$bin" compare --scenarios="$tmp/short" --kernel-tree="$t612" \
    --patch="$slow" --out="$tmp/short-out" 2>&1 >/dev/null |
    grep -q "+slow-loop took .* us of wall time per call"; then
  echo "ok   slow_calls_noted"
else
  echo "FAIL slow_calls_noted"; failures=$((failures + 1))
fi
# A patch file's name becomes part of the variant's: what a name cannot
# hold becomes '_'.
cp "$wrap" "$tmp/my fix.diff"
expect patch_name_made_safe 0 "+my_fix (Linux" -- \
  run "$scen/exhaustive-monotonic.toml" --kernel-tree="$t612" \
  --patch="$tmp/my fix.diff"

# Each defect patch is caught, with a replay file that reproduces it with
# the same tree and patch (recorded in the file), and that the unpatched
# tree answers FIXED.
for kind in no-seq-retry base-before-seq-loop; do
  for tree in "$t612" "$t61"; do
    v=$(basename "$tree" .tar.xz)
    patch=$("$make_patch" "$tree" "$kind" "$tmp") || {
      echo "FAIL make_patch $kind $v"; failures=$((failures + 1)); continue; }
    r="$tmp/$kind-$v.replay.toml"
    expect "${kind}_${v}_caught" 1 "FAIL: " -- \
      run "$scen/exhaustive-monotonic.toml" --kernel-tree="$tree" \
      --patch="$patch" --replay-out="$r"
    if grep -q "^kernel_tree = \"$tree\"" "$r" &&
       grep -q "^patches = \[\"$patch\"\]" "$r"; then
      echo "ok   ${kind}_${v}_replay_file_names_tree_and_patch"
    else
      echo "FAIL ${kind}_${v}_replay_file_names_tree_and_patch"
      failures=$((failures + 1))
    fi
    expect "${kind}_${v}_reproduced" 1 "REPRODUCED" -- replay "$r"
    expect "${kind}_${v}_fixed" 0 "FIXED: variant tree-" -- \
      replay "$r" --kernel-tree="$tree"
  done
done

# A hunk patch places only by dropping a context line is named: the diff
# was made against other code, and the change may sit elsewhere. The
# same patch without the edit is applied exactly and gets no note.
patch=$("$make_patch" "$t612" no-seq-retry "$tmp")
sed 's/^ \t\t\treturn -1;$/ \t\t\treturn -2;/' "$patch" >"$tmp/fuzzy.diff"
if cmp -s "$patch" "$tmp/fuzzy.diff"; then
  echo "FAIL fuzzy_patch_made: the context line was not found"
  failures=$((failures + 1))
fi
at=$(grep -m1 -o '^@@ -[0-9]*' "$patch" | cut -c5-)
expect fuzzy_hunk_noted 1 \
  "fuzzy.diff: hunk #1 of lib/vdso/gettimeofday.c at line $at, fuzz 1" -- \
  run "$scen/exhaustive-monotonic.toml" --kernel-tree="$t612" \
  --patch="$tmp/fuzzy.diff" --replay-out="$tmp/unused.toml"
if "$bin" run "$scen/exhaustive-monotonic.toml" --kernel-tree="$t612" \
    --patch="$patch" --replay-out="$tmp/unused.toml" 2>&1 |
    grep -q "applied with fuzz"; then
  echo "FAIL exact_hunk_not_noted"; failures=$((failures + 1))
else
  echo "ok   exact_hunk_not_noted"
fi

# A patch edited after its replay was written: the replay says the code
# it runs is not the code that failed, and the reproduced one does not.
patch=$("$make_patch" "$t612" no-seq-retry "$tmp")
cp "$patch" "$tmp/edited.diff"
"$bin" run "$scen/exhaustive-monotonic.toml" --kernel-tree="$t612" \
  --patch="$tmp/edited.diff" --replay-out="$tmp/edited.replay.toml" \
  >/dev/null 2>&1
if "$bin" replay "$tmp/edited.replay.toml" 2>&1 |
    grep -q "not the code the replay was written with"; then
  echo "FAIL unedited_patch_not_noted"; failures=$((failures + 1))
else
  echo "ok   unedited_patch_not_noted"
fi
"$make_patch" "$t612" base-before-seq-loop "$tmp" >/dev/null
cp "$tmp/base-before-seq-loop.diff" "$tmp/edited.diff"
if "$bin" replay "$tmp/edited.replay.toml" 2>&1 |
    grep -q "not the code the replay was written with"; then
  echo "ok   edited_patch_noted"
else
  echo "FAIL edited_patch_noted"; failures=$((failures + 1))
fi
# Edited into a fix (a comment: the unpatched tree's code), the same
# variant name with other code is judged as another variant: FIXED, not
# NOT REPRODUCED.
fix=$("$make_patch" "$t612" comment "$tmp")
cp "$fix" "$tmp/edited.diff"
expect edited_into_a_fix 0 "FIXED: variant tree-" -- \
  replay "$tmp/edited.replay.toml"

# The time namespace path: the tree's own do_hres_timens() runs for the
# namespace readers of compare's time-namespace scenario.
expect timens_clean_612 0 "time namespace: " -- \
  run "$scen/time-namespace.toml" --kernel-tree="$t612"
patch=$("$make_patch" "$t612" timens-no-nsec-offset "$tmp")
expect timens_no_nsec_offset_612 1 "FAIL: " -- \
  run "$scen/time-namespace.toml" --kernel-tree="$t612" --patch="$patch"

# The negative-motion clamp removed: a reader on a CPU whose TSC is behind
# the timekeeping CPU's (6.1: time steps back; 6.12: a huge delta, whose
# normalisation loop the watchdog stops).
patch=$("$make_patch" "$t61" no-negative-motion-clamp "$tmp")
expect clamp_removed_61 1 "FAIL: " -- run "$scen/skewed-cpus.toml" \
  --kernel-tree="$t61" --patch="$patch" --replay-out="$tmp/clamp61.toml"
expect clamp_removed_61_replays 1 "REPRODUCED" -- replay "$tmp/clamp61.toml"
# The default job reads on such a CPU too, and writes a replay that
# reproduces.
pushd "$tmp" >/dev/null || exit 1
rm -f default-*.replay.toml
expect default_job_finds_a_removed_clamp 1 \
  "but the reads on a CPU whose counter lags the timekeeping CPU's broke a property" -- \
  --kernel-tree="$t61" --patch="$patch" --duration=1s --reads_per_tick=5 \
  --accept=known
clamp_replay=$(find . -maxdepth 1 -name 'default-negative-motion*.replay.toml' | head -1)
expect default_job_clamp_replays 1 "REPRODUCED" -- replay "$tmp/${clamp_replay:-none}"
popd >/dev/null || exit 1
patch=$("$make_patch" "$t612" no-negative-motion-clamp "$tmp")
expect clamp_removed_612 1 "FAIL: " -- run "$scen/skewed-cpus.toml" \
  --kernel-tree="$t612" --patch="$patch" --call-timeout=300ms \
  --replay-out="$tmp/clamp612.toml"
expect clamp_removed_612_replays 1 "REPRODUCED" -- \
  replay "$tmp/clamp612.toml" --call-timeout=300ms

# Bad input: a compile error names the tree's file and line; a patch that
# does not apply and a tree that does not exist are refused.
read -r bad line < <("$make_patch" "$t612" compile-error "$tmp")
expect compile_error 2 "lib/vdso/gettimeofday.c:$line" -- \
  run "$scen/baseline.toml" --kernel-tree="$t612" --patch="$bad"
printf -- '--- a/nothing.c\n+++ b/nothing.c\n@@ -1 +1 @@\n-x\n+y\n' \
  > "$tmp/bogus.diff"
expect patch_does_not_apply 2 "bogus.diff" -- \
  run "$scen/baseline.toml" --kernel-tree="$t612" --patch="$tmp/bogus.diff"
expect no_such_tree 2 "--kernel-tree=/nonexistent" -- \
  run "$scen/baseline.toml" --kernel-tree=/nonexistent

exit $failures
