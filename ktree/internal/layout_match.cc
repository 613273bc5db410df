#include "ktree/internal/layout_match.h"

#include <algorithm>
#include <optional>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "common/clockid.h"
#include "ktree/internal/text.h"
#include "variants/layout.h"
#include "variants/plugin/vdsolab_plugin.h"
#include "variants/registry.h"
#include "vdso/datapage.h"

namespace vdsolab::ktree::internal {
namespace {

struct Era {
  const char* name;
  int major;
  int minor;
};
// The built-in variants a tree can match, oldest first, with the first
// kernel release of each.
constexpr Era kEras[] = {{"5.3", 5, 3},   {"6.1", 6, 1},   {"6.5", 6, 5},
                         {"6.10", 6, 10}, {"6.15", 6, 15}, {"upstream", 6, 17}};

using Values = std::map<std::string, uint64_t>;

struct ProbeField {
  uint64_t offset = 0;  // From the data pointer, or the page for pvti.
  uint64_t size = 0;
};
using Fields = std::map<std::string, ProbeField>;

std::optional<uint64_t> Get(const Values& v, const std::string& k) {
  auto it = v.find(k);
  if (it == v.end()) return std::nullopt;
  return it->second;
}

// The members of one record (struct vdso_data or struct vdso_clock) at
// `base`, named as variants/eras/era_layouts.cc names them.
void AddRecord(const Values& v, const std::string& st,
               const std::string& prefix, uint64_t base, bool tail,
               Fields& out) {
  for (const char* m : {"seq", "clock_mode", "cycle_last", "max_cycles", "mask",
                        "mult", "shift"}) {
    const std::optional<uint64_t> off = Get(v, st + "." + m);
    if (!off) continue;
    out[prefix + "." + m] = {base + *off,
                             Get(v, st + "." + m + ".size").value_or(0)};
  }
  const uint64_t bt = Get(v, st + ".basetime").value_or(0);
  const uint64_t ts = Get(v, "vdso_timestamp.size").value_or(16);
  const uint64_t bases = Get(v, "VDSO_BASES").value_or(0);
  for (uint64_t i = 0; i < bases; ++i) {
    const std::string b = absl::StrFormat("%s.basetime[%s]", prefix,
                                          ClockName(static_cast<int>(i)));
    out[b + ".sec"] = {
        base + bt + i * ts + Get(v, "vdso_timestamp.sec").value_or(0),
        Get(v, "vdso_timestamp.sec.size").value_or(0)};
    out[b + ".nsec"] = {
        base + bt + i * ts + Get(v, "vdso_timestamp.nsec").value_or(8),
        Get(v, "vdso_timestamp.nsec.size").value_or(0)};
  }
  if (tail) {
    for (const char* m : {"tz_minuteswest", "tz_dsttime", "hrtimer_res"}) {
      const std::optional<uint64_t> off = Get(v, st + "." + m);
      if (!off) continue;
      out[prefix + "." + m] = {base + *off,
                               Get(v, st + "." + m + ".size").value_or(0)};
    }
  }
}

// The tree's fields, offsets from the data pointer.
Fields TreeFields(const Values& v, const ProbeAttempt& a) {
  Fields out;
  const uint64_t cs_bases = Get(v, "CS_BASES").value_or(2);
  if (!a.time_data) {
    const uint64_t size = Get(v, "vdso_data.size").value_or(0);
    for (uint64_t cs = 0; cs < cs_bases; ++cs) {
      AddRecord(v, "vdso_data", absl::StrFormat("vdso_data[%d]", cs), cs * size,
                true, out);
    }
    return out;
  }
  const uint64_t size = Get(v, "vdso_clock.size").value_or(0);
  const uint64_t cd = Get(v, "vdso_time_data.clock_data").value_or(0);
  for (uint64_t cs = 0; cs < cs_bases; ++cs) {
    AddRecord(v, "vdso_clock", absl::StrFormat("clock_data[%d]", cs),
              cd + cs * size, false, out);
  }
  if (a.aux) {
    const uint64_t aux = Get(v, "vdso_time_data.aux_clock_data").value_or(0);
    const uint64_t n = Get(v, "aux_clock_count").value_or(0);
    for (uint64_t i = 0; i < n; ++i) {
      AddRecord(v, "vdso_clock", absl::StrFormat("aux_clock_data[%d]", i),
                aux + i * size, false, out);
    }
  }
  for (const char* m : {"tz_minuteswest", "tz_dsttime", "hrtimer_res"}) {
    const std::optional<uint64_t> off =
        Get(v, std::string("vdso_time_data.") + m);
    if (!off) continue;
    out[m] = {*off,
              Get(v, std::string("vdso_time_data.") + m + ".size").value_or(0)};
  }
  return out;
}

// struct pvclock_vcpu_time_info against vdsolab's pvclock page.
std::optional<std::string> PvtiDifference(const Values& v) {
  const struct {
    const char* m;
    uint32_t off;
  } kPvti[] = {{"version", vdso::kPvtiVersion},
               {"tsc_timestamp", vdso::kPvtiTscTimestamp},
               {"system_time", vdso::kPvtiSystemTime},
               {"tsc_to_system_mul", vdso::kPvtiMul},
               {"tsc_shift", vdso::kPvtiShift},
               {"flags", vdso::kPvtiFlags}};
  for (const auto& f : kPvti) {
    const std::optional<uint64_t> off =
        Get(v, std::string("pvclock_vcpu_time_info.") + f.m);
    if (off && *off != f.off) {
      return absl::StrFormat(
          "struct pvclock_vcpu_time_info.%s is at +%d in the tree, +%d in "
          "vdsolab's pvclock page",
          f.m, *off, f.off);
    }
  }
  return std::nullopt;
}

// The first difference between the tree's fields (shifted by the data
// offset) and a layout's, in the layout's offset order; nullopt if they
// agree. `data_offset` is set from the first record's seq.
std::optional<std::string> Difference(const Fields& tree,
                                      const variants::Layout& layout,
                                      bool time_data, uint32_t* data_offset) {
  const std::string first =
      time_data ? "clock_data[0].seq" : "vdso_data[0].seq";
  const variants::Field* anchor = nullptr;
  for (const variants::Field& f : layout.fields()) {
    if (f.name == first) anchor = &f;
  }
  auto tree_first = tree.find(first);
  if (anchor == nullptr || tree_first == tree.end()) {
    return absl::StrFormat("the tree's page is struct %s, the layout's is not",
                           time_data ? "vdso_time_data" : "vdso_data");
  }
  if (tree_first->second.offset > anchor->offset) {
    return absl::StrFormat("%s is at +%d in the tree", first,
                           tree_first->second.offset);
  }
  const uint64_t d = anchor->offset - tree_first->second.offset;
  *data_offset = static_cast<uint32_t>(d);
  for (const variants::Field& f : layout.fields()) {
    if (f.name.starts_with("pvti.")) continue;  // Checked on its own.
    auto it = tree.find(f.name);
    if (it == tree.end()) {
      return absl::StrFormat("%s (+%d in %s) is not in the tree's struct",
                             f.name, f.offset, layout.name());
    }
    if (it->second.offset + d != f.offset || it->second.size != f.size) {
      return absl::StrFormat(
          "%s is at +%d (%d bytes) in the tree, +%d (%d bytes) in %s", f.name,
          it->second.offset + d, it->second.size, f.offset, f.size,
          layout.name());
    }
  }
  std::set<std::string> names;
  for (const variants::Field& f : layout.fields()) names.insert(f.name);
  for (const auto& [name, pf] : tree) {
    if (names.count(name) == 0) {
      return absl::StrFormat("the tree has %s (+%d), %s does not", name,
                             pf.offset + d, layout.name());
    }
  }
  return std::nullopt;
}

std::string Members(const char* st, std::vector<const char*> members) {
  std::string s;
  for (const char* m : members) {
    s += absl::StrFormat("  VDSOLAB_MEMBER(%s, %s);\n", st, m);
  }
  return s;
}

}  // namespace

std::string ProbeAttempt::Describe() const {
  if (time_data) {
    return aux ? "struct vdso_time_data with aux_clock_data (6.17+)"
               : "struct vdso_time_data (6.15/6.16)";
  }
  return max_cycles ? "struct vdso_data with max_cycles (6.10-6.14)"
                    : "struct vdso_data (5.3-6.9)";
}

std::vector<ProbeAttempt> ProbeAttempts() {
  ProbeAttempt upstream;
  upstream.time_data = true;
  upstream.max_cycles = true;
  upstream.aux = true;
  ProbeAttempt t615 = upstream;
  t615.aux = false;
  ProbeAttempt d610;
  d610.max_cycles = true;
  ProbeAttempt d53;
  return {upstream, t615, d610, d53};
}

std::string ProbeSource(const ProbeAttempt& a) {
  std::string s =
      "\n/* vdsolab layout probe: offsets as assembler comments. */\n"
      "#define VDSOLAB_PROBE(name, value) \\\n"
      "  __asm__ volatile(\"# vdsolab-probe \" name \" %c0\" \\\n"
      "                   : : \"i\"((unsigned long)(value)))\n"
      "#define VDSOLAB_MEMBER(s, m) \\\n"
      "  VDSOLAB_PROBE(#s \".\" #m, __builtin_offsetof(struct s, m)); \\\n"
      "  VDSOLAB_PROBE(#s \".\" #m \".size\", sizeof(((struct s *)0)->m))\n"
      "__attribute__((used)) static void vdsolab_layout_probe(void) {\n"
      "  VDSOLAB_PROBE(\"VDSO_BASES\", VDSO_BASES);\n"
      "  VDSOLAB_PROBE(\"CS_BASES\", CS_BASES);\n"
      "  VDSOLAB_PROBE(\"VDSO_HRES\", VDSO_HRES);\n"
      "  VDSOLAB_PROBE(\"VDSO_COARSE\", VDSO_COARSE);\n"
      "  VDSOLAB_PROBE(\"VDSO_RAW\", VDSO_RAW);\n"
      "  VDSOLAB_PROBE(\"vdso_timestamp.size\", sizeof(struct "
      "vdso_timestamp));\n";
  s += Members("vdso_timestamp", {"sec", "nsec"});
  s += Members("pvclock_vcpu_time_info",
               {"version", "tsc_timestamp", "system_time", "tsc_to_system_mul",
                "tsc_shift", "flags"});
  const char* rec = a.time_data ? "vdso_clock" : "vdso_data";
  std::vector<const char*> m = {"seq", "clock_mode", "cycle_last"};
  if (a.max_cycles) m.push_back("max_cycles");
  for (const char* x : {"mask", "mult", "shift", "basetime"}) m.push_back(x);
  if (!a.time_data) {
    for (const char* x : {"tz_minuteswest", "tz_dsttime", "hrtimer_res"}) {
      m.push_back(x);
    }
  }
  s += Members(rec, m);
  s += absl::StrFormat("  VDSOLAB_PROBE(\"%s.size\", sizeof(struct %s));\n",
                       rec, rec);
  if (a.time_data) {
    std::vector<const char*> t = {"clock_data", "tz_minuteswest", "tz_dsttime",
                                  "hrtimer_res"};
    if (a.aux) t.push_back("aux_clock_data");
    s += Members("vdso_time_data", t);
    s += "  VDSOLAB_PROBE(\"vdso_time_data.size\", sizeof(struct "
         "vdso_time_data));\n";
    if (a.aux) {
      s += "  VDSOLAB_PROBE(\"aux_clock_count\", sizeof(((struct "
           "vdso_time_data *)0)->aux_clock_data) / sizeof(struct "
           "vdso_clock));\n";
    }
  }
  s += "}\n";
  return s;
}

std::map<std::string, uint64_t> ParseProbe(std::string_view assembly) {
  std::map<std::string, uint64_t> out;
  constexpr std::string_view kTag = "vdsolab-probe ";
  for (std::string_view line : Split(assembly, '\n')) {
    const size_t at = line.find(kTag);
    if (at == std::string_view::npos) continue;
    std::string_view rest = Trim(line.substr(at + kTag.size()));
    const size_t sp = rest.find(' ');
    if (sp == std::string_view::npos) continue;
    const std::string value(Trim(rest.substr(sp + 1)));
    if (value.empty() ||
        value.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    out[std::string(rest.substr(0, sp))] = std::stoull(value);
  }
  return out;
}

absl::StatusOr<LayoutMatch> MatchLayout(
    const std::map<std::string, uint64_t>& probe, const ProbeAttempt& attempt,
    const KernelVersion& version) {
  // The semantics by version, as the built-in eras have them.
  const bool masked63 = version.AtLeast(6, 5);
  const bool overflow = version.AtLeast(6, 10);
  const bool coarse_nsec = version.AtLeast(6, 15);
  // 5.6+: do_hres_timens() and do_coarse_timens() (the build sets
  // CONFIG_TIME_NS), which the simulation runs on the layout's namespace
  // page.
  const bool time_namespace = version.AtLeast(5, 6);
  // Cross-check with the structure: the era's struct must be the tree's.
  const bool want_time_data = version.AtLeast(6, 15);
  if (attempt.time_data != want_time_data ||
      (!attempt.time_data && attempt.max_cycles != overflow)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "Linux %s's vDSO would read %s, but the tree's headers have %s: "
        "vdsolab cannot tell which era's semantics the code has",
        version.String(),
        want_time_data ? "struct vdso_time_data"
                       : (overflow ? "struct vdso_data with max_cycles"
                                   : "struct vdso_data without max_cycles"),
        attempt.Describe()));
  }
  if (std::optional<std::string> d = PvtiDifference(probe)) {
    return absl::InvalidArgumentError(*d);
  }
  const Fields tree = TreeFields(probe, attempt);
  std::optional<std::string> first_difference;
  const Era* chosen = nullptr;
  uint32_t data_offset = 0;
  for (const Era& era : kEras) {
    if (!version.AtLeast(era.major, era.minor)) continue;
    absl::StatusOr<const variants::Variant*> v =
        variants::FindVariant(era.name);
    if (!v.ok()) return v.status();
    uint32_t d = 0;
    std::optional<std::string> diff =
        Difference(tree, *(*v)->layout, attempt.time_data, &d);
    if (!diff) {
      chosen = &era;  // The latest era at or before the tree's version wins.
      data_offset = d;
    } else {
      first_difference = diff;  // The latest candidate's difference.
    }
  }
  if (chosen == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the tree's %s matches none of vdsolab's page layouts for Linux %s: "
        "%s",
        attempt.Describe(), version.String(),
        first_difference.value_or("no built-in era is that old")));
  }
  LayoutMatch m;
  m.base = chosen->name;
  m.data_offset = data_offset;
  const variants::Variant* base = *variants::FindVariant(chosen->name);
  for (const variants::Field& f : base->layout->fields()) {
    if (f.kind == variants::FieldKind::kSeq) m.seq_offsets.push_back(f.offset);
  }
  const uint64_t served = Get(probe, "VDSO_HRES").value_or(0) |
                          Get(probe, "VDSO_COARSE").value_or(0) |
                          Get(probe, "VDSO_RAW").value_or(0);
  for (int32_t c = 0; c < kMaxClocks; ++c) {
    if ((served >> c) & 1) m.clocks.push_back(c);
  }
  m.counter_semantics =
      masked63 ? VDSOLAB_COUNTER_MASKED63 : VDSOLAB_COUNTER_CLAMP_TO_LAST;
  m.semantics_flags = (overflow ? VDSOLAB_SEM_OVERFLOW_PROTECTED : 0u) |
                      (coarse_nsec ? VDSOLAB_SEM_COARSE_FROM_COARSE_NSEC : 0u) |
                      (time_namespace ? VDSOLAB_SEM_TIME_NAMESPACE : 0u) |
                      // The glue's config has CONFIG_PARAVIRT_CLOCK, as
                      // Debian's x86-64 kernels do: vread_pvclock() is in.
                      VDSOLAB_SEM_PVCLOCK;
  const uint64_t size =
      Get(probe, attempt.time_data ? "vdso_time_data.size" : "vdso_data.size")
          .value_or(0);
  m.description = absl::StrFormat("%s (%d bytes) at vvar+%d",
                                  attempt.Describe(), size, data_offset);
  return m;
}

}  // namespace vdsolab::ktree::internal
