/* tests/fuzz/host.c - a provider host table for the fuzz targets */
#include "config.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core-int.h"
#include "canned.h"
#include "fuzz.h"
#include "host.h"

static _Thread_local char last_error[2048];

#define CONF(h) ((const fz_host_conf *)(const void *)(h))

/* Breaks off when a secret's value is in @text. */
static void check(sbx_host_handle *h, const char *text, const char *what)
{
    const char *const *secrets = CONF(h)->secrets;

    for (size_t i = 0; secrets && secrets[i]; i += 2)
        if (secrets[i + 1][0] && strstr(text, secrets[i + 1]) && !fz_canned_holds(secrets[i + 1]))
            fz_fail("the secret '%s' is in %s: %s", secrets[i], what, text);
}

static void h_log(sbx_host_handle *h, int level, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int h_set_error(sbx_host_handle *h, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void h_log(sbx_host_handle *h, int level, const char *fmt, ...)
{
    char line[2048];
    va_list ap;

    (void)level;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    check(h, line, "a log line");
}

static int h_set_error(sbx_host_handle *h, int code, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    check(h, last_error, "an error message");
    if (code == SBX_OK)
        fz_fail("set_error with SBX_OK: %s", last_error);
    return code;
}

static const char *h_config_get(sbx_host_handle *h, const char *key)
{
    const char *const *cfg = CONF(h)->settings;

    for (size_t i = 0; cfg && cfg[i]; i += 2)
        if (!strcmp(cfg[i], key))
            return cfg[i + 1];
    return NULL;
}

static int h_secret_get(sbx_host_handle *h, const char *key, const char **out, size_t *len)
{
    const char *const *secrets = CONF(h)->secrets;

    for (size_t i = 0; secrets && secrets[i]; i += 2) {
        if (!strcmp(secrets[i], key)) {
            char *v = strdup(secrets[i + 1]);
            if (!v)
                return SBX_E_NOMEM;
            *out = v;
            *len = strlen(v);
            return SBX_OK;
        }
    }
    return SBX_E_NOT_FOUND;
}

static void h_secret_release(sbx_host_handle *h, const char *v)
{
    (void)h;
    free((void *)v);
}

static void *h_alloc(size_t n)
{
    return malloc(n ? n : 1);
}

static void h_free(void *p)
{
    free(p);
}

static const char *h_state_dir(sbx_host_handle *h)
{
    static char *dir;

    (void)h;
    if (!dir)
        dir = fz_path("state");
    return dir;
}

static void h_retry_after(sbx_host_handle *h, uint64_t ms)
{
    (void)h;
    (void)ms;
}

static void h_not_started(sbx_host_handle *h)
{
    (void)h;
}

/* As a core whose administrator allowed it (unenforced_limits = allow):
 * the providers go on, so what follows create is reached. */
static int h_limits_unenforced(sbx_host_handle *h, uint64_t limits, const char *why)
{
    (void)h;
    (void)limits;
    (void)why;
    return SBX_OK;
}

/* The core's reader (core/host-settings.c) over the fixed settings, its
 * error passed on as set_error would. */
static const core_setting *h_lookup(void *ud, const char *key)
{
    static _Thread_local core_setting s;
    const char *v = h_config_get(ud, key);

    s = (core_setting){ .key = (char *)key, .value = (char *)v, .file = "fuzz", .line = 1 };
    return v ? &s : NULL;
}

static int h_settings_read(sbx_host_handle *h, const sbx_setting_v1 *t, size_t size, void *base)
{
    const sbx_provider_v1 *d = CONF(h)->desc;
    int rc = core_settings_read(d ? d->name : "?", d ? d->config_keys : NULL,
                                d ? d->secret_keys : NULL, h_lookup, h, t, size, base);

    if (rc != SBX_OK)
        return h_set_error(h, rc, "%s", sbx_error_message(sbx_ctx_last_error(NULL)));
    return SBX_OK;
}

static int h_path_check(sbx_host_handle *h, const char *path)
{
    char msg[CORE_MSG_MAX];
    int rc = core_path_check(path, msg, sizeof msg);
    return rc == SBX_OK ? SBX_OK : h_set_error(h, rc, "%s", msg);
}

static uint64_t h_clock_ns(sbx_host_handle *h)
{
    (void)h;
    return core_now_ns();
}

static const sbx_host_v1 table = {
    .struct_size = sizeof table, .abi_major = SBX_ABI_MAJOR, .abi_minor = SBX_ABI_MINOR,
    .log = h_log, .set_error = h_set_error, .config_get = h_config_get,
    .secret_get = h_secret_get, .secret_release = h_secret_release,
    .alloc = h_alloc, .free = h_free, .state_dir = h_state_dir,
    .retry_after = h_retry_after, .not_started = h_not_started,
    .limits_unenforced = h_limits_unenforced, .settings_read = h_settings_read,
    .path_check = h_path_check, .clock_ns = h_clock_ns,
};

const sbx_host_v1 *fz_host(void)
{
    return &table;
}

const char *fz_host_error(void)
{
    return last_error;
}

void fz_host_clear(void)
{
    last_error[0] = '\0';
}

/* ---- driving a provider ---------------------------------------------------- */

void *fz_provider_start(const sbx_provider_v1 *d, fz_host_conf *conf, const char **settings)
{
    void *prov = NULL;

    for (size_t i = 0; settings[i]; i += 2)
        if (!settings[i + 1])
            settings[i + 1] = fz_canned_url();
    conf->settings = settings;
    conf->desc = d;
    if (d->ops->init(fz_host(), fz_host_handle(conf), &prov) != SBX_OK)
        fz_fail("the %s provider does not start: %s", d->name, fz_host_error());
    return prov;
}

#define MAX_ANSWERS 32

enum {
    OP_LIST = 1, OP_CREATE = 2, OP_EXEC = 4, OP_DOWNLOAD = 8, OP_UPLOAD = 16, OP_FILES = 32,
    OP_HEALTH = 64, OP_RELEASE = 128,
};

/* The core's sink, as far as a provider can tell: it holds the output caps
 * (it says stop past one), and the caller may ask to stop sooner. */
struct sink {
    uint64_t got[3];
    uint64_t cap[3];
    uint64_t stop_after;    /* the caller asks to stop past this many bytes; 0: never */
    bool stopped;           /* it said stop: the provider must deliver no more */
};

static int sink_write(void *ud, int stream, const void *buf, size_t len)
{
    struct sink *s = ud;

    (void)buf;
    if (stream != SBX_STREAM_STDOUT && stream != SBX_STREAM_STDERR)
        fz_fail("output on stream %d", stream);
    if (len == 0)
        fz_fail("an empty write to the sink");
    if (s->stopped)
        fz_fail("%zu bytes delivered after the sink said stop", len);
    s->got[stream] += len;
    s->stopped = s->got[stream] > s->cap[stream] ||
                 (s->stop_after && s->got[stream] > s->stop_after);
    return s->stopped;
}

static int list_cb(void *ud, const char *id, const sbx_kv_v1 *labels, size_t n, uint64_t created)
{
    (void)created;
    ++*(size_t *)ud;
    if (!id || !*id || strlen(id) >= SBX_ID_MAX)
        fz_fail("list gave a sandbox id of %zu bytes", id ? strlen(id) : 0);
    for (size_t i = 0; i < n; i++)
        if (!labels[i].key || !labels[i].value)
            fz_fail("list gave a label without a key or value");
    return 0;
}

/* A failed op says why. */
static void failed(int rc, const char *op)
{
    if (rc != SBX_OK && !fz_host_error()[0])
        fz_fail("%s failed (%d) without an error message", op, rc);
}

static void exec_one(const sbx_provider_v1 *d, void *prov, void *sb, unsigned ops, unsigned arg)
{
    static const char *const argv[] = { "sh", "-c", "cat in.txt; echo done >&2", NULL };
    static const sbx_kv_v1 env[] = { { "FZ", "1" } };
    static const sbx_file_v1 files[] = { { "in.txt", "hello\n", 6, 0644 },
                                         { "bin/run", "#!/bin/sh\n", 10, 0755 } };
    struct sink s = { { 0, 0, 0 }, { 0, (uint64_t)arg * 8, (uint64_t)arg * 8 + 1 },
                      (arg & 1) ? arg : 0, false };
    sbx_output_sink_v1 sink = { sink_write, &s };
    sbx_exec_spec_v1 spec = {
        .struct_size = sizeof spec, .argv = argv, .env = env, .n_env = 1,
        .cwd = (arg & 2) ? "sub/dir" : NULL,
        .files = (ops & OP_FILES) ? files : NULL, .n_files = (ops & OP_FILES) ? 2 : 0,
        .timeout_ns = UINT64_C(2000000000),
        .stdout_cap = (uint64_t)arg * 8, .stderr_cap = (uint64_t)arg * 8 + 1,
    };
    sbx_exec_outcome_v1 out;
    int rc;

    memset(&out, 0, sizeof out);
    out.struct_size = sizeof out;
    out.exit_code = -1;
    out.cpu_ns = out.peak_memory_bytes = -1;
    fz_host_clear();
    rc = d->ops->exec(prov, sb, &spec, &sink, &out);
    failed(rc, "exec");
    /* The caps are the sink's (the core's): what a provider owes is to
     * deliver nothing once it said stop, checked in sink_write. */
    if (rc == SBX_OK && ((int)out.status < 0 || out.status >= SBX_RUN_STATUS_COUNT))
        fz_fail("exec gave status %d", (int)out.status);
    if (rc == SBX_OK && out.status == SBX_RUN_OK && out.exit_code != 0)
        fz_fail("exec says ok with exit code %d", out.exit_code);
    if (rc == SBX_OK && out.status == SBX_RUN_NONZERO_EXIT &&
        (out.exit_code < 1 || out.exit_code > 255))
        fz_fail("exec says nonzero_exit with exit code %d", out.exit_code);
}

void fz_drive(const sbx_provider_v1 *d, void *prov, const uint8_t *data, size_t size)
{
    static const sbx_kv_v1 labels[] = { { "polysandbox.owner", "0@fuzz" },
                                        { "team", "a b&c=d" } };
    fz_part parts[MAX_ANSWERS];
    unsigned ops = size ? data[0] : 0, arg = size > 1 ? data[1] : 0;
    size_t n = fz_split(size > 2 ? data + 2 : data, size > 2 ? size - 2 : 0, parts, MAX_ANSWERS);
    char id[SBX_ID_MAX] = "";
    void *sb = NULL;
    int rc;

    fz_canned_set(parts, n);
    if ((ops & OP_LIST) && d->ops->list) {
        size_t seen = 0;
        fz_host_clear();
        failed(d->ops->list(prov, labels, (arg & 4) ? 2 : 0, list_cb, &seen), "list");
    }
    if ((ops & OP_HEALTH) && d->ops->health) {   /* optional (cloudflare has none) */
        fz_host_clear();
        failed(d->ops->health(prov), "health");
    }
    fz_host_clear();
    if (ops & OP_CREATE) {
        sbx_create_spec_v1 spec = {
            .struct_size = sizeof spec, .template_name = "python",
            .image = (arg & 8) ? "python:3.11-slim" : NULL,
            .limits = { .wall_ns = UINT64_C(10000000000), .memory_bytes = (uint64_t)arg << 20 },
            .network = SBX_NET_NONE, .labels = labels, .n_labels = 2,
            .env = labels + 1, .n_env = 0, .ttl_ns = (arg & 16) ? UINT64_C(60000000000) : 0,
            .image_explicit = (arg & 32) != 0,  /* asked for: refused where it cannot run */
        };
        rc = d->ops->create(prov, &spec, &sb, id);
        failed(rc, "create");
        if (rc == SBX_OK && (!id[0] || strnlen(id, SBX_ID_MAX) == SBX_ID_MAX || !sb))
            fz_fail("create succeeded without an id or a handle");
    } else if (d->ops->attach) {
        rc = d->ops->attach(prov, "ifuzz0sandbox", &sb);
        failed(rc, "attach");
    }
    if (!sb)
        return;
    if (ops & OP_EXEC)
        exec_one(d, prov, sb, ops, arg);
    if ((ops & OP_DOWNLOAD) && d->ops->download) {
        void *buf = NULL;
        size_t len = 0, max = (size_t)arg * 64;
        fz_host_clear();
        rc = d->ops->download(prov, sb, "out/result.txt", max, &buf, &len);
        failed(rc, "download");
        if (rc == SBX_OK && len > max)
            fz_fail("download gave %zu bytes under a limit of %zu", len, max);
        if (rc == SBX_OK)
            free(buf);
    }
    if ((ops & OP_UPLOAD) && d->ops->upload) {
        fz_host_clear();
        failed(d->ops->upload(prov, sb, "up/load.txt", "data\n", 5, 0600), "upload");
    }
    fz_host_clear();
    if ((ops & OP_RELEASE) && d->ops->release)
        d->ops->release(prov, sb);
    else
        failed(d->ops->destroy(prov, sb), "destroy");
}
