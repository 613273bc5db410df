// `vdsolab build-variant`: a kernel tree's own vDSO code (plus patches)
// built into a plugin shared object for reuse with --variant-so.

#include <cstdio>

#include "absl/strings/str_format.h"
#include "cli/cli_util.h"
#include "cli/commands.h"
#include "cli/variant_flags.h"
#include "common/json.h"
#include "ktree/ktree.h"

namespace vdsolab::cli {
namespace {

int BuildVariant(const ParsedFlags& flags) {
  ktree::BuildOptions options;
  options.tree = ResolveInputPath(flags.String("kernel-tree"));
  for (const std::string& p : flags.List("patch")) {
    options.patches.push_back(ResolveInputPath(p));
  }
  if (flags.Has("kernel-cc")) options.cc = flags.String("kernel-cc");
  const std::string out = ResolveOutputPath(flags.String("out"));
  absl::StatusOr<ktree::BuiltVariant> built = ktree::BuildTreeVariant(options);
  if (!built.ok()) {
    Fail(FlagError("kernel-tree", flags.String("kernel-tree"),
                   std::string(built.status().message())));
    if (flags.Bool("verbose")) {
      std::fputs(ktree::BuildLogOf(built.status()).c_str(), stderr);
    }
    return kExitBadInput;
  }
  absl::StatusOr<std::string> written = ktree::WriteTreeVariant(options, out);
  if (!written.ok()) {
    Fail(std::string(written.status().message()));
    return kExitBadInput;
  }
  if (flags.Bool("verbose")) std::fputs(built->build_log.c_str(), stderr);
  NoteFuzzyHunks(built->fuzzy_hunks);
  NoteUntestedPatch(options, *built);
  if (flags.String("format", "text") == "json") {
    JsonObject body;
    body.Add("name", built->name)
        .Add("version", built->version)
        .Add("era", built->era)
        .Add("provenance", built->provenance)
        .Add("layout", built->layout)
        .Add("data_layout", built->data_layout)
        .Add("semantics", built->semantics)
        .Add("origin", built->origin)
        .Add("compiler", built->compiler)
        .Add("ordered_reads", built->ordered_reads)
        .Add("plain_reads", built->plain_reads)
        .Add("rdtscp_reads", built->rdtscp_reads)
        .Add("syscalls", built->syscalls)
        .Add("from_cache", built->from_cache)
        .Add("out", *written);
    return PrintJson("build-variant", kExitOk, body.Text());
  }
  std::fputs(
      absl::StrFormat(
          "variant %s: %s\n  provenance: %s\n  page layout: of variant %s "
          "(%s)\n"
          "  judged as: %s\n  counter and syscall sites: %d rdtsc_ordered, %d "
          "rdtsc, %d rdtscp, %d syscall\n  compiler: %s\n  %s\nwrote %s\n"
          "run it: vdsolab run SCENARIO --variant-so=%s\n",
          built->name, built->era, built->provenance, built->layout,
          built->data_layout, built->semantics, built->ordered_reads,
          built->plain_reads, built->rdtscp_reads, built->syscalls,
          built->compiler, built->from_cache ? "from the cache" : "built",
          *written, *written)
          .c_str(),
      stdout);
  return kExitOk;
}

}  // namespace

Command BuildVariantCommand() {
  CommandSpec spec;
  spec.name = "build-variant";
  spec.synopsis =
      "vdsolab build-variant --kernel-tree=PATH [--patch=FILE]... -o FILE.so";
  spec.summary = "build a kernel tree's vDSO code into a plugin";
  spec.description =
      "Compiles a kernel tree's own lib/vdso/gettimeofday.c, include/vdso "
      "headers and x86 asm/vdso/gettimeofday.h, unmodified (after the "
      "patches), into a plugin shared object speaking plugin ABI version 3 "
      "(vdsolab_plugin_v3: clock_gettime() and the other entry points), "
      "for `--variant-so=FILE.so`. Prints the page layout and era semantics "
      "it takes from the tree. Builds are cached by the content of the files "
      "used, the patches and the compiler (docs/kernel-trees.md).\n\n"
      "Exit status: 0 written, 2 bad input (a tree or patch vdsolab cannot "
      "use, a compile error: named with the tree's file:line).";
  FlagSpec out = MakeFlag("out", FlagKind::kString, "FILE.so",
                          "where to write the plugin");
  out.alias = 'o';
  spec.flags = {
      MakeFlag("kernel-tree", FlagKind::kString, "PATH",
               "a kernel source directory or a Debian linux-source-*.tar.xz"),
      MakeFlag("patch", FlagKind::kList, "FILE",
               "apply this unified diff (-p1) to the tree first"),
      MakeFlag("kernel-cc", FlagKind::kString, "CC",
               "the compiler (gcc, clang-14, a path)", "gcc"),
      out,
      MakeFlag("verbose", FlagKind::kBool, "",
               "print what was run (the build log)"),
      MakeChoice("format", {"text", "json"}, "text, or json (docs/json.md)",
                 "text"),
  };
  return Command{std::move(spec), [](const ParsedFlags& flags) {
                   for (const char* required : {"kernel-tree", "out"}) {
                     if (!flags.Has(required)) {
                       Fail(absl::StrFormat(
                           "build-variant: --%s is required (see vdsolab "
                           "build-variant --help)",
                           required));
                       return kExitBadInput;
                     }
                   }
                   return BuildVariant(flags);
                 }};
}

}  // namespace vdsolab::cli
