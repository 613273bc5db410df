#include "sim/properties.h"

namespace vdsolab::sim {

const char* PropertyName(Property p) {
  switch (p) {
    case Property::kExact:
      return "exact";
    case Property::kMonotonic:
      return "monotonic";
    case Property::kCausal:
      return "causal";
    case Property::kSane:
      return "sane";
    case Property::kRawRate:
      return "raw_rate";
    case Property::kCrossClock:
      return "cross_clock";
    case Property::kTorn:
      return "torn";
    case Property::kLivelock:
      return "livelock";
    case Property::kCrash:
      return "crash";
    case Property::kFastPath:
      return "fast_path";
  }
  return "?";
}

const char* VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kDefect:
      return "defect";
    case Verdict::kPrecondition:
      return "precondition violated";
    case Verdict::kKnownKernel:
      return "known kernel behaviour";
  }
  return "?";
}

}  // namespace vdsolab::sim
