#include "common/timespec.h"

#include <limits>

#include "absl/strings/str_format.h"

namespace vdsolab {
namespace {
constexpr int64_t kNsecPerSecS = static_cast<int64_t>(kNsecPerSec);
}  // namespace

std::string FormatTimespec(const Timespec64& ts) {
  // A timespec that is not normalised is shown as it is, not as a decimal
  // that would misread it.
  if (ts.tv_nsec < 0 || ts.tv_nsec >= kNsecPerSecS) {
    return absl::StrFormat("{tv_sec %d, tv_nsec %d}", ts.tv_sec, ts.tv_nsec);
  }
  // A negative time is {-(s + 1), 1e9 - ns}: -0.25 s is {-1, 750000000},
  // written as the decimal it is, not as "-1.750000000".
  if (ts.tv_sec < 0 && ts.tv_nsec != 0) {
    return absl::StrFormat("-%d.%09d", -(ts.tv_sec + 1),
                           kNsecPerSecS - ts.tv_nsec);
  }
  return absl::StrFormat("%d.%09d", ts.tv_sec, ts.tv_nsec);
}

int64_t TimespecDiffNs(const Timespec64& a, const Timespec64& b) {
  __int128 diff = (static_cast<__int128>(a.tv_sec) - b.tv_sec) * kNsecPerSecS +
                  (static_cast<__int128>(a.tv_nsec) - b.tv_nsec);
  if (diff > std::numeric_limits<int64_t>::max()) {
    return std::numeric_limits<int64_t>::max();
  }
  if (diff < std::numeric_limits<int64_t>::min()) {
    return std::numeric_limits<int64_t>::min();
  }
  return static_cast<int64_t>(diff);
}

bool TimespecLess(const Timespec64& a, const Timespec64& b) {
  return a.tv_sec != b.tv_sec ? a.tv_sec < b.tv_sec : a.tv_nsec < b.tv_nsec;
}

Timespec64 SetNormalizedTimespec64(int64_t sec, int64_t nsec) {
  // The kernel loops one second at a time; division gives the same result.
  if (nsec >= kNsecPerSecS) {
    sec += nsec / kNsecPerSecS;
    nsec %= kNsecPerSecS;
  } else if (nsec < 0) {
    int64_t borrow = (-(nsec + 1)) / kNsecPerSecS + 1;
    sec -= borrow;
    nsec += borrow * kNsecPerSecS;
  }
  return Timespec64{sec, nsec};
}

Timespec64 Timespec64Sub(const Timespec64& lhs, const Timespec64& rhs) {
  return SetNormalizedTimespec64(lhs.tv_sec - rhs.tv_sec,
                                 lhs.tv_nsec - rhs.tv_nsec);
}

Timespec64 Timespec64Add(const Timespec64& lhs, const Timespec64& rhs) {
  return SetNormalizedTimespec64(lhs.tv_sec + rhs.tv_sec,
                                 lhs.tv_nsec + rhs.tv_nsec);
}

int Timespec64Compare(const Timespec64& lhs, const Timespec64& rhs) {
  if (lhs.tv_sec < rhs.tv_sec) return -1;
  if (lhs.tv_sec > rhs.tv_sec) return 1;
  return lhs.tv_nsec < rhs.tv_nsec ? -1 : (lhs.tv_nsec > rhs.tv_nsec ? 1 : 0);
}

Timespec64 NsToTimespec64(int64_t nsec) {
  Timespec64 ts;
  if (nsec > 0) {
    ts.tv_sec = nsec / kNsecPerSecS;
    ts.tv_nsec = nsec % kNsecPerSecS;
  } else if (nsec < 0) {
    // Written as the kernel does, so that INT64_MIN cannot overflow.
    uint64_t magnitude = static_cast<uint64_t>(-(nsec + 1));
    ts.tv_sec = -static_cast<int64_t>(magnitude / kNsecPerSec) - 1;
    ts.tv_nsec =
        kNsecPerSecS - static_cast<int64_t>(magnitude % kNsecPerSec) - 1;
  }
  return ts;
}

Ktime Timespec64ToKtime(const Timespec64& ts) {
  if (ts.tv_sec >= kKtimeSecMax) return kKtimeMax;
  // The kernel builds with -fno-strict-overflow: s64 arithmetic wraps.
  return static_cast<Ktime>(static_cast<uint64_t>(ts.tv_sec) * kNsecPerSec +
                            static_cast<uint64_t>(ts.tv_nsec));
}

}  // namespace vdsolab
