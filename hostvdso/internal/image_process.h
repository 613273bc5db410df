// File: hostvdso/internal/image_process.h
//
// The parent's side of a process running a compiled vDSO
// (hostvdso/internal/child.h): spawning it, handing it the simulated page
// (the VvarPage's memfd, once per page), and one call, during which every
// hook the child asks for is answered by the simulation's access policy.
//
// Containment: a crash of the image ends only the child (reported as a
// vdso::CallFault crash); a call whose child has used more CPU time than
// variants::CallTimeLimit() is stopped (SIGKILL) and reported as a spin.
// Either way the process is gone and the next call starts another.
//
// A pool keeps idle processes of each image: the exhaustive explorer makes
// a fresh reader per interleaving, and a process per reader would fork
// hundreds of times. A process keeps no state between calls that changes
// what a call does (its mappings only), so which one serves a call does
// not matter.

#ifndef VDSOLAB_HOSTVDSO_INTERNAL_IMAGE_PROCESS_H_
#define VDSOLAB_HOSTVDSO_INTERNAL_IMAGE_PROCESS_H_

#include <sys/types.h>
#include <time.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "common/clock_result.h"
#include "common/clockid.h"
#include "hostvdso/internal/child.h"
#include "variants/layout.h"
#include "vdso/access.h"

namespace vdsolab::hostvdso::internal {

// What every process of one image runs: the patched bytes and the child's
// setup (mailbox, socket and parent filled in per process).
struct PreparedImage {
  std::vector<uint8_t> patched;
  ChildSetup setup;
  const variants::Layout* layout = nullptr;  // For the retry points.
};

// Counts for the cost per call (process-wide, for reports and tests).
struct ProcessStats {
  uint64_t spawned = 0;
  uint64_t calls = 0;
  uint64_t hooks = 0;  // Loads, counter reads and syscalls asked.
  // How the children let the loads happen (mailbox.h).
  uint64_t emulated = 0;
  uint64_t relocated = 0;
  uint64_t stepped = 0;
};
ProcessStats Stats();

class ImageProcess {
 public:
  // Forks the child and waits until it is ready.
  static absl::StatusOr<std::unique_ptr<ImageProcess>> Spawn(
      const PreparedImage* image);
  ~ImageProcess();
  ImageProcess(const ImageProcess&) = delete;
  ImageProcess& operator=(const ImageProcess&) = delete;

  // One clock_gettime(clock) of the image on `page` (a vdso::VvarPage's
  // data()), every hook through `access`. nullopt: abandoned, or a fault
  // reported through access.Fault() (then alive() is false).
  std::optional<ClockResult> Call(vdso::HookedAccess& access,
                                  const uint8_t* page, ClockId clock);

  bool alive() const { return pid_ > 0; }
  const PreparedImage* image() const { return image_; }
  pid_t pid() const { return pid_; }

 private:
  enum class Turn { kAnswered, kDied, kTimedOut };

  ImageProcess() = default;
  // Hands the turn to the child and waits for its message.
  // `child_seconds` accumulates the CPU time the child used meanwhile (the
  // slow path only: polls that succeed take microseconds); past `limit`
  // (> 0) the call has spun.
  Turn Exchange(double* child_seconds, double limit);
  // The CPU time the child has used.
  double ChildCpuSeconds() const;
  // Ends the child (SIGKILL) and reaps it; the signal it died of.
  int Kill();
  absl::Status MapPage(const uint8_t* page);

  const PreparedImage* image_ = nullptr;
  pid_t pid_ = -1;
  clockid_t cpu_clock_ = CLOCK_MONOTONIC;  // The child's CPU-time clock.
  struct Mailbox* mb_ = nullptr;
  int socket_ = -1;
  uint64_t mapped_id_ = 0;  // The VvarPage the view maps (0: none).
  int died_of_ = 0;         // The signal that ended the child, if any.
  uint64_t seen_[3] = {};   // The child's load counts already added.
};

// Idle processes by image.
std::unique_ptr<ImageProcess> AcquireProcess(const PreparedImage* image,
                                             absl::Status* error);
void ReleaseProcess(std::unique_ptr<ImageProcess> process);

}  // namespace vdsolab::hostvdso::internal

#endif  // VDSOLAB_HOSTVDSO_INTERNAL_IMAGE_PROCESS_H_
