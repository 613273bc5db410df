// File: common/json.h
//
// Builds JSON text for vdsolab's --format=json output (the schema is in
// docs/json.md). An object or array is built member by member; values are
// numbers, strings (escaped by common/escape.h), booleans, null, or JSON
// already built. Output is deterministic: members come out in the order
// they were added.
//
//   JsonObject o;
//   o.Add("name", "upstream").Add("calls", 12).Add("ok", true);
//   o.AddRaw("stats", stats.Text());
//   std::string text = o.Text();  // {"name": "upstream", "calls": 12, ...}

#ifndef VDSOLAB_COMMON_JSON_H_
#define VDSOLAB_COMMON_JSON_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include "common/escape.h"

namespace vdsolab {

namespace json_internal {

std::string Number(double v);  // Finite: shortest round trip; else null.

template <class T>
std::string Value(const T& v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v ? "true" : "false";
  } else if constexpr (std::is_integral_v<T>) {
    return std::to_string(v);
  } else if constexpr (std::is_same_v<T, __int128>) {
    // Timestamps in ns can exceed 64 bits; JSON numbers have no limit.
    const bool neg = v < 0;
    unsigned __int128 m = static_cast<unsigned __int128>(neg ? -v : v);
    std::string digits;
    do {
      digits.insert(digits.begin(), static_cast<char>('0' + m % 10));
      m /= 10;
    } while (m != 0);
    return (neg ? "-" : "") + digits;
  } else if constexpr (std::is_floating_point_v<T>) {
    return Number(static_cast<double>(v));
  } else {
    return JsonQuote(std::string_view(v));
  }
}

}  // namespace json_internal

class JsonObject {
 public:
  template <class T>
  JsonObject& Add(std::string_view key, const T& value) {
    return AddRaw(key, json_internal::Value(value));
  }
  // `json` is already JSON text (an object, array, number...).
  JsonObject& AddRaw(std::string_view key, std::string_view json);
  // Appends every member of `other`.
  JsonObject& Merge(const JsonObject& other);
  std::string Text() const { return "{" + body_ + "}"; }
  bool empty() const { return body_.empty(); }

 private:
  std::string body_;
};

class JsonArray {
 public:
  template <class T>
  JsonArray& Add(const T& value) {
    return AddRaw(json_internal::Value(value));
  }
  JsonArray& AddRaw(std::string_view json);
  std::string Text() const { return "[" + body_ + "]"; }
  bool empty() const { return body_.empty(); }

 private:
  std::string body_;
};

}  // namespace vdsolab

#endif  // VDSOLAB_COMMON_JSON_H_
