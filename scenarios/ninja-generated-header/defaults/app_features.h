/* Fallback used when the build has not generated gen/app_features.h:
 * every optional feature off. */
#define HAVE_SIMD 0
#define HAVE_THREADS 0
#define FEATURE_STRING "baseline"
