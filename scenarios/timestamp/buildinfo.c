/* Embeds the compile time: gcc replaces __DATE__/__TIME__ with the current
 * time unless SOURCE_DATE_EPOCH is set. */
const char build_stamp[] = "built " __DATE__ " " __TIME__;
