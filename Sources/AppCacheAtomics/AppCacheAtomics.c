// The functions are inline in the header; this file makes the target a C library SwiftPM builds.
#include "AppCacheAtomics.h"
