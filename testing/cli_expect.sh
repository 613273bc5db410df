# Sourced by the command-line tests (cli/, ktree/, ktime/, hostvdso/):
# `expect NAME WANT_EXIT WANT_TEXT -- ARGS...` runs "$bin" ARGS, checks its
# exit status and that its output (stdout and stderr) contains WANT_TEXT,
# prints "ok   NAME" or "FAIL NAME: ..." with the output's tail, and counts
# failures in $failures.
failures=${failures:-0}

expect() {
  local name=$1 want_exit=$2 want_text=$3
  shift 4
  local out rc
  out=$("$bin" "$@" 2>&1)
  rc=$?
  if [ "$rc" -ne "$want_exit" ]; then
    echo "FAIL $name: exit $rc, want $want_exit"; echo "$out" | tail -8
    failures=$((failures + 1))
  elif ! grep -qF -- "$want_text" <<<"$out"; then
    echo "FAIL $name: output lacks '$want_text'"; echo "$out" | tail -8
    failures=$((failures + 1))
  else
    echo "ok   $name"
  fi
}
