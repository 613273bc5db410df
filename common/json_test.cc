#include "common/json.h"

#include <gtest/gtest.h>

namespace vdsolab {
namespace {

TEST(Json, ObjectsAndArraysInOrder) {
  JsonArray a;
  a.Add(1).Add("two").Add(true).Add(2.5);
  JsonObject o;
  o.Add("name", "up\"stream").Add("calls", uint64_t{12}).Add("neg", -3);
  o.AddRaw("list", a.Text()).Add("ok", false);
  EXPECT_EQ(o.Text(),
            "{\"name\": \"up\\\"stream\", \"calls\": 12, \"neg\": -3, "
            "\"list\": [1, \"two\", true, 2.5], \"ok\": false}");
  EXPECT_EQ(JsonObject().Text(), "{}");
  EXPECT_EQ(JsonArray().Text(), "[]");
}

TEST(Json, NumbersRoundTripAndNonFiniteIsNull) {
  EXPECT_EQ(json_internal::Number(0.1), "0.1");
  EXPECT_EQ(json_internal::Number(-44620.9), "-44620.9");
  EXPECT_EQ(std::stod(json_internal::Number(1.0 / 3)), 1.0 / 3);
  EXPECT_EQ(json_internal::Number(1.0 / 0.0), "null");
  const __int128 big = static_cast<__int128>(1) << 100;
  EXPECT_EQ(json_internal::Value(big), "1267650600228229401496703205376");
  EXPECT_EQ(json_internal::Value(-big), "-1267650600228229401496703205376");
}

}  // namespace
}  // namespace vdsolab
