/* sdk/conformance/main.c - polysandbox-conformance: drive one provider
 * through the public API and print TAP
 *
 * Exit status: 0 no test failed, 1 some test failed, 2 usage error
 * (bad option, unknown test or provider, provider not ready).
 */
#include "config.h"

#include "kit.h"

#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EXIT_USAGE 2
#define DEFAULT_TEST_TIMEOUT 300

static const conf_test *const groups[] = {
    conf_exec_tests, conf_output_tests, conf_lifecycle_tests, conf_find_tests,
    conf_files_tests, conf_policy_tests, conf_zygote_tests,
};

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: polysandbox-conformance [OPTION]... PROVIDER\n"
            "Run the conformance kit against PROVIDER and print TAP.\n"
            "\n"
            "  -c, --config-dir DIR   configuration directory (default:\n"
            "                         $POLYSANDBOX_CONFIG_DIR, else the "
            "system one)\n"
            "  -l, --list             list the tests and exit\n"
            "  -o, --only NAME[,NAME] run only these tests\n"
            "  -T, --template NAME    create every sandbox with template "
            "NAME\n"
            "                         (its image.PROVIDER: the kit in that "
            "image)\n"
            "  -t, --test-timeout S   stop the run when one test takes more "
            "than\n"
            "                         S seconds (default %d)\n"
            "  -v, --verbose          notes for passing tests too\n"
            "  -h, --help             this help\n"
            "  -V, --version          the version\n"
            "\n"
            "Exit status: 0 no test failed, 1 a test failed, 2 usage error "
            "or\nprovider not ready.\n", DEFAULT_TEST_TIMEOUT);
}

static size_t count_tests(void)
{
    size_t n = 0;
    for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++)
        for (const conf_test *t = groups[g]; t->name; t++)
            n++;
    return n;
}

/* "files, persistent" for a capability mask, into @out. */
static void caps_text(uint64_t caps, char *out, size_t cap)
{
    size_t o = 0;
    out[0] = '\0';
    for (int b = 0; b < 64 && o < cap; b++) {
        uint64_t bit = UINT64_C(1) << b;
        if (!(caps & bit))
            continue;
        const char *name = sbx_capability_name(bit);
        char hex[32];
        if (name == NULL) {
            snprintf(hex, sizeof hex, "bit%d", b);
            name = hex;
        }
        int n = snprintf(out + o, cap - o, "%s%s", o ? ", " : "", name);
        if (n < 0)
            break;
        o += (size_t)n;
    }
    if (o == 0)
        snprintf(out, cap, "none");
}

/* Select the tests named in @only (comma-separated), in table order.
 * Returns false (after saying why) on an unknown name. */
static bool select_tests(const char *only, const conf_test **sel, size_t *n)
{
    *n = 0;
    for (size_t g = 0; g < sizeof groups / sizeof groups[0]; g++)
        for (const conf_test *t = groups[g]; t->name; t++)
            sel[(*n)++] = t;
    if (only == NULL)
        return true;

    bool ok = true;
    size_t total = *n, kept = 0;
    bool *want = calloc(total, sizeof *want);
    char *copy = strdup(only);
    if (want == NULL || copy == NULL) {
        fprintf(stderr, "polysandbox-conformance: out of memory\n");
        free(want);
        free(copy);
        return false;
    }
    char *save = NULL;
    for (char *name = strtok_r(copy, ",", &save); name;
         name = strtok_r(NULL, ",", &save)) {
        size_t i;
        for (i = 0; i < total; i++)
            if (strcmp(sel[i]->name, name) == 0)
                break;
        if (i == total) {
            fprintf(stderr,
                    "polysandbox-conformance: --only: no test named '%s' "
                    "(see --list)\n", name);
            ok = false;
        } else {
            want[i] = true;
        }
    }
    for (size_t i = 0; i < total; i++)
        if (want[i])
            sel[kept++] = sel[i];
    *n = kept;
    if (ok && kept == 0) {
        fprintf(stderr, "polysandbox-conformance: --only: no test named\n");
        ok = false;
    }
    free(want);
    free(copy);
    return ok;
}

static void list_tests(const conf_test *const *sel, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char caps[256];
        caps_text(sel[i]->caps, caps, sizeof caps);
        printf("%-24s needs: %s\n%24s %s\n", sel[i]->name, caps, "",
               sel[i]->summary);
    }
}

static void list_providers(const sbx_ctx *ctx)
{
    size_t n = sbx_ctx_provider_count(ctx);
    fprintf(stderr, "known providers:");
    for (size_t i = 0; i < n; i++)
        fprintf(stderr, " %s", sbx_provider_name(sbx_ctx_provider(ctx, i)));
    fprintf(stderr, "%s\n", n ? "" : " none");
}

/* ---- watchdog -------------------------------------------------------------- */

/* A provider that hangs must not hang the test suite: a test running past
 * its time is reported as failed and the run stops ("Bail out!"). */
typedef struct watchdog {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool running;          /* a test is running */
    bool quit;
    size_t number;
    const char *name;
    struct timespec deadline;
    unsigned secs;
} watchdog;

static void *watchdog_main(void *arg)
{
    watchdog *w = arg;
    pthread_mutex_lock(&w->lock);
    while (!w->quit) {
        if (!w->running) {
            pthread_cond_wait(&w->cond, &w->lock);
            continue;
        }
        int rc = pthread_cond_timedwait(&w->cond, &w->lock, &w->deadline);
        if (rc == ETIMEDOUT && w->running) {
            printf("not ok %zu - %s\n# did not finish within %u s (the "
                   "provider hangs?)\nBail out! %s hung\n",
                   w->number, w->name, w->secs, w->name);
            fflush(stdout);
            _exit(1);
        }
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

static void watchdog_arm(watchdog *w, size_t number, const char *name)
{
    pthread_mutex_lock(&w->lock);
    if (clock_gettime(CLOCK_MONOTONIC, &w->deadline) == 0)
        w->deadline.tv_sec += (time_t)w->secs;
    w->number = number;
    w->name = name;
    w->running = true;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

static void watchdog_disarm(watchdog *w, bool quit)
{
    pthread_mutex_lock(&w->lock);
    w->running = false;
    w->quit = quit;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock);
}

/* Returns false if no watchdog could be started (then none runs). */
static bool watchdog_start(watchdog *w, pthread_t *th, unsigned secs)
{
    pthread_condattr_t ca;
    memset(w, 0, sizeof *w);
    w->secs = secs;
    if (pthread_condattr_init(&ca) != 0)
        return false;
    /* The deadline is on the monotonic clock: wall-clock jumps do not
     * fire it. */
    if (pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 ||
        pthread_cond_init(&w->cond, &ca) != 0) {
        pthread_condattr_destroy(&ca);
        return false;
    }
    pthread_condattr_destroy(&ca);
    if (pthread_mutex_init(&w->lock, NULL) != 0) {
        pthread_cond_destroy(&w->cond);
        return false;
    }
    if (pthread_create(th, NULL, watchdog_main, w) != 0) {
        pthread_mutex_destroy(&w->lock);
        pthread_cond_destroy(&w->cond);
        return false;
    }
    return true;
}

static double now_s(void)
{
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
        return 0;
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"config-dir", required_argument, NULL, 'c'},
        {"list", no_argument, NULL, 'l'},
        {"only", required_argument, NULL, 'o'},
        {"template", required_argument, NULL, 'T'},
        {"test-timeout", required_argument, NULL, 't'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {NULL, 0, NULL, 0},
    };
    const char *config_dir = NULL, *only = NULL, *template_name = NULL;
    bool list = false, verbose = false;
    unsigned test_timeout = DEFAULT_TEST_TIMEOUT;
    int opt;
    while ((opt = getopt_long(argc, argv, "c:lo:T:t:vhV", longopts, NULL)) !=
           -1) {
        switch (opt) {
        case 't': {
            char *end;
            errno = 0;
            unsigned long v = strtoul(optarg, &end, 10);
            if (errno || end == optarg || *end || v == 0 || v > 86400) {
                fprintf(stderr, "polysandbox-conformance: --test-timeout: "
                                "'%s' is not a number of seconds from 1 to "
                                "86400\n", optarg);
                return EXIT_USAGE;
            }
            test_timeout = (unsigned)v;
            break;
        }
        case 'c': config_dir = optarg; break;
        case 'l': list = true; break;
        case 'o': only = optarg; break;
        case 'T': template_name = optarg; break;
        case 'v': verbose = true; break;
        case 'h': usage(stdout); return 0;
        case 'V': printf("polysandbox-conformance %s\n", PACKAGE_VERSION);
                  return 0;
        default: usage(stderr); return EXIT_USAGE;
        }
    }
    if (!list && optind != argc - 1) {
        fprintf(stderr, "polysandbox-conformance: %s\n",
                optind >= argc ? "no PROVIDER given"
                               : "one PROVIDER only");
        usage(stderr);
        return EXIT_USAGE;
    }

    size_t total = count_tests(), n = 0;
    const conf_test **sel = calloc(total ? total : 1, sizeof *sel);
    if (sel == NULL) {
        fprintf(stderr, "polysandbox-conformance: out of memory\n");
        return EXIT_USAGE;
    }
    if (!select_tests(only, sel, &n)) {
        free(sel);
        return EXIT_USAGE;
    }
    if (list) {
        list_tests(sel, n);
        free(sel);
        return 0;
    }

    conf_kit k = {.provider = argv[optind], .template_name = template_name,
                  .verbose = verbose};
    int rc = sbx_ctx_new(&k.ctx, config_dir);
    if (rc != SBX_OK) {
        const sbx_error *e = k.ctx ? sbx_ctx_last_error(k.ctx) : NULL;
        fprintf(stderr, "polysandbox-conformance: cannot set up: %s\n",
                e ? sbx_error_message(e) : sbx_strerror(rc));
        sbx_ctx_free(k.ctx);
        free(sel);
        return EXIT_USAGE;
    }
    const sbx_provider *p = sbx_ctx_find_provider(k.ctx, k.provider);
    if (p == NULL) {
        fprintf(stderr, "polysandbox-conformance: unknown provider '%s'\n",
                k.provider);
        list_providers(k.ctx);
        sbx_ctx_free(k.ctx);
        free(sel);
        return EXIT_USAGE;
    }
    if (sbx_provider_get_state(p) != SBX_PROVIDER_READY) {
        const char *why = sbx_provider_reason(p);
        fprintf(stderr, "polysandbox-conformance: provider '%s' is not "
                        "ready: %s\n", k.provider,
                sbx_provider_get_state(p) == SBX_PROVIDER_DISABLED
                    ? "disabled in its configuration"
                    : (why ? why : "no reason given"));
        sbx_ctx_free(k.ctx);
        free(sel);
        return EXIT_USAGE;
    }
    if (template_name != NULL &&
        sbx_ctx_find_template(k.ctx, template_name) == NULL) {
        fprintf(stderr, "polysandbox-conformance: --template: no template "
                        "named '%s' in this configuration\n", template_name);
        sbx_ctx_free(k.ctx);
        free(sel);
        return EXIT_USAGE;
    }
    k.caps = sbx_provider_capabilities(p);

    char caps[512];
    caps_text(k.caps, caps, sizeof caps);
    tap_plan(n);
    printf("# provider %s %s (%s)\n# capabilities: %s\n", k.provider,
           sbx_provider_version(p) ? sbx_provider_version(p) : "?",
           sbx_provider_path(p) ? sbx_provider_path(p) : "?", caps);
    if (template_name != NULL)
        printf("# template: %s\n", template_name);
    fflush(stdout);

    watchdog wd;
    pthread_t wd_thread;
    bool wd_on = watchdog_start(&wd, &wd_thread, test_timeout);
    if (!wd_on)
        printf("# no watchdog thread: a hanging provider hangs this run\n");
    size_t failed = 0;
    double start = now_s();
    for (size_t i = 0; i < n; i++) {
        const conf_test *t = sel[i];
        conf_case c;
        conf_case_init(&c, t->name, verbose);
        uint64_t missing = t->caps & ~k.caps;
        if (missing) {
            caps_text(missing, caps, sizeof caps);
            conf_skip(&c, "needs capability %s", caps);
        } else {
            double t0 = now_s();
            if (wd_on)
                watchdog_arm(&wd, i + 1, t->name);
            t->fn(&k, &c);
            if (wd_on)
                watchdog_disarm(&wd, false);
            conf_note(&c, "%.2f s", now_s() - t0);
        }
        if (tap_report(i + 1, &c))
            failed++;
        conf_case_free(&c);
    }
    if (wd_on) {
        watchdog_disarm(&wd, true);
        pthread_join(wd_thread, NULL);
        pthread_mutex_destroy(&wd.lock);
        pthread_cond_destroy(&wd.cond);
    }
    printf("# %zu of %zu failed, %.1f s\n", failed, n, now_s() - start);
    sbx_ctx_free(k.ctx);
    free(sel);
    return failed ? 1 : 0;
}
