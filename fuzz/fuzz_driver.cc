// File: fuzz/fuzz_driver.cc
//
// Runs a libFuzzer target without libFuzzer (g++ builds, `bazel test`):
// every seed file given as an argument, then deterministic mutations of
// each (byte flips, truncations, splices, random bytes) from a fixed seed,
// so a regression test covers the same inputs on every run. A crash or a
// failed check aborts, as under libFuzzer; the input that did it is
// printed first.
//
//   fuzz_test SEED_FILE... [--mutations=N]

#include <algorithm>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "common/rng.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

// The input being run, for the message if it aborts.
const std::vector<uint8_t>* g_current = nullptr;
std::string g_origin;

void PrintCurrent();

// On a crash or a failed check: which input it was, then the default
// action (a core, the signal's exit status).
void OnFatalSignal(int sig) {
  PrintCurrent();
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void PrintCurrent() {
  if (g_current == nullptr) return;
  std::fprintf(stderr, "fuzz_driver: the failing input (%s, %zu bytes):\n",
               g_origin.c_str(), g_current->size());
  for (uint8_t b : *g_current) {
    std::fputc(b >= 0x20 && b < 0x7f ? b : '.', stderr);
  }
  std::fputc('\n', stderr);
}

void Run(const std::vector<uint8_t>& input, const std::string& origin) {
  g_current = &input;
  g_origin = origin;
  LLVMFuzzerTestOneInput(input.data(), input.size());
  g_current = nullptr;
}

std::vector<uint8_t> Mutate(const std::vector<uint8_t>& seed,
                            const std::vector<std::vector<uint8_t>>& all,
                            vdsolab::Rng& rng) {
  std::vector<uint8_t> m = seed;
  const int edits = 1 + static_cast<int>(rng.Below(8));
  for (int e = 0; e < edits; ++e) {
    switch (rng.Below(6)) {
      case 0:  // Flip a bit.
        if (!m.empty())
          m[rng.Below(m.size())] ^= static_cast<uint8_t>(1u << rng.Below(8));
        break;
      case 1:  // A random byte.
        if (!m.empty())
          m[rng.Below(m.size())] = static_cast<uint8_t>(rng.Next());
        break;
      case 2:  // Truncate.
        if (!m.empty()) m.resize(rng.Below(m.size()));
        break;
      case 3: {  // Insert an interesting byte string.
        static const char* const kBits[] = {"0",
                                            "-1",
                                            "18446744073709551615",
                                            "9223372036854775808",
                                            "1e308",
                                            "\"",
                                            "[",
                                            "]",
                                            "=",
                                            "\n",
                                            "[[events]]\n",
                                            "nan",
                                            "4294967296",
                                            "0x7fffffff",
                                            "1ns",
                                            "999999999s"};
        const std::string bit = kBits[rng.Below(std::size(kBits))];
        const size_t at = m.empty() ? 0 : rng.Below(m.size() + 1);
        m.insert(m.begin() + static_cast<std::ptrdiff_t>(at), bit.begin(),
                 bit.end());
        break;
      }
      case 4: {  // Splice in part of another seed.
        const std::vector<uint8_t>& other = all[rng.Below(all.size())];
        if (other.empty()) break;
        const size_t from = rng.Below(other.size());
        const size_t n = rng.Below(other.size() - from) + 1;
        const size_t at = m.empty() ? 0 : rng.Below(m.size() + 1);
        m.insert(m.begin() + static_cast<std::ptrdiff_t>(at),
                 other.begin() + static_cast<std::ptrdiff_t>(from),
                 other.begin() + static_cast<std::ptrdiff_t>(from + n));
        break;
      }
      default:  // Duplicate a run of bytes.
        if (!m.empty()) {
          const size_t from = rng.Below(m.size());
          const size_t n = std::min<size_t>(rng.Below(64) + 1, m.size() - from);
          m.insert(m.begin() + static_cast<std::ptrdiff_t>(from),
                   m.begin() + static_cast<std::ptrdiff_t>(from),
                   m.begin() + static_cast<std::ptrdiff_t>(from + n));
        }
        break;
    }
  }
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  long mutations = 2000;
  std::vector<std::string> files;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--mutations=", 0) == 0) {
      char* end = nullptr;
      mutations = std::strtol(a.c_str() + 12, &end, 10);
      if (end == a.c_str() + 12 || *end != '\0' || mutations < 0) {
        std::fprintf(stderr, "fuzz_driver: bad --mutations: %s\n", a.c_str());
        return 2;
      }
    } else {
      files.push_back(a);
    }
  }
  std::vector<std::vector<uint8_t>> seeds;
  for (const std::string& f : files) {
    std::ifstream in(f, std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "fuzz_driver: cannot read %s\n", f.c_str());
      return 2;
    }
    seeds.emplace_back(std::istreambuf_iterator<char>(in),
                       std::istreambuf_iterator<char>());
  }
  if (seeds.empty()) seeds.emplace_back();  // The empty input.
  for (int sig : {SIGABRT, SIGSEGV, SIGFPE, SIGBUS, SIGILL}) {
    std::signal(sig, OnFatalSignal);
  }
  for (size_t i = 0; i < seeds.size(); ++i) {
    Run(seeds[i], i < files.size() ? files[i] : "empty input");
  }
  vdsolab::Rng rng(0xf022);
  for (long i = 0; i < mutations; ++i) {
    const size_t s = rng.Below(seeds.size());
    const std::vector<uint8_t> m = Mutate(seeds[s], seeds, rng);
    Run(m, "mutation " + std::to_string(i) + " of " +
               (s < files.size() ? files[s] : "the empty input"));
  }
  std::printf("fuzz_driver: %zu seeds and %ld mutations ran clean\n",
              seeds.size(), mutations);
  return 0;
}
