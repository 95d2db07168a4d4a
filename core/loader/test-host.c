/* core/loader/test-host.c - a host table for a provider's unit tests
 *
 * What <polysandbox/provider-test.h> promises: the core's host calls
 * without a context, settings from the test instead of an ini file, and
 * what the provider reported kept for the test to read.  settings_read
 * is the core's own (core_settings_read), so a test sees the messages a
 * user would.
 */
#include "config.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <polysandbox/provider.h>
#include <polysandbox/sandbox.h>

#include "error.h"
#include "polysandbox/provider-test.h"
#include "clock.h"
#include "path-check.h"
#include "settings-read.h"

#define PLACE "test host" /* where a bad value "came from" */
#define LEVELS 4          /* SBX_LOG_ERROR .. SBX_LOG_DEBUG */

struct sbx_test_host {
    const sbx_provider_v1 *desc;
    sbx_host_v1 table;
    pthread_mutex_t lock;      /* guards everything below */
    core_setting *settings;
    size_t n_settings;
    char *state_dir;
    bool refuse_unenforced, verbose, not_started;
    int err_code;
    char err_msg[CORE_MSG_MAX];
    char err_copy[CORE_MSG_MAX]; /* what sbx_test_host_error hands out */
    uint64_t retry_after_ms, unenforced;
    uint64_t clock_offset;     /* sbx_test_host_advance_clock, in ns */
    char why[CORE_MSG_MAX], why_copy[CORE_MSG_MAX];
    size_t logged[LEVELS];
    size_t leaks, misuses;
    char leak[CORE_MSG_MAX], leak_copy[CORE_MSG_MAX];
    char misuse[CORE_MSG_MAX], misuse_copy[CORE_MSG_MAX];
    sbx_test_host_watch_fn watch;
    void *watch_ud;
};

/* The handle the provider gets is the test host itself. */
static sbx_test_host *of(sbx_host_handle *h)
{
    return (sbx_test_host *)(void *)h;
}

static bool declared(const char *const *keys, const char *key)
{
    for (size_t i = 0; keys && keys[i]; i++)
        if (!strcmp(keys[i], key))
            return true;
    return false;
}

static void record(sbx_test_host *t, int code, const char *msg)
{
    pthread_mutex_lock(&t->lock);
    t->err_code = code;
    snprintf(t->err_msg, sizeof t->err_msg, "%s", msg);
    pthread_mutex_unlock(&t->lock);
}

/* A failure the core itself set (settings_read): keep it as the host's. */
static int record_core_error(sbx_test_host *t, int rc)
{
    if (rc != SBX_OK)
        record(t, rc, core_error_tls()->message);
    return rc;
}

/* Whether @text holds the value of a credential set on @t; the caller
 * holds the lock. */
static bool holds_credential(const sbx_test_host *t, const char *text)
{
    for (size_t i = 0; i < t->n_settings; i++)
        if (declared(t->desc->secret_keys, t->settings[i].key) && t->settings[i].value[0] &&
            strstr(text, t->settings[i].value))
            return true;
    return false;
}

static void misused(sbx_test_host *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void misused(sbx_test_host *t, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    pthread_mutex_lock(&t->lock);
    t->misuses++;
    vsnprintf(t->misuse, sizeof t->misuse, fmt, ap);
    pthread_mutex_unlock(&t->lock);
    va_end(ap);
}

/* Every message a provider writes: checked for credentials, then shown to
 * the test's watcher. */
static void observe(sbx_test_host *t, bool is_error, int n, const char *text)
{
    sbx_test_host_watch_fn fn;
    void *ud;

    pthread_mutex_lock(&t->lock);
    if (holds_credential(t, text)) {
        t->leaks++;
        snprintf(t->leak, sizeof t->leak, "%s", text);
    }
    fn = t->watch;
    ud = t->watch_ud;
    pthread_mutex_unlock(&t->lock);
    if (fn)
        fn(ud, is_error, n, text);
}

static void t_log(sbx_host_handle *h, int level, const char *fmt, ...)
{
    sbx_test_host *t = of(h);
    char line[CORE_MSG_MAX];
    bool show;
    va_list ap;

    if (level < 0 || level >= LEVELS)
        misused(t, "log with level %d, which no SBX_LOG_* names", level);
    pthread_mutex_lock(&t->lock);
    if (level >= 0 && level < LEVELS)
        t->logged[level]++;
    show = t->verbose || level <= SBX_LOG_WARNING;
    pthread_mutex_unlock(&t->lock);
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    observe(t, false, level, line);
    if (show)
        fprintf(stderr, "%s: %s\n", t->desc->name, line);
}

static int t_set_error(sbx_host_handle *h, int code, const char *fmt, ...)
{
    sbx_test_host *t = of(h);
    char msg[CORE_MSG_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (code == SBX_OK)
        misused(t, "set_error with SBX_OK (%d): an error needs a code", code);
    else if (!sbx_error_known(code))
        misused(t, "set_error with code %d, which no SBX_E_* names", code);
    record(t, code, msg);
    observe(t, true, code, msg);
    return code;
}

static const core_setting *lookup(void *ud, const char *key)
{
    sbx_test_host *t = ud;

    for (size_t i = 0; i < t->n_settings; i++)
        if (!strcmp(t->settings[i].key, key))
            return &t->settings[i];
    return NULL;
}

/* Settings are set before init and read by the provider after: the
 * pointers handed out stay valid until the key is set again. */
static const char *t_config_get(sbx_host_handle *h, const char *key)
{
    sbx_test_host *t = of(h);
    const core_setting *s;

    /* A credential only a secret key names is not a setting: as in the
     * core, it is read with secret_get alone. */
    if (!key || !declared(t->desc->config_keys, key))
        return NULL;
    s = lookup(t, key);
    return s ? s->value : NULL;
}

static int t_secret_get(sbx_host_handle *h, const char *key, const char **out, size_t *len)
{
    sbx_test_host *t = of(h);
    const core_setting *s = key ? lookup(t, key) : NULL;
    char *copy;

    if (!s || !declared(t->desc->secret_keys, key)) {
        char msg[CORE_MSG_MAX];
        snprintf(msg, sizeof msg, "credential '%s' is not set in providers.d/%s.ini",
                 key ? key : "(null)", t->desc->name);
        record(t, SBX_E_NOT_FOUND, msg);
        return SBX_E_NOT_FOUND;
    }
    /* A copy per call, freed by secret_release, so that a provider using
     * a value after releasing it is caught by a sanitizer. */
    if (!(copy = strdup(s->value))) {
        record(t, SBX_E_NOMEM, "out of memory opening a credential");
        return SBX_E_NOMEM;
    }
    *out = copy;
    *len = strlen(copy);
    return SBX_OK;
}

static void t_secret_release(sbx_host_handle *h, const char *value)
{
    (void)h;
    free((char *)value);
}

static void *t_alloc(size_t size)
{
    return malloc(size ? size : 1);
}

static const char *t_state_dir(sbx_host_handle *h)
{
    return of(h)->state_dir;
}

static void t_retry_after(sbx_host_handle *h, uint64_t ms)
{
    sbx_test_host *t = of(h);

    pthread_mutex_lock(&t->lock);
    t->retry_after_ms = ms;
    pthread_mutex_unlock(&t->lock);
}

static void t_not_started(sbx_host_handle *h)
{
    sbx_test_host *t = of(h);

    pthread_mutex_lock(&t->lock);
    t->not_started = true;
    pthread_mutex_unlock(&t->lock);
}

static int t_limits_unenforced(sbx_host_handle *h, uint64_t limits, const char *why)
{
    sbx_test_host *t = of(h);
    bool refuse;

    pthread_mutex_lock(&t->lock);
    t->unenforced |= limits;
    snprintf(t->why, sizeof t->why, "%s", why ? why : "");
    refuse = t->refuse_unenforced;
    pthread_mutex_unlock(&t->lock);
    if (!refuse)
        return SBX_OK;
    return t_set_error(h, SBX_E_PERM, "limits 0x%llx cannot be applied (%s) and the test "
                       "host refuses to run without them", (unsigned long long)limits,
                       why ? why : "no reason given");
}

static const char *const *t_private_paths(sbx_host_handle *h)
{
    static const char *const none[] = { NULL };
    (void)h;
    return none;
}

static int t_settings_read(sbx_host_handle *h, const sbx_setting_v1 *table, size_t entry_size,
                           void *base)
{
    sbx_test_host *t = of(h);

    return record_core_error(t, core_settings_read(t->desc->name, t->desc->config_keys,
                                                   t->desc->secret_keys, lookup, t, table,
                                                   entry_size, base));
}

static int t_path_check(sbx_host_handle *h, const char *path)
{
    char msg[CORE_MSG_MAX];
    int rc = core_path_check(path, msg, sizeof msg);

    if (rc != SBX_OK)
        record(of(h), rc, msg);
    return rc;
}

static uint64_t t_clock_ns(sbx_host_handle *h)
{
    sbx_test_host *t = of(h);
    uint64_t off;

    pthread_mutex_lock(&t->lock);
    off = t->clock_offset;
    pthread_mutex_unlock(&t->lock);
    return core_now_ns() + off;
}

sbx_test_host *sbx_test_host_new(const sbx_provider_v1 *desc)
{
    sbx_test_host *t;

    if (!desc || !desc->name || !(t = calloc(1, sizeof *t)))
        return NULL;
    if (pthread_mutex_init(&t->lock, NULL) != 0) {
        free(t);
        return NULL;
    }
    t->desc = desc;
    t->table = (sbx_host_v1){
        .struct_size = sizeof(sbx_host_v1),
        .abi_major = SBX_ABI_MAJOR,
        .abi_minor = SBX_ABI_MINOR,
        .log = t_log,
        .set_error = t_set_error,
        .config_get = t_config_get,
        .secret_get = t_secret_get,
        .secret_release = t_secret_release,
        .alloc = t_alloc,
        .free = free,
        .state_dir = t_state_dir,
        .retry_after = t_retry_after,
        .not_started = t_not_started,
        .limits_unenforced = t_limits_unenforced,
        .private_paths = t_private_paths,
        .settings_read = t_settings_read,
        .path_check = t_path_check,
        .clock_ns = t_clock_ns,
    };
    return t;
}

void sbx_test_host_free(sbx_test_host *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->n_settings; i++) {
        free(t->settings[i].key);
        free(t->settings[i].value);
    }
    free(t->settings);
    free(t->state_dir);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

int sbx_test_host_set(sbx_test_host *t, const char *key, const char *value)
{
    core_setting *s, *grown;
    char *v;

    if (!t || !key || !value)
        return SBX_E_INVAL;
    if (!declared(t->desc->config_keys, key) && !declared(t->desc->secret_keys, key)) {
        char msg[CORE_MSG_MAX];
        snprintf(msg, sizeof msg, "%s: unknown key '%s' for provider '%s'", PLACE, key,
                 t->desc->name);
        record(t, SBX_E_CONFIG, msg);
        return SBX_E_CONFIG;
    }
    if (!(v = strdup(value)))
        return SBX_E_NOMEM;
    if ((s = (core_setting *)lookup(t, key))) {
        free(s->value);
        s->value = v;
        return SBX_OK;
    }
    grown = realloc(t->settings, (t->n_settings + 1) * sizeof *grown);
    if (!grown) {
        free(v);
        return SBX_E_NOMEM;
    }
    t->settings = grown;
    s = &grown[t->n_settings];
    *s = (core_setting){ .key = strdup(key), .value = v, .file = (char *)PLACE, .line = 0 };
    if (!s->key) {
        free(v);
        return SBX_E_NOMEM;
    }
    t->n_settings++;
    return SBX_OK;
}

int sbx_test_host_set_state_dir(sbx_test_host *t, const char *dir)
{
    char *copy = NULL;

    if (!t)
        return SBX_E_INVAL;
    if (dir && !(copy = strdup(dir)))
        return SBX_E_NOMEM;
    free(t->state_dir);
    t->state_dir = copy;
    return SBX_OK;
}

void sbx_test_host_refuse_unenforced(sbx_test_host *t, bool refuse)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->lock);
    t->refuse_unenforced = refuse;
    pthread_mutex_unlock(&t->lock);
}

const sbx_host_v1 *sbx_test_host_table(sbx_test_host *t)
{
    return t ? &t->table : NULL;
}

sbx_host_handle *sbx_test_host_handle(sbx_test_host *t)
{
    return (sbx_host_handle *)(void *)t;
}

int sbx_test_host_error(sbx_test_host *t, const char **message)
{
    int code;

    if (!t)
        return SBX_E_INVAL;
    pthread_mutex_lock(&t->lock);
    code = t->err_code;
    memcpy(t->err_copy, t->err_msg, sizeof t->err_copy);
    pthread_mutex_unlock(&t->lock);
    if (message)
        *message = t->err_copy;
    return code;
}

void sbx_test_host_clear(sbx_test_host *t)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->lock);
    t->err_code = SBX_OK;
    t->err_msg[0] = '\0';
    t->retry_after_ms = 0;
    t->not_started = false;
    t->unenforced = 0;
    t->why[0] = '\0';
    pthread_mutex_unlock(&t->lock);
}

uint64_t sbx_test_host_retry_after_ms(sbx_test_host *t)
{
    uint64_t ms;

    if (!t)
        return 0;
    pthread_mutex_lock(&t->lock);
    ms = t->retry_after_ms;
    pthread_mutex_unlock(&t->lock);
    return ms;
}

bool sbx_test_host_not_started(sbx_test_host *t)
{
    bool v;

    if (!t)
        return false;
    pthread_mutex_lock(&t->lock);
    v = t->not_started;
    pthread_mutex_unlock(&t->lock);
    return v;
}

uint64_t sbx_test_host_unenforced(sbx_test_host *t, const char **why)
{
    uint64_t bits;

    if (!t)
        return 0;
    pthread_mutex_lock(&t->lock);
    bits = t->unenforced;
    memcpy(t->why_copy, t->why, sizeof t->why_copy);
    pthread_mutex_unlock(&t->lock);
    if (why)
        *why = t->why_copy;
    return bits;
}

size_t sbx_test_host_log_count(sbx_test_host *t, int level)
{
    size_t n = 0;

    if (!t)
        return 0;
    pthread_mutex_lock(&t->lock);
    for (int l = 0; l < LEVELS && l <= level; l++)
        n += t->logged[l];
    pthread_mutex_unlock(&t->lock);
    return n;
}

void sbx_test_host_verbose(sbx_test_host *t, bool verbose)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->lock);
    t->verbose = verbose;
    pthread_mutex_unlock(&t->lock);
}

size_t sbx_test_host_leaks(sbx_test_host *t, const char **text)
{
    size_t n;

    if (!t)
        return 0;
    pthread_mutex_lock(&t->lock);
    n = t->leaks;
    memcpy(t->leak_copy, t->leak, sizeof t->leak_copy);
    pthread_mutex_unlock(&t->lock);
    if (text)
        *text = t->leak_copy;
    return n;
}

size_t sbx_test_host_misuses(sbx_test_host *t, const char **what)
{
    size_t n;

    if (!t)
        return 0;
    pthread_mutex_lock(&t->lock);
    n = t->misuses;
    memcpy(t->misuse_copy, t->misuse, sizeof t->misuse_copy);
    pthread_mutex_unlock(&t->lock);
    if (what)
        *what = t->misuse_copy;
    return n;
}

void sbx_test_host_watch(sbx_test_host *t, sbx_test_host_watch_fn fn, void *ud)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->lock);
    t->watch = fn;
    t->watch_ud = ud;
    pthread_mutex_unlock(&t->lock);
}

void sbx_test_host_advance_clock(sbx_test_host *t, uint64_t ns)
{
    if (!t)
        return;
    pthread_mutex_lock(&t->lock);
    t->clock_offset += ns;
    pthread_mutex_unlock(&t->lock);
}
