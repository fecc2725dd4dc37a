// Private to the C files: the one way they report a failed OS call.
#ifndef INJECTION_CHECK_H
#define INJECTION_CHECK_H

/// Aborts with "Injection: <call> failed with <result>" unless `result` is 0.
void _injection_check(int result, const char *call);

#endif
