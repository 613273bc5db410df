#include "bench/machine_info.h"

#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "bench/counters.h"

namespace vdsolab::bench {
namespace {

std::string FirstLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

uint64_t RawNs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000u +
         static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace

MachineInfo ProbeMachine() {
  MachineInfo m;
  // The first CPU's entry. Hypervisors often shorten "model name" (e.g.
  // "AMD EPYC"), so family/model/stepping follow it.
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string name, family, model, stepping;
  for (std::string line; std::getline(cpuinfo, line) && !line.empty();) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos || colon + 2 > line.size()) continue;
    const std::string value = line.substr(colon + 2);
    if (line.rfind("model name", 0) == 0) name = value;
    if (line.rfind("cpu family", 0) == 0) family = value;
    if (line.rfind("model\t", 0) == 0) model = value;
    if (line.rfind("stepping", 0) == 0) stepping = value;
  }
  m.cpu_model = name.empty() ? "unknown CPU" : name;
  if (!family.empty()) {
    m.cpu_model += " (family " + family + ", model " + model +
                   (stepping.empty() ? "" : ", stepping " + stepping) + ")";
  }
  m.cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  struct utsname u;
  if (uname(&u) == 0) m.kernel = u.release;
  m.clocksource = FirstLine(
      "/sys/devices/system/clocksource/clocksource0/current_clocksource");
  // The TSC against MONOTONIC_RAW over ~100 ms: kHz to within ~0.01%.
  const uint64_t ns0 = RawNs();
  const uint64_t c0 = Rdtscp();
  struct timespec pause = {0, 100000000};
  nanosleep(&pause, nullptr);
  const uint64_t c1 = Rdtscp();
  const uint64_t ns1 = RawNs();
  if (ns1 > ns0) {
    m.tsc_khz = static_cast<uint32_t>((c1 - c0) * 1000000u / (ns1 - ns0));
  }
  return m;
}

}  // namespace vdsolab::bench
