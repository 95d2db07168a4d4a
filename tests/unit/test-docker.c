/* tests/unit/test-docker.c - the docker provider's pure parts: the attach
 * stream demultiplexer and the helper's report, the create body
 * (limits to HostConfig), the limits label, image aliases, the tar of an
 * upload and its extraction, the containers' seccomp profile.  No daemon
 * needed. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <polysandbox/provider.h>
#include <polysandbox/sandbox.h>

#include "docker-int.h"
#include "tap.h"

struct got {
    char buf[3][4096];
    size_t len[3];
    int calls;
};

static int collect(void *ud, int stream, const void *b, size_t n)
{
    struct got *g = ud;
    g->calls++;
    if (g->len[stream] + n <= sizeof g->buf[stream]) {
        memcpy(g->buf[stream] + g->len[stream], b, n);
        g->len[stream] += n;
    }
    return 0;
}

static size_t frame(unsigned char *out, int stream, const char *s, size_t n)
{
    out[0] = (unsigned char)stream;
    out[1] = out[2] = out[3] = 0;
    out[4] = (unsigned char)(n >> 24);
    out[5] = (unsigned char)(n >> 16);
    out[6] = (unsigned char)(n >> 8);
    out[7] = (unsigned char)n;
    memcpy(out + 8, s, n);
    return n + 8;
}

static void test_demux(size_t step)
{
    static const char nonce[] = "00112233445566778899aabbccddeeff";
    unsigned char raw[2048];
    size_t n = 0;
    char rep[128];
    snprintf(rep, sizeof rep, "\036SBX%s:s=15 cpu=1234 rss=4096\n", nonce);
    n += frame(raw + n, 2, "err1\n\036S", 7);          /* a fake start of the mark */
    n += frame(raw + n, 1, "out\0bin", 7);
    n += frame(raw + n, 2, "BX-not-it\n", 10);
    n += frame(raw + n, 2, rep, 20);                     /* the report, split */
    n += frame(raw + n, 2, rep + 20, strlen(rep) - 20);
    struct got g = {0};
    struct dk_demux d;
    dk_demux_init(&d, nonce, collect, &g);
    int rc = 0;
    for (size_t i = 0; i < n && !rc; i += step)
        rc = dk_demux_feed(&d, raw + i, i + step <= n ? step : n - i);
    struct dk_report r;
    bool have = dk_demux_finish(&d, &r);
    ok(rc == 0, "demux (feeding %zu bytes at a time): frames accepted", step);
    ok(g.len[1] == 7 && !memcmp(g.buf[1], "out\0bin", 7), "stdout byte-exact (NUL kept)");
    ok(g.len[2] == 17 && !memcmp(g.buf[2], "err1\n\036SBX-not-it\n", 17),
       "stderr keeps a mark-like prefix that is not the report");
    ok(have && !strcmp(r.status, "s") && r.value == 15 && r.cpu_ns == 1234 && r.rss == 4096,
       "the report is parsed (signal 15, cpu, rss) and not delivered as output");
}

static void test_demux_edge(void)
{
    struct got g = {0};
    struct dk_demux d;
    unsigned char raw[64];
    dk_demux_init(&d, "abc", collect, &g);
    size_t n = frame(raw, 2, "tail\036SB", 7);
    dk_demux_feed(&d, raw, n);
    struct dk_report r;
    ok(!dk_demux_finish(&d, &r) && g.len[2] == 7 && !memcmp(g.buf[2], "tail\036SB", 7),
       "no report: held-back bytes are delivered at the end");
    unsigned char bad[8] = {7, 0, 0, 0, 0, 0, 0, 1};
    dk_demux_init(&d, "abc", collect, &g);
    ok(dk_demux_feed(&d, bad, 8) < 0, "an unknown stream type is a framing error");
    char rep[] = "\036SBXabc:x=300 cpu=1 rss=2\n";
    dk_demux_init(&d, "abc", collect, &g);
    n = frame(raw, 2, rep, strlen(rep));
    dk_demux_feed(&d, raw, n);
    ok(dk_demux_finish(&d, &r) && !strcmp(r.status, "x") && r.value == 300,
       "exit report parsed");
    char bogus[] = "\036SBXabc:x=1 cpu=1\n";
    struct got g2 = {0};
    dk_demux_init(&d, "abc", collect, &g2);
    n = frame(raw, 2, bogus, strlen(bogus));
    dk_demux_feed(&d, raw, n);
    ok(!dk_demux_finish(&d, &r) && g2.len[2] == strlen(bogus),
       "a malformed report is not trusted and is delivered as stderr");
    /* Podman adds its own words to stderr after the exec ended. */
    char podman[] = "\036SBXabc:x=0 cpu=1 rss=2\nError: read unixpacket "
                    "@->/proc/self/fd/16/attach: read: connection reset by peer\n";
    struct got g3 = {0};
    dk_demux_init(&d, "abc", collect, &g3);
    n = frame(raw, 2, podman, 40);
    dk_demux_feed(&d, raw, n);
    unsigned char raw2[128];
    n = frame(raw2, 2, podman + 40, strlen(podman) - 40);
    dk_demux_feed(&d, raw2, n);
    ok(dk_demux_finish(&d, &r) && !strcmp(r.status, "x") && r.value == 0 && r.rss == 2 &&
       g3.len[2] == 0, "a report followed by the daemon's words (Podman): parsed, words dropped");
    ok(dk_report_parse("x=3 cpu=1 rss=2 pids=1\n", &r) && r.value == 3 && r.pids_hit &&
       dk_report_parse("x=3 cpu=1 rss=2\n", &r) && !r.pids_hit,
       "report: pids=1 when the pids limit refused a fork");
    ok(!dk_report_parse("x=3 cpu=1 rss=2 pids=2\n", &r), "report: nothing else after rss");
}

static void test_spec(void)
{
    sbx_kv_v1 env[] = {{"A", "1"}};
    sbx_kv_v1 labels[] = {{"owner", "me"}};
    sbx_create_spec_v1 s = {.struct_size = sizeof s, .env = env, .n_env = 1,
                            .labels = labels, .n_labels = 1, .ttl_ns = 60000000000ull,
                            .template_name = "python"};
    s.limits = (sbx_limits_v1){.wall_ns = 1, .cpu_ns = 2, .memory_bytes = 64 << 20, .pids = 32,
                               .nofile = 100, .fsize_bytes = 1 << 20, .disk_bytes = 8 << 20,
                               .stdout_bytes = 5, .stderr_bytes = 6};
    struct dk_create_args a = {.id = "sbx-00", .image = "img", .init_volume = "vol",
                               .nano_cpus = 500000000, .readonly_rootfs = true,
                               .now_unix_ns = 1000000000ull, .spec = &s, .runtime = "runsc"};
    char err[256];
    json_t *b = dk_create_body(&a, err, sizeof err);
    json_t *hc = json_object_get(b, "HostConfig");
    ok(b != NULL, "create body built");
    ok(json_integer_value(json_object_get(hc, "Memory")) == 64 << 20 &&
       json_integer_value(json_object_get(hc, "MemorySwap")) == 64 << 20,
       "Memory and MemorySwap (= Memory: no swap)");
    ok(json_integer_value(json_object_get(hc, "NanoCpus")) == 500000000 &&
       json_integer_value(json_object_get(hc, "PidsLimit")) == 32, "NanoCpus and PidsLimit");
    ok(!strcmp(json_string_value(json_object_get(hc, "NetworkMode")), "none") &&
       json_is_true(json_object_get(hc, "ReadonlyRootfs")) &&
       !strcmp(json_string_value(json_array_get(json_object_get(hc, "CapDrop"), 0)), "ALL") &&
       !strcmp(json_string_value(json_array_get(json_object_get(hc, "SecurityOpt"), 0)),
               "no-new-privileges"), "network none, read-only root, CapDrop ALL, no-new-privileges");
    ok(!strcmp(json_string_value(json_object_get(hc, "Runtime")), "runsc"), "runtime");
    json_t *add = json_object_get(hc, "CapAdd");
    ok(json_array_size(add) == 3 && !strcmp(json_string_value(json_array_get(add, 0)), "SETUID") &&
       !strcmp(json_string_value(json_array_get(add, 1)), "KILL") &&
       !strcmp(json_string_value(json_array_get(add, 2)), "SETPCAP"),
       "CapAdd: the helper's SETUID, KILL and SETPCAP only");
    ok(json_array_size(json_object_get(hc, "SecurityOpt")) == 1,
       "no seccomp profile given: the daemon's (SecurityOpt no-new-privileges only)");
    ok(json_integer_value(json_object_get(hc, "ShmSize")) == 8 << 20,
       "ShmSize: the disk limit (not Docker's 64 MiB)");
    ok(strstr(json_string_value(json_object_get(json_object_get(hc, "Tmpfs"), "/tmp")),
              "nr_inodes=16384") != NULL, "/tmp: a tmpfs of 16384 inodes");
    json_t *ul = json_object_get(hc, "Ulimits");
    ok(json_array_size(ul) == 2 &&
       json_integer_value(json_object_get(json_array_get(ul, 0), "Hard")) == 100,
       "Ulimits nofile and fsize");
    json_t *lab = json_object_get(b, "Labels");
    ok(!strcmp(json_string_value(json_object_get(lab, "owner")), "me") &&
       !strcmp(json_string_value(json_object_get(lab, DK_LABEL_EXPIRES)), "61") &&
       !strcmp(json_string_value(json_object_get(lab, DK_LABEL_SANDBOX)), "1"),
       "labels: the caller's, sandbox mark, expiry (created + ttl, in s)");
    ok(!strcmp(json_string_value(json_array_get(json_object_get(b, "Env"), 6)), "A=1"),
       "sandbox environment after the base");
    sbx_limits_v1 back;
    ok(dk_limits_parse(json_string_value(json_object_get(lab, DK_LABEL_LIMITS)), &back) == 0 &&
       !memcmp(&back, &s.limits, sizeof back), "limits label round trip");
    ok(dk_limits_parse("1,2,3", &back) < 0, "a short limits label is refused");
    json_decref(b);
    a.seccomp = "seccomp={}";
    b = dk_create_body(&a, err, sizeof err);
    hc = json_object_get(b, "HostConfig");
    ok(b && json_array_size(json_object_get(hc, "SecurityOpt")) == 2 &&
       !strcmp(json_string_value(json_array_get(json_object_get(hc, "SecurityOpt"), 1)),
               "seccomp={}"), "a seccomp profile: SecurityOpt seccomp=<profile>");
    json_decref(b);
    a.seccomp = NULL;
    a.podman = true;
    b = dk_create_body(&a, err, sizeof err);
    hc = json_object_get(b, "HostConfig");
    ok(b && !json_object_get(hc, "Ulimits") &&
       json_integer_value(json_object_get(hc, "PidsLimit")) == 32,
       "Podman: no Ulimits (its defaults hold; the helper sets nofile and fsize per exec)");
    json_decref(b);
    a.podman = false;
    a.egress = true;
    b = dk_create_body(&a, err, sizeof err);
    hc = json_object_get(b, "HostConfig");
    ok(b && !strcmp(json_string_value(json_object_get(hc, "NetworkMode")), "bridge") &&
       json_is_false(json_object_get(b, "NetworkDisabled")),
       "network = egress: the default bridge, network enabled");
    json_decref(b);
    a.egress = false;
    sbx_kv_v1 bad[] = {{DK_LABEL_PREFIX "x", "1"}};
    s.labels = bad;
    b = dk_create_body(&a, err, sizeof err);
    ok(!b && strstr(err, "reserved"), "a label with the reserved prefix is refused: %s", err);
    json_decref(b);
}

/* The rule of @prof whose names hold @name (the first), or NULL. */
static json_t *rule_of(json_t *prof, const char *name)
{
    size_t i, j;
    json_t *r, *n;
    json_array_foreach(json_object_get(prof, "syscalls"), i, r)
        json_array_foreach(json_object_get(r, "names"), j, n)
            if (!strcmp(json_string_value(n), name))
                return r;
    return NULL;
}

static const char *action_of(json_t *prof, const char *name, int *errno_ret)
{
    json_t *r = rule_of(prof, name);
    *errno_ret = (int)json_integer_value(json_object_get(r, "errnoRet"));
    return r ? json_string_value(json_object_get(r, "action")) : "(default)";
}

static void test_seccomp(void)
{
    json_t *prof = dk_seccomp_profile();
    int e = 0;
    ok(prof && !strcmp(json_string_value(json_object_get(prof, "defaultAction")),
                       "SCMP_ACT_ERRNO"), "profile: default ERRNO");
    ok(json_array_size(json_object_get(prof, "architectures")) == 1,
       "profile: the native architecture only (others are killed)");
    /* What the issue found allowed by Docker 20.10's default profile. */
    const char *nosys[] = {"io_uring_setup", "io_uring_enter", "io_uring_register", "clone3"};
    for (size_t i = 0; i < sizeof nosys / sizeof *nosys; i++)
        ok(!strcmp(action_of(prof, nosys[i], &e), "SCMP_ACT_ERRNO") && e == ENOSYS,
           "%s: ENOSYS", nosys[i]);
    const char *eperm[] = {"bpf", "keyctl", "add_key", "request_key", "userfaultfd",
                           "perf_event_open", "mount", "umount2", "fsopen", "open_tree",
                           "move_mount", "pivot_root", "unshare", "setns", "ptrace"};
    for (size_t i = 0; i < sizeof eperm / sizeof *eperm; i++)
        ok(!strcmp(action_of(prof, eperm[i], &e), "SCMP_ACT_ERRNO") && e == EPERM,
           "%s: EPERM", eperm[i]);
    ok(!strcmp(action_of(prof, "init_module", &e), "SCMP_ACT_KILL_PROCESS") &&
       !strcmp(action_of(prof, "kexec_load", &e), "SCMP_ACT_KILL_PROCESS"),
       "init_module, kexec_load: killed");
    ok(!strcmp(action_of(prof, "read", &e), "SCMP_ACT_ALLOW") &&
       !strcmp(action_of(prof, "execve", &e), "SCMP_ACT_ALLOW"), "read, execve: allowed");
    json_t *clone = rule_of(prof, "clone"), *arg = json_array_get(json_object_get(clone, "args"), 0);
    ok(clone && !strcmp(json_string_value(json_object_get(clone, "action")), "SCMP_ACT_ALLOW") &&
       !strcmp(json_string_value(json_object_get(arg, "op")), "SCMP_CMP_MASKED_EQ") &&
       json_integer_value(json_object_get(arg, "value")) == 0x7E020000 &&
       json_integer_value(json_object_get(arg, "valueTwo")) == 0,
       "clone: allowed only without namespace flags");
    /* Every name in one rule only. */
    size_t i, j, dup = 0, total = 0;
    json_t *r, *n;
    json_array_foreach(json_object_get(prof, "syscalls"), i, r)
        json_array_foreach(json_object_get(r, "names"), j, n) {
            total++;
            dup += rule_of(prof, json_string_value(n)) != r;
        }
    ok(total > 300 && dup == 0, "%zu names, each in one rule", total);
    json_decref(prof);
    char *opt = dk_seccomp_opt();
    ok(opt && !strncmp(opt, "seccomp={", 9) && !strchr(opt, '\n'),
       "the SecurityOpt entry: seccomp= and the compact profile");
    free(opt);
}

static void test_alias_tar(void)
{
    char buf[128];
    const char *al = "python:3.11-slim=local/py:1 debian:12-slim=local/deb";
    ok(!strcmp(dk_alias(al, "python:3.11-slim", buf, sizeof buf), "local/py:1") &&
       !strcmp(dk_alias(al, "debian:12-slim", buf, sizeof buf), "local/deb") &&
       !strcmp(dk_alias(al, "python:3.11", buf, sizeof buf), "python:3.11") &&
       !strcmp(dk_alias(NULL, "x", buf, sizeof buf), "x"), "image aliases");
    void *tar = NULL, *data = NULL;
    size_t tl = 0, dl = 0;
    char err[256];
    static const char blob[] = "a\0b";
    ok(dk_tar_file("d/e/f.bin", blob, 3, 0644, &tar, &tl, err, sizeof err) == 0 && tl % 512 == 0,
       "tar of an upload built");
    /* The first entry is the parent directory: extraction refuses it. */
    ok(dk_tar_extract_one(tar, tl, 100, malloc, free, &data, &dl, err, sizeof err) == SBX_E_PATH,
       "a directory entry is not a file: SBX_E_PATH");
    free(tar);
    ok(dk_tar_file("f.bin", blob, 3, 0600, &tar, &tl, err, sizeof err) == 0, "tar of one file");
    ok(dk_tar_extract_one(tar, tl, 100, malloc, free, &data, &dl, err, sizeof err) == 0 &&
       dl == 3 && !memcmp(data, blob, 3), "extracted byte-exact");
    free(data);
    ok(dk_tar_extract_one(tar, tl, 2, malloc, free, &data, &dl, err, sizeof err) == SBX_E_LIMIT,
       "over the size cap: SBX_E_LIMIT");
    free(tar);
}

int main(void)
{
    test_demux(1);
    test_demux(3);
    test_demux(4096);
    test_demux_edge();
    test_spec();
    test_alias_tar();
    test_seccomp();
    return tap_done();
}
