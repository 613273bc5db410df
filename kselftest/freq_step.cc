#include "kselftest/freq_step.h"

#include <cmath>
#include <random>

#include "absl/strings/str_format.h"
#include "timekeeper/timex.h"

namespace vdsolab::kselftest {
namespace {

constexpr int kSamples = 100;        // SAMPLES
constexpr int kSampleReadings = 10;  // SAMPLE_READINGS
constexpr double kMeanSampleInterval = 0.1;
constexpr double kStepInterval = 1.0;

struct Sample {
  double offset;
  double time;
};

double Diff(const Timespec64& a, const Timespec64& b) {
  return static_cast<double>(a.tv_sec - b.tv_sec) +
         static_cast<double>(a.tv_nsec - b.tv_nsec) / 1e9;
}

class Run {
 public:
  Run(const SimHostOptions& options, uint32_t seed, int updates)
      : host_(options), rng_(seed), updates_(updates) {
    mono_raw_base_ = host_.Gettime(kClockMonotonicRaw).ts.tv_sec;
    mono_base_ = host_.Gettime(kClockMonotonic).ts.tv_sec;
  }

  int Rand() { return static_cast<int>(rng_() & 0x7fffffff); }

  // get_sample(): the tightest RAW, MONOTONIC, RAW triple of ten.
  double GetSample(Sample* sample) {
    double mindelay = 0;
    for (int i = 0; i < kSampleReadings; ++i) {
      Timespec64 ts1 = host_.Gettime(kClockMonotonicRaw).ts;
      Timespec64 ts2 = host_.Gettime(kClockMonotonic).ts;
      Timespec64 ts3 = host_.Gettime(kClockMonotonicRaw).ts;
      ts1.tv_sec -= mono_raw_base_;
      ts2.tv_sec -= mono_base_;
      ts3.tv_sec -= mono_raw_base_;
      const double delay = Diff(ts3, ts1);
      if (delay <= 1e-9) {
        --i;
        continue;
      }
      if (i == 0 || delay < mindelay) {
        sample->offset = Diff(ts2, ts1) - delay / 2.0;
        sample->time = static_cast<double>(ts1.tv_sec) +
                       static_cast<double>(ts1.tv_nsec) / 1e9;
        mindelay = delay;
      }
    }
    return mindelay;
  }

  // usleep(), with the frequency set again `updates_` times a second.
  void Sleep(double seconds) {
    uint64_t ns = static_cast<uint64_t>(seconds * 1e9);
    if (updates_ > 0) {
      const uint64_t period = 1000000000ull / static_cast<uint64_t>(updates_);
      while (ns > period) {
        host_.Sleep(period);
        ns -= period;
        SetFrequency(freq_);
      }
    }
    host_.Sleep(ns);
  }

  void ResetNtpError() {
    timekeeper::Timex txc;
    txc.modes = timekeeper::kAdjSetoffset;
    host_.Adjtimex(&txc);
  }

  void SetFrequency(double freq) {
    freq_ = freq;
    const int64_t user_hz = timekeeper::kUserHz;
    const int64_t tick_offset = static_cast<int64_t>(1e6 * freq / user_hz);
    timekeeper::Timex txc;
    txc.modes = timekeeper::kAdjTick | timekeeper::kAdjFrequency;
    txc.tick = 1000000 / user_hz + tick_offset;
    txc.freq = static_cast<int64_t>(
        (1e6 * freq - static_cast<double>(user_hz * tick_offset)) * (1 << 16));
    host_.Adjtimex(&txc);
  }

  static void Regress(const Sample* samples, int n, double* intercept,
                      double* slope, double* r_stddev, double* r_max) {
    double x_sum = 0, y_sum = 0, xy_sum = 0, x2_sum = 0;
    for (int i = 0; i < n; ++i) {
      x_sum += samples[i].time;
      y_sum += samples[i].offset;
      xy_sum += samples[i].time * samples[i].offset;
      x2_sum += samples[i].time * samples[i].time;
    }
    *slope = (xy_sum - x_sum * y_sum / n) / (x2_sum - x_sum * x_sum / n);
    *intercept = (y_sum - *slope * x_sum) / n;
    *r_max = 0;
    double r2_sum = 0;
    for (int i = 0; i < n; ++i) {
      const double r =
          std::fabs(samples[i].time * *slope + *intercept - samples[i].offset);
      if (*r_max < r) *r_max = r;
      r2_sum += r * r;
    }
    *r_stddev = std::sqrt(r2_sum / n);
  }

  // run_test(): returns 1 on a failure.
  int RunTest(bool calibration, double freq_base, double freq_step,
              FreqStepResult* out) {
    Sample samples[kSamples];
    SetFrequency(freq_base);
    for (int i = 0; i < 10; ++i) Sleep(kMeanSampleInterval / 10);
    ResetNtpError();
    SetFrequency(freq_base + freq_step);
    for (int i = 0; i < 10; ++i) {
      Sleep((Rand() % 2000000) * kStepInterval / 10 / 1e6);
    }
    SetFrequency(freq_base);
    for (int i = 0; i < kSamples; ++i) {
      Sleep((Rand() % 2000000) * kMeanSampleInterval / 1e6);
      GetSample(&samples[i]);
    }
    double intercept, slope, stddev1, max1, stddev2, max2;
    if (calibration) {
      Regress(samples, kSamples, &intercept, &slope, &stddev1, &max1);
      mono_freq_offset_ = slope;
      return 0;
    }
    Regress(samples, kSamples / 2, &intercept, &slope, &stddev1, &max1);
    const double freq_error1 =
        slope * (1.0 - mono_freq_offset_) - mono_freq_offset_ - freq_base;
    Regress(samples + kSamples / 2, kSamples / 2, &intercept, &slope, &stddev2,
            &max2);
    const double freq_error2 =
        slope * (1.0 - mono_freq_offset_) - mono_freq_offset_ - freq_base;
    const bool fail =
        std::fabs(freq_error2) > kMaxFreqError || stddev2 > kMaxStddev;
    absl::StrAppendFormat(
        &out->table, "%6.0f %+10.3f %6.0f %7.0f %+10.3f %6.0f %7.0f\t%s\n",
        1e6 * freq_step, 1e6 * freq_error1, 1e9 * stddev1, 1e9 * max1,
        1e6 * freq_error2, 1e9 * stddev2, 1e9 * max2, fail ? "[FAIL]" : "[OK]");
    out->worst_freq_error =
        std::max(out->worst_freq_error, std::fabs(freq_error2));
    out->worst_stddev = std::max(out->worst_stddev, stddev2);
    return fail ? 1 : 0;
  }

  SimHost& host() { return host_; }

 private:
  SimHost host_;
  std::mt19937 rng_;
  int updates_;
  double freq_ = 0;
  int64_t mono_raw_base_ = 0;
  int64_t mono_base_ = 0;
  double mono_freq_offset_ = 0;
};

}  // namespace

FreqStepResult RunFreqStep(const SimHostOptions& options, uint32_t seed,
                           int updates_per_second) {
  FreqStepResult out;
  Run run(options, seed, updates_per_second);
  Sample sample;
  out.precision = run.GetSample(&sample) / 2.0;
  run.RunTest(true, 0.0, 0.0, &out);
  for (int i = 2; i >= 0; --i) {
    for (int j = 0; j < 5; ++j) {
      const double freq_base = (run.Rand() % (1 << 24) - (1 << 23)) / 65536e6;
      const double freq_step = 10e-6 * (1 << (6 * i));
      out.fails += run.RunTest(false, freq_base, freq_step, &out);
      ++out.runs;
    }
  }
  run.SetFrequency(0.0);
  out.simulated_ns = run.host().now_ns();
  return out;
}

}  // namespace vdsolab::kselftest
