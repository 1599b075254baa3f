#ifndef CLIBFUZZER_H
#define CLIBFUZZER_H
#include <stddef.h>
#include <stdint.h>

/// libFuzzer's driver (LLVM 12 and later), linked only with `-sanitize=fuzzer`: the fuzz
/// target's `main` calls it, because SwiftPM names an executable's entry point itself.
int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size));

#endif
