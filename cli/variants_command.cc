// `vdsolab variants`: every variant with its provenance.

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/variant_flags.h"
#include "common/json.h"
#include "variants/registry.h"

namespace vdsolab::cli {
namespace {

int ListVariants(const ParsedFlags& flags) {
  if (absl::Status s = LoadVariantFiles(flags); !s.ok()) {
    Fail(std::string(s.message()));
    return kExitBadInput;
  }
  if (flags.String("format", "text") == "json") {
    JsonArray all;
    for (const variants::Variant* v : variants::AllVariants()) {
      JsonObject o;
      const variants::Semantics& e = v->semantics;
      JsonArray served, own, claims;
      for (ClockId c : v->vdso_clocks) {
        served.Add(variants::VariantClockName(*v, c));
      }
      for (const variants::ClockDef& c : v->own_clocks) {
        JsonObject cj;
        cj.Add("id", c.id)
            .Add("name", c.name)
            .Add("kind", c.kind == variants::ClockKind::kUserspace ? "userspace"
                         : c.kind == variants::ClockKind::kVariantSyscall
                             ? "variant_syscall"
                             : "kernel");
        if (c.same_as >= 0) cj.Add("same_as", ClockName(c.same_as));
        own.AddRaw(cj.Text());
      }
      for (const variants::Claim& c : v->claims) claims.Add(c.text);
      JsonObject sem;
      sem.Add("counter", e.counter == variants::CounterSemantics::kMasked63
                             ? "masked63"
                             : "clamp_to_last")
          .Add("overflow_protected", e.overflow_protected)
          .Add("coarse_from_coarse_nsec", e.coarse_from_coarse_nsec);
      o.Add("name", v->name)
          .Add("summary", v->summary)
          .Add("provenance", v->provenance)
          .Add("layout", v->layout->name())
          .AddRaw("vdso_clocks", served.Text())
          .AddRaw("own_clocks", own.Text())
          .Add("own_clocks_only", v->own_clocks_only)
          .AddRaw("semantics", sem.Text())
          .Add("counter_read",
               v->counter_read == vdso::CounterRead::kRdtscp  ? "rdtscp"
               : v->counter_read == vdso::CounterRead::kPlain ? "rdtsc"
                                                              : "rdtsc_ordered")
          .AddRaw("claims", claims.Text());
      const sim::VariantSource source = SourceOf(v);
      if (source.present) {
        JsonObject sj;
        sj.Add("plugin", source.plugin)
            .Add("plugin_sha256", source.plugin_sha256)
            .Add("kernel_tree", source.kernel_tree)
            .Add("origin", source.origin);
        JsonArray patches;
        for (const std::string& p : source.patches) patches.Add(p);
        sj.AddRaw("patches", patches.Text());
        o.AddRaw("source", sj.Text());
      }
      all.AddRaw(o.Text());
    }
    JsonObject body;
    body.AddRaw("variants", all.Text());
    return PrintJson("variants", kExitOk, body.Text());
  }
  for (const variants::Variant* v : variants::AllVariants()) {
    std::vector<std::string> served;
    for (ClockId c : v->vdso_clocks) {
      served.push_back(variants::VariantClockName(*v, c));
    }
    std::vector<std::string> own;
    for (const variants::ClockDef& c : v->own_clocks) {
      own.push_back(absl::StrFormat(
          "%s (%d, %s)", c.name, c.id,
          c.same_as >= 0 ? absl::StrCat("judged as ", ClockName(c.same_as))
          : c.kind == variants::ClockKind::kUserspace
              ? "user space, measured against MONOTONIC_RAW"
              : "added to the vDSO and syscall"));
    }
    const variants::Semantics& e = v->semantics;
    std::printf(
        "%s\n  %s\n  provenance: %s\n  page layout: %s\n"
        "  answers from the page: %s\n%s"
        "%s\n",
        std::string(v->name).c_str(), std::string(v->summary).c_str(),
        std::string(v->provenance).c_str(), v->layout->name().c_str(),
        served.empty() ? "(none)" : absl::StrJoin(served, ", ").c_str(),
        own.empty()
            ? ""
            : absl::StrFormat("  own clocks: %s%s\n", absl::StrJoin(own, "; "),
                              v->own_clocks_only ? " (only these)" : "")
                  .c_str(),
        v->own_clocks_only
            ? ""
            : absl::StrFormat("  counter: %s; %s; %s; coarse clocks from %s\n",
                              v->counter_read == vdso::CounterRead::kRdtscp
                                  ? "rdtscp"
                                  : "rdtsc_ordered",
                              e.counter == variants::CounterSemantics::kMasked63
                                  ? "63-bit, bit 62 = negative motion"
                                  : "clamped to cycle_last",
                              e.overflow_protected
                                  ? "overflow-safe past max_cycles"
                                  : "64-bit multiply (wraps past max_cycles)",
                              e.coarse_from_coarse_nsec ? "coarse_nsec (6.15+)"
                                                        : "xtime_nsec >> shift")
                  .c_str());
  }
  return kExitOk;
}

}  // namespace

Command VariantsCommand() {
  CommandSpec spec;
  spec.name = "variants";
  spec.synopsis = "vdsolab variants [flags]";
  spec.summary = "list the vDSO variants, with their provenance";
  spec.description =
      "Lists every variant vdsolab can run: upstream by kernel era, the "
      "seeds' patches, user-space TSC clocks, and the plugins and kernel "
      "trees the flags load; each with where it comes from, its page layout, "
      "the clocks it serves and the era semantics it is judged by.";
  for (FlagSpec& f : VariantFlags(false)) {
    if (f.name != "variant") spec.flags.push_back(std::move(f));
  }
  spec.flags.push_back(MakeChoice("format", {"text", "json"},
                                  "text, or json (docs/json.md)", "text"));
  return Command{std::move(spec), ListVariants};
}

}  // namespace vdsolab::cli
