// File: hostvdso/host_variant.h
//
// A compiled vDSO as a variant: the running kernel's [vdso] image, or a
// vdso64.so / vdso64.so.dbg from any x86-64 kernel build, run as machine
// code under the simulation (docs/host-variant.md).
//
// The image's code runs unmodified but for the instructions vdsolab must
// answer: its counter reads (rdtsc, rdtscp, the rdtsc_ordered()
// alternative sites) and its system calls are patched to ud2. It runs in
// a child process, next to a view of the simulated page (the VvarPage's
// memfd, mapped where the image expects each data page, PROT_NONE), so
// every page load faults and becomes the simulation's preemption point
// (hostvdso/internal/child.h). A crash or a spin of the image is a
// finding (vdso::CallFault), never vdsolab's end.
//
// The variant reads the page layout, and is judged by the era semantics,
// of its kernel version (the image's LINUX_VERSION_CODE note): the
// built-in variant of that era lends its layout and writer, and a probe
// checks, bit for bit, that the image reads pages that writer publishes
// as that variant's reader does. An image whose layout vdsolab does not
// know is refused (InvalidArgument).

#ifndef VDSOLAB_HOSTVDSO_HOST_VARIANT_H_
#define VDSOLAB_HOSTVDSO_HOST_VARIANT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "variants/variant.h"

namespace vdsolab::hostvdso {

// What replay files and messages call the running kernel's image (the
// name /proc/self/maps gives its mapping).
inline constexpr char kRunningImage[] = "[vdso]";

// Loads the image at `image_path` ("" or kRunningImage: the running
// kernel's) and registers it: variant "host" for the running kernel's
// image, "host-<version>" for a file ("host-6.18.44"; another image of the
// same version adds its sha256's first 8 digits). Loading the same image
// again returns the variant already loaded. Errors are InvalidArgument with a
// message a user can act on (no vDSO, not x86-64, unknown layout, a file that
// is not a vDSO, an image that does not read its era's layout).
absl::StatusOr<const variants::Variant*> LoadHostVariant(
    const std::string& image_path);

// What a loaded image is, for replay files and reports.
struct HostImageInfo {
  std::string source;    // kRunningImage or the path as given.
  std::string sha256;    // Of the image's bytes (the ELF file).
  std::string version;   // "6.18.44", from the image's version note.
  std::string era;       // The built-in variant lending layout and writer.
  std::string geometry;  // Where the data pages are, and how that was found.
  std::vector<std::string> sites;  // "0xb43 (5 bytes): alternative: ...".
  int probe_calls = 0;             // Probe calls that agreed with `era`.
  // The image's first crash or spin during the probe ("" if none): loaded
  // anyway, as the simulation reports such calls as findings.
  std::string probe_fault;
};

// The info of a variant LoadHostVariant returned; nullptr for others.
const HostImageInfo* FindHostImageInfo(const variants::Variant* variant);

}  // namespace vdsolab::hostvdso

#endif  // VDSOLAB_HOSTVDSO_HOST_VARIANT_H_
