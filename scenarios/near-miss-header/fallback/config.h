/* Used only when the generated config.h does not exist yet. */
#define APP_FEATURES "defaults"
