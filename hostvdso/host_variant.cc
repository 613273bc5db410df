#include "hostvdso/host_variant.h"

#include <sys/utsname.h>

#include <array>
#include <memory>
#include <mutex>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/sha256.h"
#include "host/vdso_image.h"
#include "host/vdso_sites.h"
#include "hostvdso/internal/child.h"
#include "hostvdso/internal/era.h"
#include "hostvdso/internal/geometry.h"
#include "hostvdso/internal/image_process.h"
#include "variants/registry.h"
#include "variants/semantics.h"

namespace vdsolab::hostvdso {
namespace {

using internal::AcquireProcess;
using internal::ImageProcess;
using internal::PreparedImage;
using internal::ReleaseProcess;

// The reader: a process of the image, taken from the pool on the first
// call and given back when the reader goes (the explorer makes a reader
// per interleaving).
class HostSimReader final : public variants::SimReader {
 public:
  explicit HostSimReader(const PreparedImage* image) : image_(image) {}
  ~HostSimReader() override { ReleaseProcess(std::move(process_)); }

  std::optional<ClockResult> Call(vdso::HookedAccess& access,
                                  const uint8_t* page, ClockId clock) override {
    if (process_ == nullptr || !process_->alive()) {
      absl::Status error;
      process_ = AcquireProcess(image_, &error);
      if (process_ == nullptr) {
        // vdsolab's failure, not the image's: said on stderr, and the call
        // answers nothing (a fault with no signal).
        std::fprintf(stderr, "vdsolab: %s\n",
                     std::string(error.message()).c_str());
        access.Fault(vdso::CallFault{});
        return std::nullopt;
      }
    }
    return process_->Call(access, page, clock);
  }
  // Compiled x86 code: its smp_rmb() is no instruction, so nothing says
  // where its barriers are.
  bool reports_barriers() const override { return false; }

 private:
  const PreparedImage* image_;
  std::unique_ptr<ImageProcess> process_;
};

// Variant records hold plain function pointers: a slot per image.
constexpr int kMaxImages = 8;
struct Slot {
  const PreparedImage* image = nullptr;
  const variants::Variant* variant = nullptr;
  HostImageInfo info;
  std::string name, provenance, summary;
};
std::array<Slot, kMaxImages> g_slots;
int g_loaded = 0;
std::mutex g_mu;

template <int I>
std::unique_ptr<variants::SimReader> MakeReader() {
  return std::make_unique<HostSimReader>(g_slots[I].image);
}
template <int... I>
constexpr auto MakeTable(std::integer_sequence<int, I...>) {
  using Make = std::unique_ptr<variants::SimReader> (*)();
  return std::array<Make, sizeof...(I)>{MakeReader<I>...};
}
const auto kMakers = MakeTable(std::make_integer_sequence<int, kMaxImages>{});

absl::Status Bad(const std::string& what) {
  return absl::InvalidArgumentError(what);
}

// The running kernel's image, or why this machine has none vdsolab runs.
absl::StatusOr<host::VdsoImage> RunningImage() {
  struct utsname u;
  if (uname(&u) != 0 || std::string(u.machine) != "x86_64") {
    return Bad(absl::StrFormat(
        "--variant=host runs the running kernel's x86-64 vDSO; this machine "
        "is %s",
        uname(&u) == 0 ? u.machine : "unknown"));
  }
  absl::StatusOr<host::VdsoImage> img = host::ReadRunningVdsoImage();
  if (!img.ok()) {
    return Bad(absl::StrFormat("--variant=host: %s", img.status().message()));
  }
  return img;
}

std::string SiteText(const host::Site& s) {
  return absl::StrFormat("%#x (%d bytes): %s", s.addr, s.length, s.text);
}

// Everything but the probe: the image checked, patched and laid out.
absl::StatusOr<std::unique_ptr<PreparedImage>> Prepare(
    const host::VdsoImage& img, const variants::Variant& era,
    const std::string& what, HostImageInfo* info) {
  const host::ElfSymbol* entry = img.Symbol("__vdso_clock_gettime");
  if (entry == nullptr || entry->shndx == 0 || entry->value == 0 ||
      entry->value >= img.loaded.size()) {
    return Bad(what + ": no __vdso_clock_gettime in the image");
  }
  absl::StatusOr<host::CodeScan> scan = host::ScanVdsoCode(img);
  if (!scan.ok())
    return Bad(what + ": " + std::string(scan.status().message()));
  absl::StatusOr<internal::Geometry> geometry = internal::FindGeometry(img);
  if (!geometry.ok()) {
    return Bad(what + ": " + std::string(geometry.status().message()));
  }
  if (absl::Status s = internal::CheckReferences(
          *geometry, *scan, internal::FirstRecordOffset(*era.layout));
      !s.ok()) {
    return Bad(absl::StrFormat("%s (Linux %s, layout of %s): %s", what,
                               img.Version(), era.name, s.message()));
  }
  if (scan->sites.size() > static_cast<size_t>(internal::kMaxSites)) {
    return Bad(what + ": more counter and syscall sites than vdsolab handles");
  }
  auto prepared = std::make_unique<PreparedImage>();
  prepared->layout = era.layout;
  prepared->patched = img.loaded;
  host::PatchSites(scan->sites, prepared->patched.data(),
                   prepared->patched.size());
  internal::ChildSetup& setup = prepared->setup;
  setup.entry = entry->value;
  setup.view_pages = geometry->view_pages;
  for (int i = 0; i < internal::kMaxViewPages; ++i) {
    setup.sim_page[i] = geometry->sim_page[i];
  }
  for (const host::Site& s : scan->sites) {
    internal::ChildSite& c = setup.sites[setup.num_sites++];
    c.addr = s.addr;
    c.length = s.length;
    c.writes_ecx = s.writes_ecx;
    if (s.counter) {
      c.kind = static_cast<uint8_t>(*s.counter);
    } else {
      c.kind = s.text == "syscall" ? internal::kSiteSyscall
                                   : internal::kSiteOtherSyscall;
    }
    info->sites.push_back(SiteText(s));
  }
  info->geometry = geometry->Describe() + ", from " + geometry->source;
  return prepared;
}

// The counter instruction the variant reports: ordered if any site is.
vdso::CounterRead MainCounterRead(const PreparedImage& p) {
  bool rdtscp = false, plain = false;
  for (int i = 0; i < p.setup.num_sites; ++i) {
    const uint8_t k = p.setup.sites[i].kind;
    if (k == static_cast<uint8_t>(vdso::CounterRead::kOrdered)) {
      return vdso::CounterRead::kOrdered;
    }
    rdtscp |= k == static_cast<uint8_t>(vdso::CounterRead::kRdtscp);
    plain |= k == static_cast<uint8_t>(vdso::CounterRead::kPlain);
  }
  return rdtscp  ? vdso::CounterRead::kRdtscp
         : plain ? vdso::CounterRead::kPlain
                 : vdso::CounterRead::kOrdered;
}

}  // namespace

absl::StatusOr<const variants::Variant*> LoadHostVariant(
    const std::string& image_path) {
  const bool running = image_path.empty() || image_path == kRunningImage;
  absl::StatusOr<host::VdsoImage> img =
      running ? RunningImage() : host::ReadVdsoImageFile(image_path);
  if (!img.ok()) {
    return Bad((running ? "" : "--vdso-image=") +
               std::string(img.status().message()));
  }
  const std::string what =
      running ? "the running kernel's vDSO" : "--vdso-image=" + image_path;
  if (!img->linux_version_code) {
    return Bad(what +
               ": the image has no Linux version note (.note, "
               "LINUX_VERSION_CODE): is it a kernel's vdso64.so?");
  }
  const std::string sha = Sha256::Of(std::string_view(
      reinterpret_cast<const char*>(img->file.data()), img->file.size()));
  std::string name = running ? std::string("host") : "host-" + img->Version();

  std::lock_guard<std::mutex> lock(g_mu);
  for (int i = 0; i < g_loaded; ++i) {
    if (g_slots[i].info.sha256 == sha &&
        running == (g_slots[i].info.source == kRunningImage)) {
      return g_slots[i].variant;  // The same image again.
    }
  }
  // Another image of the same version (a patched build, say): its name
  // says which by its content.
  if (variants::FindVariant(name).ok()) name += "-" + sha.substr(0, 8);
  if (variants::FindVariant(name).ok()) {
    return Bad(
        absl::StrFormat("%s: a variant named %s exists already", what, name));
  }
  if (g_loaded == kMaxImages) {
    return Bad(absl::StrFormat("%s: at most %d vDSO images", what, kMaxImages));
  }
  absl::StatusOr<const variants::Variant*> era = internal::EraVariantFor(
      img->major(), img->minor(), what + " (Linux " + img->Version() + ")");
  if (!era.ok()) return Bad(std::string(era.status().message()));

  HostImageInfo info;
  info.source = running ? kRunningImage : image_path;
  info.sha256 = sha;
  info.version = img->Version();
  info.era = std::string((*era)->name);
  absl::StatusOr<std::unique_ptr<PreparedImage>> prepared =
      Prepare(*img, **era, what, &info);
  if (!prepared.ok()) return prepared.status();
  absl::StatusOr<internal::ProbeResult> probe = internal::ProbeImage(
      prepared->get(), **era, what + " (Linux " + img->Version() + ")");
  if (!probe.ok()) return Bad(std::string(probe.status().message()));
  if (probe->agreed == 0 && probe->fault.empty()) {
    return Bad(what + ": the probe made no comparison");
  }
  info.probe_calls = probe->agreed;
  info.probe_fault = probe->fault;

  const int slot = g_loaded;
  Slot& sl = g_slots[static_cast<size_t>(slot)];
  auto* v = new variants::Variant(**era);  // Lives as long as the process.
  // The variant's string_views point into the slot (a static array).
  sl.name = name;
  sl.provenance = absl::StrFormat(
      "%s: Linux %s's compiled vDSO (sha256 %s), run as machine code in a "
      "child process; page layout and writer of built-in %s",
      running ? "the running kernel's [vdso]" : image_path, info.version,
      sha.substr(0, 16), info.era);
  sl.summary = absl::StrFormat(
      "compiled x86-64 vDSO of Linux %s: every page load a preemption point "
      "(a fault into the hooks), %d counter/syscall sites intercepted",
      info.version, prepared->get()->setup.num_sites);
  v->name = sl.name;
  v->provenance = sl.provenance;
  v->summary = sl.summary;
  v->semantics = variants::SemanticsOfKernel(img->major(), img->minor());
  v->counter_read = MainCounterRead(**prepared);
  v->native_loop = nullptr;  // Its native speed is the host's own vDSO's.
  v->make_sim_reader = kMakers[static_cast<size_t>(slot)];
  v->claims.clear();
  v->patches = "";
  sl.image = prepared->release();
  sl.variant = v;
  sl.info = std::move(info);
  if (absl::Status s = variants::RegisterVariant(v); !s.ok()) {
    return Bad(what + ": " + std::string(s.message()));
  }
  ++g_loaded;
  return v;
}

const HostImageInfo* FindHostImageInfo(const variants::Variant* variant) {
  std::lock_guard<std::mutex> lock(g_mu);
  for (int i = 0; i < g_loaded; ++i) {
    if (g_slots[i].variant == variant) return &g_slots[i].info;
  }
  return nullptr;
}

}  // namespace vdsolab::hostvdso
