#include "check.h"
#include "InjectionThread.h"
#include <stdio.h>
#include <stdlib.h>

void _injection_check(int result, const char *call) {
    if (result == 0) return;
    fprintf(stderr, "Injection: %s failed with error %d; this is a bug in Injection or memory corruption.\n", call, result);
    abort();
}

void _injection_write_stderr(const char *line) {
    fputs(line, stderr);
}
