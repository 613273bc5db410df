// File: host/conform_experiment.h
//
// The conformance pass itself, run in the sandbox's child: for each sample,
// a consistent copy of the live time page (and pvclock page, on kvm-clock)
// goes into the patched vDSO's area; every served clock is read by the
// host's code and by vdsolab's upstream reader on the same bytes with the
// same counter, in every counter regime, and the answers are compared bit
// for bit. Then the same on synthetic pages in clock mode TSC that the
// timekeeper model publishes (so the host's TSC arithmetic is exercised
// with realistic mult/shift even where the host runs kvm-clock).

#ifndef VDSOLAB_HOST_CONFORM_EXPERIMENT_H_
#define VDSOLAB_HOST_CONFORM_EXPERIMENT_H_

#include "host/conform.h"
#include "host/conform_messages.h"

namespace vdsolab::host {

// Reports to `out` as it goes; returns the child's exit code (0 when the
// pass ran or the host cannot run it, 1 on a failure).
int RunConformExperiment(const ConformOptions& options,
                         conform_internal::MessageWriter& out);

}  // namespace vdsolab::host

#endif  // VDSOLAB_HOST_CONFORM_EXPERIMENT_H_
