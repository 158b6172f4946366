// libFuzzer's driver, which `aif-fuzz` calls from its own `main` when built with
// `-sanitize=fuzzer` (SwiftPM gives every executable a `main` of its own, so libFuzzer's is not
// used). Declared only: plain builds never call it.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));
