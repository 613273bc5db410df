// File: timekeeper/timex_names.h
//
// Names for adjtimex()'s mode and status bits and for struct timex's
// fields, as scenario files and reports spell them ("FREQUENCY" for
// ADJ_FREQUENCY, "INS" for STA_INS, "freq" for timex.freq).

#ifndef VDSOLAB_TIMEKEEPER_TIMEX_NAMES_H_
#define VDSOLAB_TIMEKEEPER_TIMEX_NAMES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "timekeeper/timex.h"

namespace vdsolab::timekeeper {

// Mode names and their bits, the adjtime() combinations ("SINGLESHOT"
// 0x8001, "SS_READ" 0xa001) first so that decomposing prefers them.
const std::vector<std::pair<std::string, uint32_t>>& AdjModeNames();
// STA_* names without the prefix ("PLL", "INS", "UNSYNC", ...).
const std::vector<std::pair<std::string, uint32_t>>& StaNames();

// The bits a list of names stands for; nullopt names the unknown one
// through *unknown.
std::optional<uint32_t> FlagsFromNames(
    const std::vector<std::pair<std::string, uint32_t>>& table,
    const std::vector<std::string>& names, std::string* unknown);
// The names whose bits make up `flags` exactly, or nullopt if some bits
// have no name.
std::optional<std::vector<std::string>> NamesOfFlags(
    const std::vector<std::pair<std::string, uint32_t>>& table, uint32_t flags);

// A struct timex field by name ("offset", "freq", "maxerror", "esterror",
// "status", "constant", "precision", "tolerance", "time_sec",
// "time_usec", "tick", "tai"); nullopt for another name.
std::optional<int64_t> TimexField(const Timex& txc, std::string_view name);
const std::vector<std::string>& TimexFieldNames();

}  // namespace vdsolab::timekeeper

#endif  // VDSOLAB_TIMEKEEPER_TIMEX_NAMES_H_
