#!/usr/bin/env bash
# docs/compare.md is what `vdsolab compare` prints for the built-in
# scenarios: the table users read (and the mutation harness's quick tier
# diffs) must not drift from the code. Regenerate it with the command its
# header names.
set -u
bin="${TEST_SRCDIR:-.}/vdsolab/cli/vdsolab"
[ -x "$bin" ] || bin="$(dirname "$0")/vdsolab"
root="${TEST_SRCDIR:-.}/vdsolab"
out="${TEST_TMPDIR:-/tmp}/compare-replays"
got="${TEST_TMPDIR:-/tmp}/compare.md"
(cd "$root" && "$bin" compare --out="$out") >"$got"
code=$?
# compare exits 1: some variants fail by design (docs/compare.md says which).
if [ "$code" -ne 1 ]; then
  echo "FAIL compare_doc: vdsolab compare exited $code (want 1)"
  exit 1
fi
if ! diff -u "$root/docs/compare.md" <(sed "s#$out#docs/compare-replays#g" "$got"); then
  echo "FAIL compare_doc: docs/compare.md is not vdsolab compare's output;" \
       "regenerate: ./bazelw run //:vdsolab -- compare" \
       "--out=docs/compare-replays > docs/compare.md"
  exit 1
fi
# Every replay the table names was written, and is the committed one.
for f in $(grep -o 'docs/compare-replays/[^` ]*\.replay\.toml' "$root/docs/compare.md" | sort -u); do
  name=$(basename "$f")
  if ! cmp -s "$root/$f" "$out/$name"; then
    echo "FAIL compare_doc: $f differs from what compare wrote"
    exit 1
  fi
done
echo "ok   compare_doc"
