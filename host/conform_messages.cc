#include "host/conform_messages.h"

#include <unistd.h>

#include <cstring>
#include <type_traits>

namespace vdsolab::host::conform_internal {
namespace {

template <class T>
bool Decode(absl::string_view payload, T* out) {
  static_assert(std::is_trivially_copyable_v<T>);
  if (payload.size() != sizeof(T)) return false;
  std::memcpy(out, payload.data(), sizeof(T));
  return true;
}

}  // namespace

void MessageWriter::Write(MessageKind kind, const void* payload,
                          uint32_t size) {
  const MessageHeader header{kind, size};
  std::string record(sizeof header + size, '\0');
  std::memcpy(record.data(), &header, sizeof header);
  if (size > 0) std::memcpy(record.data() + sizeof header, payload, size);
  const char* p = record.data();
  size_t left = record.size();
  while (left > 0) {
    const ssize_t n = write(fd_, p, left);
    if (n <= 0) return;
    p += n;
    left -= static_cast<size_t>(n);
  }
}

void MessageWriter::Text(MessageKind kind, absl::string_view text) {
  Write(kind, text.data(), static_cast<uint32_t>(text.size()));
}

void MessageWriter::Count(MessageKind kind, uint64_t n) {
  Write(kind, &n, sizeof n);
}

void MessageWriter::Cell(MessageKind kind, const CellMessage& cell) {
  Write(kind, &cell, sizeof cell);
}

void MessageWriter::Analysis(const UpdateAnalysis& analysis) {
  static_assert(std::is_trivially_copyable_v<UpdateAnalysis>);
  Write(MessageKind::kAnalysis, &analysis, sizeof analysis);
}

absl::Status ReadMessages(absl::string_view bytes, ConformReport* report) {
  while (bytes.size() >= sizeof(MessageHeader)) {
    MessageHeader header;
    std::memcpy(&header, bytes.data(), sizeof header);
    bytes.remove_prefix(sizeof header);
    if (bytes.size() < header.size) break;
    const absl::string_view payload = bytes.substr(0, header.size);
    bytes.remove_prefix(header.size);
    uint64_t count = 0;
    CellMessage cell;
    switch (header.kind) {
      case MessageKind::kSkip:
        report->skip_reason = std::string(payload);
        break;
      case MessageKind::kError:
        return absl::InternalError(payload);
      case MessageKind::kKernel:
        report->kernel = std::string(payload);
        break;
      case MessageKind::kClockMode:
        report->clock_mode = std::string(payload);
        break;
      case MessageKind::kPatchedSites:
        if (Decode(payload, &count)) {
          report->patched_sites = static_cast<int>(count);
        }
        break;
      case MessageKind::kAnalysis:
        Decode(payload, &report->analysis);
        break;
      case MessageKind::kCell:
        if (Decode(payload, &cell)) {
          report->cells[{cell.clock, cell.regime}] = {cell.compared,
                                                      cell.mismatches};
          report->compared += cell.compared;
          report->mismatches += cell.mismatches;
        }
        break;
      case MessageKind::kSyntheticCell:
        if (Decode(payload, &cell)) {
          report->synthetic_cells[{cell.clock, cell.regime}] = {
              cell.compared, cell.mismatches};
          report->synthetic_compared += cell.compared;
          report->synthetic_mismatches += cell.mismatches;
        }
        break;
      case MessageKind::kPageRaces:
        Decode(payload, &report->page_races);
        break;
      case MessageKind::kCounterTraps:
        Decode(payload, &report->counter_traps);
        break;
      case MessageKind::kMismatch:
        report->mismatch_details.emplace_back(payload);
        break;
    }
  }
  return absl::OkStatus();
}

}  // namespace vdsolab::host::conform_internal
