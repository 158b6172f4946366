// SwiftPM builds a C target from at least one source file; the header is the whole target.
#include "FuzzSupport.h"
