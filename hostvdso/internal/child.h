// File: hostvdso/internal/child.h
//
// The process that runs a compiled vDSO for the simulation. It is forked
// from vdsolab and calls only async-signal-safe functions (the parent may
// have other threads): everything it needs was prepared before the fork.
//
// Its memory: one area holding the view of the vvar pages (the simulated
// page's memfd, mapped page by page where the image expects each page,
// PROT_NONE) followed by the patched image (PROT_READ | PROT_EXEC), so the
// code's RIP-relative references reach the simulated pages; below them a
// second, readable mapping of the memfd and a page of trampolines, within
// reach of 32-bit displacements.
//
// How the image's actions reach the parent (each a turn of the mailbox):
//   - a load from the view faults (SIGSEGV): the handler asks the parent
//     (kLoad, with the page offset and the size the decoded instruction
//     reads); on kGo it emulates a plain mov from the readable mapping;
//     runs any other instruction relocated to a trampoline whose copy
//     addresses the readable mapping (the base register moved there and
//     back with lea, which keeps the flags; or the RIP-relative
//     displacement re-aimed), then jumps back; or, for what cannot be
//     relocated, makes the view readable, sets the trap flag and lets the
//     instruction run in place, re-protecting the view on the SIGTRAP;
//   - a counter-read or syscall site (patched to ud2) raises SIGILL: the
//     handler asks the parent for the counter value (kCounter) or the
//     clock_gettime system call's answer (kSyscall) and steps over the
//     site;
//   - any other fault is the image's crash: reported (kFault), then the
//     child exits and the parent starts another.
// Between calls nothing persists but the mappings: each call starts from
// the same stack frame, with the view protected and no trap pending.

#ifndef VDSOLAB_HOSTVDSO_INTERNAL_CHILD_H_
#define VDSOLAB_HOSTVDSO_INTERNAL_CHILD_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "hostvdso/internal/mailbox.h"

namespace vdsolab::hostvdso::internal {

inline constexpr int kMaxViewPages = 8;
inline constexpr int kMaxSites = 64;

// One intercepted site of the image.
struct ChildSite {
  uint64_t addr = 0;  // Offset in the image.
  uint8_t length = 0;
  // 0..2: a counter read (vdso::CounterRead); kSiteSyscall: the x86-64
  // syscall instruction; kSiteOtherSyscall: sysenter or int $0x80.
  uint8_t kind = 0;
  bool writes_ecx = false;
};
inline constexpr uint8_t kSiteSyscall = 10;
inline constexpr uint8_t kSiteOtherSyscall = 11;

// Everything the child needs, prepared by the parent before the fork.
struct ChildSetup {
  const uint8_t* image = nullptr;  // The patched image (loaded layout).
  size_t image_size = 0;
  uint64_t entry = 0;  // __vdso_clock_gettime's offset in the image.
  // The view: `view_pages` pages just below the image; view page i (0 =
  // lowest) maps simulated page sim_page[i], or nothing if it is -1.
  int view_pages = 0;
  int8_t sim_page[kMaxViewPages] = {};
  ChildSite sites[kMaxSites];
  int num_sites = 0;
  Mailbox* mailbox = nullptr;  // Shared with the parent.
  int socket = -1;             // Receives the memfds (SCM_RIGHTS).
  pid_t parent = 0;
  int spins = 0;  // Polls of the mailbox before sleeping (mailbox.h).
};

// The child's main loop; never returns.
[[noreturn]] void RunChild(const ChildSetup* setup);

}  // namespace vdsolab::hostvdso::internal

#endif  // VDSOLAB_HOSTVDSO_INTERNAL_CHILD_H_
