/*
 * registry/scan.c - crash-isolated module scanning, as GStreamer's plugin
 * scanner does it.
 *
 * A module file runs code as soon as it is loaded (its constructors, its
 * init), and a module that crashes, aborts, calls exit or hangs there
 * took every command down with it, `mica modules` included (issue 15).
 * So a file this host has not seen before, or that changed (real path,
 * size, modification time), is first loaded by a helper program in a
 * process of its own, `mica-scan-module` (installed in
 * $(pkglibexecdir); $MICA_SCANNER names another, for an uninstalled
 * build), which reports on a pipe before and after each file.  A file
 * whose scan crashed, exited or did not finish within $MICA_SCAN_TIMEOUT
 * seconds (default 30; the scanner is then killed) gets one load problem
 * line naming it and what happened, is remembered, and is skipped until
 * it changes; everything else is then loaded in this process as before.
 *
 * Why fork+exec (posix_spawn) and not fork alone: the host may be an
 * application with threads (a CUDA runtime's, its own), and a child
 * forked from a threaded process may only call async-signal-safe
 * functions until it execs; dlopen and a module's init are far from
 * that (locks held by other threads at the fork stay held forever).  A
 * fresh process is also what the file will meet in the next command.
 * One scanner process takes every new file of a folder in turn; after a
 * crash, a new one goes on with the files after it.
 *
 * Verdicts are kept in a cache file, one line per file, read once per
 * process: $MICA_REGISTRY_CACHE (empty: no file, verdicts last as long
 * as the process), else $XDG_CACHE_HOME/mica/registry.cache, else
 * ~/.cache/mica/registry.cache.  A cache that cannot be read or written
 * is no error: the files are scanned again next time.  With nothing
 * changed, the cost is one stat() per module file.
 *
 * Without a working scanner (none installed, $MICA_SCANNER wrong, or a
 * program that scans nothing), a file never scanned is not loaded: it
 * gets a load problem line saying so, for this process only (nothing is
 * remembered), so that crash isolation never turns itself off.
 * MICA_SCAN=off (or MICA_NO_SCAN=1) loads files in the process without
 * scanning them: the user's explicit choice (for debuggers; the scanner
 * itself runs so).
 */
#include <config.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "files.h"
#include "registry.h"

#ifndef MICA_SCANNER_DEFAULT
#error "the build must define MICA_SCANNER_DEFAULT (the installed scanner)"
#endif

extern char **environ;

#define CACHE_MAGIC "mica-registry-cache 1 " PACKAGE_VERSION

typedef struct verdict {
    char *path;          /* real path */
    long long size, mtime_ns;
    char *bad;           /* NULL: loads in a process of its own */
    int unscanned;       /* bad for want of a scanner: never cached */
} verdict_t;

/* The verdicts of this process, guarded by `lock`. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char *cache_file;     /* the file they were read from ("" none) */
static int cache_read;
static verdict_t *verdicts;
static size_t nb_verdicts, cap_verdicts;

/*
 * The installed scanner, else that of the build folder libmica was
 * loaded from (an uninstalled build: BUILD/.libs/libmica.so or
 * BUILD/tools/.libs/mica next to BUILD/registry/mica-scan-module), so
 * that a build run in place keeps its crash isolation without setting
 * $MICA_SCANNER.  The answer is kept (a static buffer).
 */
static char found_scanner[PATH_MAX + 64];

static void find_scanner(void)
{
    static const char *const up[] = {"/../registry/mica-scan-module",
                                     "/../../registry/mica-scan-module"};
    char dir[PATH_MAX], *slash;
    Dl_info info;
    size_t i;

    snprintf(found_scanner, sizeof found_scanner, "%s", MICA_SCANNER_DEFAULT);
    if (access(found_scanner, X_OK) == 0 ||
        !dladdr(found_scanner, &info) || !info.dli_fname ||
        !realpath(info.dli_fname, dir) || !(slash = strrchr(dir, '/')))
        return;
    *slash = '\0';
    for (i = 0; i < sizeof up / sizeof *up; i++) {
        char try[PATH_MAX + 64];
        snprintf(try, sizeof try, "%s%s", dir, up[i]);
        if (access(try, X_OK) == 0) {
            snprintf(found_scanner, sizeof found_scanner, "%s", try);
            return;
        }
    }
}

static const char *default_scanner(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, find_scanner);
    return found_scanner;
}

/* Whether the user turned scanning off (MICA_SCAN=off, MICA_NO_SCAN=1). */
static int scan_off(void)
{
    const char *no = getenv("MICA_NO_SCAN"), *scan = getenv("MICA_SCAN");
    return (no && no[0] && strcmp(no, "0")) || (scan && !strcmp(scan, "off"));
}

static long long mtime_ns(const struct stat *sb)
{
    return (long long)sb->st_mtim.tv_sec * 1000000000ll +
           sb->st_mtim.tv_nsec;
}

/* The cache file this process uses now: a heap string, "" for none. */
static char *cache_path(void)
{
    const char *v = getenv("MICA_REGISTRY_CACHE");
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");

    if (v)
        return mica__strdup(v);
    if (xdg && xdg[0] == '/')
        return mica__asprintf("%s/mica/registry.cache", xdg);
    if (home && home[0])
        return mica__asprintf("%s/.cache/mica/registry.cache", home);
    return mica__strdup("");
}

static verdict_t *find(const char *path)
{
    size_t i;
    for (i = 0; i < nb_verdicts; i++)
        if (strcmp(verdicts[i].path, path) == 0)
            return &verdicts[i];
    return NULL;
}

/* Record a verdict (replacing an older one of the path); 0 or -1. */
static int put(const char *path, long long size, long long mt,
               const char *bad)
{
    verdict_t *v = find(path);
    char *b = bad ? mica__strdup(bad) : NULL;

    if (bad && !b)
        return -1;
    if (!v) {
        if (nb_verdicts == cap_verdicts) {
            size_t cap = cap_verdicts ? 2 * cap_verdicts : 64;
            verdict_t *g = realloc(verdicts, cap * sizeof *g);
            if (!g) {
                free(b);
                return -1;
            }
            verdicts = g;
            cap_verdicts = cap;
        }
        v = &verdicts[nb_verdicts];
        v->path = mica__strdup(path);
        if (!v->path) {
            free(b);
            return -1;
        }
        nb_verdicts++;
    } else {
        free(v->bad);
    }
    v->size = size;
    v->mtime_ns = mt;
    v->unscanned = 0;
    v->bad = b;
    return 0;
}

static void forget_all(void)
{
    size_t i;
    for (i = 0; i < nb_verdicts; i++) {
        free(verdicts[i].path);
        free(verdicts[i].bad);
    }
    nb_verdicts = 0;
}

/* Read the cache file (once, or again when $MICA_REGISTRY_CACHE changed):
 * lines "ok|bad SIZE MTIME_NS PATH[\tREASON]". */
static void read_cache(void)
{
    char *file = cache_path(), line[PATH_MAX + 1200];
    FILE *f;

    if (!file || (cache_read && cache_file && !strcmp(file, cache_file))) {
        free(file);
        return;
    }
    forget_all();
    free(cache_file);
    cache_file = file;
    cache_read = 1;
    if (!file[0] || !(f = fopen(file, "r")))
        return;
    if (!fgets(line, sizeof line, f) ||
        strncmp(line, CACHE_MAGIC "\n", sizeof CACHE_MAGIC) != 0) {
        fclose(f);
        return; /* another version's: scan again */
    }
    while (fgets(line, sizeof line, f)) {
        char kind[4], *path, *reason;
        long long size, mt;
        int at = 0;
        line[strcspn(line, "\n")] = '\0';
        if (sscanf(line, "%3s %lld %lld %n", kind, &size, &mt, &at) != 3 ||
            !at)
            continue;
        path = line + at;
        reason = strchr(path, '\t');
        if (reason)
            *reason++ = '\0';
        if (!strcmp(kind, "ok"))
            put(path, size, mt, NULL);
        else if (!strcmp(kind, "bad") && reason)
            put(path, size, mt, reason);
    }
    fclose(f);
}

/* Write the verdicts of files that still exist; failures are ignored. */
static void write_cache(void)
{
    char *dir, *slash, *tmp;
    FILE *f;
    size_t i;
    int ok;

    if (!cache_file || !cache_file[0])
        return;
    if (!(dir = mica__asprintf("%s", cache_file)))
        return;
    slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
        if (mkdir(dir, 0700) != 0 && errno == ENOENT) {
            /* $XDG_CACHE_HOME/mica: its parent may be missing too */
            char *up = strrchr(dir, '/');
            if (up && up != dir) {
                *up = '\0';
                mkdir(dir, 0700);
                *up = '/';
            }
            mkdir(dir, 0700);
        }
    }
    free(dir);
    if (!(f = mica__fcreate_tmp(cache_file, &tmp)))
        return;
    ok = fprintf(f, "%s\n", CACHE_MAGIC) > 0;
    for (i = 0; i < nb_verdicts && ok; i++) {
        const verdict_t *v = &verdicts[i];
        struct stat sb;
        if (v->unscanned || stat(v->path, &sb) != 0 ||
            strpbrk(v->path, "\t\n"))
            continue;
        ok = fprintf(f, "%s %lld %lld %s%s%s\n", v->bad ? "bad" : "ok",
                     v->size, v->mtime_ns, v->path, v->bad ? "\t" : "",
                     v->bad ? v->bad : "") > 0;
    }
    if (fclose(f) != 0 || !ok || rename(tmp, cache_file) != 0)
        unlink(tmp);
    free(tmp);
}

/* ---- the scanner process ------------------------------------------------- */

static const char *signal_name(int sig)
{
    switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGABRT: return "SIGABRT";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGKILL: return "SIGKILL";
    case SIGTERM: return "SIGTERM";
    case SIGTRAP: return "SIGTRAP";
    case SIGSYS: return "SIGSYS";
    default: return "a signal";
    }
}

static double timeout_s(void)
{
    const char *v = getenv("MICA_SCAN_TIMEOUT");
    char *end;
    double t = v && *v ? strtod(v, &end) : 30;
    return v && *v && (*end || t <= 0) ? 30 : t;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/*
 * Run the scanner on files[0..n-1].  *done is how many it finished;
 * when it stopped inside file *done, *why says how (else "").  -1 when
 * the scanner could not be started.
 */
static int run_scanner(mica_context_t *ctx, const char *scanner,
                       char *const *files, size_t n, size_t *done,
                       char *why, size_t len)
{
    posix_spawn_file_actions_t fa;
    char **argv = calloc(n + 4, sizeof *argv), buf[256], fdarg[16];
    double limit = timeout_s(), deadline;
    size_t have = 0, i;
    long inside = -1;
    int fds[2] = {-1, -1}, status = 0, timed_out = 0;
    pid_t pid;

    *done = 0;
    why[0] = '\0';
    if (!argv || pipe2(fds, O_CLOEXEC) != 0) {
        free(argv);
        return -1;
    }
    snprintf(fdarg, sizeof fdarg, "%d", 3);
    argv[0] = (char *)scanner;
    argv[1] = (char *)"--fd";
    argv[2] = fdarg;
    for (i = 0; i < n; i++)
        argv[3 + i] = files[i];
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 3);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    i = (size_t)posix_spawn(&pid, scanner, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    free(argv);
    close(fds[1]);
    if (i != 0) {
        close(fds[0]);
        mica__log(ctx, MICA_LOG_INFO, "cannot start the module scanner %s: "
                  "%s", scanner, strerror((int)i));
        return -1;
    }
    /* "b K" before file K, "d K" after it */
    deadline = now() + limit;
    for (;;) {
        struct pollfd p = {fds[0], POLLIN, 0};
        double left = deadline - now();
        ssize_t got;
        char *nl;
        int r;
        if (left <= 0) {
            timed_out = 1;
            kill(pid, SIGKILL);
            break;
        }
        r = poll(&p, 1, (int)(left * 1000) + 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r == 0)
            continue; /* the deadline is checked above */
        if (r < 0)
            break;
        got = read(fds[0], buf + have, sizeof buf - 1 - have);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        have += (size_t)got;
        buf[have] = '\0';
        while ((nl = strchr(buf, '\n')) != NULL) {
            long k;
            char c;
            *nl = '\0';
            if (sscanf(buf, "%c %ld", &c, &k) == 2 && k >= 0 &&
                (size_t)k < n) {
                if (c == 'b') {
                    inside = k;
                    deadline = now() + limit;
                } else if (c == 'd' && k == inside) {
                    inside = -1;
                    *done = (size_t)k + 1;
                }
            }
            have -= (size_t)(nl + 1 - buf);
            memmove(buf, nl + 1, have + 1);
        }
        if (have == sizeof buf - 1)
            have = 0; /* not the protocol: drop it */
    }
    close(fds[0]);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    if (inside < 0)
        return 0;
    *done = (size_t)inside;
    if (timed_out)
        snprintf(why, len, "did not finish loading within %g s (the scan "
                 "was stopped)", limit);
    else if (WIFSIGNALED(status))
        snprintf(why, len, "crashed while loading (signal %d, %s)",
                 WTERMSIG(status), signal_name(WTERMSIG(status)));
    else if (WIFEXITED(status))
        snprintf(why, len, "exited with status %d while loading",
                 WEXITSTATUS(status));
    else
        snprintf(why, len, "stopped while loading");
    return 0;
}

void mica__scan(mica_context_t *ctx, char *const *paths, size_t n)
{
    const char *scanner = getenv("MICA_SCANNER");
    char **todo = calloc(n + 1, sizeof *todo);
    struct stat *sbs = calloc(n + 1, sizeof *sbs);
    size_t i, nb = 0, start, done;
    char why[256];
    int changed = 0;

    if (scan_off() || !todo || !sbs)
        goto out;
    if (!scanner || !scanner[0])
        scanner = default_scanner();
    pthread_mutex_lock(&lock);
    read_cache();
    for (i = 0; i < n; i++) {
        char *real = realpath(paths[i], NULL);
        struct stat sb;
        verdict_t *v;
        if (!real || stat(real, &sb) != 0 || !S_ISREG(sb.st_mode)) {
            free(real);
            continue; /* loading it will say what is wrong */
        }
        v = find(real);
        if (v && !v->unscanned && v->size == (long long)sb.st_size &&
            v->mtime_ns == mtime_ns(&sb)) {
            free(real);
            continue;
        }
        sbs[nb] = sb;
        todo[nb++] = real;
    }
    for (start = 0; start < nb;) {
        if (run_scanner(ctx, scanner, todo + start, nb - start, &done, why,
                        sizeof why) != 0) {
            snprintf(why, sizeof why, "the module scanner %.200s cannot start",
                     scanner);
            break;
        }
        for (i = start; i < start + done; i++)
            changed |= put(todo[i], (long long)sbs[i].st_size,
                           mtime_ns(&sbs[i]), NULL) == 0;
        start += done;
        if (!why[0] && start < nb) {
            /* the scanner ended between files: go on with a new one */
            if (done == 0) {
                snprintf(why, sizeof why, "the module scanner %.200s scanned "
                         "nothing", scanner);
                break;
            }
            continue;
        }
        if (why[0]) {
            changed |= put(todo[start], (long long)sbs[start].st_size,
                           mtime_ns(&sbs[start]), why) == 0;
            start++;
        }
    }
    /* No scanner: the files left are refused in this process only. */
    for (i = start; i < nb; i++) {
        char line[512];
        verdict_t *v;
        snprintf(line, sizeof line, "never loaded in a process of its own "
                 "(%s), so not loaded in this one: set MICA_SCAN=off to load "
                 "modules without crash isolation", why);
        if (put(todo[i], (long long)sbs[i].st_size, mtime_ns(&sbs[i]),
                line) == 0 && (v = find(todo[i])))
            v->unscanned = 1;
    }
    if (changed)
        write_cache();
    pthread_mutex_unlock(&lock);
out:
    for (i = 0; i < nb; i++)
        free(todo[i]);
    free(todo);
    free(sbs);
}

int mica__scan_bad(const char *real, char *why, size_t len)
{
    verdict_t *v;
    struct stat sb;
    int bad = 0;

    if (scan_off() || stat(real, &sb) != 0)
        return 0;
    pthread_mutex_lock(&lock);
    v = find(real);
    if (v && v->bad && v->size == (long long)sb.st_size &&
        v->mtime_ns == mtime_ns(&sb)) {
        snprintf(why, len, "%s", v->bad);
        bad = v->unscanned ? 2 : 1;
    }
    pthread_mutex_unlock(&lock);
    return bad;
}
