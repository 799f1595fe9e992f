#include "packwise.h"

const char *pw_version(void) { return PW_VERSION_STRING; }
