// File: host/conform_messages.h
//
// What the conformance child tells the parent: typed records over the
// sandbox's pipe, each a fixed header (kind, payload size) and a payload,
// a struct for figures and bytes for text. Child and parent are one binary
// (fork), so a struct travels as it is in memory.

#ifndef VDSOLAB_HOST_CONFORM_MESSAGES_H_
#define VDSOLAB_HOST_CONFORM_MESSAGES_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "host/conform.h"
#include "host/inspect.h"

namespace vdsolab::host::conform_internal {

enum class MessageKind : uint32_t {
  kSkip = 1,       // Text: why this host cannot run the pass.
  kError,          // Text: the pass failed.
  kKernel,         // Text: the running kernel's release.
  kClockMode,      // Text: "TSC" or "PVCLOCK".
  kPatchedSites,   // Count.
  kAnalysis,       // UpdateAnalysis.
  kCell,           // CellMessage, live page.
  kSyntheticCell,  // CellMessage, synthetic pages.
  kPageRaces,      // Count.
  kCounterTraps,   // Count.
  kMismatch,       // Text: one mismatch, described.
};

struct MessageHeader {
  MessageKind kind;
  uint32_t size;  // Payload bytes that follow.
};

// Comparisons of one clock in one counter regime.
struct CellMessage {
  int32_t clock;
  int32_t regime;
  uint64_t compared;
  uint64_t mismatches;
};

// The child's side: each record is written whole, as it happens (what was
// written before a crash still reaches the parent).
class MessageWriter {
 public:
  explicit MessageWriter(int fd) : fd_(fd) {}
  void Text(MessageKind kind, absl::string_view text);
  void Count(MessageKind kind, uint64_t n);
  void Cell(MessageKind kind, const CellMessage& cell);
  void Analysis(const UpdateAnalysis& analysis);

 private:
  void Write(MessageKind kind, const void* payload, uint32_t size);
  int fd_;
};

// The parent's side: applies the records in `bytes` to `report`. A kError
// record is returned as an internal error; a record cut short ends the
// reading.
absl::Status ReadMessages(absl::string_view bytes, ConformReport* report);

}  // namespace vdsolab::host::conform_internal

#endif  // VDSOLAB_HOST_CONFORM_MESSAGES_H_
