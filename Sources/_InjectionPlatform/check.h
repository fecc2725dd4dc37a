// Private to the C files: the one way they report a failed OS call.
#pragma once

/// Aborts with "Injection: <call> failed with <result>" unless `result` is 0.
void _injection_check(int result, const char *call);
