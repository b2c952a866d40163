/* __FILE__ is the path the compiler was given: the Makefile passes an absolute one */
const char *where(void) { return __FILE__; }
