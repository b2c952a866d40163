/* buildfuzz's step hold: an LD_PRELOAD constructor that delays one process at its start.
 *
 * The jitter engine polls the build's process tree, so a step that lives less than one
 * poll (a few ms: echo, mv, a tiny generator) is never stopped. This library runs inside
 * every process of the build instead: before main(), it hashes the process's argv
 * (/proc/self/cmdline, FNV-1a 64) and, if the hash is listed in BUILDFUZZ_HOLD
 * ("MILLISECONDS@HEX16,..."), sleeps that long. Holding a writer back that way lets a
 * step that is not ordered after it run first: a latent race made to manifest.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t cmdline_hash(void) {
    uint64_t h = 1469598103934665603ULL;
    char buf[4096];
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0)
        for (ssize_t i = 0; i < n; i++) {
            h ^= (unsigned char)buf[i];
            h *= 1099511628211ULL;
        }
    close(fd);
    return h;
}

static void sleep_ms(long ms) {
    struct timespec left = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&left, &left) == -1 && errno == EINTR)
        ;
}

__attribute__((constructor)) static void buildfuzz_hold(void) {
    const char *spec = getenv("BUILDFUZZ_HOLD");
    if (spec == NULL || *spec == '\0')
        return;
    char mine[17];
    snprintf(mine, sizeof mine, "%016llx", (unsigned long long)cmdline_hash());
    for (const char *entry = spec; entry != NULL && *entry != '\0';) {
        char *at;
        long ms = strtol(entry, &at, 10);
        if (*at == '@' && strncmp(at + 1, mine, 16) == 0 && ms > 0) {
            sleep_ms(ms);
            return;
        }
        entry = strchr(entry, ',');
        entry = entry ? entry + 1 : NULL;
    }
}
