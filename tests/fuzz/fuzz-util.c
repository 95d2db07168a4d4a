/* tests/fuzz/fuzz-util.c - the registry of targets and the harness's helpers */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <polysandbox/sandbox.h>

#include "fuzz.h"

#define FZ_MAX_TARGETS 64

static const fz_target *registry[FZ_MAX_TARGETS];
static size_t n_registry;
static int sorted;

void fz_register(const fz_target *t)
{
    if (n_registry == FZ_MAX_TARGETS) {
        fprintf(stderr, "fuzz: more than %d targets: raise FZ_MAX_TARGETS\n", FZ_MAX_TARGETS);
        abort();
    }
    registry[n_registry++] = t;
    sorted = 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp((*(const fz_target *const *)a)->name, (*(const fz_target *const *)b)->name);
}

const fz_target *const *fz_targets(size_t *n)
{
    if (!sorted) {
        qsort(registry, n_registry, sizeof registry[0], by_name);
        sorted = 1;
    }
    *n = n_registry;
    return registry;
}

const fz_target *fz_find(const char *name)
{
    for (size_t i = 0; i < n_registry; i++)
        if (!strcmp(registry[i]->name, name))
            return registry[i];
    return NULL;
}

void fz_fail(const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "fuzz: the code under test broke a promise: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n");
    abort();
}

static void harness_died(const char *what)
{
    fprintf(stderr, "fuzz: harness: %s: %s\n", what, strerror(errno));
    abort();
}

void *fz_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);

    if (!p)
        harness_died("malloc");
    return p;
}

void fz_cage_make(const char *rel)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/outside/secret", rel);
    fz_write(path, "secret\n", 7);
}

static bool cage_allows(const char *n, const char *const *allowed)
{
    if (strcmp(n, ".") == 0 || strcmp(n, "..") == 0 || strcmp(n, "outside") == 0)
        return true;
    for (; *allowed; allowed++) {
        size_t k = strlen(*allowed);
        if (k && (*allowed)[k - 1] == '*' ? strncmp(n, *allowed, k - 1) == 0
                                          : strcmp(n, *allowed) == 0)
            return true;
    }
    return false;
}

void fz_cage_check(const char *cage, const char *const *allowed)
{
    DIR *d = opendir(cage);
    if (!d)
        fz_fail("the cage is gone: %s", strerror(errno));
    struct dirent *de;
    while ((de = readdir(d)))
        if (!cage_allows(de->d_name, allowed))
            fz_fail("'%s' appeared in the cage", de->d_name);
    closedir(d);
    char path[4096], buf[16] = "";
    snprintf(path, sizeof path, "%s/outside", cage);
    if (!(d = opendir(path)))
        fz_fail("'outside' is gone");
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && strcmp(de->d_name, "secret"))
            fz_fail("'%s' appeared in 'outside'", de->d_name);
    closedir(d);
    snprintf(path, sizeof path, "%s/outside/secret", cage);
    struct stat st;
    FILE *f = fopen(path, "rb");
    if (!f || lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1)
        fz_fail("'outside/secret' was replaced, removed or linked to");
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    if (n != 7 || memcmp(buf, "secret\n", 7) != 0)
        fz_fail("'outside/secret' was written");
}

char *fz_strndup(const uint8_t *data, size_t len)
{
    char *s = fz_xmalloc(len + 1);

    if (len)
        memcpy(s, data, len);
    s[len] = '\0';
    return s;
}

/* ---- the private directory ---------------------------------------------- */

static char *dir;
static pid_t dir_owner;

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    remove(path);
    return 0;
}

static void rm_dir(void)
{
    /* Only the process that made it: libFuzzer's children exit too. */
    if (dir && getpid() == dir_owner)
        nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

const char *fz_dir(void)
{
    if (!dir) {
        const char *t = getenv("TMPDIR");
        char *tmpl;

        if (asprintf(&tmpl, "%s/polysandbox-fuzz.XXXXXX", t && *t ? t : "/tmp") < 0)
            harness_died("asprintf");
        if (!mkdtemp(tmpl))
            harness_died(tmpl);
        dir = tmpl;
        dir_owner = getpid();
        atexit(rm_dir);
    }
    return dir;
}

char *fz_path(const char *rel)
{
    char *p;

    if (asprintf(&p, "%s/%s", fz_dir(), rel) < 0)
        harness_died("asprintf");
    return p;
}

void fz_write(const char *rel, const void *data, size_t len)
{
    char *path = fz_path(rel);
    size_t off = 0;
    int fd;

    for (char *s = path + strlen(fz_dir()) + 1; (s = strchr(s, '/')); s++) {
        *s = '\0';
        if (mkdir(path, 0700) != 0 && errno != EEXIST)
            harness_died(path);
        *s = '/';
    }
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        harness_died(path);
    while (off < len) {
        ssize_t n = write(fd, (const char *)data + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            harness_died(path);
        off += (size_t)n;
    }
    if (close(fd) != 0)
        harness_died(path);
    free(path);
}

size_t fz_split(const uint8_t *data, size_t size, fz_part *parts, size_t max)
{
    static const char sep[] = FZ_SEPARATOR;
    const size_t sl = sizeof sep - 1;
    size_t n = 0, start = 0;

    if (max == 0)
        return 0;
    if (!data) {
        parts[0] = (fz_part){ (const uint8_t *)"", 0 };
        return 1;
    }
    for (size_t i = 0; i + sl <= size && n + 1 < max;) {
        if (!memcmp(data + i, sep, sl)) {
            parts[n++] = (fz_part){ data + start, i - start };
            i += sl;
            start = i;
        } else {
            i++;
        }
    }
    parts[n++] = (fz_part){ data + start, size - start };
    return n;
}

struct sbx_ctx *fz_ctx(void)
{
    static sbx_ctx *ctx;
    static const char main_ini[] = "[core]\nprovider_path = /nonexistent\n";
    static const char python[] =
        "[template]\nextensions = .py\nsource = main.py\nrun = python3 main.py\n";
    static const char sh[] = "[template]\nextensions = .sh\nsource = main.sh\nrun = sh main.sh\n";
    char *cdir;

    if (ctx)
        return ctx;
    fz_write("eval-config/polysandbox.ini", main_ini, sizeof main_ini - 1);
    fz_write("eval-config/templates.d/python.ini", python, sizeof python - 1);
    fz_write("eval-config/templates.d/sh.ini", sh, sizeof sh - 1);
    cdir = fz_path("eval-config");
    if (sbx_ctx_new(&ctx, cdir) != SBX_OK) {
        fprintf(stderr, "fuzz: harness: a context: %s\n",
                sbx_error_message(sbx_ctx_last_error(ctx)));
        abort();
    }
    free(cdir);
    return ctx;
}
