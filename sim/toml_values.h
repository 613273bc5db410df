// File: sim/toml_values.h
//
// The value fields of sim/toml_table.h: how one struct member is spelled
// in TOML, its unit and its limits. Each reads what a file may say (a
// message naming the key otherwise) and writes text that reads back to the
// same member.

#ifndef VDSOLAB_SIM_TOML_VALUES_H_
#define VDSOLAB_SIM_TOML_VALUES_H_

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/escape.h"
#include "common/timespec.h"
#include "sim/durations.h"
#include "sim/toml_table.h"
#include "third_party/tomlplusplus/hardened.h"

namespace vdsolab::sim::toml_table {

// A field of member `member` (type T): `read(node, where, value)` parses a
// present key, `text(value)` spells it.
template <class S, class T, class Read, class Text>
Field<S> Value(const std::string& key, T S::*member, std::string want,
               Read read, Text text) {
  Field<S> f;
  f.key = key;
  f.want = std::move(want);
  f.read = [member, read](const toml::node& node, const Where& where, S& s) {
    return read(node, where, s.*member);
  };
  f.text = [member, text](const S& s) { return text(s.*member); };
  f.is_default = [member](const S& s) { return s.*member == S{}.*member; };
  return f;
}

// An integer in [lo, hi], for any integer member.
template <class S, class T>
Field<S> Int(const std::string& key, T S::*member, int64_t lo, int64_t hi) {
  const std::string want = "want an integer";
  return Value(
      key, member, want,
      [want, lo, hi](const toml::node& node, const Where& where,
                     T& out) -> absl::Status {
        const std::optional<int64_t> v = toml_hardened::IntegerValue(node);
        if (!v) return where.Bad(node, want);
        if (*v < lo || *v > hi) {
          return where.Bad(
              node, absl::StrFormat("%d is outside %d .. %d", *v, lo, hi));
        }
        out = static_cast<T>(*v);
        return absl::OkStatus();
      },
      [](const T& v) { return absl::StrFormat("%d", v); });
}

// An unsigned 64-bit integer: TOML integers are signed, so values >= 2^63
// are written (and may be given) as a decimal string.
template <class S>
Field<S> BigUnsigned(const std::string& key, uint64_t S::*member) {
  const std::string want =
      "want a non-negative integer, or a string for values >= 2^63 "
      "(\"18446744073709551000\", \"0x...\" is not accepted)";
  return Value(
      key, member, want,
      [want](const toml::node& node, const Where& where,
             uint64_t& out) -> absl::Status {
        const std::optional<int64_t> i = toml_hardened::IntegerValue(node);
        uint64_t v = 0;
        if (i && *i >= 0) {
          v = static_cast<uint64_t>(*i);
        } else if (!node.is_string() ||
                   !absl::SimpleAtoi(*node.value<std::string>(), &v)) {
          return where.Bad(node, want);
        }
        out = v;
        return absl::OkStatus();
      },
      [](const uint64_t& v) {
        return v <= static_cast<uint64_t>(INT64_MAX)
                   ? absl::StrFormat("%d", v)
                   : absl::StrFormat("\"%d\"", v);
      });
}

template <class S>
Field<S> Bool(const std::string& key, bool S::*member) {
  const std::string want = "want true or false";
  return Value(
      key, member, want,
      [want](const toml::node& node, const Where& where,
             bool& out) -> absl::Status {
        if (!node.is_boolean()) return where.Bad(node, want);
        out = *node.value<bool>();
        return absl::OkStatus();
      },
      [](const bool& v) { return v ? "true" : "false"; });
}

template <class S>
Field<S> String(const std::string& key, std::string S::*member) {
  const std::string want = "want a string";
  return Value(
      key, member, want,
      [want](const toml::node& node, const Where& where,
             std::string& out) -> absl::Status {
        if (!node.is_string()) return where.Bad(node, want);
        out = *node.value<std::string>();
        return absl::OkStatus();
      },
      [](const std::string& v) { return TomlQuote(v); });
}

// One of an enum's values by name; `name` gives each value's.
template <class S, class E>
Field<S> Enum(const std::string& key, E S::*member, std::vector<E> values,
              const char* (*name)(E)) {
  std::vector<std::string> names;
  for (E v : values) names.push_back(absl::StrCat("\"", name(v), "\""));
  std::string want = "want ";
  if (names.size() > 1) {
    absl::StrAppend(&want, absl::StrJoin(names.begin(), names.end() - 1, ", "),
                    " or ");
  }
  absl::StrAppend(&want, names.back());
  return Value(
      key, member, want,
      [want, values, name](const toml::node& node, const Where& where,
                           E& out) -> absl::Status {
        if (!node.is_string()) return where.Bad(node, want);
        const std::string text = *node.value<std::string>();
        for (E v : values) {
          if (text == name(v)) {
            out = v;
            return absl::OkStatus();
          }
        }
        return where.Bad(node, absl::StrFormat("\"%s\": %s", text, want));
      },
      [name](const E& v) { return TomlQuote(name(v)); });
}

// Nanoseconds: a string with a unit ("250us", "1.5s") or an integer of ns.
template <class S>
Field<S> Duration(const std::string& key, uint64_t S::*member) {
  const std::string want = "want a duration such as \"250us\" or \"1.5s\"";
  return Value(
      key, member, want,
      [want](const toml::node& node, const Where& where,
             uint64_t& out) -> absl::Status {
        if (const std::optional<int64_t> v =
                toml_hardened::IntegerValue(node)) {
          if (*v < 0) return where.Bad(node, "must not be negative");
          out = static_cast<uint64_t>(*v);
          return absl::OkStatus();
        }
        if (!node.is_string()) return where.Bad(node, want);
        absl::StatusOr<uint64_t> ns =
            ParseDurationNs(*node.value<std::string>());
        if (!ns.ok()) return where.Bad(node, ns.status().message());
        out = *ns;
        return absl::OkStatus();
      },
      [](const uint64_t& ns) { return TomlQuote(FormatDurationNs(ns)); });
}

// A point in time: "SECONDS[.FRACTION]", or an integer of seconds.
template <class S>
Field<S> Time(const std::string& key, Timespec64 S::*member) {
  const std::string want = "want \"SECONDS[.FRACTION]\"";
  return Value(
      key, member, want,
      [want](const toml::node& node, const Where& where,
             Timespec64& out) -> absl::Status {
        if (const std::optional<int64_t> v =
                toml_hardened::IntegerValue(node)) {
          if (*v < 0) return where.Bad(node, "must not be negative");
          out = Timespec64{*v, 0};
          return absl::OkStatus();
        }
        if (!node.is_string()) return where.Bad(node, want);
        absl::StatusOr<Timespec64> ts =
            ParseSecondsFraction(*node.value<std::string>());
        if (!ts.ok()) return where.Bad(node, ts.status().message());
        out = *ts;
        return absl::OkStatus();
      },
      [](const Timespec64& ts) {
        return absl::StrFormat("\"%d.%09d\"", ts.tv_sec, ts.tv_nsec);
      });
}

// A frequency offset, a number of ppm within +/-limit; the member holds
// scaled ppm (ppm << 16), as adjtimex() takes it.
template <class S>
Field<S> Ppm(const std::string& key, int64_t S::*scaled, double limit) {
  const std::string want = "want a number of ppm";
  return Value(
      key, scaled, want,
      [want, limit](const toml::node& node, const Where& where,
                    int64_t& out) -> absl::Status {
        double ppm;
        if (const std::optional<int64_t> v =
                toml_hardened::IntegerValue(node)) {
          ppm = static_cast<double>(*v);
        } else if (node.is_floating_point()) {
          ppm = *node.value<double>();
        } else {
          return where.Bad(node, want);
        }
        if (!std::isfinite(ppm) || std::fabs(ppm) > limit) {
          // %.15g: as written in the file, not 500.0000001 rounded to 500.
          return where.Bad(node,
                           absl::StrFormat("%.15g ppm is outside %g .. %g", ppm,
                                           -limit, limit));
        }
        out = std::llround(ppm * 65536.0);
        return absl::OkStatus();
      },
      // Scaled ppm is an exact binary fraction: %.17g round-trips it.
      [](const int64_t& v) {
        return absl::StrFormat("%.17g", static_cast<double>(v) / 65536.0);
      });
}

// A list of strings.
template <class S>
Field<S> StringList(const std::string& key,
                    std::vector<std::string> S::*member) {
  const std::string want = "want a list of strings";
  return Value(
      key, member, want,
      [want](const toml::node& node, const Where& where,
             std::vector<std::string>& out) -> absl::Status {
        const toml::array* array = node.as_array();
        if (array == nullptr) return where.Bad(node, want);
        out.clear();
        for (const toml::node& item : *array) {
          if (!item.is_string()) return where.Bad(item, "want strings");
          out.push_back(*item.value<std::string>());
        }
        return absl::OkStatus();
      },
      [](const std::vector<std::string>& v) {
        std::vector<std::string> quoted;
        for (const std::string& s : v) quoted.push_back(TomlQuote(s));
        return absl::StrCat("[", absl::StrJoin(quoted, ", "), "]");
      });
}

// A list of integers, each in [lo, hi] (checked as the file's 64-bit
// value, before it is narrowed to an int).
template <class S>
Field<S> IntList(const std::string& key, std::vector<int> S::*member, int lo,
                 int hi) {
  const std::string want = "want a list of integers";
  return Value(
      key, member, want,
      [want, lo, hi](const toml::node& node, const Where& where,
                     std::vector<int>& out) -> absl::Status {
        const toml::array* array = node.as_array();
        if (array == nullptr) return where.Bad(node, want);
        out.clear();
        for (size_t i = 0; i < array->size(); ++i) {
          const toml::node& item = (*array)[i];
          const std::optional<int64_t> v = toml_hardened::IntegerValue(item);
          if (!v) return where.Bad(item, "want integers");
          if (*v < lo || *v > hi) {
            return where.Index(i).Bad(
                item, absl::StrFormat("%d is outside %d .. %d", *v, lo, hi));
          }
          out.push_back(static_cast<int>(*v));
        }
        return absl::OkStatus();
      },
      [](const std::vector<int>& v) {
        return absl::StrCat("[", absl::StrJoin(v, ", "), "]");
      });
}

}  // namespace vdsolab::sim::toml_table

#endif  // VDSOLAB_SIM_TOML_VALUES_H_
