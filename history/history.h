// File: history/history.h
//
// What the history tests share: running a check on a SimHost with a defect
// switched on and off, and printing, for docs/findings.md, how much
// simulated and wall time the check took to catch it.

#ifndef VDSOLAB_HISTORY_HISTORY_H_
#define VDSOLAB_HISTORY_HISTORY_H_

#include <chrono>
#include <cstdio>
#include <string>

#include "kselftest/sim_host.h"

namespace vdsolab::history {

struct Verdict {
  bool caught = false;
  std::string what;           // What the check saw.
  uint64_t simulated_ns = 0;  // Simulated time until caught (or the end).
  double wall_ms = 0;
};

// Runs `check` (which returns whether it caught something and says what)
// on a SimHost made from `options`, timing it.
template <class Check>
Verdict RunCheck(const kselftest::SimHostOptions& options, Check&& check) {
  kselftest::SimHost host(options);
  const auto start = std::chrono::steady_clock::now();
  Verdict v;
  v.caught = check(host, &v.what);
  v.simulated_ns = host.now_ns();
  v.wall_ms = std::chrono::duration<double, std::milli>(
                  std::chrono::steady_clock::now() - start)
                  .count();
  return v;
}

inline void Print(const char* defect, const char* state, const Verdict& v) {
  std::printf("%s, %s: %s after %.3f s simulated, %.1f ms wall: %s\n", defect,
              state, v.caught ? "CAUGHT" : "clean",
              static_cast<double>(v.simulated_ns) / 1e9, v.wall_ms,
              v.what.c_str());
}

}  // namespace vdsolab::history

#endif  // VDSOLAB_HISTORY_HISTORY_H_
