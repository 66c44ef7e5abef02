/*
 * fuzz/replay.c - a main() for a fuzz harness outside libFuzzer: feeds
 * every file named on the command line (or every file of every folder
 * named) to LLVMFuzzerTestOneInput once, and prints one TAP line per
 * file.  The test suite runs each harness so over the seed corpus and
 * the reproducers of fuzz/regress/ (tests/test_fuzz_replay.sh): a crash
 * or a sanitizer report (in the sanitizer legs) fails the test.
 */
#include <config.h>

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int n;

static void one(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    size_t len = 0, cap = 0, got;

    if (!f) {
        printf("not ok %d - %s: cannot open\n", ++n, path);
        return;
    }
    do {
        if (len == cap) {
            uint8_t *g = realloc(buf, cap = cap ? 2 * cap : 4096);
            if (!g) {
                printf("Bail out! out of memory\n");
                exit(1);
            }
            buf = g;
        }
        got = fread(buf + len, 1, cap - len, f);
        len += got;
    } while (got > 0);
    fclose(f);
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    printf("ok %d - %s\n", ++n, path);
    fflush(stdout);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void folder(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char **names = NULL;
    size_t nb = 0, i;

    while (d && (de = readdir(d)) != NULL) {
        char **g;
        if (de->d_name[0] == '.')
            continue;
        g = realloc(names, (nb + 1) * sizeof *g);
        if (!g)
            break;
        names = g;
        names[nb] = malloc(strlen(dir) + strlen(de->d_name) + 2);
        if (!names[nb])
            break;
        sprintf(names[nb++], "%s/%s", dir, de->d_name);
    }
    if (d)
        closedir(d);
    if (nb > 1)
        qsort(names, nb, sizeof *names, by_name);
    for (i = 0; i < nb; i++) {
        one(names[i]);
        free(names[i]);
    }
    free(names);
}

int main(int argc, char **argv)
{
    int i;
    for (i = 1; i < argc; i++) {
        struct stat sb;
        if (stat(argv[i], &sb) == 0 && S_ISDIR(sb.st_mode))
            folder(argv[i]);
        else if (stat(argv[i], &sb) == 0)
            one(argv[i]);
    }
    printf("1..%d\n", n);
    return 0;
}
