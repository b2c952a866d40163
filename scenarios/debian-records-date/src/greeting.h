#define GREETING "hello from a package"
