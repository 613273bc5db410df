// File: cli/variant_flags.h
//
// The flags every command that runs a variant shares, and how they choose
// it: --variant NAME, --variant-so FILE (plugins), --kernel-tree PATH with
// --patch FILE (a kernel tree's own vDSO code, built and loaded as a
// plugin; docs/kernel-trees.md), --vdso-image FILE and --variant=host (a
// compiled vDSO run as machine code; docs/host-variant.md),
// --call-timeout. A variant loaded from a file is the one meant unless
// --variant names another. A replay file records where its variant came
// from (`[variant]`), so replaying it loads the same plugin, tree or image
// again.

#ifndef VDSOLAB_CLI_VARIANT_FLAGS_H_
#define VDSOLAB_CLI_VARIANT_FLAGS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/flags.h"
#include "ktree/ktree.h"
#include "sim/scenario.h"
#include "variants/variant.h"

namespace vdsolab::cli {

// --variant (one name, or with `many` a list; "host" loads the running
// kernel's compiled vDSO on demand), --variant-so, --kernel-tree, --patch,
// --kernel-cc, --vdso-image, --kernel-time, --kernel-time-patch,
// --call-timeout.
std::vector<FlagSpec> VariantFlags(bool many);

// --accept=known: documented kernel behaviours (docs/findings.md) pass.
FlagSpec AcceptFlag();

// Whether the flags name a variant (any of --variant, --variant-so,
// --kernel-tree, --vdso-image).
bool NamesAVariant(const ParsedFlags& flags);

// Loads what the flags name (plugins, kernel trees) and returns the
// variants they choose: --variant's names; else the variants loaded from
// files; else `fallback` (none with `many`: every variant). Errors are bad
// input (exit 2); one about `fallback` starts with `fallback_key` (the
// scenario key it came from, "run.reader") when there is one.
absl::StatusOr<std::vector<const variants::Variant*>> ChooseVariants(
    const ParsedFlags& flags, bool many, const std::string& fallback,
    const std::string& fallback_key = "");

// Loads the variant a replay file's [variant] section records (a plugin,
// a kernel tree with its patches, or a compiled vDSO image); warns on
// stderr when a plugin's or image's content changed since. Does nothing
// for a built-in variant. *reader (if given): the reader it loaded, or
// nullptr (none, or only a --kernel-time writer).
absl::Status LoadRecordedVariant(const sim::VariantSource& source,
                                 const variants::Variant** reader = nullptr);

// The replay file's --call-timeout (`source.call_timeout_ns`), unless the
// command line gave one: LoadRecordedVariant() applies it; a replay that
// names its variant by flags calls this itself.
void ApplyRecordedCallTimeout(const sim::VariantSource& source);

// What the default job's speed line times `v` against: for a patched
// kernel tree the tree without its patches (built with the same compiler,
// from the cache when it can), else the built-in variant of v's layout;
// none for a built-in variant, one without a native build, or when there
// is no such baseline.
struct SpeedBase {
  const variants::Variant* variant = nullptr;
  bool unpatched_tree = false;  // v's tree without its patches.
};
SpeedBase SpeedBaseline(const variants::Variant* v);

// Loads --variant-so and --kernel-tree without choosing (`vdsolab
// variants` lists them with the built-ins).
absl::Status LoadVariantFiles(const ParsedFlags& flags);

// Where a variant loaded by these flags came from, for replay files;
// not present for a built-in variant.
sim::VariantSource SourceOf(const variants::Variant* variant);

// After a tree build with patches: a note on stderr when the patch
// changes no code the compiler emits, or only code vdsolab never runs.
void NoteUntestedPatch(const ktree::BuildOptions& options,
                       const ktree::BuiltVariant& built);

// Makes `scenario` run `variant`: its run.reader and [variant] source, and
// with a kernel tree's timekeeper (--kernel-time) the tree's kernel.era.
void UseVariant(const variants::Variant& variant, sim::Scenario* scenario);

// The flags that load `variant` again ("--kernel-tree=... --patch=..."),
// for printed commands; "" for a built-in variant.
std::string FlagsToLoad(const variants::Variant* variant);

}  // namespace vdsolab::cli

#endif  // VDSOLAB_CLI_VARIANT_FLAGS_H_
