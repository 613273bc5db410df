#include "sim/durations.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "common/limits.h"
#include "common/timespec.h"

namespace vdsolab::sim {

absl::StatusOr<Timespec64> ParseSecondsFraction(const std::string& text) {
  const size_t dot = text.find('.');
  const std::string whole = text.substr(0, dot);
  const std::string frac = dot == std::string::npos ? "" : text.substr(dot + 1);
  int64_t sec = 0;
  if (whole.empty() || whole.size() > 12 ||
      whole.find_first_not_of("0123456789") != std::string::npos ||
      !absl::SimpleAtoi(whole, &sec) || frac.size() > 9 ||
      frac.find_first_not_of("0123456789") != std::string::npos ||
      (dot != std::string::npos && frac.empty())) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "\"%s\" is not SECONDS[.FRACTION] (up to 9 fraction digits)", text));
  }
  int64_t nsec = 0;
  for (size_t i = 0; i < 9; ++i) {
    nsec = nsec * 10 + (i < frac.size() ? frac[i] - '0' : 0);
  }
  return Timespec64{sec, nsec};
}

absl::StatusOr<uint64_t> ParseDurationNs(const std::string& text) {
  // Longest unit names first, so that "ms" is not read as "m" + "s".
  static const std::pair<const char*, uint64_t> kUnits[] = {
      {"ns", 1},         {"us", 1000},          {"ms", 1000000},
      {"s", 1000000000}, {"m", 60000000000ull}, {"h", 3600000000000ull}};
  const auto bad = [&] {
    return absl::InvalidArgumentError(absl::StrFormat(
        "\"%s\" is not a duration (want e.g. \"250us\", \"1.5s\", \"2m\")",
        text));
  };
  const size_t digits_end = text.find_first_not_of("0123456789.");
  const std::string number = text.substr(0, digits_end);
  const std::string unit =
      digits_end == std::string::npos ? "" : text.substr(digits_end);
  // A string needs its unit: "5" was taken as 5 ns, a run of no calls
  // that passed, where the writer meant seconds (the file's integers are
  // nanoseconds: duration = 5000).
  if (unit.empty() && !number.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "\"%s\" has no unit (want e.g. \"%sms\", \"%ss\"; an integer, "
        "without quotes, is nanoseconds)",
        text, number, number));
  }
  uint64_t scale = 0;
  for (const auto& [name, value] : kUnits) {
    if (unit == name) scale = value;
  }
  if (scale == 0 || number.empty() || number.front() == '.' ||
      number.back() == '.' ||
      std::count(number.begin(), number.end(), '.') > 1) {
    return bad();
  }
  const size_t dot = number.find('.');
  const std::string whole = number.substr(0, dot);
  const std::string frac =
      dot == std::string::npos ? "" : number.substr(dot + 1);
  if (unit.empty() && !frac.empty()) return bad();
  uint64_t w = 0, f = 0, denom = 1;
  // Up to 19 digits: any u64 (the 30-day limit below is what bounds it);
  // FormatDurationNs() writes up to 16 ("2592000000000000ns").
  if (whole.size() > 19 || !absl::SimpleAtoi(whole, &w) || frac.size() > 12 ||
      (!frac.empty() && !absl::SimpleAtoi(frac, &f))) {
    return bad();
  }
  for (size_t i = 0; i < frac.size(); ++i) denom *= 10;
  const unsigned __int128 frac_ns = static_cast<unsigned __int128>(f) * scale;
  if (frac_ns % denom != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("\"%s\" is not a whole number of nanoseconds", text));
  }
  const unsigned __int128 ns =
      static_cast<unsigned __int128>(w) * scale + frac_ns / denom;
  if (ns > kMaxSimulatedNs) {
    return absl::InvalidArgumentError(
        absl::StrFormat("\"%s\" is longer than %s", text, kMaxSimulatedText));
  }
  return static_cast<uint64_t>(ns);
}

std::string FormatDurationNs(uint64_t ns) {
  static const std::pair<const char*, uint64_t> kUnits[] = {
      {"h", 3600000000000ull}, {"m", 60000000000ull}, {"s", 1000000000},
      {"ms", 1000000},         {"us", 1000},          {"ns", 1}};
  if (ns == 0) return "0ns";
  for (const auto& [unit, scale] : kUnits) {
    if (ns % scale == 0) return absl::StrFormat("%d%s", ns / scale, unit);
  }
  return absl::StrFormat("%dns", ns);
}

}  // namespace vdsolab::sim
