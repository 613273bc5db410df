// File: cli/variant_flags.h
//
// The flags every command that runs a variant shares, and how they choose
// it: --variant NAME, --variant-so FILE (plugins), --kernel-tree PATH with
// --patch FILE (a kernel tree's own vDSO code, built and loaded as a
// plugin). A variant loaded from a file is the one meant unless --variant
// names another.

#ifndef VDSOLAB_CLI_VARIANT_FLAGS_H_
#define VDSOLAB_CLI_VARIANT_FLAGS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "cli/flags.h"
#include "variants/variant.h"

namespace vdsolab::cli {

// --variant (one name, or with `many` a list), --variant-so, --kernel-tree,
// --patch.
std::vector<FlagSpec> VariantFlags(bool many);

// Loads what the flags name (plugins, kernel trees) and returns the
// variants they choose: --variant's names; else the variants loaded from
// files; else `fallback` (none with `many`: every variant). Errors are bad
// input (exit 2).
absl::StatusOr<std::vector<const variants::Variant*>> ChooseVariants(
    const ParsedFlags& flags, bool many, const std::string& fallback);

// Loads --variant-so and --kernel-tree without choosing (`vdsolab
// variants` lists them with the built-ins).
absl::Status LoadVariantFiles(const ParsedFlags& flags);

}  // namespace vdsolab::cli

#endif  // VDSOLAB_CLI_VARIANT_FLAGS_H_
