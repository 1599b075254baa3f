// Declarations only (see include/CLibFuzzer.h); SwiftPM needs one source file per C target.
#include "CLibFuzzer.h"
