/* example-test.c - unit tests of the example provider, without the core
 *
 * What a provider's author writes to test the ops directly: the test host
 * of <polysandbox/provider-test.h> stands in for the core (settings from
 * the test, errors and reported limits kept for the test to read), and
 * the descriptor's ops are called as the core would call them.  Built
 * with example.c into one program (`make check`); prints TAP.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <polysandbox/provider-test.h>

extern const sbx_provider_v1 sandbox_provider_v1;

static int n, failed;

static void check(int ok, const char *what, const char *detail)
{
    printf("%sok %d - %s\n", ok ? "" : "not ", ++n, what);
    if (!ok) {
        failed++;
        if (detail && *detail)
            printf("# %s\n", detail);
    }
}

struct out {
    char buf[256];
    size_t len;
};

static int collect(void *ud, int stream, const void *data, size_t len)
{
    struct out *o = ud;

    if (stream == SBX_STREAM_STDOUT && len < sizeof o->buf - o->len) {
        memcpy(o->buf + o->len, data, len);
        o->len += len;
    }
    return 0;
}

/* A bad value is refused at init, with the place and the key named. */
static void bad_setting(void)
{
    const sbx_provider_ops_v1 *ops = sandbox_provider_v1.ops;
    sbx_test_host *t = sbx_test_host_new(&sandbox_provider_v1);
    const char *msg = "";
    void *prov = NULL;
    int rc;

    check(t && sbx_test_host_set(t, "nice", "40") == SBX_OK, "a test host takes nice = 40",
          NULL);
    rc = ops->init(sbx_test_host_table(t), sbx_test_host_handle(t), &prov);
    check(rc == SBX_E_CONFIG && sbx_test_host_error(t, &msg) == SBX_E_CONFIG &&
              strstr(msg, "nice") && strstr(msg, "'40'") && strstr(msg, "test host"),
          "init refuses nice = 40, naming the key, the value and where it came from", msg);
    check(sbx_test_host_set(t, "no_such_key", "1") == SBX_E_CONFIG,
          "a key the descriptor does not declare is refused, as the loader does", NULL);
    sbx_test_host_free(t);
}

/* create, exec and destroy with good settings. */
static void lifecycle(void)
{
    const sbx_provider_ops_v1 *ops = sandbox_provider_v1.ops;
    sbx_test_host *t = sbx_test_host_new(&sandbox_provider_v1);
    const char *argv[] = { "sh", "-c", "echo hi from $((6*7))", NULL };
    const char *why = "", *msg = "";
    sbx_create_spec_v1 cs = { .struct_size = sizeof cs };
    sbx_exec_spec_v1 es = { .struct_size = sizeof es };
    sbx_exec_outcome_v1 oc = { .struct_size = sizeof oc };
    struct out o = { .len = 0 };
    sbx_output_sink_v1 sink = { .write = collect, .ud = &o };
    char id[SBX_ID_MAX];
    void *prov = NULL, *sb = NULL;
    int rc;

    if (!t || sbx_test_host_set(t, "work_root", "/tmp") != SBX_OK ||
        ops->init(sbx_test_host_table(t), sbx_test_host_handle(t), &prov) != SBX_OK) {
        sbx_test_host_error(t, &msg);
        check(0, "init with work_root = /tmp", msg);
        sbx_test_host_free(t);
        return;
    }
    check(1, "init with work_root = /tmp", NULL);
    cs.limits = (sbx_limits_v1){ .wall_ns = 10000000000u, .cpu_ns = 10000000000u,
                                 .memory_bytes = 1u << 28, .pids = 64, .nofile = 64,
                                 .fsize_bytes = 1u << 20, .disk_bytes = 1u << 20,
                                 .stdout_bytes = 1024, .stderr_bytes = 1024 };
    rc = ops->create(prov, &cs, &sb, id);
    sbx_test_host_error(t, &msg);
    check(rc == SBX_OK && sb && id[0], "create makes a sandbox with an id", msg);
    check((sbx_test_host_unenforced(t, &why) & SBX_LIMIT_BIT_MEMORY) && *why,
          "create reports that memory is not limited, with a reason", why);
    if (rc == SBX_OK) {
        es.argv = argv;
        es.timeout_ns = 10000000000u;
        es.stdout_cap = es.stderr_cap = 1024;
        es.cancel_fd = es.stdin_fd = es.signal_fd = -1;
        rc = ops->exec(prov, sb, &es, &sink, &oc);
        o.buf[o.len] = '\0';
        check(rc == SBX_OK && oc.status == SBX_RUN_OK && oc.exit_code == 0 &&
                  !strcmp(o.buf, "hi from 42\n"),
              "exec runs sh and its output reaches the sink", o.buf);
        {
            void *data = NULL;
            size_t len = 0;
            check(ops->upload(prov, sb, "d/in.txt", "abc", 3, 0600) == SBX_OK &&
                      ops->download(prov, sb, "d/in.txt", 16, &data, &len) == SBX_OK &&
                      len == 3 && !memcmp(data, "abc", 3),
                  "upload then download d/in.txt", NULL);
            sbx_test_host_table(t)->free(data);
            sbx_test_host_clear(t);
            rc = ops->upload(prov, sb, "../out.txt", "x", 1, 0600);
            sbx_test_host_error(t, &msg);
            check(rc == SBX_E_PATH && strstr(msg, "'..'"),
                  "upload of ../out.txt is refused by the host's path rule", msg);
        }
        check(ops->destroy(prov, sb) == SBX_OK, "destroy", NULL);
    }
    ops->fini(prov);
    check(sbx_test_host_misuses(t, &msg) == 0,
          "no misuse of the host table (set_error without a code, unknown levels)", msg);
    sbx_test_host_free(t);
}

int main(void)
{
    /* A sink's reader may be gone: as in the core, a write fails rather
     * than kills. */
    signal(SIGPIPE, SIG_IGN);
    printf("1..11\n");
    bad_setting();
    lifecycle();
    return failed ? 1 : 0;
}
