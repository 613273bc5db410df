"""docs/mutation.md from tools/mutate logs and the triage notes.

One log per sample (a run's JSON lines, reruns with --only appended): the
report scores each sample on its own and all of them together. A mutant
that appears in two logs is counted once, in the sample of the first log
that has it, with its last record's verdict.

The triage notes (tools/mutation_triage.txt) say, per surviving mutant id,
whether it is equivalent (no observable behaviour differs: argued) or a
real survivor (why the suite misses it). Lines: `ID | equivalent | why` or
`ID | survivor | why`; `NAME | note | text` adds text about the run to the
score section (where a sample came from, what a rerun followed); `#`
starts a comment.
"""

import collections
import json
import os

TRIAGE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                      "mutation_triage.txt")


def load_triage():
  notes = {}
  if not os.path.exists(TRIAGE):
    return notes
  with open(TRIAGE) as f:
    for line in f:
      line = line.strip()
      if not line or line.startswith("#"):
        continue
      mid, kind, why = (p.strip() for p in line.split("|", 2))
      notes[mid] = (kind, why)
  return notes


def _change(r):
  if r["line"] is None:
    return r["what"]
  return f"`{r['old'].strip()}` → `{r['new'].strip()}`"


def _sample_name(recs, log):
  """`--sample=60 --seed=2`, from the first record that was drawn (reruns
  with --only alone record no sample), else the log's file name."""
  first = next((r for r in recs if r.get("sample")), None)
  if first:
    return f"`--sample={first['sample']} --seed={first['seed']}`"
  return f"`{os.path.basename(log)}`"


def _same_code(r):
  """The survivor compiled to the original's code (tools/mutate's trivial
  compiler equivalence): equivalent by construction."""
  return r.get("object_code", "").startswith("identical")


def _tally(records, notes):
  """(stillborn, equivalent, counted, killed, examples_only, survived)."""
  live = [r for r in records if r["status"] != "stillborn"]
  equivalent = [r for r in live if r["status"] in ("survived", "examples_only")
                and (notes.get(r["id"], ("",))[0] == "equivalent" or
                     (_same_code(r) and r["id"] not in notes))]
  counted = [r for r in live if r not in equivalent]
  return (len(records) - len(live), equivalent, counted,
          [r for r in counted if r["status"] == "killed"],
          [r for r in counted if r["status"] == "examples_only"],
          [r for r in counted if r["status"] == "survived"])


def write(out, logs, catalogue_size, args):
  if isinstance(logs, str):
    logs = [logs]
  records = []
  samples = []  # (name, log, number of records) per log, in order.
  sample_of = {}  # id: index into samples of the first log that has it.
  for n, log in enumerate(logs):
    recs = []
    if os.path.exists(log):
      with open(log) as f:
        recs = [json.loads(l) for l in f if l.strip()]
    samples.append((_sample_name(recs, log), log))
    for r in recs:
      sample_of.setdefault(r["id"], n)
    records += recs
  # A mutant rerun with --only after a test was added appears twice: its
  # last record is its verdict against the suite as it is now. A rerun
  # after its line moved names the id it had (rerun_of) and keeps it.
  for r in records:
    if "rerun_of" in r:
      r["moved_to"] = r["id"]
      r["id"] = r["rerun_of"]
  last = {r["id"]: i for i, r in enumerate(records)}
  reruns = len(records) - len(last)
  earlier = collections.defaultdict(list)  # id: the verdicts it replaced.
  for i, r in enumerate(records):
    if last[r["id"]] != i:
      earlier[r["id"]].append(r["status"])
  records = [r for i, r in enumerate(records) if last[r["id"]] == i]
  # The run's settings, from the records (--report-only is not told them).
  suite = next((r["suite"] for r in records if "suite" in r),
               getattr(args, "suite", "full"))
  first = next((r for r in records if "sample" in r), None)
  sample_n = first["sample"] if first else getattr(args, "sample", 0)
  seed = first["seed"] if first else getattr(args, "seed", 1)
  notes = load_triage()
  by = collections.Counter(r["status"] for r in records)
  live = [r for r in records if r["status"] != "stillborn"]
  _, equivalent, counted, killed, examples_only, survived = _tally(
      records, notes)
  seconds = [r["seconds"] for r in live]
  score = 100.0 * len(killed) / len(counted) if counted else 0.0
  with_examples = (100.0 * (len(killed) + len(examples_only)) / len(counted)
                   if counted else 0.0)

  lines = []
  w = lines.append
  w("# Mutation testing")
  w("")
  w("Made by `tools/mutate` (docs/testing.md): each mutant of `vdso/`, "
    "`variants/` or `timekeeper/` is built in a scratch copy of the tree and "
    "run against the property and scenario suite (`//tests:all`, "
    "`//sim:all`, `//cli:all`, `//variants/plugin:call_guard_test`, "
    "`//variants/plugin:containment_test` and "
    "`vdsolab compare` diffed against "
    "docs/compare.md); a mutant the suite misses is run against the pinned "
    "example unit tests too. Regenerate the report from the runs' logs, one "
    "per sample, with `tools/mutate --report-only --log=FILE [--log=FILE "
    "...]`.")
  w("")
  if suite == "tiered":
    w("This run used `--suite=tiered`: per mutant, first the quick checks "
      "(`vdsolab compare` diffed against docs/compare.md, `vdsolab run` of "
      "every kselftest and history scenario with and without the history "
      "defects, judged by exit code, and a scenario that fails by design run "
      "again with `--accept=known` so that its expectations still judge); a "
      "mutant they miss then meets the "
      "property and scenario suite in tiers, stopping at the first that "
      "kills: (2) `//tests:all`, `//sim:all`, "
      "`//variants/plugin:call_guard_test` and "
      "`//variants/plugin:containment_test` (since the seed-4 sample) "
      "without the exhaustive "
      "tests, (3) `//tests:exhaustive_test` and "
      "`//tests:exhaustive_por_test`, (4) `//cli:all`, (5) "
      "`//ktime:conform_test` (the differential oracle: the timekeeper "
      "model against the Debian 6.1 and 6.12 trees' own kernel/time); then, for "
      "survivors, the pinned examples (unless `--no-examples`). The killers "
      "listed are those of the first tier that killed, so the kill counts "
      "below undercount the later tiers' tests.")
    w("")
  if suite == "quick":
    w("This run used `--suite=quick`: per mutant, `vdsolab compare` diffed "
      "against docs/compare.md and `vdsolab run` of every kselftest and "
      "history scenario (with and without the history defects) judged by "
      "exit code, then for survivors the pinned examples (unless "
      "`--no-examples`). The property "
      "tests (`//tests:all`, `//sim:all`) run only in the default "
      "`--suite=full`.")
    w("")
  if getattr(args, "no_examples", False) or any(
      r.get("no_examples") for r in records):
    w("The pinned examples were not run (`--no-examples`): a survivor here "
      "may still be killed by one.")
    w("")
  w("## Score")
  w("")
  if len(samples) == 1:
    sample = (f"a sample of {len(records)} drawn with `--sample={sample_n} "
              f"--seed={seed}`" if sample_n else f"{len(records)} mutants")
  else:
    sample = (f"{len(records)} mutants in {len(samples)} samples ("
              + ", ".join(name for name, _ in samples) + ")")
  if reruns:
    sample += (f" ({reruns} of them rerun with `--only` after the suite "
               "gained a test; the rerun's verdict is the one counted)")
  w(f"- Catalogue: {catalogue_size} mutants; "
    f"{'this run' if len(samples) == 1 else 'this report'}: {sample}.")
  for kind, why in notes.values():
    if kind == "note":
      w(f"- {why}")
  if len(samples) > 1:
    for n, (name, log) in enumerate(samples):
      rs = [r for r in records if sample_of[r["id"]] == n]
      st, eq, co, ki, ex, su = _tally(rs, notes)
      pct = 100.0 * len(ki) / len(co) if co else 0.0
      w(f"- Sample {name} ({len(rs)} mutants, log `{log}`): stillborn "
        f"{st}, equivalent {len(eq)}, non-equivalent {len(co)}, killed by a "
        f"property or scenario test or compare {len(ki)}, example only "
        f"{len(ex)}, survived {len(su)}: **{pct:.1f}%** "
        f"({len(ki)}/{len(co)}).")
  w(f"- Stillborn (do not build, not counted): {by['stillborn']}; "
    f"equivalent (argued below, not counted): {len(equivalent)}.")
  w(f"- Non-equivalent mutants: {len(counted)}; killed by a property or "
    f"scenario test or compare: {len(killed)}; killed only by a pinned "
    f"example: {len(examples_only)}; survived everything: {len(survived)}.")
  if not counted:
    w("- **No score yet**: no mutant finished in this run (see the status "
      "below).")
  both = " over every sample" if len(samples) > 1 else ""
  w(f"- **Score{both} (property or scenario kills / non-equivalent): "
    f"{score:.1f}%** ({len(killed)}/{len(counted)}); counting example-only "
    f"kills: {with_examples:.1f}%.")
  if seconds:
    w(f"- Time per built mutant: median {sorted(seconds)[len(seconds) // 2]:.0f} s, "
      f"max {max(seconds):.0f} s (2 shared cores); the whole catalogue at "
      f"that rate is about {catalogue_size * sorted(seconds)[len(seconds) // 2] / 3600:.0f} h.")
  w("")
  w("## By operator")
  w("")
  w("| class | mutants | stillborn | killed | example only | survived | equivalent |")
  w("|---|---|---|---|---|---|---|")
  classes = sorted({r["class"] for r in records})
  for c in classes:
    rs = [r for r in records if r["class"] == c]
    w(f"| {c} | {len(rs)} | "
      f"{sum(r['status'] == 'stillborn' for r in rs)} | "
      f"{sum(r in killed for r in rs)} | "
      f"{sum(r in examples_only for r in rs)} | "
      f"{sum(r in survived for r in rs)} | "
      f"{sum(r in equivalent for r in rs)} |")
  w("")
  if suite == "tiered":
    w("## Where the tiers stop")
    w("")
    tc = collections.Counter(r.get("tier", 1) for r in killed)
    names = {1: "quick (compare, scenario runs)",
             2: "//tests:all, //sim:all, call_guard_test, "
                "containment_test (no exhaustive)",
             3: "exhaustive tests", 4: "//cli:all",
             5: "//ktime:conform_test"}
    for t in sorted(tc):
      w(f"- tier {t}, {names.get(t, t)}: {tc[t]} mutants killed")
    w("")
  w("## Which tests kill")
  w("")
  kc = collections.Counter(k for r in killed for k in r.get("killers", []))
  for k, n in kc.most_common():
    only = sum(1 for r in killed if r.get("killers") == [k])
    w(f"- `{k}`: {n} mutants ({only} by it alone)")
  w("")
  for title, rs in (("Survivors", survived),
                    ("Killed only by a pinned example", examples_only),
                    ("Equivalent mutants", equivalent)):
    w(f"## {title}")
    w("")
    if not rs:
      w("None in this run.")
      w("")
      continue
    for r in rs:
      kind, why = notes.get(r["id"], ("", "not yet triaged"))
      if r["id"] not in notes and _same_code(r):
        why = (f"Its object code is {r['object_code']} (debug info "
               "aside): equivalent by construction, not argued by hand.")
      extra = (f" (killed by {', '.join(r['example_killers'])})"
               if r.get("example_killers") else "")
      w(f"- `{r['id']}`: {_change(r)}{extra}. {why}")
    w("")
  if earlier:
    w("## Rerun with `--only`")
    w("")
    w("Each after the suite gained a test; the verdict counted is the last.")
    w("")
    for r in records:
      if r["id"] not in earlier:
        continue
      kill = ", ".join(r.get("killers", []) or r.get("example_killers", []))
      w(f"- `{r['id']}`: {' then '.join(earlier[r['id']])}, now "
        f"{r['status']}" + (f" by {kill}" if kill else ""))
    w("")
  w("## Every mutant run")
  w("")
  several = len(samples) > 1
  w("| mutant | change | result | killed by | s |" +
    (" sample |" if several else ""))
  w("|---|---|---|---|---|" + ("---|" if several else ""))
  for r in records:
    ch = _change(r).replace("|", "\\|")
    kill = ", ".join(r.get("killers", []) or r.get("example_killers", []))
    w(f"| `{r['id']}` | {ch} | {r['status']} | {kill} | {r['seconds']:.0f} |" +
      (f" {samples[sample_of[r['id']]][0]} |" if several else ""))
  w("")
  with open(out, "w") as f:
    f.write("\n".join(lines))
