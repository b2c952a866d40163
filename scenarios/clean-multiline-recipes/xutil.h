#ifndef XUTIL_H
#define XUTIL_H
/* internal helpers shared by the library sources */
#define X_BASE 65521UL
#define X_NMAX 5552
#define X_RUN_MAX 255
#endif
