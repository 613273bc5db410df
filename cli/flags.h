// File: cli/flags.h
//
// Each vdsolab command declares the flags it takes; the parser accepts only
// those (a flag another command uses is an error here, never silently
// ignored), checks every value's type and range, and writes each
// command's own --help. Exit status 2 for anything it refuses.
//
// Spellings: --name=value or --name value; '-' and '_' are the same in a
// name (--variant-so, --variant_so); a list flag may repeat or take
// comma-separated values; a boolean is --name, --name=true|false.

#ifndef VDSOLAB_CLI_FLAGS_H_
#define VDSOLAB_CLI_FLAGS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace vdsolab::cli {

enum class FlagKind {
  kBool,
  kString,
  kList,      // Repeatable; comma-separated values too.
  kUint,      // Decimal, non-negative, within [min, max].
  kInt,       // Decimal, within [min, max].
  kDouble,    // Finite, within [min, max].
  kDuration,  // 10s, 1500ms, 2m, 1h: non-negative, at most max (ns).
  kChoice,    // One of `choices`.
};

struct FlagSpec {
  std::string name;  // Without dashes, '-' spelled: "variant-so".
  FlagKind kind = FlagKind::kString;
  std::string value_name;  // "N", "FILE", "DURATION" (help text).
  std::string help;
  std::string default_text;  // Shown in help; "" for none.
  double min = 0;
  double max = 0;  // 0 with min 0: no range check (kInt/kUint/kDouble).
  // kUint: an exact upper limit, for limits a double cannot hold (0: none).
  uint64_t uint_max = 0;
  std::vector<std::string> choices;  // kChoice.
  char alias = 0;  // A one-letter spelling, -X VALUE ('o' for -o FILE).
};

// Flag constructors (every field named once, in order).
FlagSpec MakeFlag(std::string name, FlagKind kind, std::string value_name,
                  std::string help, std::string default_text = "",
                  double min = 0, double max = 0);
// --seed=N: 0 .. 2^63-1, what a scenario's run.seed (a TOML integer) and
// a replay file can hold.
FlagSpec MakeSeedFlag(std::string value_name, std::string help,
                      std::string default_text);
FlagSpec MakeChoice(std::string name, std::vector<std::string> choices,
                    std::string help, std::string default_text);

struct CommandSpec {
  std::string name;      // "run"; "" for the default job.
  std::string synopsis;  // "vdsolab run SCENARIO [flags]".
  std::string summary;   // One line, for the command list.
  std::string description;
  // Positional arguments: their names for help and how many are allowed.
  std::vector<std::string> positional;
  size_t min_positional = 0;
  size_t max_positional = 0;
  std::vector<FlagSpec> flags;
};

// The values given on the command line, typed.
class ParsedFlags {
 public:
  bool Has(const std::string& name) const { return values_.count(name) != 0; }
  bool Bool(const std::string& name) const;
  std::string String(const std::string& name,
                     const std::string& fallback = "") const;
  std::vector<std::string> List(const std::string& name) const;
  std::optional<uint64_t> Uint(const std::string& name) const;
  std::optional<int64_t> Int(const std::string& name) const;
  std::optional<double> Double(const std::string& name) const;
  std::optional<uint64_t> DurationNs(const std::string& name) const;
  // The value as the user wrote it (for messages).
  std::string Text(const std::string& name) const;

  const std::vector<std::string>& positional() const { return positional_; }
  bool help() const { return help_; }

 private:
  friend absl::StatusOr<ParsedFlags> ParseFlags(
      const CommandSpec& spec, const std::vector<std::string>& args);
  std::map<std::string, std::vector<std::string>> values_;
  std::vector<std::string> positional_;
  bool help_ = false;
};

// Parses `args` (what follows the command name). An error names the flag
// and what is wrong with its value, for "vdsolab <command>: <message>".
absl::StatusOr<ParsedFlags> ParseFlags(const CommandSpec& spec,
                                       const std::vector<std::string>& args);

// The command's --help text.
std::string CommandHelp(const CommandSpec& spec);

}  // namespace vdsolab::cli

#endif  // VDSOLAB_CLI_FLAGS_H_
