#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_format.h"
ABSL_FLAG(int, x, 1, "x");
int main(int argc, char** argv) { absl::ParseCommandLine(argc, argv); absl::PrintF("hi %d\n", absl::GetFlag(FLAGS_x)); }
