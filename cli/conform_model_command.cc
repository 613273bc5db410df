// `vdsolab conform-model`: the timekeeper model against a kernel tree's own
// kernel/time code (ktime/, docs/ktime.md), operation by operation.

#include <cstdio>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/kernel_time_variant.h"
#include "common/json.h"
#include "ktime/conform.h"
#include "ktime/kernel_time.h"
#include "ktime/ktime.h"

namespace vdsolab::cli {
namespace {

std::string ReplayCommand(const ParsedFlags& flags, uint64_t ops,
                          uint64_t seed) {
  std::string c = "vdsolab conform-model --kernel-tree=" +
                  ResolveInputPath(flags.String("kernel-tree"));
  for (const std::string& p : flags.List("patch")) {
    c += " --patch=" + ResolveInputPath(p);
  }
  return c + absl::StrFormat(" --ops=%d --seed=%d", ops, seed);
}

int ConformModel(const ParsedFlags& flags) {
  ktime::BuildOptions options;
  options.tree = ResolveInputPath(flags.String("kernel-tree"));
  for (const std::string& p : flags.List("patch")) {
    options.patches.push_back(ResolveInputPath(p));
  }
  if (flags.Has("kernel-cc")) options.cc = flags.String("kernel-cc");
  absl::StatusOr<ktime::BuiltKernelTime> built =
      ktime::BuildKernelTime(options);
  if (!built.ok()) {
    // The message names the tree or patch already.
    Fail(std::string(built.status().message()));
    return kExitBadInput;
  }
  if (flags.Bool("verbose")) std::fputs(built->build_log.c_str(), stderr);
  NoteUncompiledFiles(*built);
  NoteUntestedKernelTimePatch(options, *built);
  absl::StatusOr<ktime::KernelTime> kt =
      ktime::KernelTime::Load(built->so_path);
  if (!kt.ok()) {
    Fail(std::string(kt.status().message()));
    return kExitBadInput;
  }
  std::string profile_note;
  absl::StatusOr<ktime::TreeProfile> tree_profile =
      ktime::ProfileForBuild(options, *kt, built->version, &profile_note);
  if (!tree_profile.ok()) {
    Fail(FlagError("kernel-tree", flags.String("kernel-tree"),
                   std::string(tree_profile.status().message())));
    return kExitBadInput;
  }
  if (!profile_note.empty()) {
    std::fprintf(stderr, "vdsolab: note: %s: %s\n", built->name.c_str(),
                 profile_note.c_str());
  }
  if (!tree_profile->probe_fault.empty()) {
    std::fprintf(stderr,
                 "vdsolab: note: probing the tree's era: %s; judged by the "
                 "era's profile without backports\n",
                 tree_profile->probe_fault.c_str());
  }
  const timekeeper::TimekeeperProfile* profile = &tree_profile->profile;
  ktime::ConformOptions o;
  o.ops = flags.Uint("ops").value_or(100000);
  o.seed = flags.Uint("seed").value_or(1);
  absl::StatusOr<ktime::ConformResult> r = ktime::RunConform(*kt, *profile, o);
  if (!r.ok()) {
    Fail(std::string(r.status().message()));
    return kExitBadInput;
  }
  const int exit = r->ok ? kExitOk : kExitFailed;
  const std::string replay = ReplayCommand(flags, o.ops, o.seed);
  if (flags.String("format", "text") == "json") {
    JsonObject body;
    body.Add("tree", built->name)
        .Add("version", built->version)
        .Add("model_era", profile->era)
        .Add("backports", absl::StrJoin(tree_profile->backports, ","))
        .Add("ops_compared", r->ops_compared)
        .Add("sequences", r->sequences)
        .Add("model_ops_per_s", r->model_ops_per_s)
        .Add("tree_ops_per_s", r->tree_ops_per_s)
        .Add("tree_warns", r->tree_warns);
    if (r->tree_warns != 0) body.Add("first_warn", r->first_warn);
    body.Add("ok", r->ok);
    if (!r->ok) {
      body.Add("difference", r->difference)
          .Add("minimal_sequence", ktime::FormatSequence(r->minimal))
          .Add("replay", replay);
    }
    return PrintJson("conform-model", exit, body.Text());
  }
  std::printf(
      "Linux %s (%s) against the timekeeper model (era %s%s), seed %llu\n"
      "  %llu operations in %llu sequences compared\n"
      "%s",
      built->version.c_str(), built->from_cache ? "cached build" : "built",
      profile->era.c_str(),
      tree_profile->backports.empty()
          ? ""
          : (" + " + absl::StrJoin(tree_profile->backports, ", ")).c_str(),
      static_cast<unsigned long long>(o.seed),
      static_cast<unsigned long long>(r->ops_compared),
      static_cast<unsigned long long>(r->sequences),
      r->model_ops_per_s == 0 && r->tree_ops_per_s == 0
          // Timed on sequences that agreed: none did.
          ? ""
          : absl::StrFormat("  model %.0f ops/s, tree %.0f ops/s\n",
                            r->model_ops_per_s, r->tree_ops_per_s)
                .c_str());
  for (const std::string& c : r->op_counts) std::printf("    %s\n", c.c_str());
  if (r->tree_warns != 0) {
    // Not a difference: the model takes the same way out (and logs it).
    std::printf(
        "  the tree's WARN() fired %llu time(s), first at %s: a warning, "
        "not a difference: the random operations reach a state that "
        "WARN() guards; the kernel warns and goes on, and so did the tree, "
        "as the model does\n",
        static_cast<unsigned long long>(r->tree_warns),
        r->first_warn.empty() ? "?" : r->first_warn.c_str());
  }
  if (r->ok) {
    std::printf(
        "no difference\n"
        "(in state, readers and page after each operation; the order of the "
        "page's stores and barriers, the seq protocol, is for `vdsolab run "
        "--kernel-time` with the relaxed-ordering and exhaustive scenarios)\n");
    return kExitOk;
  }
  std::printf(
      "DIFFERENCE (shrunk to %zu operations): %s\n%s"
      "the tree's events and printk in that run:\n%s"
      "replay: %s\n",
      r->minimal.ops.size(), r->difference.c_str(),
      ktime::FormatSequence(r->minimal).c_str(), r->events.c_str(),
      replay.c_str());
  return kExitFailed;
}

}  // namespace

Command ConformModelCommand() {
  CommandSpec spec;
  spec.name = "conform-model";
  spec.synopsis =
      "vdsolab conform-model --kernel-tree=PATH [--patch=FILE]... [--ops=N] "
      "[--seed=S]";
  spec.summary = "the timekeeper model against a tree's own kernel/time code";
  spec.description =
      "Compiles the tree's kernel/time/timekeeping.c, ntp.c, vsyscall.c, "
      "clocksource.c and time.c, unmodified (after the patches), into a "
      "user-space object against vdsolab's shims, and runs random operation "
      "sequences (ticks with jitter, long idle, adjtimex() of every mode, "
      "settimeofday, offset injection, suspend/resume, TSC frequencies) on it "
      "and on the timekeeper model in the tree's era profile. After every "
      "operation the timekeeper's fields, the NTP state, adjtimex()'s return "
      "value and read-back and the published vvar data are compared; a "
      "difference is shrunk to a minimal sequence (docs/ktime.md).\n\n"
      "Exit status: 0 no difference, 1 a difference (printed with its "
      "minimal sequence and a replay command), 2 bad input.";
  spec.flags = {
      MakeFlag("kernel-tree", FlagKind::kString, "PATH",
               "a kernel source directory or a Debian linux-source-*.tar.xz"),
      MakeFlag("patch", FlagKind::kList, "FILE",
               "apply this unified diff (-p1) to the tree first"),
      MakeFlag("ops", FlagKind::kUint, "N", "operations to compare", "100000",
               1, 1e10),
      MakeSeedFlag("S", "the seed of the sequences", "1"),
      MakeFlag("kernel-cc", FlagKind::kString, "CC",
               "the compiler (gcc, clang-14, a path)", "gcc"),
      MakeFlag("verbose", FlagKind::kBool, "",
               "print what was run (the build log)"),
      MakeChoice("format", {"text", "json"}, "text, or json (docs/json.md)",
                 "text"),
  };
  return Command{std::move(spec), [](const ParsedFlags& flags) {
                   if (!flags.Has("kernel-tree")) {
                     Fail(
                         "conform-model: --kernel-tree is required (see "
                         "vdsolab conform-model --help)");
                     return kExitBadInput;
                   }
                   return ConformModel(flags);
                 }};
}

}  // namespace vdsolab::cli
