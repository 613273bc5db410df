#include "common/json.h"

#include <cmath>

#include "absl/strings/str_format.h"

namespace vdsolab {

std::string json_internal::Number(double v) {
  if (!std::isfinite(v)) return "null";
  // %.17g round-trips a double; trim what %g would not need.
  std::string s = absl::StrFormat("%.17g", v);
  for (int precision = 6; precision < 17; ++precision) {
    std::string shorter = absl::StrFormat("%.*g", precision, v);
    if (std::stod(shorter) == v) return shorter;
  }
  return s;
}

JsonObject& JsonObject::AddRaw(std::string_view key, std::string_view json) {
  if (!body_.empty()) body_ += ", ";
  body_ += JsonQuote(key);
  body_ += ": ";
  body_.append(json.data(), json.size());
  return *this;
}

JsonObject& JsonObject::Merge(const JsonObject& other) {
  if (other.body_.empty()) return *this;
  if (!body_.empty()) body_ += ", ";
  body_ += other.body_;
  return *this;
}

JsonArray& JsonArray::AddRaw(std::string_view json) {
  if (!body_.empty()) body_ += ", ";
  body_.append(json.data(), json.size());
  return *this;
}

}  // namespace vdsolab
