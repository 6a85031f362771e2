// The prefetch hint is a static inline function in the header; a C target needs one source file.
#include "CountdownPrefetch.h"
