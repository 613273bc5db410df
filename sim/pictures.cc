// Pictures (sim/formats.h): the replayed call as an SVG of two lanes on
// one time axis and as a Chrome trace-event file; a clock's divergence
// from MONOTONIC_RAW as an SVG line.

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "common/json.h"
#include "sim/formats.h"

namespace vdsolab::sim {
namespace {

// XML text: &, <, > and quotes escaped.
std::string Xml(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&':
        o += "&amp;";
        break;
      case '<':
        o += "&lt;";
        break;
      case '>':
        o += "&gt;";
        break;
      case '"':
        o += "&quot;";
        break;
      default:
        // Control characters are not allowed in XML 1.0 text.
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\n' || c == '\t') {
          o += c;
        }
    }
  }
  return o;
}

bool OnWriterLane(const TraceStep& t) {
  return t.kind == TraceStep::Kind::kStore;
}

// "clock_data[0].seq" -> "seq": the last component, for a short label.
std::string Short(const std::string& field) {
  const size_t dot = field.rfind('.');
  return dot == std::string::npos ? field : field.substr(dot + 1);
}

constexpr double kLeft = 90;
constexpr double kMinGap = 16;  // Pixels between steps at the same time.
constexpr double kReaderY = 90;
constexpr double kWriterY = 190;

}  // namespace

std::string ReplaySvg(const Scenario& s, const ReplayOutcome& replay) {
  const std::string title = absl::StrFormat(
      "%s: %s, clock_gettime(%s), %s", s.name, s.run.reader, replay.clock_name,
      replay.reproduced ? "reproduced" : "not reproduced");
  std::vector<TraceStep> steps;
  uint64_t t0 = 0, t1 = 1;
  if (replay.call) {
    steps = replay.call->trace;
    t0 = replay.call->start_ns;
    t1 = std::max(replay.call->end_ns, t0 + 1);
  }
  for (const TraceStep& t : steps) {
    t0 = std::min(t0, t.t_ns);
    t1 = std::max(t1, t.t_ns);
  }
  // x of each step: its time on the axis, nudged right when steps share a
  // time (exhaustive replays: many loads at the same instant).
  const double span = static_cast<double>(t1 - t0 == 0 ? 1 : t1 - t0);
  const double base_width = 900;
  std::vector<double> x(steps.size());
  double last = kLeft - kMinGap;
  for (size_t i = 0; i < steps.size(); ++i) {
    const double at =
        kLeft + base_width * static_cast<double>(steps[i].t_ns - t0) / span;
    x[i] = std::max(at, last + kMinGap);
    last = x[i];
  }
  const double width = std::max(kLeft + base_width, last) + 120;
  std::string o = absl::StrFormat(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
      "height=\"300\" viewBox=\"0 0 %.0f 300\" font-family=\"monospace\" "
      "font-size=\"10\">\n"
      "<title>%s</title>\n"
      "<text x=\"10\" y=\"20\" font-size=\"13\">%s</text>\n"
      "<text x=\"10\" y=\"%.0f\">reader</text>\n"
      "<text x=\"10\" y=\"%.0f\">writer</text>\n"
      "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" "
      "stroke=\"#999\"/>\n"
      "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" "
      "stroke=\"#999\"/>\n",
      width, width, Xml(title), Xml(title), kReaderY + 4, kWriterY + 4, kLeft,
      kReaderY, width - 20, kReaderY, kLeft, kWriterY, width - 20, kWriterY);
  // The writer's odd-seq stretches: from a seq store that makes it odd to
  // the next that makes it even (readers must not trust data then).
  double odd_from = -1;
  for (size_t i = 0; i < steps.size(); ++i) {
    const TraceStep& t = steps[i];
    if (t.kind != TraceStep::Kind::kStore || !t.seq) continue;
    if ((t.value & 1) != 0 && odd_from < 0) odd_from = x[i];
    if ((t.value & 1) == 0 && odd_from >= 0) {
      absl::StrAppendFormat(&o,
                            "<rect class=\"odd-seq\" x=\"%.1f\" y=\"%.0f\" "
                            "width=\"%.1f\" height=\"40\" fill=\"#fdd9a8\"/>\n",
                            odd_from, kWriterY - 20, x[i] - odd_from);
      odd_from = -1;
    }
  }
  if (odd_from >= 0) {
    absl::StrAppendFormat(&o,
                          "<rect class=\"odd-seq\" x=\"%.1f\" y=\"%.0f\" "
                          "width=\"%.1f\" height=\"40\" fill=\"#fdd9a8\"/>\n",
                          odd_from, kWriterY - 20, width - 20 - odd_from);
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    const TraceStep& t = steps[i];
    const double y = OnWriterLane(t) ? kWriterY : kReaderY;
    std::string shape;
    std::string label;
    switch (t.kind) {
      case TraceStep::Kind::kLoad:
        shape = absl::StrFormat(
            "<circle class=\"load\" cx=\"%.1f\" cy=\"%.0f\" r=\"4\" "
            "fill=\"%s\">",
            x[i], y, t.seq ? "#d95f02" : "#1b9e77");
        label = t.seq ? absl::StrFormat("seq=%d", t.value) : Short(t.field);
        break;
      case TraceStep::Kind::kCounter:
        shape = absl::StrFormat(
            "<rect class=\"counter\" x=\"%.1f\" y=\"%.0f\" width=\"9\" "
            "height=\"9\" fill=\"#e7298a\" transform=\"rotate(45 %.1f %.0f)\">",
            x[i] - 4.5, y - 4.5, x[i], y);
        label = "counter";
        break;
      case TraceStep::Kind::kStore:
        shape = absl::StrFormat(
            "<rect class=\"store\" x=\"%.1f\" y=\"%.0f\" width=\"6\" "
            "height=\"12\" fill=\"%s\">",
            x[i] - 3, y - 6, t.seq ? "#d95f02" : "#7570b3");
        label = t.seq ? absl::StrFormat("seq=%d%s", t.value,
                                        (t.value & 1) != 0 ? " odd" : "")
                      : Short(t.field);
        break;
      case TraceStep::Kind::kFallback:
        shape = absl::StrFormat(
            "<rect class=\"fallback\" x=\"%.1f\" y=\"%.0f\" width=\"10\" "
            "height=\"10\" fill=\"#66a61e\">",
            x[i] - 5, y - 5);
        label = "syscall";
        break;
      case TraceStep::Kind::kPreempt:
      case TraceStep::Kind::kMigrate:
      case TraceStep::Kind::kFault:
      case TraceStep::Kind::kReorder:
        shape = absl::StrFormat(
            "<circle class=\"event\" cx=\"%.1f\" cy=\"%.0f\" r=\"6\" "
            "fill=\"none\" stroke=\"#000\">",
            x[i], y);
        label = t.kind == TraceStep::Kind::kFault     ? "fault"
                : t.kind == TraceStep::Kind::kPreempt ? "preempted"
                : t.kind == TraceStep::Kind::kReorder ? "reordered"
                                                      : "migrated";
        break;
    }
    // The step's full text as a tooltip; a short label under it, slanted
    // so that neighbours do not overlap.
    absl::StrAppendFormat(&o, "%s<title>%d ns: %s</title></%s>\n", shape,
                          t.t_ns, Xml(t.what),
                          shape.substr(1, shape.find(' ') - 1));
    absl::StrAppendFormat(
        &o,
        "<text x=\"%.1f\" y=\"%.0f\" transform=\"rotate(40 %.1f %.0f)\">%s"
        "</text>\n",
        x[i], y + 14, x[i], y + 14, Xml(label));
  }
  // The time axis: the call's start and end.
  absl::StrAppendFormat(
      &o,
      "<text x=\"%.0f\" y=\"290\">%d ns</text>\n"
      "<text x=\"%.0f\" y=\"290\" text-anchor=\"end\">%d ns</text>\n"
      "</svg>\n",
      kLeft, t0, width - 20, t1);
  return o;
}

std::string ReplayChromeTrace(const Scenario& s, const ReplayOutcome& replay) {
  // Trace-event format: microsecond timestamps (fractions allowed), one
  // process, the reader and the writer as threads.
  JsonArray events;
  const auto us = [](uint64_t ns) { return static_cast<double>(ns) / 1000.0; };
  for (const auto& [tid, name] :
       {std::pair{1, "reader (clock_gettime)"}, std::pair{2, "writer"}}) {
    JsonObject meta, args;
    args.Add("name", name);
    meta.Add("ph", "M")
        .Add("pid", 1)
        .Add("tid", tid)
        .Add("name", "thread_name");
    meta.AddRaw("args", args.Text());
    events.AddRaw(meta.Text());
  }
  if (replay.call) {
    const CallRecord& c = *replay.call;
    JsonObject call, args;
    args.Add("clock", replay.clock_name)
        .Add("reproduced", replay.reproduced)
        .Add("scenario", s.name)
        .Add("variant", s.run.reader);
    call.Add("ph", "X")
        .Add("pid", 1)
        .Add("tid", 1)
        .Add("name", "clock_gettime(" + replay.clock_name + ")")
        .Add("ts", us(c.start_ns))
        .Add("dur", us(c.end_ns - c.start_ns));
    call.AddRaw("args", args.Text());
    events.AddRaw(call.Text());
    for (const TraceStep& t : c.trace) {
      JsonObject e, a;
      a.Add("what", t.what).Add("cpu", t.cpu);
      e.Add("ph", "i")
          .Add("s", "t")
          .Add("pid", 1)
          .Add("tid", OnWriterLane(t) ? 2 : 1)
          .Add("name", t.field.empty() ? t.what : Short(t.field))
          .Add("ts", us(t.t_ns));
      e.AddRaw("args", a.Text());
      events.AddRaw(e.Text());
    }
  }
  JsonObject root;
  root.AddRaw("traceEvents", events.Text()).Add("displayTimeUnit", "ns");
  return root.Text() + "\n";
}

std::string DivergenceSvg(const std::string& title, const Divergence& d) {
  constexpr double kW = 800, kH = 360, kL = 110, kR = 20, kT = 40, kB = 50;
  double max_x = 1, min_y = 0, max_y = 0;
  for (const auto& [x, y] : d.series) {
    max_x = std::max(max_x, static_cast<double>(x));
    min_y = std::min(min_y, static_cast<double>(y));
    max_y = std::max(max_y, static_cast<double>(y));
  }
  if (max_y == min_y) max_y = min_y + 1;
  const auto px = [&](double x) { return kL + (kW - kL - kR) * x / max_x; };
  const auto py = [&](double y) {
    return kT + (kH - kT - kB) * (max_y - y) / (max_y - min_y);
  };
  std::string points;
  for (const auto& [x, y] : d.series) {
    absl::StrAppendFormat(&points, "%.1f,%.1f ", px(static_cast<double>(x)),
                          py(static_cast<double>(y)));
  }
  return absl::StrFormat(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
      "height=\"%.0f\" font-family=\"monospace\" font-size=\"11\">\n"
      "<title>%s</title>\n"
      "<text x=\"10\" y=\"20\" font-size=\"13\">%s</text>\n"
      "<line class=\"axis\" x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" "
      "y2=\"%.1f\" stroke=\"#999\"/>\n"
      "<line class=\"axis\" x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" "
      "y2=\"%.0f\" stroke=\"#999\"/>\n"
      "<polyline class=\"divergence\" fill=\"none\" stroke=\"#d95f02\" "
      "stroke-width=\"1.5\" points=\"%s\"/>\n"
      "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">%.0f ns</text>\n"
      "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">%.0f ns</text>\n"
      "<text x=\"%.0f\" y=\"%.0f\">0 s of RAW</text>\n"
      "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">%.3f s</text>\n"
      "<text x=\"%.0f\" y=\"%.0f\">clock - MONOTONIC_RAW, %d samples, "
      "%.1f ppb at the end</text>\n"
      "</svg>\n",
      kW, kH, Xml(title), Xml(title), kL, py(0), kW - kR, py(0), kL, kT, kL,
      kH - kB, points, kL - 6, kT + 4, max_y, kL - 6, kH - kB, min_y, kL,
      kH - kB + 16, kW - kR, kH - kB + 16, max_x / 1e9, kL, kH - 10, d.samples,
      d.ppb());
}

}  // namespace vdsolab::sim
