#include "InjectionAtomics.h"

intptr_t _injection_counts[2] = {0, 0};
