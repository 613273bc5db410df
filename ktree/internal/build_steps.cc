#include "ktree/internal/build_steps.h"

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "ktree/internal/embedded.h"
#include "ktree/internal/fs.h"
#include "ktree/internal/subprocess.h"
#include "ktree/internal/text.h"

namespace vdsolab::ktree::internal {
namespace {

// Bumped whenever a build step changes what it produces.
// 2: the cache meta holds code_sha256.
// 3: semantics_flags declare time namespaces (5.6+).
// 4: the kernel's no-FP flags; thunks without vector saves.
// 5: the cache meta holds each function's fingerprint and reach.
// 6: and the patched files outside the build.
// 7: gettimeofday(), time() and clock_getres() entry points (plugin ABI v3).
// 8: semantics_flags declare the pvclock path (VDSOLAB_SEM_PVCLOCK).
constexpr char kBuildStepsVersion[] = "ktree build steps 8";

// The translation unit: the tree's vclock_gettime.c, compiled as the
// kernel compiles it (it includes ../../../../lib/vdso/gettimeofday.c
// relative to itself), plus entry points taking vdsolab's data pointer:
// clock_gettime(), gettimeofday(), time() and clock_getres() on it. The
// x86 vDSO has all four (VDSO_HAS_TIME, VDSO_HAS_CLOCK_GETRES).
std::string WrapperSource(const std::string& src_root) {
  return absl::StrFormat(
      "/* vdsolab: the tree's x86-64 vDSO with entry points on a data\n"
      " * pointer of vdsolab's choosing (docs/kernel-trees.md). */\n"
      "#include \"%s/arch/x86/entry/vdso/vclock_gettime.c\"\n"
      "\n"
      "__attribute__((visibility(\"hidden\"))) int\n"
      "%s(const void *vd, clockid_t clock,\n"
      "    struct __kernel_timespec *ts)\n"
      "{\n"
      "\treturn __cvdso_clock_gettime_data(vd, clock, ts);\n"
      "}\n"
      "\n"
      "__attribute__((visibility(\"hidden\"))) int\n"
      "%s(const void *vd, struct __kernel_old_timeval *tv,\n"
      "    struct timezone *tz)\n"
      "{\n"
      "\treturn __cvdso_gettimeofday_data(vd, tv, tz);\n"
      "}\n"
      "\n"
      "__attribute__((visibility(\"hidden\"))) __kernel_old_time_t\n"
      "%s(const void *vd, __kernel_old_time_t *t)\n"
      "{\n"
      "\treturn __cvdso_time_data(vd, t);\n"
      "}\n"
      "\n"
      "__attribute__((visibility(\"hidden\"))) int\n"
      "%s(const void *vd, clockid_t clock,\n"
      "    struct __kernel_timespec *res)\n"
      "{\n"
      "\treturn __cvdso_clock_getres_data(vd, clock, res);\n"
      "}\n",
      src_root, kTreeEntryPoint, kTreeGettimeofday, kTreeTime,
      kTreeClockGetres);
}

struct Attempt {
  bool ok = false;
  std::string output;  // Diagnostics, paths rewritten.
  std::string assembly;
  std::vector<std::string> deps;
};

// One compile of the wrapper (+ probe) to assembly.
absl::StatusOr<Attempt> CompileOnce(const StepContext& ctx,
                                    const std::string& stem,
                                    const std::string& source,
                                    const std::vector<std::string>& extra) {
  const std::string c = JoinPath(ctx.scratch, stem + ".c");
  const std::string s = JoinPath(ctx.scratch, stem + ".s");
  const std::string d = JoinPath(ctx.scratch, stem + ".d");
  if (absl::Status st = WriteFileAtomic(c, source); !st.ok()) return st;
  std::vector<std::string> argv = {ctx.cc.cc};
  argv.insert(argv.end(), ctx.cflags.begin(), ctx.cflags.end());
  argv.insert(argv.end(), extra.begin(), extra.end());
  argv.insert(argv.end(), {"-S", "-o", s, "-MD", "-MF", d, c});
  *ctx.log += ShellQuote(argv) + "\n";
  absl::StatusOr<RunOutput> r = RunProgram(argv);
  if (!r.ok()) return r.status();
  Attempt a;
  a.output = RewritePaths(r->output, ctx.prefixes);
  *ctx.log += a.output;
  a.ok = r->exit_code == 0;
  if (!a.ok) return a;
  absl::StatusOr<std::string> text = ReadFile(s);
  if (!text.ok()) return text.status();
  a.assembly = std::move(*text);
  absl::StatusOr<std::string> dep = ReadFile(d);
  if (!dep.ok()) return dep.status();
  a.deps = ParseDepFile(*dep);
  return a;
}

absl::Status CompileError(const StepContext& ctx, const std::string& output) {
  std::string first = FirstError(output);
  for (const char* fn :
       {"__cvdso_clock_gettime_data", "__cvdso_gettimeofday_data",
        "__cvdso_time_data", "__cvdso_clock_getres_data"}) {
    if (Contains(first, fn)) {
      first += absl::StrFormat(
          " (this tree's lib/vdso/gettimeofday.c has no %s(), which vdsolab "
          "calls with the simulated page: the tree is older than vdsolab "
          "supports)",
          fn);
      break;
    }
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "compile error %s: %s", ctx.what,
      first.empty() ? "the compiler failed without a message" : first));
}

std::string CString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += absl::StrFormat("\\%03o", static_cast<unsigned char>(c));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

absl::Status Run(const StepContext& ctx, const std::vector<std::string>& argv,
                 const std::string& step, std::string* output = nullptr) {
  *ctx.log += ShellQuote(argv) + "\n";
  absl::StatusOr<RunOutput> r = RunProgram(argv);
  if (!r.ok()) return r.status();
  const std::string out = RewritePaths(r->output, ctx.prefixes);
  if (output != nullptr) {
    *output = out;
  } else {
    *ctx.log += out;
  }
  if (r->exit_code == 0) return absl::OkStatus();
  std::string first = FirstError(out);
  if (first.empty()) {
    for (std::string_view l : Split(out, '\n')) {
      if (Contains(l, "undefined reference") || Contains(l, "error")) {
        first = std::string(Trim(l));
        break;
      }
    }
  }
  if (Contains(first, "undefined reference")) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: the tree's vDSO code references a symbol neither the vDSO nor "
        "vdsolab's glue provides: %s",
        ctx.what, first));
  }
  return absl::InternalError(absl::StrFormat(
      "%s failed (exit %d) %s: %s", step, r->exit_code, ctx.what,
      first.empty() ? std::string(Trim(out)).substr(0, 300) : first));
}

// No counter or syscall instruction may be left where it would run: each
// would read the real TSC or enter the real kernel behind the simulation's
// back.
absl::Status CheckInstructions(const StepContext& ctx, const std::string& so) {
  std::string out;
  if (absl::Status s = Run(ctx, {"objdump", "-d", "--no-show-raw-insn", so},
                           "objdump", &out);
      !s.ok()) {
    return s;
  }
  std::string function = "?";
  for (std::string_view line : Split(out, '\n')) {
    if (line.ends_with(">:")) {
      const size_t lt = line.find('<');
      if (lt != std::string_view::npos) {
        function = std::string(line.substr(lt + 1, line.size() - lt - 3));
      }
      continue;
    }
    const size_t tab = line.find('\t');
    if (tab == std::string_view::npos || !Contains(line.substr(0, tab), ":")) {
      continue;
    }
    const std::string_view insn = Trim(line.substr(tab + 1));
    const std::string_view m = insn.substr(0, insn.find(' '));
    if (m == "rdtsc" || m == "rdtscp" || m == "syscall" || m == "sysenter" ||
        (m == "int" && Contains(insn, "0x80"))) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: `%s` in %s was not rewritten (emitted as raw bytes?); it "
          "would read the real counter or enter the real kernel",
          ctx.what, std::string(insn), function));
    }
  }
  return absl::OkStatus();
}

// The only undefined symbols allowed: the C library's and the dynamic
// loader's (TLS), which the glue may use.
absl::Status CheckUndefined(const StepContext& ctx, const std::string& so) {
  std::string out;
  if (absl::Status s =
          Run(ctx, {"nm", "-D", "--undefined-only", so}, "nm", &out);
      !s.ok()) {
    return s;
  }
  for (std::string_view line : Split(out, '\n')) {
    line = Trim(line);
    if (line.empty()) continue;
    std::string_view sym = Trim(line.substr(line.find(' ') + 1));
    sym = sym.substr(0, sym.find('@'));
    if (sym == "__cxa_finalize" || sym == "__gmon_start__" ||
        sym == "_ITM_deregisterTMCloneTable" ||
        sym == "_ITM_registerTMCloneTable" || sym == "__tls_get_addr" ||
        sym == "memcpy" || sym == "memset" || sym == "memmove" ||
        sym == "memcmp") {
      continue;
    }
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: the built object calls %s, which a vDSO cannot",
                        ctx.what, std::string(sym)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CompiledTree> CompileTree(const StepContext& ctx,
                                         const ProbeAttempt& predicted) {
  const std::string wrapper = WrapperSource(ctx.src_root);
  absl::StatusOr<Attempt> main =
      CompileOnce(ctx, "vdsolab_wrapper", wrapper + ProbeSource(predicted), {});
  if (!main.ok()) return main.status();
  if (main->ok) {
    CompiledTree t;
    t.assembly = std::move(main->assembly);
    t.deps = std::move(main->deps);
    t.attempt = predicted;
    t.probe = ParseProbe(t.assembly);
    return t;
  }
  // The tree's own code, without a probe: a compile error there is the
  // tree's (or its patch's).
  absl::StatusOr<Attempt> bare =
      CompileOnce(ctx, "vdsolab_wrapper_bare", wrapper, {});
  if (!bare.ok()) return bare.status();
  if (!bare->ok) return CompileError(ctx, bare->output);
  // The tree compiles, the predicted struct does not: find the one it has
  // (the probe alone, unoptimised), so the error can say which.
  for (const ProbeAttempt& a : ProbeAttempts()) {
    if (a.time_data == predicted.time_data &&
        a.max_cycles == predicted.max_cycles && a.aux == predicted.aux) {
      continue;
    }
    absl::StatusOr<Attempt> other =
        CompileOnce(ctx, "vdsolab_probe", wrapper + ProbeSource(a), {"-O0"});
    if (!other.ok()) return other.status();
    if (!other->ok) continue;
    CompiledTree t;
    t.attempt = a;
    t.probe = ParseProbe(other->assembly);
    // The caller's layout check refuses the mismatch with both names.
    return t;
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s: the page structs are none vdsolab knows (%s): %s", ctx.what,
      predicted.Describe(), FirstError(main->output)));
}

std::string FormatGlueConfig(const GlueConfig& c) {
  auto list = [](const auto& v, const char* suffix) {
    std::string s = "{";
    for (size_t i = 0; i < v.size(); ++i) {
      s += (i == 0 ? "" : ", ") + std::to_string(v[i]) + suffix;
    }
    return s + "}";
  };
  std::string h = "/* Generated by vdsolab (ktree) for one tree variant. */\n";
  h += "#define VDSOLAB_TREE_NAME " + CString(c.name) + "\n";
  h += "#define VDSOLAB_TREE_PROVENANCE " + CString(c.provenance) + "\n";
  h += "#define VDSOLAB_TREE_SUMMARY " + CString(c.summary) + "\n";
  h += "#define VDSOLAB_TREE_LAYOUT " + CString(c.layout) + "\n";
  h += "#define VDSOLAB_TREE_ERA " + CString(c.era) + "\n";
  h += "#define VDSOLAB_TREE_ORIGIN " + CString(c.origin) + "\n";
  h += absl::StrFormat("#define VDSOLAB_TREE_DATA_OFFSET %du\n", c.data_offset);
  h += "#define VDSOLAB_TREE_SEQ_OFFSETS " + list(c.seq_offsets, "u") + "\n";
  h += "#define VDSOLAB_TREE_CLOCKS " + list(c.clocks, "") + "\n";
  h += absl::StrFormat("#define VDSOLAB_TREE_COUNTER_SEMANTICS %du\n",
                       c.counter_semantics);
  h += absl::StrFormat("#define VDSOLAB_TREE_SEMANTICS_FLAGS %du\n",
                       c.semantics_flags);
  h += absl::StrFormat("#define VDSOLAB_TREE_COUNTER_READ %du\n",
                       c.counter_read);
  h += absl::StrFormat("#define VDSOLAB_TREE_CONFIG_HZ %du\n", c.config_hz);
  return h;
}

absl::Status LinkPlugin(const StepContext& ctx, const std::string& assembly,
                        const GlueConfig& config, const std::string& out_so) {
  const std::string glue_dir = JoinPath(ctx.scratch, "glue");
  if (absl::Status s = MakeDirs(glue_dir); !s.ok()) return s;
  const std::string tree_s = JoinPath(ctx.scratch, "tree.rewritten.s");
  const std::string tree_o = JoinPath(ctx.scratch, "tree.o");
  const std::string glue_c = JoinPath(glue_dir, "glue.c");
  const std::string glue_o = JoinPath(ctx.scratch, "glue.o");
  const std::string map = JoinPath(ctx.scratch, "exports.map");
  struct File {
    std::string path, text;
  };
  for (const File& f :
       {File{tree_s, assembly}, File{glue_c, kGlueSource},
        File{JoinPath(glue_dir, "vdsolab_plugin.h"), kPluginHeader},
        File{JoinPath(glue_dir, "vdsolab_tree_config.h"),
             FormatGlueConfig(config)},
        // One exported symbol: the kernel object's clock_gettime, time,
        // ... weak aliases stay local.
        File{map, "{ global: vdsolab_plugin_v3; local: *; };\n"}}) {
    if (absl::Status s = WriteFileAtomic(f.path, f.text); !s.ok()) return s;
  }
  if (absl::Status s =
          Run(ctx, {ctx.cc.cc, "-c", "-o", tree_o, tree_s}, "assembling");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = Run(
          ctx,
          {ctx.cc.cc, "-O2", "-fPIC", "-fvisibility=hidden",
           "-fno-stack-protector", "-std=gnu11", "-Wall",
           // No vector copies (the timespec's two words).
           "-fno-tree-vectorize", "-I" + glue_dir, "-c", "-o", glue_o, glue_c},
          "compiling the glue");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = Run(ctx,
                           {ctx.cc.cc, "-shared", "-o", out_so, tree_o, glue_o,
                            "-Wl,--version-script=" + map, "-Wl,--no-undefined",
                            "-Wl,-z,noexecstack"},
                           "linking");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckInstructions(ctx, out_so); !s.ok()) return s;
  return CheckUndefined(ctx, out_so);
}

std::string BuildFingerprint() {
  std::string f = kBuildStepsVersion;
  f += "\n";
  f += kGlueSource;
  f += kPluginHeader;
  f += ShimsFingerprint();
  f += WrapperSource("ROOT");
  for (const ProbeAttempt& a : ProbeAttempts()) f += ProbeSource(a);
  return f;
}

}  // namespace vdsolab::ktree::internal
