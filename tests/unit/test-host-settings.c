/* tests/unit/test-host-settings.c - host->settings_read, the typed reader
 * of a provider's [settings] (core/host-settings.c): every type, bounds,
 * defaults, and errors naming the file, the line and the key. */
#include "config.h"

#include <stddef.h>
#include <string.h>

#include <polysandbox/provider.h>
#include <polysandbox/sandbox.h>

#include "conf.h"
#include "tap.h"
#include "settings-read.h"
#include "loader/loader.h"
#include "provider-int.h"

struct conf {
    const char *name;
    int secret;
    int on;
    int64_t level;
    uint64_t timeout_ns;
    uint64_t cache;
    int mode;
    const char *url;
};

static const char *const keys[] = {"name", "on", "level", "timeout", "cache", "mode", "url",
                                   "token", NULL};
static const char *const secrets[] = {"token", NULL};
static const char *const modes[] = {"auto", "fast", "slow", NULL};

static const char *http_only(const char *v)
{
    return strncmp(v, "http://", 7) ? "is not an http:// URL" : NULL;
}

static const sbx_setting_v1 table[] = {
    {.key = "name", .type = SBX_SETTING_STRING, .def = "anon",
     .offset = offsetof(struct conf, name)},
    {.key = "token", .type = SBX_SETTING_SECRET, .offset = offsetof(struct conf, secret)},
    {.key = "on", .type = SBX_SETTING_BOOL, .def = "yes", .offset = offsetof(struct conf, on)},
    {.key = "level", .type = SBX_SETTING_INT, .def = "0", .min = "-5", .max = "40",
     .offset = offsetof(struct conf, level)},
    {.key = "timeout", .type = SBX_SETTING_DURATION, .def = "60s", .min = "1s", .max = "1h",
     .offset = offsetof(struct conf, timeout_ns)},
    {.key = "cache", .type = SBX_SETTING_SIZE, .def = "64M", .max = "1G",
     .offset = offsetof(struct conf, cache)},
    {.key = "mode", .type = SBX_SETTING_ENUM, .def = "auto", .choices = modes,
     .offset = offsetof(struct conf, mode)},
    {.key = "url", .type = SBX_SETTING_STRING, .check = http_only,
     .offset = offsetof(struct conf, url)},
    {.key = NULL},
};

static core_setting settings[16];
static core_provider_conf pconf = {.name = "t", .file = "providers.d/t.ini",
                                   .settings = settings};
static struct sbx_provider prov = {.name = "t", .conf = &pconf};
static sbx_host_handle handle = {.prov = &prov};

/* Sets [settings] from "key=value" lines, each at line 2, 3, ... of the
 * file (or of the command line when @file says so). */
static void set(const char *file, const char *const *kv)
{
    static char store[16][2][128];

    pconf.n_settings = 0;
    for (size_t i = 0; kv[i]; i++) {
        const char *eq = strchr(kv[i], '=');
        snprintf(store[i][0], sizeof store[i][0], "%.*s", (int)(eq - kv[i]), kv[i]);
        snprintf(store[i][1], sizeof store[i][1], "%s", eq + 1);
        settings[i] = (core_setting){.key = store[i][0], .value = store[i][1],
                                     .file = (char *)file,
                                     .line = strcmp(file, "command line") ? (int)i + 2 : 0};
        pconf.n_settings++;
    }
}

static int read_with(const sbx_setting_v1 *t, struct conf *c, const char *const *kv)
{
    set("/etc/ps/providers.d/t.ini", kv);
    memset(c, 0, sizeof *c);
    return core_host_table()->settings_read(&handle, t, sizeof *t, c);
}

static const char *msg(void)
{
    return sbx_error_message(sbx_ctx_last_error(NULL));
}

/* A bad value: SBX_E_CONFIG, and the message holds @want. */
static void bad(const char *what, const char *const *kv, const char *want)
{
    struct conf c;
    int rc = read_with(table, &c, kv);
    ok(rc == SBX_E_CONFIG && strstr(msg(), want), "%s: SBX_E_CONFIG naming \"%s\"", what, want);
    if (rc != SBX_E_CONFIG || !strstr(msg(), want))
        diag("rc %d, message: %s", rc, msg());
}

static void defaults(void)
{
    struct conf c;
    const char *const none[] = {NULL};
    const char *const empty[] = {"timeout=", "name=", NULL};

    ok(read_with(table, &c, none) == SBX_OK, "nothing set: SBX_OK");
    ok(!strcmp(c.name, "anon") && c.secret == 0 && c.on == 1 && c.level == 0 &&
       c.timeout_ns == 60000000000ull && c.cache == 64ull << 20 && c.mode == 0 && !c.url,
       "nothing set: every default, an unset key without one left as it was");
    ok(read_with(table, &c, empty) == SBX_OK && c.timeout_ns == 60000000000ull &&
       !strcmp(c.name, "anon"), "an empty value counts as unset");
}

static void values(void)
{
    struct conf c;
    const char *const kv[] = {"name=box", "token=env:T", "on=Off", "level=-5",
                              "timeout=1500ms", "cache=1.5K", "mode=slow",
                              "url=http://127.0.0.1:1", NULL};
    const char *const bare[] = {"timeout=30", "cache=512", "level=40", "on=1", NULL};

    ok(read_with(table, &c, kv) == SBX_OK || (diag("%s", msg()), 0), "every type set: SBX_OK");
    ok(!strcmp(c.name, "box") && c.secret == 1 && c.on == 0 && c.level == -5 &&
       c.timeout_ns == 1500000000ull && c.cache == 1536 && c.mode == 2 &&
       !strcmp(c.url, "http://127.0.0.1:1"),
       "string, secret (set), bool, int at its minimum, duration, size, enum, checked string");
    ok(read_with(table, &c, bare) == SBX_OK && c.timeout_ns == 30000000000ull &&
       c.cache == 512 && c.level == 40 && c.on == 1,
       "a bare duration is seconds, a bare size bytes; an int at its maximum");
}

static void errors(void)
{
    const char *const t1[] = {"name=x", "timeout=abc", NULL};
    const char *const t2[] = {"timeout=2h", NULL};
    const char *const t3[] = {"timeout=500ms", NULL};
    const char *const l1[] = {"level=41", NULL};
    const char *const l2[] = {"level=-6", NULL};
    const char *const l3[] = {"level=3.5", NULL};
    const char *const c1[] = {"cache=2G", NULL};
    const char *const c2[] = {"cache=12Q", NULL};
    const char *const b1[] = {"on=maybe", NULL};
    const char *const m1[] = {"mode=quick", NULL};
    const char *const u1[] = {"url=ftp://x", NULL};
    const char *const n1[] = {"timeout=-1s", NULL};
    struct conf c;
    int rc;

    bad("a duration that is not one", t1,
        "/etc/ps/providers.d/t.ini:3: timeout = 'abc': not a number");
    bad("a duration above its maximum", t2, "t.ini:2: timeout = '2h': must be from 1s to 1h");
    bad("a duration below its minimum", t3, "timeout = '500ms': must be from 1s to 1h");
    bad("a negative duration", n1, "timeout = '-1s': negative values are not allowed");
    bad("an int above its maximum", l1, "t.ini:2: level = '41': must be from -5 to 40");
    bad("an int below its minimum", l2, "level = '-6': must be from -5 to 40");
    bad("an int with decimals", l3, "level = '3.5': not a whole number");
    bad("a size above its maximum", c1, "t.ini:2: cache = '2G': must be at most 1G");
    bad("a size with an unknown unit", c2, "cache = '12Q': unknown unit");
    bad("a bool that is not one", b1, "t.ini:2: on = 'maybe': not a boolean");
    bad("an enum value not among its choices", m1,
        "t.ini:2: mode = 'quick': use auto, fast or slow");
    bad("a string its check refuses", u1, "t.ini:2: url = 'ftp://x': is not an http:// URL");

    set("command line", t2);
    memset(&c, 0, sizeof c);
    rc = core_host_table()->settings_read(&handle, table, sizeof table[0], &c);
    ok(rc == SBX_E_CONFIG && !strncmp(msg(), "command line: timeout = '2h'", 28),
       "an override from the command line is named so, without a line");
}

static void table_bugs(void)
{
    static const sbx_setting_v1 undeclared[] = {
        {.key = "colour", .type = SBX_SETTING_STRING}, {.key = NULL}};
    static const sbx_setting_v1 secret_as_string[] = {
        {.key = "token", .type = SBX_SETTING_STRING}, {.key = NULL}};
    static const sbx_setting_v1 bad_default[] = {
        {.key = "timeout", .type = SBX_SETTING_DURATION, .def = "soon"}, {.key = NULL}};
    static const sbx_setting_v1 bad_bound[] = {
        {.key = "level", .type = SBX_SETTING_INT, .max = "ten"}, {.key = NULL}};
    static const sbx_setting_v1 bad_type[] = {{.key = "name", .type = 99}, {.key = NULL}};
    const char *const none[] = {NULL};
    struct conf c;

    ok(read_with(undeclared, &c, none) == SBX_E_INVAL && strstr(msg(), "'colour'"),
       "a key the descriptor does not declare: SBX_E_INVAL naming it");
    ok(read_with(secret_as_string, &c, none) == SBX_E_INVAL && strstr(msg(), "'token'"),
       "a credential read as a plain string: SBX_E_INVAL");
    ok(read_with(bad_default, &c, none) == SBX_E_INVAL && strstr(msg(), "the default 'soon'"),
       "a default that does not parse: SBX_E_INVAL naming it");
    ok(read_with(bad_bound, &c, none) == SBX_E_INVAL && strstr(msg(), "bound"),
       "a bound that does not parse: SBX_E_INVAL");
    ok(read_with(bad_type, &c, none) == SBX_E_INVAL && strstr(msg(), "unknown type 99"),
       "an unknown type: SBX_E_INVAL");
    memset(&c, 0, sizeof c);
    ok(core_host_table()->settings_read(&handle, table, 8, &c) == SBX_E_INVAL,
       "an entry_size smaller than ABI 1.9's entry: SBX_E_INVAL");
}

int main(void)
{
    prov.desc.config_keys = keys;
    prov.desc.secret_keys = secrets;
    ok(SBX_HOST_HAS(core_host_table(), settings_read), "the host table has settings_read");
    defaults();
    values();
    errors();
    table_bugs();
    return tap_done();
}
