"""The mutation catalogue of tools/mutate: which source changes it tries.

Two sources, both deterministic (a mutant's id names its file, line,
operator and occurrence, so ids are stable while the line is):

- operators applied line by line to the C++ of vdso/, variants/ and
  timekeeper/ (tests excluded): relational and arithmetic operators
  swapped, clamps (std::min/std::max, one-line ifs) and statements removed,
  types narrowed, loop bounds shifted;
- a curated list (CURATED) of changes a line operator cannot express: a
  field read from the wrong offset, a load moved out of or into the seq
  loop, a barrier dropped.

A mutant is (id, path, line number, the line before, the line after) for a
one-line change, or (id, path, None, old text, new text) for a curated one.
"""

import os
import re

ROOTS = ("vdso", "variants", "timekeeper")
SKIP_FILE = re.compile(r"(_test\.cc|_test\.h|BUILD\.bazel|/testdata/)")
# Lines no operator touches: comments, preprocessor, asserts and logging.
SKIP_LINE = re.compile(
    r"^\s*(//|#|\*|static_assert|Log\(|LOG|absl::StrFormat|return absl::)")

# (name, class, regex, replacement): every match on a line is one mutant.
# Operators are clang-formatted (spaced) binary ones, so template brackets,
# shifts and pointers are not confused with them.
LINE_OPS = [
    ("lt_to_le", "operator swapped", r" < ", " <= "),
    ("le_to_lt", "operator swapped", r" <= ", " < "),
    ("gt_to_ge", "operator swapped", r" > ", " >= "),
    ("ge_to_gt", "operator swapped", r" >= ", " > "),
    ("eq_to_ne", "operator swapped", r" == ", " != "),
    ("ne_to_eq", "operator swapped", r" != ", " == "),
    ("add_to_sub", "operator swapped", r" \+ ", " - "),
    ("sub_to_add", "operator swapped", r" - ", " + "),
    ("and_to_or", "operator swapped", r" && ", " || "),
    ("or_to_and", "operator swapped", r" \|\| ", " && "),
    ("shr_to_shl", "operator swapped", r" >> ", " << "),
    ("shl_to_shr", "operator swapped", r" << ", " >> "),
    ("band_to_bor", "operator swapped", r" & ", " | "),
    ("addeq_to_subeq", "operator swapped", r" \+= ", " -= "),
    ("subeq_to_addeq", "operator swapped", r" -= ", " += "),
    ("min_to_max", "clamp removed", r"std::min\(", "std::max("),
    ("max_to_min", "clamp removed", r"std::max\(", "std::min("),
    ("u64_to_u32", "type narrowed", r"\b(const )?uint64_t (\w+) =",
     r"\1uint32_t \2 ="),
    ("i64_to_i32", "type narrowed", r"\b(const )?int64_t (\w+) =",
     r"\1int32_t \2 ="),
    ("i128_to_i64", "type narrowed", r"\b(const )?(unsigned )?__int128 (\w+) =",
     r"\1\2long \3 ="),
    ("s64max_to_u64max", "clamp removed", r"\bkS64Max\b", "kU64Max"),
]

# Loop bounds: a literal in a for/while condition, shifted by one.
LOOP_LINE = re.compile(r"^\s*(for|while)\s*\(")
LITERAL = re.compile(r"(?<![\w.])(\d+)(?![\w.])")

# Statement removal: a whole-line assignment, compound assignment, increment
# or call statement (not a declaration, return or control statement).
STATEMENT = re.compile(
    r"^\s*(?!return\b|if\b|for\b|while\b|else\b|case\b|break\b|continue\b|"
    r"const\b|auto\b|static\b|using\b|namespace\b|template\b|struct\b|"
    r"class\b|default\b|public\b|private\b|goto\b)"
    r"[\w.\->\[\]()*:]+\s*(=|\+=|-=|\|=|&=|<<=|>>=|\+\+|--|\()[^;{}]*;\s*$")
# A one-line clamp: `if (cond) x = y;`.
CLAMP_IF = re.compile(r"^\s*if \(.*\) [\w.\->\[\]]+ (=|\+=|-=) [^;]*;\s*$")


def source_files(repo):
  for root in ROOTS:
    for dirpath, _, files in os.walk(os.path.join(repo, root)):
      for f in sorted(files):
        path = os.path.relpath(os.path.join(dirpath, f), repo)
        if not (f.endswith(".cc") or f.endswith(".h")):
          continue
        if SKIP_FILE.search(path):
          continue
        yield path


def _line_mutants(path, lines):
  in_block_comment = False
  for i, line in enumerate(lines):
    stripped = line.strip()
    if stripped.startswith("/*"):
      in_block_comment = True
    if in_block_comment:
      if "*/" in stripped:
        in_block_comment = False
      continue
    if not stripped or SKIP_LINE.match(line):
      continue
    code = line.split("//", 1)[0]
    for name, klass, pattern, repl in LINE_OPS:
      for k, m in enumerate(re.finditer(pattern, code)):
        new = code[:m.start()] + m.expand(repl) + code[m.end():]
        if new != code:
          yield (f"{path}:{i + 1}:{name}:{k}", klass, path, i + 1, line,
                 new + line[len(code):])
    if LOOP_LINE.match(code):
      for k, m in enumerate(LITERAL.finditer(code)):
        for delta, tag in ((1, "inc"), (-1, "dec")):
          v = int(m.group(1)) + delta
          if v < 0:
            continue
          new = code[:m.start()] + str(v) + code[m.end():]
          yield (f"{path}:{i + 1}:loop_bound_{tag}:{k}", "loop bound shifted",
                 path, i + 1, line, new + line[len(code):])
    if CLAMP_IF.match(code):
      yield (f"{path}:{i + 1}:clamp_removed:0", "clamp removed", path, i + 1,
             line, "\n" if line.endswith("\n") else "")
    elif STATEMENT.match(code):
      yield (f"{path}:{i + 1}:statement_removed:0", "statement removed", path,
             i + 1, line, "\n" if line.endswith("\n") else "")


# Curated mutants: (id, class, path, old, new, what). `old` must occur once.
CURATED = [
    ("upstream-hres-base-from-coarse", "field swapped",
     "vdso/upstream_reader.h",
     "const uint64_t base = acc.template Load<uint64_t>(vc + VcBasetimeNsec(idx));",
     "const uint64_t base = acc.template Load<uint64_t>(vc + VcBasetimeNsec(idx == kClockMonotonic ? kClockMonotonicCoarse : idx));",
     "MONOTONIC reads its base ns from the MONOTONIC_COARSE slot"),
    ("upstream-mult-shift-swapped", "field swapped",
     "vdso/upstream_reader.h",
     "  const uint32_t mult = acc.template Load<uint32_t>(vc + kVcMult);\n"
     "  const uint32_t shift = acc.template Load<uint32_t>(vc + kVcShift);\n"
     "  return ShrX86(delta * mult + base, shift);",
     "  const uint32_t mult = acc.template Load<uint32_t>(vc + kVcMult);\n"
     "  const uint32_t shift = acc.template Load<uint32_t>(vc + kVcShift);\n"
     "  return ShrX86(delta * mult + base, shift == 0 ? 0 : shift - 1);",
     "the fast path shifts one bit short"),
    ("upstream-cycle-last-from-max-cycles", "field swapped",
     "vdso/upstream_reader.h",
     "      cycles - acc.template Load<uint64_t>(vc + kVcCycleLast);",
     "      cycles - acc.template Load<uint64_t>(vc + kVcCycleLast + 0 * kVcMaxCycles) - (acc.template Load<uint64_t>(vc + kVcMaxCycles) & 0);",
     "an extra load in the delta (equivalent: adds zero)"),
    ("upstream-sec-outside-seq", "load moved out of the seq loop",
     "vdso/upstream_reader.h",
     "  *ns = CalcNs(acc, vc, cycles, base);\n"
     "  *sec = acc.template Load<uint64_t>(vc + VcBasetimeSec(idx));\n"
     "  return true;",
     "  *ns = CalcNs(acc, vc, cycles, base);\n"
     "  if (*sec == 0) *sec = acc.template Load<uint64_t>(vc + VcBasetimeSec(idx));\n"
     "  return true;",
     "sec is loaded only on the first pass of the seq loop (stale after a retry)"),
    ("upstream-coarse-no-retry", "load moved out of the seq loop",
     "vdso/upstream_reader.h",
     "    if (!ReadRetry(acc, vc, *seq)) return true;\n"
     "    if (!acc.MayRetry()) return std::nullopt;\n"
     "  }\n"
     "}\n"
     "\n"
     "// do_aux()",
     "    (void)ReadRetry(acc, vc, *seq);\n"
     "    return true;\n"
     "  }\n"
     "}\n"
     "\n"
     "// do_aux()",
     "do_coarse() ignores the seq retry"),
    ("upstream-hres-counter-before-seq", "load moved out of the seq loop",
     "vdso/upstream_reader.h",
     "  uint64_t sec = 0, ns = 0;\n"
     "  for (;;) {\n"
     "    std::optional<uint32_t> seq = ReadBegin(acc, vc);\n"
     "    if (!seq) return std::nullopt;\n"
     "    const std::optional<bool> ok = GetTimestamp(acc, vd, vc, clk, &sec, &ns);",
     "  uint64_t sec = 0, ns = 0;\n"
     "  const std::optional<bool> ok = GetTimestamp(acc, vd, vc, clk, &sec, &ns);\n"
     "  for (;;) {\n"
     "    std::optional<uint32_t> seq = ReadBegin(acc, vc);\n"
     "    if (!seq) return std::nullopt;",
     "do_hres() reads the page before taking the seq"),
    ("upstream-begin-no-rmb", "barrier removed",
     "vdso/upstream_reader.h",
     "  }\n  acc.Rmb();\n  return seq;",
     "  }\n  return seq;",
     "vdso_read_begin() without smp_rmb()"),
    ("upstream-negative-motion-clamp-removed", "clamp removed",
     "vdso/upstream_reader.h",
     "    if ((delta & (1ull << 62)) != 0) {",
     "    if (false && (delta & (1ull << 62)) != 0) {",
     "the bit-62 negative-motion clamp removed"),
    ("timekeeping-delta-no-mask", "clamp removed",
     "timekeeper/timekeeping.cc",
     "  tk.tkr_mono.cycle_last += interval;\n  tk.tkr_raw.cycle_last += interval;",
     "  tk.tkr_mono.cycle_last = (tk.tkr_mono.cycle_last + interval) & ~0ull;\n  tk.tkr_raw.cycle_last += interval;",
     "cycle_last advanced without the mask (equivalent on 64-bit, same type)"),
]


def curated_mutants(repo):
  for mid, klass, path, old, new, what in CURATED:
    full = os.path.join(repo, path)
    if not os.path.exists(full):
      continue
    with open(full) as f:
      text = f.read()
    if text.count(old) != 1:
      continue  # The source moved on: the mutant no longer applies.
    yield (f"curated:{mid}", klass, path, None, old, new, what)


def catalogue(repo):
  """Every mutant, in a stable order."""
  out = []
  for path in source_files(repo):
    with open(os.path.join(repo, path)) as f:
      lines = f.readlines()
    for mid, klass, p, lineno, old, new in _line_mutants(path, lines):
      out.append({"id": mid, "class": klass, "path": p, "line": lineno,
                  "old": old, "new": new, "what": ""})
  for mid, klass, path, _, old, new, what in curated_mutants(repo):
    out.append({"id": mid, "class": klass, "path": path, "line": None,
                "old": old, "new": new, "what": what})
  return out


def apply(text, mutant):
  """The file's text with the mutant applied."""
  if mutant["line"] is None:
    assert text.count(mutant["old"]) == 1, mutant["id"]
    return text.replace(mutant["old"], mutant["new"])
  lines = text.splitlines(keepends=True)
  i = mutant["line"] - 1
  assert lines[i] == mutant["old"], mutant["id"]
  lines[i] = mutant["new"]
  return "".join(lines)
