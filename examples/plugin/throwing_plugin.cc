// File: examples/plugin/throwing_plugin.cc
//
// A plugin written in C++ whose CLOCK_MONOTONIC throws an exception out of
// its extern "C" entry point (every other clock answers the syscall's
// time): a vDSO call is C and cannot throw. For the tests of containment
// (variants/plugin/loader.cc catches it at the call's boundary).

#include <cstdint>
#include <stdexcept>

#include "vdsolab_plugin.h"

namespace {

const int32_t kClocks[] = {1};

int32_t Throws(const vdsolab_ops* ops, const uint8_t* page, int32_t clock,
               vdsolab_timespec* ts) {
  if (clock == 1 && page != nullptr) throw std::runtime_error("no time");
  return ops->fallback(ops->ctx, clock, ts);
}

const vdsolab_plugin kPlugin = {
    VDSOLAB_PLUGIN_ABI_VERSION,
    "throwing",
    "examples/plugin/throwing_plugin.cc (test only)",
    "a C++ reader that throws on CLOCK_MONOTONIC",
    "upstream",
    kClocks,
    1,
    Throws,
};

}  // namespace

extern "C" const vdsolab_plugin* vdsolab_plugin_v1() { return &kPlugin; }
