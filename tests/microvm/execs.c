/* tests/microvm/execs.c - several execs in one microvm sandbox (one boot)
 *
 * Usage: test-microvm-execs CONFIG_DIR.  Creates one sandbox on the
 * microvm provider and prints one line per exec for tests/microvm/run.sh:
 *
 *   NAME STATUS EXIT STDOUT|STDERR   (output with newlines as '/')
 *
 * then, in the same VM, one line per files check (upload, download):
 *
 *   file-NAME ok | file-NAME FAIL what went otherwise
 *
 * and the wall time of the execs and of the files checks ("time ...").
 * Exits 0 when the sandbox was made, 1 otherwise (its error printed).
 */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <polysandbox/sandbox.h>

static void flat(const char *s, size_t n, char *out, size_t cap)
{
    size_t j = 0;

    for (size_t i = 0; i < n && j + 1 < cap; i++)
        out[j++] = s[i] == '\n' ? '/' : s[i];
    out[j] = '\0';
}

static void show(sbx_sandbox *sb, const char *name, sbx_exec_opts *x)
{
    sbx_result *r = NULL;
    char o[256], e[256];
    size_t on = 0, en = 0;
    const char *so, *se;

    if (sbx_sandbox_exec(sb, x, &r) != SBX_OK || !r) {
        printf("%s error %s\n", name, r && sbx_result_error(r) ? sbx_result_error(r) : "exec");
        sbx_result_free(r);
        sbx_exec_opts_free(x);
        return;
    }
    so = sbx_result_stdout(r, &on);
    se = sbx_result_stderr(r, &en);
    flat(so ? so : "", so ? on : 0, o, sizeof o);
    flat(se ? se : "", se ? en : 0, e, sizeof e);
    printf("%s %s %d %s|%s\n", name, sbx_run_status_name(sbx_result_status(r)),
           sbx_result_exit_code(r), o, e);
    fflush(stdout);
    sbx_result_free(r);
    sbx_exec_opts_free(x);
}

static sbx_exec_opts *argv_opts(const char *code)
{
    sbx_exec_opts *x = sbx_exec_opts_new();
    const char *argv[] = { "python3", "-c", code, NULL };

    if (x)
        sbx_exec_opts_set_argv(x, argv);
    return x;
}

static long long now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A command that closes its stdin at once while 2 MiB of it wait in a
 * file: the agent asks for no more once the command's pipe is closed, so
 * the host reads at most the chunks it was asked for before.  Prints the
 * exec's line and "stdin-closed-read BYTES" (what the host read). */
static void stdin_closed(sbx_sandbox *sb)
{
    char path[] = "/tmp/test-microvm-execs.XXXXXX";
    const char *argv[] = { "sh", "-c", "exec 0<&-; sleep 3; echo closed", NULL };
    sbx_exec_opts *x = sbx_exec_opts_new();
    int fd = mkstemp(path);

    if (fd < 0 || !x || unlink(path) || ftruncate(fd, 2 << 20) || sbx_exec_opts_set_argv(x, argv) ||
        sbx_exec_opts_set_stdin_fd(x, fd)) {
        printf("stdin-closed error setting it up\n");
        sbx_exec_opts_free(x);
        if (fd >= 0)
            close(fd);
        return;
    }
    show(sb, "stdin-closed", x);
    printf("stdin-closed-read %lld\n", (long long)lseek(fd, 0, SEEK_CUR));
    close(fd);
}

/* One files check: @rc against @want, with the error's message if not. */
static void fcheck(sbx_ctx *ctx, const char *name, int want, int rc)
{
    if (rc == want)
        printf("file-%s ok\n", name);
    else
        printf("file-%s FAIL rc %s, want %s: %s\n", name, sbx_strerror(rc), sbx_strerror(want),
               rc ? sbx_error_message(sbx_ctx_last_error(ctx)) : "");
    fflush(stdout);
}

/* Downloads @path and compares it with @want: ok or what differs. */
static void fsame(sbx_ctx *ctx, sbx_sandbox *sb, const char *name, const char *path,
                  const void *want, size_t want_len)
{
    void *d = NULL;
    size_t n = 0;
    int rc = sbx_sandbox_download(sb, path, 4u << 20, &d, &n);

    if (rc != SBX_OK)
        fcheck(ctx, name, SBX_OK, rc);
    else if (n != want_len || memcmp(d, want, n))
        printf("file-%s FAIL %zu bytes back, %zu sent, or other bytes\n", name, n, want_len);
    else
        printf("file-%s ok\n", name);
    fflush(stdout);
    free(d);
}

static int fget(sbx_sandbox *sb, const char *path, size_t max)
{
    void *d = NULL;
    size_t n = 0;
    int rc = sbx_sandbox_download(sb, path, max, &d, &n);

    free(d);
    return rc;
}

/* Upload and download in the running VM: bytes exact both ways, seen by
 * commands, modes kept; missing files, unsafe paths, links a command made
 * and a file over the caller's max refused with their codes. */
static void files(sbx_ctx *ctx, sbx_sandbox *sb)
{
    size_t blen = 300 * 1024 + 7;
    uint8_t *blob = malloc(blen);
    uint64_t r = 0x9e3779b97f4a7c15ull;

    if (!blob)
        return;
    for (size_t i = 0; i < blen; i++) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        blob[i] = (uint8_t)(i % 97 ? r : 0);
    }
    /* Python under TCG takes seconds to start: three execs do it all. */
    fcheck(ctx, "put", SBX_OK, sbx_sandbox_upload(sb, "dir/blob.bin", blob, blen, 0644));
    static const char script[] = "#!/usr/bin/python3\nprint('ran')\n";
    fcheck(ctx, "put-mode", SBX_OK,
           sbx_sandbox_upload(sb, "bin/run.py", script, sizeof script - 1, 0755));
    show(sb, "seen", argv_opts("import os\n"
                               "print(len(open('dir/blob.bin','rb').read()))\n"
                               "open('made.bin','wb').write(b'made\\0inside')\n"
                               "os.symlink('/etc/passwd', 'link')\n"
                               "os.symlink('/etc', 'dlink')\n"
                               "os.symlink('/tmp', 'hlink')\n"
                               "os.symlink('/tmp/flink-target', 'flink')"));
    fsame(ctx, sb, "back", "dir/blob.bin", blob, blen);
    fcheck(ctx, "over-max", SBX_E_LIMIT, fget(sb, "dir/blob.bin", 1000));
    fsame(ctx, sb, "made", "made.bin", "made\0inside", 11);
    sbx_exec_opts *x = sbx_exec_opts_new();
    if (x) {
        const char *run[] = { "./bin/run.py", NULL };
        sbx_exec_opts_set_argv(x, run);
    }
    show(sb, "mode", x);
    fcheck(ctx, "missing", SBX_E_NOT_FOUND, fget(sb, "no-such-file", 1024));
    fcheck(ctx, "missing-dir", SBX_E_NOT_FOUND, fget(sb, "no-dir/x", 1024));
    fcheck(ctx, "directory", SBX_E_PATH, fget(sb, "dir", 1024));
    static const char *const bad[] = { "../x", "/etc/x", "a/../../x", "..", "", "a//b" };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char name[32];
        snprintf(name, sizeof name, "bad-put-%zu", i);
        fcheck(ctx, name, SBX_E_PATH, sbx_sandbox_upload(sb, bad[i], "x", 1, 0644));
        snprintf(name, sizeof name, "bad-get-%zu", i);
        fcheck(ctx, name, SBX_E_PATH, fget(sb, bad[i], 1024));
    }
    /* Links the command made: never followed, neither way. */
    fcheck(ctx, "link-get", SBX_E_PATH, fget(sb, "link", 1 << 20));
    fcheck(ctx, "dlink-get", SBX_E_PATH, fget(sb, "dlink/passwd", 1 << 20));
    fcheck(ctx, "hlink-put", SBX_E_PATH, sbx_sandbox_upload(sb, "hlink/x", "evil", 4, 0644));
    fcheck(ctx, "flink-put", SBX_E_PATH, sbx_sandbox_upload(sb, "flink", "evil", 4, 0644));
    fcheck(ctx, "dlink-put", SBX_E_PATH,
           sbx_sandbox_upload(sb, "dlink/passwd", "evil", 4, 0644));
    /* ...and the VM serves after all of that. */
    show(sb, "outside", argv_opts("import os\n"
                                  "print(os.path.lexists('/tmp/x'), "
                                  "os.path.lexists('/tmp/flink-target'), "
                                  "'evil' in open('/etc/passwd').read())"));
    free(blob);
}

int main(int argc, char **argv)
{
    sbx_ctx *ctx = NULL;
    sbx_create_opts *co;
    sbx_sandbox *sb = NULL;
    sbx_exec_opts *x;

    if (argc != 2) {
        fprintf(stderr, "usage: test-microvm-execs CONFIG_DIR\n");
        return 2;
    }
    if (sbx_ctx_new(&ctx, argv[1]) != SBX_OK) {
        printf("context error %s\n", ctx ? sbx_error_message(sbx_ctx_last_error(ctx)) : "?");
        sbx_ctx_free(ctx);
        return 1;
    }
    co = sbx_create_opts_new();
    if (!co || sbx_create_opts_set_provider(co, "microvm") ||
        sbx_sandbox_create(ctx, co, &sb) != SBX_OK) {
        printf("create error %s\n", sbx_error_message(sbx_ctx_last_error(ctx)));
        sbx_create_opts_free(co);
        sbx_ctx_free(ctx);
        return 1;
    }
    sbx_create_opts_free(co);

    long long t0 = now_ms();
    x = sbx_exec_opts_new();
    if (x)
        sbx_exec_opts_set_code(x, "python", "print(6*7)", (size_t)-1);
    show(sb, "code", x);
    show(sb, "exit", argv_opts("import sys; sys.stderr.write('oops\\n'); sys.exit(3)"));
    x = argv_opts("import sys; print(sys.stdin.read().upper())");
    if (x)
        sbx_exec_opts_set_stdin(x, "abc", 3);
    show(sb, "stdin", x);
    x = argv_opts("import time; print('start', flush=True); time.sleep(60)");
    if (x)
        sbx_exec_opts_set_timeout(x, 2000000000ull);
    show(sb, "timeout", x);
    show(sb, "kernel", argv_opts("import os; print(os.uname().release)"));
    x = sbx_exec_opts_new();
    if (x) {
        const char *nf[] = { "no-such-command", NULL };
        sbx_exec_opts_set_argv(x, nf);
    }
    show(sb, "missing", x);
    stdin_closed(sb);
    long long t1 = now_ms();
    files(ctx, sb);
    /* what the files checks add to the run, beside the seven execs */
    printf("time execs %lld ms, files %lld ms\n", t1 - t0, now_ms() - t1);
    sbx_sandbox_destroy(sb);
    sbx_ctx_free(ctx);
    return 0;
}
