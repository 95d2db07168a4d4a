/* tests/fuzz/replay.c - every input kept in tests/fuzz/corpus/ through its
 * target, without libFuzzer (part of `make check`)
 *
 *   replay                    each target's corpus/NAME/ files, TAP output
 *   replay NAME FILE...       those files through target NAME
 *
 * Built with the project's compiler, so the sanitizer build of CI replays
 * the seeds and every input a fuzzer once found a bug with.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/tap.h"
#include "fuzz.h"

#define REPLAY_MAX (1u << 20)

static int read_file(const char *path, uint8_t **data, size_t *len)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf;
    size_t n;

    if (!f)
        return -1;
    buf = fz_xmalloc(REPLAY_MAX + 1);
    n = fread(buf, 1, REPLAY_MAX + 1, f);
    if (ferror(f) || n > REPLAY_MAX) {
        fclose(f);
        free(buf);
        errno = EFBIG;
        return -1;
    }
    fclose(f);
    *data = buf;
    *len = n;
    return 0;
}

static int run_file(const fz_target *t, const char *path)
{
    uint8_t *data;
    size_t len;

    if (read_file(path, &data, &len) != 0) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    /* Where it was, should the next line be a sanitizer's report. */
    fprintf(stderr, "replay: %s %s\n", t->name, path);
    t->one(data, len);
    free(data);
    return 0;
}

static int by_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The files of @dir, sorted; NULL when it cannot be read. */
static char **list_dir(const char *dir, size_t *n)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    char **v = NULL;
    size_t cap = 0;

    *n = 0;
    if (!d)
        return NULL;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        if (*n + 1 >= cap) {
            cap = cap ? cap * 2 : 64;
            char **nv = realloc(v, cap * sizeof *v);
            if (!nv) {
                perror("replay");
                exit(99);
            }
            v = nv;
        }
        if (asprintf(&v[(*n)++], "%s/%s", dir, e->d_name) < 0) {
            perror("replay");
            exit(99);
        }
    }
    closedir(d);
    if (*n)
        qsort(v, *n, sizeof *v, by_str);
    return v ? v : calloc(1, sizeof *v);
}

static void check(int cond, const char *name, const char *what, size_t k)
{
    ok(cond, "%s: %s (%zu)", name, what, k);
}

int main(int argc, char **argv)
{
    const char *top = getenv("top_srcdir");
    size_t n;
    const fz_target *const *all = fz_targets(&n);

    if (argc >= 2) {
        const fz_target *t = fz_find(argv[1]);
        if (!t) {
            fprintf(stderr, "replay: no target '%s'\n", argv[1]);
            return 2;
        }
        if (t->init)
            t->init();
        for (int i = 2; i < argc; i++)
            if (run_file(t, argv[i]) != 0)
                return 1;
        return 0;
    }
    if (!top || !*top)
        top = ".";
    for (size_t i = 0; i < n; i++) {
        char *dir;
        char **files;
        size_t k, done = 0;

        if (asprintf(&dir, "%s/tests/fuzz/corpus/%s", top, all[i]->name) < 0)
            return 99;
        files = list_dir(dir, &k);
        check(files && k > 0, all[i]->name, "has a seed corpus in the tree", k);
        if (files && all[i]->init)
            all[i]->init();
        for (size_t j = 0; files && j < k; j++) {
            done += run_file(all[i], files[j]) == 0;
            free(files[j]);
        }
        if (files)
            check(done == k, all[i]->name, "every input of the corpus replayed", done);
        free(files);
        free(dir);
    }
    return tap_done();
}
