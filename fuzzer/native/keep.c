/* buildfuzz's keep: an LD_PRELOAD library, loaded only into traced builds, that keeps a
 * hard link to each regular file the build removes (unlink, unlinkat, remove) or renames
 * another file over (rename, renameat, renameat2), so a step that read a file a later
 * step deleted (pip's input.json, a configure check's source) can be replayed with it.
 *
 * BUILDFUZZ_KEEP is "CAP_BYTES:DIR[:DIR...]": the first DIR holds the index and the byte
 * count (without the count, nothing is kept); a file is linked into the first DIR on its filesystem (a link is free and keeps
 * the bytes; a copy would show in the trace as a read). Each kept file is one line of
 * DIR1/index: "TIME\tSTASHED\tPATH\n", TIME the realtime clock before the removal.
 * Files beyond the cap, other kinds, or on a filesystem no DIR is on are not kept.
 * Every path the library touches has ".buildfuzz-kept-" in it: the trace reader drops
 * them, and a link into such a place is not a read. A static binary bypasses it all.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_DIRS 4

static unsigned long counter;

static int dir_of(const char *spec, int n, char *out, size_t size) {
    const char *p = strchr(spec, ':');
    for (int i = 0; p != NULL && i < n; i++)
        p = strchr(p + 1, ':');
    if (p == NULL)
        return -1;
    const char *end = strchr(p + 1, ':');
    size_t len = end ? (size_t)(end - p - 1) : strlen(p + 1);
    if (len == 0 || len >= size)
        return -1;
    memcpy(out, p + 1, len);
    out[len] = '\0';
    return 0;
}

/* The absolute path of dirfd/name, as the build named it. */
static int absolute(int dirfd, const char *name, char *out, size_t size) {
    char base[PATH_MAX];
    if (name[0] == '/')
        return snprintf(out, size, "%s", name) < (int)size ? 0 : -1;
    if (dirfd == AT_FDCWD) {
        if (getcwd(base, sizeof base) == NULL)
            return -1;
    } else {
        char link[64];
        snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
        ssize_t n = readlink(link, base, sizeof base - 1);
        if (n < 0)
            return -1;
        base[n] = '\0';
    }
    return snprintf(out, size, "%s/%s", base, name) < (int)size ? 0 : -1;
}

/* Adds `size` to the kept total (in `fd`) unless it would pass the cap. */
static int reserve(int fd, long long cap, long long size) {
    long long total = 0;
    int ok = -1;
    if (flock(fd, LOCK_EX) == 0) {
        if (pread(fd, &total, sizeof total, 0) != sizeof total)
            total = 0;
        if (total + size <= cap) {
            total += size;
            ok = pwrite(fd, &total, sizeof total, 0) == sizeof total ? 0 : -1;
        }
        flock(fd, LOCK_UN);
    }
    return ok;
}

/* Keeps dirfd/name if it is a regular file, while the stash is open (its byte count is
 * there: buildfuzz removes it when the traced build ends, so the same environment in a
 * replay keeps nothing); the caller's errno is left as it was. */
static void keep(int dirfd, const char *name) {
    const char *spec = getenv("BUILDFUZZ_KEEP");
    if (spec == NULL || *spec == '\0' || name == NULL || strstr(name, ".buildfuzz-kept-") != NULL)
        return;
    int saved = errno;
    long long cap = strtoll(spec, NULL, 10);
    char first[PATH_MAX], dir[PATH_MAX], stashed[PATH_MAX], path[PATH_MAX], bytes[PATH_MAX + 8];
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    int fd = -1;
    if (dir_of(spec, 0, first, sizeof first) == 0 && absolute(dirfd, name, path, sizeof path) == 0) {
        snprintf(bytes, sizeof bytes, "%s/bytes", first);
        fd = open(bytes, O_RDWR | O_CLOEXEC);
    }
    for (int i = 0; fd >= 0 && i < MAX_DIRS && dir_of(spec, i, dir, sizeof dir) == 0; i++) {
        unsigned long n = __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);  /* threads remove files too */
        snprintf(stashed, sizeof stashed, "%s/%d-%lu-%ld", dir, (int)getpid(), n, (long)now.tv_nsec);
        if (linkat(dirfd, name, AT_FDCWD, stashed, 0) != 0) {
            if (errno == EXDEV)
                continue;
            break;  /* absent, a directory, not ours: nothing to keep */
        }
        struct stat st;
        if (lstat(stashed, &st) != 0 || !S_ISREG(st.st_mode) || reserve(fd, cap, st.st_size) != 0) {
            unlink(stashed);
            break;
        }
        char index[PATH_MAX + 8];
        snprintf(index, sizeof index, "%s/index", first);
        int out = open(index, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
        if (out >= 0) {
            dprintf(out, "%ld.%09ld\t%s\t%s\n", (long)now.tv_sec, now.tv_nsec, stashed, path);
            close(out);
        }
        break;
    }
    if (fd >= 0)
        close(fd);
    errno = saved;
}

typedef int (*one_path)(const char *);
typedef int (*at_path)(int, const char *, int);
typedef int (*two_paths)(const char *, const char *);
typedef int (*two_at_paths)(int, const char *, int, const char *);
typedef int (*two_at_paths_flags)(int, const char *, int, const char *, unsigned int);

/* The next definition of `name` (libc's), looked up once; a libc without it: ENOSYS. */
#define REAL(name, type) \
    static type real_##name; \
    if (!real_##name) real_##name = (type)dlsym(RTLD_NEXT, #name); \
    if (!real_##name) { errno = ENOSYS; return -1; }

int unlink(const char *path) {
    REAL(unlink, one_path);
    keep(AT_FDCWD, path);
    return real_unlink(path);
}

int remove(const char *path) {
    REAL(remove, one_path);
    keep(AT_FDCWD, path);
    return real_remove(path);
}

int unlinkat(int dirfd, const char *path, int flags) {
    REAL(unlinkat, at_path);
    if (!(flags & AT_REMOVEDIR))
        keep(dirfd, path);
    return real_unlinkat(dirfd, path, flags);
}

int rename(const char *old, const char *new) {
    REAL(rename, two_paths);
    keep(AT_FDCWD, new);
    return real_rename(old, new);
}

int renameat(int olddirfd, const char *old, int newdirfd, const char *new) {
    REAL(renameat, two_at_paths);
    keep(newdirfd, new);
    return real_renameat(olddirfd, old, newdirfd, new);
}

int renameat2(int olddirfd, const char *old, int newdirfd, const char *new, unsigned int flags) {
    REAL(renameat2, two_at_paths_flags);
    if (!(flags & (RENAME_NOREPLACE | RENAME_EXCHANGE)))
        keep(newdirfd, new);
    return real_renameat2(olddirfd, old, newdirfd, new, flags);
}
