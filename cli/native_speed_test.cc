#include "cli/native_speed.h"

#include <gtest/gtest.h>

#include <csignal>
#include <string>

#include "variants/registry.h"

namespace vdsolab::cli {
namespace {

const variants::Variant& Upstream() {
  return **variants::FindVariant("upstream");
}

// The upstream reader against itself: both figures are measured (their
// values are wall-clock and not asserted).
TEST(NativeSpeed, TimesBothVariants) {
  const variants::Variant& up = Upstream();
  absl::StatusOr<NativeSpeed> s = MeasureNativeSpeed(up, up);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_GT(s->variant_ns, 0);
  EXPECT_GT(s->base_ns, 0);
}

uint64_t CrashingLoop(const uint8_t*, ClockId, uint64_t) {
  std::raise(SIGSEGV);
  return 1;
}
uint64_t FailingLoop(const uint8_t*, ClockId, uint64_t) { return 0; }

// Code that dies or fails when run natively (outside the simulation's
// containment) is not timed, and vdsolab lives on to say why.
TEST(NativeSpeed, ACrashOrAFailedCallIsNoFigure) {
  const variants::Variant& up = Upstream();
  variants::Variant crashing = up;
  crashing.native_loop = CrashingLoop;
  absl::StatusOr<NativeSpeed> s = MeasureNativeSpeed(crashing, up);
  ASSERT_FALSE(s.ok());
  // SIGSEGV, or under AddressSanitizer its report's exit.
  const std::string why(s.status().message());
  EXPECT_TRUE(why.find("died of signal 11") != std::string::npos ||
              why.find("ended the process") != std::string::npos)
      << why;
  variants::Variant failing = up;
  failing.native_loop = FailingLoop;
  s = MeasureNativeSpeed(failing, up);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(std::string(s.status().message()).find("answered an error"),
            std::string::npos)
      << s.status();
  variants::Variant none = up;
  none.native_loop = nullptr;
  EXPECT_FALSE(MeasureNativeSpeed(none, up).ok());
}

}  // namespace
}  // namespace vdsolab::cli
