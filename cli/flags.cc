#include "cli/flags.h"

#include <cmath>
#include <cstdint>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"

namespace vdsolab::cli {
namespace {

std::string Normalise(std::string name) {
  for (char& c : name) {
    if (c == '_') c = '-';
  }
  return name;
}

const FlagSpec* Find(const CommandSpec& spec, const std::string& name) {
  for (const FlagSpec& f : spec.flags) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::string Number(double v) {
  return v == std::floor(v) && std::fabs(v) < 1e15
             ? absl::StrFormat("%d", static_cast<int64_t>(v))
             : absl::StrFormat("%g", v);
}

std::string Range(const FlagSpec& f) {
  return Number(f.min) + " .. " + Number(f.max);
}

// `text` wrapped at about 78 columns, each line starting with `indent`.
std::string Wrap(const std::string& text, const std::string& indent) {
  std::string o;
  std::string line = indent;
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    if (line.size() + word.size() + 1 > 78 && line.size() > indent.size()) {
      o += line + "\n";
      line = indent;
    }
    if (line.size() > indent.size()) line += " ";
    absl::StrAppend(&line, word);
  }
  return o + line + "\n";
}

bool Ranged(const FlagSpec& f) { return f.min != 0 || f.max != 0; }

absl::Status Bad(const FlagSpec& f, const std::string& value,
                 const std::string& want) {
  return absl::InvalidArgumentError(
      absl::StrFormat("--%s=%s: %s", f.name, value, want));
}

bool AllDigits(const std::string& s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string::npos;
}

// Checks one value against its flag's kind and range.
absl::Status Check(const FlagSpec& f, const std::string& v) {
  switch (f.kind) {
    case FlagKind::kBool:
      if (v != "true" && v != "false" && v != "1" && v != "0") {
        return Bad(f, v, "want true or false");
      }
      return absl::OkStatus();
    case FlagKind::kString:
      if (v.empty()) return Bad(f, v, "want a value");
      return absl::OkStatus();
    case FlagKind::kList:
      return absl::OkStatus();
    case FlagKind::kUint: {
      uint64_t n = 0;
      if (!AllDigits(v) || !absl::SimpleAtoi(v, &n)) {
        return Bad(f, v, "want a non-negative decimal integer");
      }
      if (Ranged(f) &&
          (static_cast<double>(n) < f.min || static_cast<double>(n) > f.max)) {
        return Bad(f, v, "want " + Range(f));
      }
      if (f.uint_max != 0 && n > f.uint_max) {
        return Bad(f, v, absl::StrFormat("want 0 .. %d", f.uint_max));
      }
      return absl::OkStatus();
    }
    case FlagKind::kInt: {
      int64_t n = 0;
      const std::string digits = v.empty() || v[0] != '-' ? v : v.substr(1);
      if (!AllDigits(digits) || !absl::SimpleAtoi(v, &n)) {
        return Bad(f, v, "want a decimal integer");
      }
      if (Ranged(f) &&
          (static_cast<double>(n) < f.min || static_cast<double>(n) > f.max)) {
        return Bad(f, v, "want " + Range(f));
      }
      return absl::OkStatus();
    }
    case FlagKind::kDouble: {
      double d = 0;
      if (!absl::SimpleAtod(v, &d) || !std::isfinite(d)) {
        return Bad(f, v, "want a number");
      }
      if (Ranged(f) && (d < f.min || d > f.max)) {
        return Bad(f, v, "want " + Range(f));
      }
      return absl::OkStatus();
    }
    case FlagKind::kDuration: {
      absl::Duration d;
      if (!absl::ParseDuration(v, &d) || d < absl::ZeroDuration() ||
          d == absl::InfiniteDuration()) {
        return Bad(f, v,
                   "want a finite, non-negative duration such as 10s, "
                   "1500ms, 2m or 1h");
      }
      if (f.max > 0 && absl::ToDoubleNanoseconds(d) > f.max) {
        return Bad(f, v,
                   "at most " + absl::FormatDuration(absl::Nanoseconds(
                                    static_cast<int64_t>(f.max))));
      }
      return absl::OkStatus();
    }
    case FlagKind::kChoice:
      for (const std::string& c : f.choices) {
        if (c == v) return absl::OkStatus();
      }
      return Bad(f, v,
                 "want " + absl::StrJoin(f.choices, ", ",
                                         [](std::string* o, const auto& c) {
                                           absl::StrAppend(o, "\"", c, "\"");
                                         }));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ParsedFlags> ParseFlags(const CommandSpec& spec,
                                       const std::vector<std::string>& args) {
  ParsedFlags out;
  const std::string see =
      spec.name.empty() ? "vdsolab --help" : "vdsolab " + spec.name + " --help";
  bool only_positional = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (only_positional || a.empty() || a[0] != '-' || a == "-") {
      out.positional_.push_back(a);
      continue;
    }
    if (a == "--") {
      only_positional = true;
      continue;
    }
    if (a == "-h" || a == "--help") {
      out.help_ = true;
      continue;
    }
    std::string name;
    size_t eq = a.find('=');
    if (a.size() >= 2 && a[1] != '-') {
      // -X VALUE: a flag's one-letter alias.
      const FlagSpec* aliased = nullptr;
      for (const FlagSpec& f : spec.flags) {
        if (f.alias != 0 && a[1] == f.alias && (a.size() == 2 || eq == 2)) {
          aliased = &f;
        }
      }
      if (aliased == nullptr) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "unknown option '%s' (flags are --name=value; see %s)", a, see));
      }
      name = aliased->name;
    } else if (a.size() < 3) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "unknown option '%s' (flags are --name=value; see %s)", a, see));
    } else {
      name = Normalise(a.substr(2, eq - 2));
    }
    const FlagSpec* f = Find(spec, name);
    if (f == nullptr) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "unknown flag --%s for %s (see %s)", name,
          spec.name.empty() ? "the default check" : "'" + spec.name + "'",
          see));
    }
    std::string value;
    if (eq != std::string::npos) {
      value = a.substr(eq + 1);
    } else if (f->kind == FlagKind::kBool) {
      value = "true";
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return absl::InvalidArgumentError(
          absl::StrFormat("--%s needs a value (see %s)", name, see));
    }
    if (absl::Status s = Check(*f, value); !s.ok()) return s;
    std::vector<std::string>& slot = out.values_[name];
    if (f->kind == FlagKind::kList) {
      for (absl::string_view part : absl::StrSplit(value, ',')) {
        if (part.empty()) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "--%s=%s: an empty item in the list", name, value));
        }
        slot.emplace_back(part);
      }
      continue;
    }
    if (!slot.empty()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--%s given twice (%s and %s)", name, slot.front(), value));
    }
    slot.push_back(value);
  }
  if (out.help_) return out;
  const size_t n = out.positional_.size();
  if (n < spec.min_positional || n > spec.max_positional) {
    if (n > spec.max_positional) {
      return absl::InvalidArgumentError(
          absl::StrFormat("unexpected argument '%s' (usage: %s)",
                          out.positional_[spec.max_positional], spec.synopsis));
    }
    return absl::InvalidArgumentError(
        absl::StrFormat("missing %s (usage: %s)",
                        spec.positional[n < spec.positional.size()
                                            ? n
                                            : spec.positional.size() - 1],
                        spec.synopsis));
  }
  return out;
}

bool ParsedFlags::Bool(const std::string& name) const {
  auto it = values_.find(name);
  return it != values_.end() &&
         (it->second.front() == "true" || it->second.front() == "1");
}

std::string ParsedFlags::String(const std::string& name,
                                const std::string& fallback) const {
  auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second.front();
}

std::vector<std::string> ParsedFlags::List(const std::string& name) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

std::string ParsedFlags::Text(const std::string& name) const {
  return absl::StrJoin(List(name), ",");
}

std::optional<uint64_t> ParsedFlags::Uint(const std::string& name) const {
  uint64_t n = 0;
  if (!Has(name) || !absl::SimpleAtoi(String(name), &n)) return std::nullopt;
  return n;
}

std::optional<int64_t> ParsedFlags::Int(const std::string& name) const {
  int64_t n = 0;
  if (!Has(name) || !absl::SimpleAtoi(String(name), &n)) return std::nullopt;
  return n;
}

std::optional<double> ParsedFlags::Double(const std::string& name) const {
  double d = 0;
  if (!Has(name) || !absl::SimpleAtod(String(name), &d)) return std::nullopt;
  return d;
}

std::optional<uint64_t> ParsedFlags::DurationNs(const std::string& name) const {
  absl::Duration d;
  if (!Has(name) || !absl::ParseDuration(String(name), &d)) return std::nullopt;
  return static_cast<uint64_t>(absl::ToInt64Nanoseconds(d));
}

FlagSpec MakeFlag(std::string name, FlagKind kind, std::string value_name,
                  std::string help, std::string default_text, double min,
                  double max) {
  FlagSpec f;
  f.name = std::move(name);
  f.kind = kind;
  f.value_name = std::move(value_name);
  f.help = std::move(help);
  f.default_text = std::move(default_text);
  f.min = min;
  f.max = max;
  return f;
}

FlagSpec MakeSeedFlag(std::string value_name, std::string help,
                      std::string default_text) {
  FlagSpec f = MakeFlag("seed", FlagKind::kUint, std::move(value_name),
                        std::move(help), std::move(default_text));
  f.uint_max = static_cast<uint64_t>(INT64_MAX);
  return f;
}

FlagSpec MakeChoice(std::string name, std::vector<std::string> choices,
                    std::string help, std::string default_text) {
  FlagSpec f = MakeFlag(std::move(name), FlagKind::kChoice, "", std::move(help),
                        std::move(default_text));
  f.value_name = absl::StrJoin(choices, "|");
  f.choices = std::move(choices);
  return f;
}

std::string CommandHelp(const CommandSpec& spec) {
  std::string o = absl::StrFormat("usage: %s\n", spec.synopsis);
  for (absl::string_view para : absl::StrSplit(spec.description, "\n\n")) {
    o += "\n" + Wrap(std::string(para), "");
  }
  if (spec.flags.empty()) return o;
  o += "\nflags:\n";
  for (const FlagSpec& f : spec.flags) {
    std::string head = "  --" + f.name;
    if (f.kind != FlagKind::kBool) head += "=" + f.value_name;
    if (f.alias != 0) {
      head += absl::StrFormat(", -%c %s", f.alias, f.value_name);
    }
    std::string help = f.help;
    if (!f.default_text.empty()) help += " (default: " + f.default_text + ")";
    if (f.kind == FlagKind::kList) help += " (repeatable)";
    absl::StrAppendFormat(&o, "%s\n%s", head, Wrap(help, "      "));
  }
  o += "  -h, --help\n      this help\n";
  return o;
}

}  // namespace vdsolab::cli
