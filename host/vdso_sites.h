// File: host/vdso_sites.h
//
// The instructions of a compiled vDSO that must not run natively when
// vdsolab runs it on a simulated page: the counter reads (their value is
// the simulation's) and the system calls (the fallback is the timekeeper
// model's), found by decoding the whole .text (host/x86_decode.h), so that
// bytes inside another instruction are never taken for one; and the
// RIP-relative references, which show where the code expects its data.
//
// Counter reads by kind:
//   - an alternative site (.altinstructions) whose original or replacement
//     reads the counter: rdtsc_ordered(), ALTERNATIVE_2("rdtsc", "lfence;
//     rdtsc", "rdtscp"). A running kernel's image has one replacement
//     applied (rdtscp, or lfence; rdtsc), a file from a build has the
//     original (rdtsc and nop padding); either way the site is the ordered
//     read the kernel patches it to (vdso::CounterRead::kOrdered), and the
//     whole site is intercepted.
//   - lfence; rdtsc or mfence; rdtsc outside alternatives: ordered.
//   - rdtscp: kRdtscp. A bare rdtsc: kPlain (may run before earlier loads).
// System calls: syscall (the x86-64 vDSO's fallback), and sysenter or
// int $0x80 should a 64-bit image have them.

#ifndef VDSOLAB_HOST_VDSO_SITES_H_
#define VDSOLAB_HOST_VDSO_SITES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "host/vdso_image.h"
#include "vdso/access.h"

namespace vdsolab::host {

struct Site {
  uint64_t addr = 0;   // Link address (VdsoImage::loaded coordinates).
  uint8_t length = 0;  // Bytes intercepted: the instruction, or the whole
                       // alternative site.
  // A counter read of this kind, or else a system call.
  std::optional<vdso::CounterRead> counter;
  bool alternative = false;  // From .altinstructions.
  // The native instruction writes ECX (rdtscp's TSC_AUX): the emulation
  // writes it too (0), as the kernel's asm declares it clobbered.
  bool writes_ecx = false;
  std::string text;  // "rdtscp" or "alternative: rdtsc | lfence; rdtsc |
                     // rdtscp" for messages and docs.
};

struct RipReference {
  uint64_t insn = 0;   // The instruction's address.
  int64_t target = 0;  // Where it points (negative: below the image).
  bool lea = false;    // An address computation, not an access.
};

struct CodeScan {
  std::vector<Site> sites;
  std::vector<RipReference> references;
  uint64_t instructions = 0;
  uint64_t alternatives = 0;  // Alternative sites (all, counter or not).
};

// Decodes .text of `image`; an error names where decoding failed or what
// does not fit (an alternative site that reads the counter among other
// instructions, a symbol inside an instruction).
absl::StatusOr<CodeScan> ScanVdsoCode(const VdsoImage& image);

// Replaces each site in `loaded` (VdsoImage::loaded, or a copy of it) by
// ud2 and nop padding: the site then raises SIGILL at its first byte, and
// whoever handles it continues at addr + length.
void PatchSites(const std::vector<Site>& sites, uint8_t* loaded, size_t size);

// The sites of `scan` that read the counter.
std::vector<Site> CounterSites(const CodeScan& scan);

}  // namespace vdsolab::host

#endif  // VDSOLAB_HOST_VDSO_SITES_H_
