#!/usr/bin/env bash
# The command line with compiled vDSOs (docs/host-variant.md): the running
# kernel's (--variant=host) and a file (--vdso-image, here the running
# image dumped to disk), clean and broken, with replay files that load the
# image again; images vdsolab cannot run are bad input (exit 2).
set -u
bin="${TEST_SRCDIR:-.}/vdsolab/cli/vdsolab"
dump="${TEST_SRCDIR:-.}/vdsolab/hostvdso/dump_vdso"
scen="${TEST_SRCDIR:-.}/vdsolab/scenarios"
tmp="${TEST_TMPDIR:-/tmp}"
failures=0

if [ "$(uname -m)" != x86_64 ]; then
  echo "SKIP: not x86-64 ($(uname -m)): no host vDSO vdsolab runs"
  exit 0
fi
if ! "$dump" "$tmp/vdso.so"; then
  echo "FAIL: x86-64 Linux without a readable [vdso]"
  exit 1
fi

# shellcheck source=testing/cli_expect.sh
source "${TEST_SRCDIR:-.}/vdsolab/testing/cli_expect.sh"

# Short copies of the built-in scenarios (the full ones take a minute with
# a compiled vDSO: docs/host-variant.md).
sed -e 's/^duration = "1s"/duration = "40ms"/' -e 's/^at = "300ms"/at = "20ms"/' \
  "$scen/baseline.toml" \
  > "$tmp/baseline.toml"
sed 's/^exhaustive_updates = 2/exhaustive_updates = 1/' \
  "$scen/exhaustive-monotonic.toml" > "$tmp/exhaustive.toml"

expect host_baseline 0 "PASS: every property held." -- \
  run "$tmp/baseline.toml" --variant=host
expect host_says_what_it_is 0 "page layout, writer and era semantics of built-in" -- \
  run "$tmp/baseline.toml" --variant=host
expect host_exhaustive 0 "(all of them); 0 failing" -- \
  run "$tmp/exhaustive.toml" --variant=host
expect image_file_baseline 0 "PASS: every property held." -- \
  run "$tmp/baseline.toml" --vdso-image="$tmp/vdso.so"
expect image_file_named 0 "variant host-" -- \
  run "$tmp/baseline.toml" --vdso-image="$tmp/vdso.so"
expect variants_lists_image 0 "host-" -- \
  variants --vdso-image="$tmp/vdso.so"

# A broken image (ud2 after the counter read): a crash finding whose replay
# file names the image and its sha256, loads it again (REPRODUCED), and
# that the running kernel's image answers FIXED.
"$dump" "$tmp/ud2.so" ud2
r="$tmp/ud2.replay.toml"
expect broken_image_caught 1 "crashed (SIGILL" -- \
  run "$tmp/baseline.toml" --vdso-image="$tmp/ud2.so" --replay-out="$r"
if grep -q "^vdso_image = \"$tmp/ud2.so\"" "$r" &&
   grep -q "^vdso_image_sha256 = \"[0-9a-f]\{64\}\"" "$r"; then
  echo "ok   replay_file_names_the_image"
else
  echo "FAIL replay_file_names_the_image"; cat "$r" | head -30
  failures=$((failures + 1))
fi
expect broken_image_reproduced 1 "REPRODUCED" -- replay "$r"
expect broken_image_fixed_by_host 0 "FIXED: variant host" -- \
  replay "$r" --variant=host
# A replay recorded with the running kernel's image loads it again.
sed -e 's|^vdso_image = .*|vdso_image = "[vdso]"|' \
    -e '/^vdso_image_sha256/d' -e 's/^reader = "host-[^"]*"/reader = "host"/' \
    "$r" > "$tmp/host.replay.toml"
expect host_replay_loads_running_image 0 "variant host" -- \
  replay "$tmp/host.replay.toml"
"$dump" "$tmp/spin.so" spin
expect spinning_image_caught 1 "spun for 0.2" -- \
  run "$tmp/baseline.toml" --vdso-image="$tmp/spin.so" --call-timeout=200ms

# Images vdsolab cannot run are bad input.
expect no_such_image 2 "--vdso-image=/nonexistent" -- \
  run "$tmp/baseline.toml" --vdso-image=/nonexistent
echo "not an ELF file" > "$tmp/junk.so"
expect junk_image 2 "not an ELF file" -- \
  run "$tmp/baseline.toml" --vdso-image="$tmp/junk.so"
"$dump" "$tmp/v613.so" version=6.13.0
expect unknown_layout_613 2 "Linux 6.13" -- \
  run "$tmp/baseline.toml" --vdso-image="$tmp/v613.so"
"$dump" "$tmp/v419.so" version=4.19.0
expect unknown_layout_419 2 "before 5.3" -- \
  run "$tmp/baseline.toml" --vdso-image="$tmp/v419.so"
# An image claiming an older version than its code is: its references to
# data pages do not fit that version's arrangement.
"$dump" "$tmp/v610.so" version=6.10.0
expect wrong_layout_610 2 "below the data pages vdsolab maps there" -- \
  run "$tmp/baseline.toml" --vdso-image="$tmp/v610.so"

exit $failures
