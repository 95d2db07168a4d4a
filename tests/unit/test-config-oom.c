/* tests/unit/test-config-oom.c - the loader under allocation failure
 *
 * Linked with -Wl,--wrap for the allocation functions, so the core's own
 * calls can be made to fail: the Nth one fails, for every N until a load
 * needs fewer.  Each failed load must return SBX_E_NOMEM (never crash,
 * never succeed with something missing), and core_config_free must
 * release what was built; under -fsanitize=address a leak fails the run.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <polysandbox/sandbox.h>

#include "error.h"
#include "conf.h"
#include "config/config-load.h"
#include "tap.h"

static long fail_at = -1;
static long calls;

static bool fail_now(void)
{
    if (fail_at < 0)
        return false;
    return ++calls == fail_at;
}

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);
int __wrap_asprintf(char **out, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

void *__wrap_malloc(size_t n)
{
    if (fail_now()) {
        errno = ENOMEM;
        return NULL;
    }
    return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
    if (fail_now()) {
        errno = ENOMEM;
        return NULL;
    }
    return __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
    if (fail_now()) {
        errno = ENOMEM;
        return NULL;
    }
    return __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
    if (fail_now()) {
        errno = ENOMEM;
        return NULL;
    }
    return __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
    if (fail_now()) {
        errno = ENOMEM;
        return NULL;
    }
    return __real_strndup(s, n);
}

int __wrap_asprintf(char **out, const char *fmt, ...)
{
    va_list ap;
    int rc;

    if (fail_now()) {
        errno = ENOMEM;
        return -1;
    }
    va_start(ap, fmt);
    rc = vasprintf(out, fmt, ap);
    va_end(ap);
    return rc;
}

static char root[512];

static void put(const char *rel, const char *text)
{
    char path[PATH_MAX];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", root, rel);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    if (mkdir(path, 0755) < 0 && errno != EEXIST) {
        printf("Bail out! mkdir %s: %s\n", path, strerror(errno));
        exit(99);
    }
    *slash = '/';
    if (!(f = fopen(path, "w")) || fputs(text, f) < 0 || fclose(f) != 0) {
        printf("Bail out! %s: %s\n", path, strerror(errno));
        exit(99);
    }
}

int main(void)
{
    static const char *const ov[] = { "limits.memory=1G", "core.fallback=a, b", NULL };
    core_config cfg;
    long n, bad = 0, first_bad = 0, total;
    int rc;
    char cmd[600];

    snprintf(root, sizeof root, "/tmp/test-config-oom.XXXXXX");
    if (!mkdtemp(root)) {
        printf("Bail out! mkdtemp: %s\n", strerror(errno));
        return 99;
    }
    unsetenv("POLYSANDBOX_CONFIG_DIR");
    unsetenv("POLYSANDBOX_MEMORY");
    unsetenv("POLYSANDBOX_TIMEOUT");
    unsetenv("POLYSANDBOX_PROVIDER");
    unsetenv("POLYSANDBOX_STATE_DIR");
    setenv("POLYSANDBOX_PROVIDER_PATH", "/env/a:/env/b", 1);
    put("polysandbox.ini", "[core]\ndefault_provider = local\norder = local, docker\n"
        "provider_path = /opt/a:/opt/b\n[limits]\nwall = 5s\nmax_wall = 1m\n");
    put("providers.d/docker.ini", "[provider]\npriority = 5\nmodule = /x/docker.so\n"
        "[settings]\nhost = unix:///run/docker.sock\ntimeout = 5s\n");
    put("providers.d/e2b.ini", "[provider]\nenabled = false\n");
    put("templates.d/c.ini", "[template]\nextensions = .c .h\ncompile = cc -o main "
        "'main.c' \"-lm\"\nrun = ./main\nimage = gcc\n[env]\nA = 1\nB = 2\n");
    put("templates.d/sh.ini", "[template]\nextensions = .sh\nrun = sh main.sh\n");

    memset(&cfg, 0, sizeof cfg);
    rc = core_config_load(&cfg, root, ov);
    ok(rc == SBX_OK && cfg.n_providers == 3 && cfg.n_templates == 2,
       "the configuration loads with memory to spare (%s)", core_error_tls()->message);
    core_config_free(&cfg);

    for (n = 1; n < 100000; n++) {
        memset(&cfg, 0, sizeof cfg);
        calls = 0;
        fail_at = n;
        rc = core_config_load(&cfg, root, ov);
        fail_at = -1;
        total = calls;
        core_config_free(&cfg);
        if (total < n) {
            /* No allocation was failed: the load must have worked. */
            if (rc != SBX_OK && !bad++)
                first_bad = n;
            break;
        }
        if (rc != SBX_E_NOMEM && !bad++)
            first_bad = n;
    }
    ok(n > 10, "allocations were counted (%ld)", n - 1);
    if (!ok(bad == 0, "each of %ld allocation failures gives SBX_E_NOMEM", n - 1))
        diag("%ld wrong, the first when allocation %ld failed", bad, first_bad);

    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    if (system(cmd) != 0)
        diag("could not remove %s", root);
    return tap_done();
}
