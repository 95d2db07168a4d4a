/* tests/unit/test-test-host.c - the test host of <polysandbox/provider-test.h>
 *
 * What the example's unit tests (tests/sdk-example.sh) do not reach: the
 * credentials, the retry hints, the limits a provider reports, the log
 * counts, clearing, and settings_read's typed values.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <polysandbox/provider.h>
#include <polysandbox/sandbox.h>

#include "polysandbox/provider-test.h"
#include "polysandbox/sandbox.h"
#include "tap.h"

static const char *const keys[] = { "timeout", "max_size", "token", NULL };
static const char *const secrets[] = { "token", "api_key", NULL };
static const sbx_provider_v1 desc = {
    .magic = SBX_PROVIDER_MAGIC, .abi_major = SBX_ABI_MAJOR, .abi_minor = SBX_ABI_MINOR,
    .name = "probe", .config_keys = keys, .secret_keys = secrets,
};

struct conf {
    uint64_t timeout_ns, max_size;
    int has_token;
};

static const sbx_setting_v1 table[] = {
    { .key = "timeout", .type = SBX_SETTING_DURATION, .def = "30s",
      .offset = offsetof(struct conf, timeout_ns) },
    { .key = "max_size", .type = SBX_SETTING_SIZE, .def = "1M",
      .offset = offsetof(struct conf, max_size) },
    { .key = "token", .type = SBX_SETTING_SECRET, .offset = offsetof(struct conf, has_token) },
    { .key = NULL },
};

struct seen {
    int logs, errors, last_code;
};

static void watcher(void *ud, bool is_error, int n, const char *text)
{
    struct seen *w = ud;

    (void)text;
    if (is_error) {
        w->errors++;
        w->last_code = n;
    } else {
        w->logs++;
    }
}

int main(void)
{
    sbx_test_host *t = sbx_test_host_new(&desc);
    const sbx_host_v1 *host = sbx_test_host_table(t);
    sbx_host_handle *h = sbx_test_host_handle(t);
    struct conf c = { 0 };
    const char *v = NULL, *msg = NULL, *why = NULL;
    size_t len = 0;

    ok(sbx_test_host_new(NULL) == NULL, "no host without a descriptor");
    ok(t && host->struct_size == sizeof(sbx_host_v1) && SBX_HOST_HAS(host, settings_read),
       "the table is a whole ABI %d.%d table", SBX_ABI_MAJOR, SBX_ABI_MINOR);

    ok(host->settings_read(h, table, sizeof table[0], &c) == SBX_OK &&
           c.timeout_ns == 30000000000u && c.max_size == 1048576 && !c.has_token,
       "settings_read gives the defaults when nothing is set");
    ok(sbx_test_host_set(t, "timeout", "250ms") == SBX_OK &&
           sbx_test_host_set(t, "max_size", "2K") == SBX_OK &&
           sbx_test_host_set(t, "token", "s3cr3t") == SBX_OK &&
           host->settings_read(h, table, sizeof table[0], &c) == SBX_OK &&
           c.timeout_ns == 250000000u && c.max_size == 2048 && c.has_token,
       "settings_read reads a duration, a size and a credential's presence");
    ok(sbx_test_host_set(t, "timeout", "soon") == SBX_OK &&
           host->settings_read(h, table, sizeof table[0], &c) == SBX_E_CONFIG &&
           sbx_test_host_error(t, &msg) == SBX_E_CONFIG &&
           strstr(msg, "test host: timeout = 'soon'"),
       "a bad duration is refused with the place, key and value");
    ok(!strcmp(host->config_get(h, "timeout"), "soon") && !host->config_get(h, "nope"),
       "config_get answers the value set last, NULL for an unset key");

    ok(host->secret_get(h, "token", &v, &len) == SBX_OK && v && len == 6 &&
           !strcmp(v, "s3cr3t"),
       "secret_get opens a credential");
    host->secret_release(h, v);
    ok(host->secret_get(h, "timeout", &v, &len) == SBX_E_NOT_FOUND &&
           sbx_test_host_error(t, &msg) == SBX_E_NOT_FOUND && strstr(msg, "'timeout'"),
       "secret_get refuses a key that is not a credential, naming it");

    ok(sbx_test_host_set(t, "api_key", "k-1") == SBX_OK &&
           host->secret_get(h, "api_key", &v, &len) == SBX_OK && !strcmp(v, "k-1") &&
           !host->config_get(h, "api_key"),
       "a credential only secret_keys declares is set and opened, not a setting");
    host->secret_release(h, v);
    ok(sbx_test_host_set(t, "nope", "x") == SBX_E_CONFIG &&
           sbx_test_host_error(t, &msg) == SBX_E_CONFIG && strstr(msg, "unknown key 'nope'"),
       "a key neither list declares is refused, naming it");

    sbx_test_host_clear(t);
    ok(sbx_test_host_error(t, &msg) == SBX_OK && !*msg && !sbx_test_host_not_started(t) &&
           sbx_test_host_retry_after_ms(t) == 0,
       "clear forgets the error and the hints");
    host->retry_after(h, 1500);
    host->not_started(h);
    ok(host->set_error(h, SBX_E_RATE_LIMITED, "429 from %s", "backend") ==
               SBX_E_RATE_LIMITED &&
           sbx_test_host_error(t, &msg) == SBX_E_RATE_LIMITED &&
           !strcmp(msg, "429 from backend") && sbx_test_host_retry_after_ms(t) == 1500 &&
           sbx_test_host_not_started(t),
       "set_error, retry_after and not_started are kept");

    ok(host->limits_unenforced(h, SBX_LIMIT_BIT_MEMORY, "no memory cgroup") == SBX_OK &&
           sbx_test_host_unenforced(t, &why) == SBX_LIMIT_BIT_MEMORY &&
           !strcmp(why, "no memory cgroup"),
       "limits_unenforced is allowed by default and recorded with its reason");
    sbx_test_host_refuse_unenforced(t, true);
    ok(host->limits_unenforced(h, SBX_LIMIT_BIT_PIDS, "no pids cgroup") == SBX_E_PERM &&
           sbx_test_host_error(t, &msg) == SBX_E_PERM && strstr(msg, "no pids cgroup") &&
           sbx_test_host_unenforced(t, NULL) == (SBX_LIMIT_BIT_MEMORY | SBX_LIMIT_BIT_PIDS),
       "refused, limits_unenforced answers SBX_E_PERM with the reason");

    host->log(h, SBX_LOG_INFO, "one");
    host->log(h, SBX_LOG_DEBUG, "two");
    host->log(h, SBX_LOG_DEBUG, "three");
    ok(sbx_test_host_log_count(t, SBX_LOG_INFO) == 1 &&
           sbx_test_host_log_count(t, SBX_LOG_DEBUG) == 3 &&
           sbx_test_host_log_count(t, SBX_LOG_ERROR) == 0,
       "log lines are counted by level");

    ok(host->state_dir(h) == NULL && sbx_test_host_set_state_dir(t, "/var/x") == SBX_OK &&
           !strcmp(host->state_dir(h), "/var/x"),
       "state_dir answers what was set");
    ok(host->private_paths(h) && !host->private_paths(h)[0], "no private paths");

    {
        uint64_t before = host->clock_ns(h);
        sbx_test_host_advance_clock(t, 3600000000000u);
        ok(host->clock_ns(h) - before >= 3600000000000u, "the clock moves by what a test "
           "advances it");
    }
    ok(host->path_check(h, "a/b.txt") == SBX_OK, "path_check takes a/b.txt");
    {
        static const char *const bad[] = { "", "/etc/passwd", "a/../b", "./a", "a//b", "a/",
                                           "a\nb", "a\x7f" };
        int refused = 0;
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
            refused += host->path_check(h, bad[i]) == SBX_E_PATH;
        ok(refused == (int)(sizeof bad / sizeof bad[0]), "path_check refuses empty, absolute, "
           "'..', '.', empty parts and control characters (%d of %zu)", refused,
           sizeof bad / sizeof bad[0]);
    }
    ok(host->path_check(h, "x/\033[2J") == SBX_E_PATH &&
           sbx_test_host_error(t, &msg) == SBX_E_PATH && strstr(msg, "'x/\\x1b[2J'") &&
           strstr(msg, "control character"),
       "the message escapes a control character");
    {
        char reason[256];
        ok(sbx_path_check("plots/a.png", reason, sizeof reason) == SBX_OK &&
               sbx_path_check("plots/../a", reason, sizeof reason) == SBX_E_PATH &&
               strstr(reason, "'plots/../a'") && strstr(reason, "'..'") &&
               sbx_path_check("a\nb", NULL, 0) == SBX_E_PATH,
           "sbx_path_check: the hosts' rule, public, with or without a message");
        ok(sbx_error_known(SBX_OK) && sbx_error_known(SBX_E_PATH) &&
               sbx_error_known(SBX_E_LOAD_UNSAFE) && !sbx_error_known(77) &&
               !sbx_error_known(-1),
           "sbx_error_known: the codes SBX_* names and no other");
    }

    {
        struct seen w = { 0, 0, 0 };
        const char *text = NULL;
        size_t before = sbx_test_host_misuses(t, NULL);

        ok(sbx_test_host_leaks(t, &text) == 0 && !*text, "no leak counted yet");
        sbx_test_host_watch(t, watcher, &w);
        host->log(h, SBX_LOG_DEBUG, "auth with %s failed", "s3cr3t");
        host->set_error(h, SBX_E_AUTH, "key %s refused", "s3cr3t");
        host->log(h, SBX_LOG_DEBUG, "auth with %s failed", "s3cr...");
        ok(sbx_test_host_leaks(t, &text) == 2 && !strcmp(text, "key s3cr3t refused"),
           "a credential's value in a log line or an error is counted, the last kept");
        ok(w.logs == 2 && w.errors == 1 && w.last_code == SBX_E_AUTH,
           "the watcher sees every log line and error with its level or code");
        host->set_error(h, SBX_OK, "not an error");
        host->set_error(h, 77, "a code of its own");
        host->log(h, 9, "a level of its own");
        ok(sbx_test_host_misuses(t, &text) == before + 3 && strstr(text, "level 9"),
           "set_error with SBX_OK or an unknown code and an unknown log level are misuses");
        sbx_test_host_watch(t, NULL, NULL);
        host->log(h, SBX_LOG_DEBUG, "unwatched");
        ok(w.logs == 3, "no watcher after it is removed (%d)", w.logs);
    }
    sbx_test_host_free(t);
    sbx_test_host_free(NULL);
    return tap_done();
}
