#include "sim/scenario_toml.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "common/escape.h"
#include "common/math64.h"
#include "third_party/tomlplusplus/hardened.h"

namespace vdsolab::sim {
namespace {

absl::Status Bad(const std::string& where, const std::string& what) {
  return absl::InvalidArgumentError(absl::StrFormat("%s: %s", where, what));
}

// Reads one table, remembering which keys were used so that leftovers (typos)
// can be reported.
class TableReader {
 public:
  TableReader(const toml::table* table, std::string where)
      : table_(table), where_(std::move(where)) {}

  absl::Status Int(const char* key, int64_t* out, int64_t lo, int64_t hi) {
    used_.insert(key);
    const toml::node* node = Get(key);
    if (node == nullptr) return absl::OkStatus();
    const std::optional<int64_t> v = toml_hardened::IntegerValue(*node);
    if (!v) return Bad(Where(key), "want an integer");
    if (*v < lo || *v > hi) {
      return Bad(Where(key),
                 absl::StrFormat("%d is outside %d .. %d", *v, lo, hi));
    }
    *out = *v;
    return absl::OkStatus();
  }
  template <class T>
  absl::Status Integer(const char* key, T* out, int64_t lo, int64_t hi) {
    int64_t v = static_cast<int64_t>(*out);
    absl::Status s = Int(key, &v, lo, hi);
    if (s.ok()) *out = static_cast<T>(v);
    return s;
  }
  absl::Status Bool(const char* key, bool* out) {
    used_.insert(key);
    const toml::node* node = Get(key);
    if (node == nullptr) return absl::OkStatus();
    if (!node->is_boolean()) return Bad(Where(key), "want true or false");
    *out = *node->value<bool>();
    return absl::OkStatus();
  }
  absl::Status String(const char* key, std::string* out) {
    used_.insert(key);
    const toml::node* node = Get(key);
    if (node == nullptr) return absl::OkStatus();
    if (!node->is_string()) return Bad(Where(key), "want a string");
    *out = *node->value<std::string>();
    return absl::OkStatus();
  }
  // A duration string ("250us") or an integer number of nanoseconds.
  absl::Status Duration(const char* key, uint64_t* out) {
    used_.insert(key);
    const toml::node* node = Get(key);
    if (node == nullptr) return absl::OkStatus();
    if (node->is_integer()) {
      const int64_t v = *node->value<int64_t>();
      if (v < 0) return Bad(Where(key), "must not be negative");
      *out = static_cast<uint64_t>(v);
      return absl::OkStatus();
    }
    if (!node->is_string()) {
      return Bad(Where(key), "want a duration such as \"250us\" or \"1.5s\"");
    }
    absl::StatusOr<uint64_t> ns = ParseDurationNs(*node->value<std::string>());
    if (!ns.ok()) return Bad(Where(key), std::string(ns.status().message()));
    *out = *ns;
    return absl::OkStatus();
  }
  // "SECONDS[.FRACTION]" as a string, or an integer number of seconds.
  absl::Status Time(const char* key, Timespec64* out) {
    used_.insert(key);
    const toml::node* node = Get(key);
    if (node == nullptr) return absl::OkStatus();
    if (node->is_integer()) {
      const int64_t v = *node->value<int64_t>();
      if (v < 0) return Bad(Where(key), "must not be negative");
      *out = Timespec64{v, 0};
      return absl::OkStatus();
    }
    if (!node->is_string()) {
      return Bad(Where(key), "want \"SECONDS[.FRACTION]\"");
    }
    const std::string text = *node->value<std::string>();
    absl::StatusOr<Timespec64> ts = ParseSecondsFraction(text);
    if (!ts.ok()) return Bad(Where(key), std::string(ts.status().message()));
    *out = *ts;
    return absl::OkStatus();
  }
  // ppm as a number; stored as scaled ppm (ppm << 16), as adjtimex() takes.
  absl::Status Ppm(const char* key, int64_t* scaled) {
    used_.insert(key);
    const toml::node* node = Get(key);
    if (node == nullptr) return absl::OkStatus();
    double ppm;
    if (node->is_integer()) {
      ppm = static_cast<double>(*node->value<int64_t>());
    } else if (node->is_floating_point()) {
      ppm = *node->value<double>();
    } else {
      return Bad(Where(key), "want a number of ppm");
    }
    if (!std::isfinite(ppm) || std::fabs(ppm) > 500.0) {
      return Bad(Where(key),
                 absl::StrFormat("%g ppm is outside -500 .. 500", ppm));
    }
    *scaled = std::llround(ppm * 65536.0);
    return absl::OkStatus();
  }
  absl::Status Clocks(const char* key, std::vector<ClockId>* out);

  // Every key of the table must have been asked for.
  absl::Status Leftovers() const {
    if (table_ == nullptr) return absl::OkStatus();
    for (const auto& [k, v] : *table_) {
      if (used_.count(std::string(k.str())) == 0) {
        return Bad(where_, absl::StrFormat("unknown key \"%s\"", k.str()));
      }
    }
    return absl::OkStatus();
  }
  void Use(const char* key) { used_.insert(key); }

 private:
  const toml::node* Get(const char* key) const {
    return table_ == nullptr ? nullptr : table_->get(key);
  }
  std::string Where(const char* key) const {
    return where_.empty() ? key : where_ + "." + key;
  }
  const toml::table* table_;
  std::string where_;
  std::set<std::string> used_;
};

absl::StatusOr<ClockId> ParseClockName(const std::string& name) {
  for (ClockId id = 0; id < kVdsoBases; ++id) {
    if (ClockShortName(id) == name || ClockName(id) == name) return id;
  }
  int64_t v;
  if (absl::SimpleAtoi(name, &v) && v >= INT32_MIN && v <= INT32_MAX) {
    return static_cast<ClockId>(v);
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "unknown clock \"%s\" (want e.g. \"MONOTONIC\", \"REALTIME_COARSE\", "
      "or a number)",
      name));
}

absl::Status TableReader::Clocks(const char* key, std::vector<ClockId>* out) {
  used_.insert(key);
  const toml::node* node = Get(key);
  if (node == nullptr) return absl::OkStatus();
  if (node->is_string() && *node->value<std::string>() == "all") {
    out->assign(std::begin(kVdsoServedClocks), std::end(kVdsoServedClocks));
    return absl::OkStatus();
  }
  const toml::array* array = node->as_array();
  if (array == nullptr || array->empty()) {
    return Bad(Where(key), "want \"all\" or a non-empty list of clock names");
  }
  out->clear();
  for (const toml::node& item : *array) {
    if (!item.is_string()) return Bad(Where(key), "want clock names");
    absl::StatusOr<ClockId> id = ParseClockName(*item.value<std::string>());
    if (!id.ok()) return Bad(Where(key), std::string(id.status().message()));
    out->push_back(*id);
  }
  return absl::OkStatus();
}

const toml::table* SubTable(const toml::table& root, const char* key) {
  const toml::node* node = root.get(key);
  return node == nullptr ? nullptr : node->as_table();
}

#define RETURN_IF_ERROR(expr)          \
  do {                                 \
    absl::Status _status = (expr);     \
    if (!_status.ok()) return _status; \
  } while (0)

absl::Status ReadCpu(const toml::table* t, const std::string& where,
                     CpuCounterSpec* c) {
  TableReader r(t, where);
  RETURN_IF_ERROR(r.Integer("offset_cycles", &c->offset_cycles, INT64_MIN / 2,
                            INT64_MAX / 2));
  RETURN_IF_ERROR(r.Integer("drift_ppb", &c->drift_ppb, -100000000, 100000000));
  RETURN_IF_ERROR(r.Integer("wobble_cycles", &c->wobble_cycles, 0, 1ll << 40));
  RETURN_IF_ERROR(r.Duration("wobble_period", &c->wobble_period_ns));
  RETURN_IF_ERROR(r.Integer("jitter_cycles", &c->jitter_cycles, 0, 1ll << 40));
  r.Use("steps");
  if (const toml::node* steps = t->get("steps")) {
    const toml::array* array = steps->as_array();
    if (array == nullptr) return Bad(where + ".steps", "want a list of tables");
    for (size_t i = 0; i < array->size(); ++i) {
      const toml::table* st = (*array)[i].as_table();
      const std::string w = absl::StrFormat("%s.steps[%d]", where, i);
      if (st == nullptr) return Bad(w, "want { at = \"1s\", cycles = -1000 }");
      TableReader sr(st, w);
      CounterStep step;
      RETURN_IF_ERROR(sr.Duration("at", &step.at_ns));
      RETURN_IF_ERROR(
          sr.Integer("cycles", &step.cycles, -(1ll << 62), 1ll << 62));
      RETURN_IF_ERROR(sr.Leftovers());
      c->steps.push_back(step);
    }
  }
  return r.Leftovers();
}

absl::Status ReadEvent(const toml::table* t, const std::string& where,
                       EventSpec* e) {
  TableReader r(t, where);
  std::string kind;
  RETURN_IF_ERROR(r.String("kind", &kind));
  if (kind == "adjtimex_frequency") {
    e->kind = EventKind::kAdjtimexFrequency;
  } else if (kind == "adjtimex_tick") {
    e->kind = EventKind::kAdjtimexTick;
  } else if (kind == "settime") {
    e->kind = EventKind::kSetTime;
  } else if (kind == "idle") {
    e->kind = EventKind::kIdle;
  } else if (kind == "pause") {
    e->kind = EventKind::kPause;
  } else {
    return Bad(where + ".kind",
               absl::StrFormat("\"%s\": want adjtimex_frequency, "
                               "adjtimex_tick, settime, idle or pause",
                               kind));
  }
  RETURN_IF_ERROR(r.Duration("at", &e->at_ns));
  // Only the kind's own parameter: another kind's (freq_ppm on a tick
  // change) is a mistake, reported rather than silently ignored.
  const char* param = "";
  switch (e->kind) {
    case EventKind::kAdjtimexFrequency:
      param = "freq_ppm";
      RETURN_IF_ERROR(r.Ppm(param, &e->freq_scaled_ppm));
      break;
    case EventKind::kAdjtimexTick:
      param = "tick";
      RETURN_IF_ERROR(r.Integer(param, &e->tick_usec, 0, 1000000));
      break;
    case EventKind::kSetTime:
      param = "realtime";
      RETURN_IF_ERROR(r.Time(param, &e->realtime));
      break;
    case EventKind::kIdle:
    case EventKind::kPause:
      param = "duration";
      RETURN_IF_ERROR(r.Duration(param, &e->duration_ns));
      break;
  }
  for (const char* other : {"freq_ppm", "tick", "realtime", "duration"}) {
    if (std::string_view(other) != param && t != nullptr &&
        t->contains(other)) {
      return Bad(where, absl::StrFormat("\"%s\" does not apply to kind "
                                        "\"%s\" (it takes \"%s\")",
                                        other, kind, param));
    }
  }
  return r.Leftovers();
}

}  // namespace

absl::StatusOr<Timespec64> ParseSecondsFraction(const std::string& text) {
  const size_t dot = text.find('.');
  const std::string whole = text.substr(0, dot);
  const std::string frac = dot == std::string::npos ? "" : text.substr(dot + 1);
  int64_t sec = 0;
  if (whole.empty() || whole.size() > 12 ||
      whole.find_first_not_of("0123456789") != std::string::npos ||
      !absl::SimpleAtoi(whole, &sec) || frac.size() > 9 ||
      frac.find_first_not_of("0123456789") != std::string::npos ||
      (dot != std::string::npos && frac.empty())) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "\"%s\" is not SECONDS[.FRACTION] (up to 9 fraction digits)", text));
  }
  int64_t nsec = 0;
  for (size_t i = 0; i < 9; ++i) {
    nsec = nsec * 10 + (i < frac.size() ? frac[i] - '0' : 0);
  }
  return Timespec64{sec, nsec};
}

absl::StatusOr<uint64_t> ParseDurationNs(const std::string& text) {
  // Longest unit names first, so that "ms" is not read as "m" + "s".
  static const std::pair<const char*, uint64_t> kUnits[] = {
      {"ns", 1},         {"us", 1000},          {"ms", 1000000},
      {"s", 1000000000}, {"m", 60000000000ull}, {"h", 3600000000000ull}};
  const auto bad = [&] {
    return absl::InvalidArgumentError(absl::StrFormat(
        "\"%s\" is not a duration (want e.g. \"250us\", \"1.5s\", \"2m\")",
        text));
  };
  const size_t digits_end = text.find_first_not_of("0123456789.");
  const std::string number = text.substr(0, digits_end);
  const std::string unit =
      digits_end == std::string::npos ? "" : text.substr(digits_end);
  uint64_t scale = 0;
  if (unit.empty()) {
    scale = 1;  // Plain nanoseconds.
  } else {
    for (const auto& [name, value] : kUnits) {
      if (unit == name) scale = value;
    }
  }
  if (scale == 0 || number.empty() || number.front() == '.' ||
      number.back() == '.' ||
      std::count(number.begin(), number.end(), '.') > 1) {
    return bad();
  }
  const size_t dot = number.find('.');
  const std::string whole = number.substr(0, dot);
  const std::string frac =
      dot == std::string::npos ? "" : number.substr(dot + 1);
  if (unit.empty() && !frac.empty()) return bad();
  uint64_t w = 0, f = 0, denom = 1;
  // Up to 19 digits: any u64 (the 30-day limit below is what bounds it);
  // FormatDurationNs() writes up to 16 ("2592000000000000ns").
  if (whole.size() > 19 || !absl::SimpleAtoi(whole, &w) || frac.size() > 12 ||
      (!frac.empty() && !absl::SimpleAtoi(frac, &f))) {
    return bad();
  }
  for (size_t i = 0; i < frac.size(); ++i) denom *= 10;
  const unsigned __int128 frac_ns = static_cast<unsigned __int128>(f) * scale;
  if (frac_ns % denom != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("\"%s\" is not a whole number of nanoseconds", text));
  }
  const unsigned __int128 ns =
      static_cast<unsigned __int128>(w) * scale + frac_ns / denom;
  if (ns > static_cast<unsigned __int128>(30) * 86400 * 1000000000ull) {
    return absl::InvalidArgumentError(
        absl::StrFormat("\"%s\" is longer than 30 days", text));
  }
  return static_cast<uint64_t>(ns);
}

std::string FormatDurationNs(uint64_t ns) {
  static const std::pair<const char*, uint64_t> kUnits[] = {
      {"h", 3600000000000ull}, {"m", 60000000000ull}, {"s", 1000000000},
      {"ms", 1000000},         {"us", 1000},          {"ns", 1}};
  if (ns == 0) return "0ns";
  for (const auto& [unit, scale] : kUnits) {
    if (ns % scale == 0) return absl::StrFormat("%d%s", ns / scale, unit);
  }
  return absl::StrFormat("%dns", ns);
}

absl::StatusOr<Scenario> ParseScenario(const std::string& text,
                                       const std::string& source) {
  absl::StatusOr<toml::table> parsed = toml_hardened::ParseToml(text, source);
  if (!parsed.ok()) return parsed.status();
  const toml::table& root = *parsed;
  Scenario s;
  TableReader top(&root, "");
  RETURN_IF_ERROR(top.String("name", &s.name));
  RETURN_IF_ERROR(top.String("description", &s.description));
  for (const char* k : {"machine", "kernel", "timing", "event", "reader",
                        "faults", "checks", "run", "replay"}) {
    top.Use(k);
  }
  RETURN_IF_ERROR(top.Leftovers());

  {
    const toml::table* t = SubTable(root, "machine");
    TableReader r(t, "machine");
    RETURN_IF_ERROR(r.String("clocksource", &s.machine.clocksource));
    RETURN_IF_ERROR(
        r.Integer("counter_hz", &s.machine.counter_hz, 0, INT64_MAX));
    RETURN_IF_ERROR(
        r.Integer("calibrated_hz", &s.machine.calibrated_hz, 0, INT64_MAX));
    RETURN_IF_ERROR(r.Integer("width_bits", &s.machine.width_bits, 0, 64));
    RETURN_IF_ERROR(r.Bool("rdtscp", &s.machine.rdtscp));
    r.Use("counter_start");
    if (t != nullptr) {
      if (const toml::node* n = t->get("counter_start")) {
        // TOML integers are signed: accept a string for values >= 2^63.
        uint64_t v = 0;
        if (n->is_integer() && *n->value<int64_t>() >= 0) {
          v = static_cast<uint64_t>(*n->value<int64_t>());
        } else if (!n->is_string() ||
                   !absl::SimpleAtoi(*n->value<std::string>(), &v)) {
          return Bad("machine.counter_start",
                     "want a non-negative integer, or a string for values "
                     ">= 2^63 (\"18446744073709551000\", \"0x...\" is not "
                     "accepted)");
        }
        s.machine.counter_start = v;
      }
    }
    r.Use("cpu");
    RETURN_IF_ERROR(r.Leftovers());
    if (t != nullptr) {
      if (const toml::node* cpus = t->get("cpu")) {
        const toml::array* array = cpus->as_array();
        if (array == nullptr)
          return Bad("machine.cpu", "want [[machine.cpu]] tables");
        s.machine.cpus.clear();
        for (size_t i = 0; i < array->size(); ++i) {
          CpuCounterSpec c;
          const toml::table* ct = (*array)[i].as_table();
          const std::string w = absl::StrFormat("machine.cpu[%d]", i);
          if (ct == nullptr) return Bad(w, "want a table");
          RETURN_IF_ERROR(ReadCpu(ct, w, &c));
          s.machine.cpus.push_back(c);
        }
      }
    }
  }
  {
    TableReader r(SubTable(root, "kernel"), "kernel");
    RETURN_IF_ERROR(r.Integer("hz", &s.kernel.hz, 0, 100000));
    RETURN_IF_ERROR(r.Time("boot_realtime", &s.kernel.boot_realtime));
    RETURN_IF_ERROR(r.Time("boot_offset", &s.kernel.boot_offset));
    RETURN_IF_ERROR(
        r.Integer("hrtimer_res_ns", &s.kernel.hrtimer_res_ns, 0, 1000000000));
    RETURN_IF_ERROR(
        r.Integer("timekeeping_cpu", &s.kernel.timekeeping_cpu, 0, 1000));
    RETURN_IF_ERROR(r.Bool("has_rtc", &s.kernel.has_rtc));
    RETURN_IF_ERROR(r.Leftovers());
  }
  {
    TableReader r(SubTable(root, "timing"), "timing");
    TimingSpec& t = s.timing;
    RETURN_IF_ERROR(r.Duration("tick_jitter", &t.tick_jitter_ns));
    RETURN_IF_ERROR(r.Duration("load", &t.load_ns));
    RETURN_IF_ERROR(r.Duration("counter_read", &t.counter_read_ns));
    RETURN_IF_ERROR(r.Duration("syscall", &t.syscall_ns));
    RETURN_IF_ERROR(r.Duration("writer_start", &t.writer_start_ns));
    RETURN_IF_ERROR(r.Duration("store", &t.store_ns));
    RETURN_IF_ERROR(
        r.Integer("writer_stall_ppm", &t.writer_stall_ppm, 0, 1000000));
    RETURN_IF_ERROR(r.Duration("writer_stall_max", &t.writer_stall_max_ns));
    RETURN_IF_ERROR(r.Integer("preempt_ppm", &t.preempt_ppm, 0, 1000000));
    RETURN_IF_ERROR(r.Duration("preempt_max", &t.preempt_max_ns));
    RETURN_IF_ERROR(r.Leftovers());
  }
  if (const toml::node* events = root.get("event")) {
    const toml::array* array = events->as_array();
    if (array == nullptr) return Bad("event", "want [[event]] tables");
    for (size_t i = 0; i < array->size(); ++i) {
      const toml::table* et = (*array)[i].as_table();
      const std::string w = absl::StrFormat("event[%d]", i);
      if (et == nullptr) return Bad(w, "want a table");
      EventSpec e;
      RETURN_IF_ERROR(ReadEvent(et, w, &e));
      s.events.push_back(e);
    }
  }
  if (const toml::node* readers = root.get("reader")) {
    const toml::array* array = readers->as_array();
    if (array == nullptr) return Bad("reader", "want [[reader]] tables");
    s.readers.clear();
    for (size_t i = 0; i < array->size(); ++i) {
      const toml::table* rt = (*array)[i].as_table();
      const std::string w = absl::StrFormat("reader[%d]", i);
      if (rt == nullptr) return Bad(w, "want a table");
      TableReader r(rt, w);
      ReaderSpec rd;
      RETURN_IF_ERROR(r.Integer("id", &rd.id, -1, 1000000));
      RETURN_IF_ERROR(r.Integer("cpu", &rd.cpu, 0, 1000));
      RETURN_IF_ERROR(r.Clocks("clocks", &rd.clocks));
      RETURN_IF_ERROR(r.Duration("period", &rd.period_ns));
      RETURN_IF_ERROR(r.Duration("period_jitter", &rd.period_jitter_ns));
      RETURN_IF_ERROR(r.Integer("migrate_ppm", &rd.migrate_ppm, 0, 1000000));
      RETURN_IF_ERROR(r.Integer("migrate_midcall_ppm", &rd.migrate_midcall_ppm,
                                0, 1000000));
      RETURN_IF_ERROR(r.Leftovers());
      s.readers.push_back(rd);
    }
  }
  {
    TableReader r(SubTable(root, "faults"), "faults");
    RETURN_IF_ERROR(
        r.Bool("unordered_counter_read", &s.faults.unordered_counter_read));
    RETURN_IF_ERROR(r.Duration("speculation", &s.faults.speculation_ns));
    RETURN_IF_ERROR(r.Leftovers());
  }
  {
    TableReader r(SubTable(root, "checks"), "checks");
    CheckSpec& c = s.checks;
    RETURN_IF_ERROR(r.Bool("exact", &c.exact));
    RETURN_IF_ERROR(r.Bool("monotonic", &c.monotonic));
    RETURN_IF_ERROR(r.Bool("causal", &c.causal));
    RETURN_IF_ERROR(r.Bool("sane", &c.sane));
    RETURN_IF_ERROR(r.Bool("raw_rate", &c.raw_rate));
    RETURN_IF_ERROR(r.Bool("cross_clock", &c.cross_clock));
    RETURN_IF_ERROR(r.Bool("torn", &c.torn));
    RETURN_IF_ERROR(
        r.Integer("livelock_budget", &c.livelock_budget, 0, 1000000000));
    RETURN_IF_ERROR(r.Leftovers());
  }
  {
    TableReader r(SubTable(root, "run"), "run");
    RunSpec& run = s.run;
    RETURN_IF_ERROR(r.Duration("duration", &run.duration_ns));
    RETURN_IF_ERROR(r.Integer("seed", &run.seed, 0, INT64_MAX));
    std::string strategy = StrategyName(run.strategy);
    RETURN_IF_ERROR(r.String("strategy", &strategy));
    if (strategy == "random") {
      run.strategy = Strategy::kRandom;
    } else if (strategy == "exhaustive") {
      run.strategy = Strategy::kExhaustive;
    } else {
      return Bad("run.strategy",
                 absl::StrFormat("\"%s\": want \"random\" or \"exhaustive\"",
                                 strategy));
    }
    RETURN_IF_ERROR(r.String("reader", &run.reader));
    RETURN_IF_ERROR(r.Duration("exhaustive_at", &run.exhaustive_at_ns));
    RETURN_IF_ERROR(
        r.Integer("exhaustive_updates", &run.exhaustive_updates, 0, 1000));
    RETURN_IF_ERROR(r.Leftovers());
  }
  if (const toml::table* t = SubTable(root, "replay")) {
    TableReader r(t, "replay");
    s.replay.present = true;
    RETURN_IF_ERROR(r.Integer("reader", &s.replay.reader, 0, 1000000));
    RETURN_IF_ERROR(r.Integer("call", &s.replay.call, 0, INT64_MAX));
    RETURN_IF_ERROR(r.String("property", &s.replay.property));
    r.Use("decisions");
    if (const toml::node* d = t->get("decisions")) {
      const toml::array* array = d->as_array();
      if (array == nullptr)
        return Bad("replay.decisions", "want a list of integers");
      for (const toml::node& item : *array) {
        if (!item.is_integer()) return Bad("replay.decisions", "want integers");
        s.replay.decisions.push_back(static_cast<int>(*item.value<int64_t>()));
      }
    }
    RETURN_IF_ERROR(r.Leftovers());
  }
  if (absl::Status v = ValidateScenario(s); !v.ok()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %s", source, v.message()));
  }
  return s;
}

absl::StatusOr<Scenario> LoadScenarioFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    return absl::NotFoundError(
        absl::StrFormat("cannot open scenario file \"%s\"", path));
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  if (buffer.str().size() > (1u << 20)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: larger than 1 MiB", path));
  }
  return ParseScenario(buffer.str(), path);
}

namespace {

std::string Time(const Timespec64& ts) {
  return absl::StrFormat("\"%d.%09d\"", ts.tv_sec, ts.tv_nsec);
}

std::string Ppm(int64_t scaled) {
  // Scaled ppm is an exact binary fraction: %.17g round-trips it.
  return absl::StrFormat("%.17g", static_cast<double>(scaled) / 65536.0);
}

}  // namespace

std::string ScenarioToToml(const Scenario& s) {
  std::string o;
  absl::StrAppendFormat(&o, "name = %s\n", TomlQuote(s.name));
  if (!s.description.empty()) {
    absl::StrAppendFormat(&o, "description = %s\n", TomlQuote(s.description));
  }
  const MachineSpec& m = s.machine;
  absl::StrAppendFormat(&o,
                        "\n[machine]\nclocksource = %s\ncounter_hz = %d\n"
                        "calibrated_hz = %d\nwidth_bits = %d\n"
                        "rdtscp = %s\n",
                        TomlQuote(m.clocksource), m.counter_hz, m.calibrated_hz,
                        m.width_bits, m.rdtscp ? "true" : "false");
  if (m.counter_start <= static_cast<uint64_t>(INT64_MAX)) {
    absl::StrAppendFormat(&o, "counter_start = %d\n", m.counter_start);
  } else {
    absl::StrAppendFormat(&o, "counter_start = \"%d\"\n", m.counter_start);
  }
  for (const CpuCounterSpec& c : m.cpus) {
    absl::StrAppendFormat(&o,
                          "\n[[machine.cpu]]\noffset_cycles = %d\n"
                          "drift_ppb = %d\nwobble_cycles = %d\n"
                          "wobble_period = \"%s\"\njitter_cycles = %d\n",
                          c.offset_cycles, c.drift_ppb, c.wobble_cycles,
                          FormatDurationNs(c.wobble_period_ns),
                          c.jitter_cycles);
    std::vector<std::string> steps;
    for (const CounterStep& st : c.steps) {
      steps.push_back(absl::StrFormat("{ at = \"%s\", cycles = %d }",
                                      FormatDurationNs(st.at_ns), st.cycles));
    }
    absl::StrAppendFormat(&o, "steps = [%s]\n", absl::StrJoin(steps, ", "));
  }
  const KernelSpec& k = s.kernel;
  absl::StrAppendFormat(
      &o,
      "\n[kernel]\nhz = %d\nboot_realtime = %s\nboot_offset = %s\n"
      "hrtimer_res_ns = %d\ntimekeeping_cpu = %d\nhas_rtc = %s\n",
      k.hz, Time(k.boot_realtime), Time(k.boot_offset), k.hrtimer_res_ns,
      k.timekeeping_cpu, k.has_rtc ? "true" : "false");
  const TimingSpec& t = s.timing;
  absl::StrAppendFormat(
      &o,
      "\n[timing]\ntick_jitter = \"%s\"\nload = \"%s\"\ncounter_read = \"%s\"\n"
      "syscall = \"%s\"\nwriter_start = \"%s\"\nstore = \"%s\"\n"
      "writer_stall_ppm = %d\nwriter_stall_max = \"%s\"\npreempt_ppm = %d\n"
      "preempt_max = \"%s\"\n",
      FormatDurationNs(t.tick_jitter_ns), FormatDurationNs(t.load_ns),
      FormatDurationNs(t.counter_read_ns), FormatDurationNs(t.syscall_ns),
      FormatDurationNs(t.writer_start_ns), FormatDurationNs(t.store_ns),
      t.writer_stall_ppm, FormatDurationNs(t.writer_stall_max_ns),
      t.preempt_ppm, FormatDurationNs(t.preempt_max_ns));
  for (const EventSpec& e : s.events) {
    absl::StrAppendFormat(&o, "\n[[event]]\nkind = \"%s\"\nat = \"%s\"\n",
                          EventKindName(e.kind), FormatDurationNs(e.at_ns));
    switch (e.kind) {
      case EventKind::kAdjtimexFrequency:
        absl::StrAppendFormat(&o, "freq_ppm = %s\n", Ppm(e.freq_scaled_ppm));
        break;
      case EventKind::kAdjtimexTick:
        absl::StrAppendFormat(&o, "tick = %d\n", e.tick_usec);
        break;
      case EventKind::kSetTime:
        absl::StrAppendFormat(&o, "realtime = %s\n", Time(e.realtime));
        break;
      case EventKind::kIdle:
      case EventKind::kPause:
        absl::StrAppendFormat(&o, "duration = \"%s\"\n",
                              FormatDurationNs(e.duration_ns));
        break;
    }
  }
  for (size_t i = 0; i < s.readers.size(); ++i) {
    const ReaderSpec& r = s.readers[i];
    std::vector<std::string> clocks;
    for (ClockId c : r.clocks) clocks.push_back(TomlQuote(ClockShortName(c)));
    absl::StrAppendFormat(
        &o,
        "\n[[reader]]\nid = %d\ncpu = %d\nclocks = [%s]\nperiod = \"%s\"\n"
        "period_jitter = \"%s\"\nmigrate_ppm = %d\nmigrate_midcall_ppm = %d\n",
        ReaderId(s, i), r.cpu, absl::StrJoin(clocks, ", "),
        FormatDurationNs(r.period_ns), FormatDurationNs(r.period_jitter_ns),
        r.migrate_ppm, r.migrate_midcall_ppm);
  }
  absl::StrAppendFormat(&o,
                        "\n[faults]\nunordered_counter_read = %s\n"
                        "speculation = \"%s\"\n",
                        s.faults.unordered_counter_read ? "true" : "false",
                        FormatDurationNs(s.faults.speculation_ns));
  const CheckSpec& c = s.checks;
  auto b = [](bool v) { return v ? "true" : "false"; };
  absl::StrAppendFormat(
      &o,
      "\n[checks]\nexact = %s\nmonotonic = %s\ncausal = %s\nsane = %s\n"
      "raw_rate = %s\ncross_clock = %s\ntorn = %s\nlivelock_budget = %d\n",
      b(c.exact), b(c.monotonic), b(c.causal), b(c.sane), b(c.raw_rate),
      b(c.cross_clock), b(c.torn), c.livelock_budget);
  const RunSpec& r = s.run;
  absl::StrAppendFormat(
      &o,
      "\n[run]\nduration = \"%s\"\nseed = %d\nstrategy = \"%s\"\n"
      "reader = %s\nexhaustive_at = \"%s\"\nexhaustive_updates = %d\n",
      FormatDurationNs(r.duration_ns), r.seed, StrategyName(r.strategy),
      TomlQuote(r.reader), FormatDurationNs(r.exhaustive_at_ns),
      r.exhaustive_updates);
  if (s.replay.present) {
    absl::StrAppendFormat(
        &o, "\n[replay]\nreader = %d\ncall = %d\nproperty = %s\n",
        s.replay.reader, s.replay.call, TomlQuote(s.replay.property));
    if (!s.replay.decisions.empty()) {
      absl::StrAppendFormat(&o, "decisions = [%s]\n",
                            absl::StrJoin(s.replay.decisions, ", "));
    }
  }
  return o;
}

}  // namespace vdsolab::sim
