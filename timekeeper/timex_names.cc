#include "timekeeper/timex_names.h"

namespace vdsolab::timekeeper {

const std::vector<std::pair<std::string, uint32_t>>& AdjModeNames() {
  static const auto* names = new std::vector<std::pair<std::string, uint32_t>>{
      {"SS_READ", kAdjOffsetSsRead},
      {"SINGLESHOT", kAdjOffsetSingleshot},
      {"OFFSET", kAdjOffset},
      {"FREQUENCY", kAdjFrequency},
      {"MAXERROR", kAdjMaxerror},
      {"ESTERROR", kAdjEsterror},
      {"STATUS", kAdjStatus},
      {"TIMECONST", kAdjTimeconst},
      {"TAI", kAdjTai},
      {"SETOFFSET", kAdjSetoffset},
      {"MICRO", kAdjMicro},
      {"NANO", kAdjNano},
      {"TICK", kAdjTick},
      {"ADJTIME", kAdjAdjtime},
  };
  return *names;
}

const std::vector<std::pair<std::string, uint32_t>>& StaNames() {
  static const auto* names = new std::vector<std::pair<std::string, uint32_t>>{
      {"PLL", kStaPll},
      {"PPSFREQ", kStaPpsfreq},
      {"PPSTIME", kStaPpstime},
      {"FLL", kStaFll},
      {"INS", kStaIns},
      {"DEL", kStaDel},
      {"UNSYNC", kStaUnsync},
      {"FREQHOLD", kStaFreqhold},
      {"PPSSIGNAL", kStaPpssignal},
      {"PPSJITTER", kStaPpsjitter},
      {"PPSWANDER", kStaPpswander},
      {"PPSERROR", kStaPpserror},
      {"CLOCKERR", kStaClockerr},
      {"NANO", kStaNano},
      {"MODE", kStaMode},
      {"CLK", kStaClk},
  };
  return *names;
}

std::optional<uint32_t> FlagsFromNames(
    const std::vector<std::pair<std::string, uint32_t>>& table,
    const std::vector<std::string>& names, std::string* unknown) {
  uint32_t flags = 0;
  for (const std::string& name : names) {
    bool found = false;
    for (const auto& [n, bits] : table) {
      if (n == name) {
        flags |= bits;
        found = true;
        break;
      }
    }
    if (!found) {
      *unknown = name;
      return std::nullopt;
    }
  }
  return flags;
}

std::optional<std::vector<std::string>> NamesOfFlags(
    const std::vector<std::pair<std::string, uint32_t>>& table,
    uint32_t flags) {
  std::vector<std::string> names;
  uint32_t left = flags;
  for (const auto& [n, bits] : table) {
    if ((left & bits) == bits && bits != 0) {
      names.push_back(n);
      left &= ~bits;
    }
  }
  if (left != 0) return std::nullopt;
  return names;
}

const std::vector<std::string>& TimexFieldNames() {
  static const auto* names = new std::vector<std::string>{
      "offset",    "freq",      "maxerror", "esterror",  "status", "constant",
      "precision", "tolerance", "time_sec", "time_usec", "tick",   "tai"};
  return *names;
}

std::optional<int64_t> TimexField(const Timex& txc, std::string_view name) {
  if (name == "offset") return txc.offset;
  if (name == "freq") return txc.freq;
  if (name == "maxerror") return txc.maxerror;
  if (name == "esterror") return txc.esterror;
  if (name == "status") return txc.status;
  if (name == "constant") return txc.constant;
  if (name == "precision") return txc.precision;
  if (name == "tolerance") return txc.tolerance;
  if (name == "time_sec") return txc.time.tv_sec;
  if (name == "time_usec") return txc.time.tv_usec;
  if (name == "tick") return txc.tick;
  if (name == "tai") return txc.tai;
  return std::nullopt;
}

}  // namespace vdsolab::timekeeper
