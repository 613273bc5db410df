#include "vdso/vvar_page.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "common/bytes.h"
#include "common/clockid.h"
#include "vdso/datapage.h"

static_assert(vdsolab::vdso::VvarPage::kPages ==
              vdsolab::vdso::kVvarDataPages + vdsolab::vdso::kVvarVclockPages);

namespace vdsolab::vdso {

namespace {

// Every live page by data(), for VvarPage::Find().
struct Registry {
  std::mutex mu;
  std::map<const uint8_t*, const VvarPage*> pages;
};
Registry& Pages() {
  static auto* registry = new Registry;
  return *registry;
}
std::atomic<uint64_t> g_next_id{1};

}  // namespace

absl::StatusOr<std::unique_ptr<VvarPage>> VvarPage::Create() {
  // A memfd mapped shared gives page alignment and zeroed memory, lets later
  // tools change the protection of their own mapping of it (to trap loads of
  // unmodified vDSO code), and lets another process map the same pages.
  // MFD_CLOEXEC: programs this process runs do not inherit it.
  const int fd = memfd_create("vdsolab-vvar", MFD_CLOEXEC);
  if (fd < 0) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "memfd_create for the vvar area failed: %s", strerror(errno)));
  }
  const size_t bytes = kPages * kPageSize;
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    const int err = errno;
    close(fd);
    return absl::ResourceExhaustedError(
        absl::StrFormat("sizing the vvar area failed: %s", strerror(err)));
  }
  void* mem = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (mem == MAP_FAILED) {
    const int err = errno;
    close(fd);
    return absl::ResourceExhaustedError(
        absl::StrFormat("mmap of the vvar area failed: %s", strerror(err)));
  }
  std::unique_ptr<VvarPage> page(
      new VvarPage(static_cast<uint8_t*>(mem), fd,
                   g_next_id.fetch_add(1, std::memory_order_relaxed)));
  Registry& r = Pages();
  std::lock_guard<std::mutex> lock(r.mu);
  r.pages[page->data()] = page.get();
  return page;
}

VvarPage::~VvarPage() {
  {
    Registry& r = Pages();
    std::lock_guard<std::mutex> lock(r.mu);
    r.pages.erase(base_);
  }
  munmap(base_, kPages * kPageSize);
  close(fd_);
}

const VvarPage* VvarPage::Find(const uint8_t* data) {
  Registry& r = Pages();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.pages.find(data);
  return it == r.pages.end() ? nullptr : it->second;
}

void VvarPage::Store(uint32_t offset, uint8_t size, uint64_t value) {
  uint8_t* p = base_ + offset;
  // Relaxed atomic stores are plain movs on x86 and keep a concurrent native
  // reader (benchmarks) free of data races.
  switch (size) {
    case 1:
      __atomic_store_n(p, static_cast<uint8_t>(value), __ATOMIC_RELAXED);
      break;
    case 2:
      __atomic_store_n(reinterpret_cast<uint16_t*>(p),
                       static_cast<uint16_t>(value), __ATOMIC_RELAXED);
      break;
    case 4:
      __atomic_store_n(reinterpret_cast<uint32_t*>(p),
                       static_cast<uint32_t>(value), __ATOMIC_RELAXED);
      break;
    default:
      __atomic_store_n(reinterpret_cast<uint64_t*>(p), value, __ATOMIC_RELAXED);
      break;
  }
}

void VvarPage::CopyIn(uint32_t offset, const uint8_t* bytes, size_t n) {
  std::memcpy(base_ + offset, bytes, n);
}

void VvarPage::Apply(const VvarUpdate& update) {
  for (const VvarStore& store : update.stores) Apply(store);
}

uint64_t VvarPage::Load(uint32_t offset, uint8_t size) const {
  return LoadSized(base_ + offset, size);
}

std::vector<uint8_t> VvarPage::Snapshot() const {
  return std::vector<uint8_t>(base_, base_ + kPages * kPageSize);
}

namespace {

constexpr uint32_t kClockSize = sizeof(VdsoClock);
constexpr uint32_t kTimestampSize = sizeof(VdsoTimestamp);

std::string DescribeClockField(uint32_t rel) {
  switch (rel) {
    case kVcSeq:
      return "seq";
    case kVcClockMode:
      return "clock_mode";
    case kVcCycleLast:
      return "cycle_last";
    case kVcMaxCycles:
      return "max_cycles";
    case kVcMask:
      return "mask";
    case kVcMult:
      return "mult";
    case kVcShift:
      return "shift";
    default:
      break;
  }
  if (rel >= VcBasetimeSec(0) && rel < kClockSize) {
    const uint32_t idx = (rel - VcBasetimeSec(0)) / kTimestampSize;
    const uint32_t part = (rel - VcBasetimeSec(0)) % kTimestampSize;
    return absl::StrFormat("basetime[%s].%s",
                           ClockName(static_cast<ClockId>(idx)),
                           part == 0 ? "sec" : "nsec");
  }
  return absl::StrFormat("+%u", rel);
}

}  // namespace

std::string DescribeVvarOffset(uint32_t offset) {
  if (offset >= kPvclockPageOffset && offset < kHvclockPageOffset) {
    switch (offset - kPvclockPageOffset) {
      case kPvtiVersion:
        return "pvti.version";
      case kPvtiTscTimestamp:
        return "pvti.tsc_timestamp";
      case kPvtiSystemTime:
        return "pvti.system_time";
      case kPvtiMul:
        return "pvti.tsc_to_system_mul";
      case kPvtiShift:
        return "pvti.tsc_shift";
      case kPvtiFlags:
        return "pvti.flags";
      default:
        return absl::StrFormat("pvclock page +0x%x",
                               offset - kPvclockPageOffset);
    }
  }
  if (offset < AuxClockDataOffset(0)) {
    return absl::StrFormat("clock_data[%u].%s", offset / kClockSize,
                           DescribeClockField(offset % kClockSize));
  }
  if (offset < kTzMinuteswest) {
    const uint32_t rel = offset - AuxClockDataOffset(0);
    return absl::StrFormat("aux_clock_data[%u].%s", rel / kClockSize,
                           DescribeClockField(rel % kClockSize));
  }
  switch (offset) {
    case kTzMinuteswest:
      return "tz_minuteswest";
    case kTzDsttime:
      return "tz_dsttime";
    case kHrtimerRes:
      return "hrtimer_res";
    default:
      return absl::StrFormat("+0x%x", offset);
  }
}

std::string DescribeVvarStore(const VvarStore& store) {
  return absl::StrFormat("%s%s = %#x (u%d)", store.wmb_before ? "wmb; " : "",
                         DescribeVvarOffset(store.offset), store.value,
                         store.size * 8);
}

}  // namespace vdsolab::vdso
