/* tests/loader/test-loader.c - the loader against deliberately broken modules
 *
 * Each case writes a private configuration directory (providers.d/NAME.ini),
 * points POLYSANDBOX_PROVIDER_PATH at tests/loader/.libs of the build tree
 * and opens a context through the public API, then checks every
 * provider's state, reason code and reason text.  TAP output.
 */
#include "config.h"

#include <ctype.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <polysandbox/sandbox.h>

#include "../unit/confdir.h"

static char libs[1024];    /* .../tests/loader/.libs */

/* providers.d/NAME.ini with @provider_extra lines in [provider] and
 * @settings (may be NULL) as the [settings] section. */
static void conf(const char *dir, const char *name, const char *provider_extra,
                 const char *settings)
{
    char rel[256], text[4096];

    snprintf(rel, sizeof rel, "providers.d/%s.ini", name);
    snprintf(text, sizeof text, "[provider]\n%s\n%s%s", provider_extra,
             settings ? "[settings]\n" : "", settings ? settings : "");
    write_file(dir, rel, text);
}

/* One rejected module: state, code, and a reason naming file and field. */
static void expect_rejected(sbx_ctx *ctx, const char *name, int code,
                            const char *where, const char *field)
{
    const sbx_provider *p = sbx_ctx_find_provider(ctx, name);
    const char *reason = p ? sbx_provider_reason(p) : NULL;
    int good = p && sbx_provider_get_state(p) == SBX_PROVIDER_UNAVAILABLE &&
               sbx_provider_reason_code(p) == code && reason &&
               strstr(reason, where) && strstr(reason, field);

    ok(good, "%s: unavailable, %s, reason names '%s' and '%s'", name,
       sbx_strerror(code), where, field);
    if (!good) {
        if (!p)
            diag("provider %s not listed", name);
        else
            diag("state %d, code %d (%s), reason: %s",
                 (int)sbx_provider_get_state(p), sbx_provider_reason_code(p),
                 sbx_strerror(sbx_provider_reason_code(p)),
                 reason ? reason : "(null)");
    }
}

static void expect_state(sbx_ctx *ctx, const char *name, sbx_provider_state st,
                         const char *what)
{
    const sbx_provider *p = sbx_ctx_find_provider(ctx, name);
    int good = p && sbx_provider_get_state(p) == st &&
               (st == SBX_PROVIDER_UNAVAILABLE ||
                (sbx_provider_reason(p) == NULL && sbx_provider_reason_code(p) == 0));

    ok(good, "%s: %s", name, what);
    if (!good && p)
        diag("state %d, code %d, reason: %s", (int)sbx_provider_get_state(p),
             sbx_provider_reason_code(p),
             sbx_provider_reason(p) ? sbx_provider_reason(p) : "(null)");
    else if (!p)
        diag("provider %s not listed", name);
}

/* Every module of tests/loader/.libs is enabled; each is judged. */
static void test_every_module(void)
{
    static const struct {
        const char *name;
        int code;
        const char *field;
    } cases[] = {
        {"no_symbol", SBX_E_LOAD_NO_SYMBOL, "'sandbox_provider_v1'"},
        {"bad_magic", SBX_E_LOAD_BAD_MAGIC, "magic is 0xdeadbeef, expected 0x53425850"},
        {"abi_major", SBX_E_LOAD_ABI_MAJOR, "abi_major is 2"},
        {"abi_minor", SBX_E_LOAD_ABI_MINOR, "abi_minor is 999"},
        {"short_size", SBX_E_LOAD_SIZE, "struct_size is 16"},
        {"short_ops", SBX_E_LOAD_SIZE, "ops_size is 16"},
        {"empty_name", SBX_E_LOAD_STRING, "name is empty"},
        {"no_license", SBX_E_LOAD_STRING, "license is NULL"},
        {"bad_name", SBX_E_LOAD_BAD_NAME, "name 'Bad-Name'"},
        {"name_mismatch", SBX_E_LOAD_NAME_MISMATCH, "name is 'someone_else'"},
        {"missing_op", SBX_E_LOAD_MISSING_OP, "op 'exec' is NULL"},
        {"null_ops", SBX_E_LOAD_MISSING_OP, "ops is NULL"},
        {"cap_no_op", SBX_E_LOAD_CAPS, "'files' but op 'download' is NULL"},
        {"op_no_cap", SBX_E_LOAD_CAPS, "op 'list' is set but capabilities lack 'list'"},
        {"cancel_old_abi", SBX_E_LOAD_CAPS, "claim 'cancel' but the provider was built against ABI 1.2"},
        {"stdin_old_abi", SBX_E_LOAD_CAPS, "claim 'stdin_stream' but the provider was built against ABI 1.3"},
        {"signal_old_abi", SBX_E_LOAD_CAPS, "claim 'signal' but the provider was built against ABI 1.7"},
        {"egress_old_abi", SBX_E_LOAD_CAPS, "claim 'egress' but the provider was built against ABI 1.10"},
        {"zygote_old_abi", SBX_E_LOAD_CAPS, "claim 'zygote' but op 'exec_zygote' is NULL"},
        {"reserved", SBX_E_LOAD_RESERVED, "reserved[1] is 0x7"},
        {"init_silent", SBX_E_LOAD_INIT, "init returned 8 without setting an error"},
        {"init_error", SBX_E_LOAD_INIT, "backend daemon unreachable at /run/fake.sock"},
    };
    char dir[1024], path[2048], where[4096], extra[4096];
    const sbx_provider *p;
    sbx_ctx *ctx;

    new_confdir("every", "[core]\n", dir, sizeof dir);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        conf(dir, cases[i].name, "enabled = true", NULL);
    conf(dir, "good", "enabled = true", NULL);
    conf(dir, "ghost", "enabled = true", NULL);
    /* module= pointing at good.so under another name. */
    snprintf(extra, sizeof extra, "enabled = true\nmodule = %s/good.so", libs);
    conf(dir, "alias", extra, NULL);
    /* A file named like a module that is not an ELF object at all. */
    snprintf(path, sizeof path, "%s/corrupt.so", dir);
    write_file(dir, "corrupt.so", "This is not an ELF file, and it is long enough for "
                                  "the dynamic linker to read a whole ELF header.\n");
    snprintf(extra, sizeof extra, "enabled = true\nmodule = %s", path);
    conf(dir, "corrupt", extra, NULL);
    conf(dir, "unresolved", "enabled = true", NULL);

    ctx = open_ctx(dir);
    ok(ctx != NULL, "sbx_ctx_new succeeds although most providers fail to load");
    if (!ctx)
        return;
    ok(sbx_error_code(sbx_ctx_last_error(ctx)) == SBX_OK,
       "load failures are not errors of sbx_ctx_new");

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(where, sizeof where, "%s/%s.so:", libs, cases[i].name);
        expect_rejected(ctx, cases[i].name, cases[i].code, where, cases[i].field);
    }

    expect_state(ctx, "good", SBX_PROVIDER_READY, "ready, no reason");
    p = sbx_ctx_find_provider(ctx, "good");
    snprintf(path, sizeof path, "%s/good.so", libs);
    ok(p && sbx_provider_version(p) && !strcmp(sbx_provider_version(p), "1.2.3") &&
           sbx_provider_path(p) && !strcmp(sbx_provider_path(p), path),
       "good: version and path come from the module");

    snprintf(where, sizeof where, "%s/providers.d/ghost.ini:", dir);
    expect_rejected(ctx, "ghost", SBX_E_LOAD_OPEN, where, "no ghost.so in");
    p = sbx_ctx_find_provider(ctx, "ghost");
    ok(p && sbx_provider_reason(p) && strstr(sbx_provider_reason(p), libs),
       "ghost: the reason lists the directories searched");

    snprintf(where, sizeof where, "%s/good.so:", libs);
    expect_rejected(ctx, "alias", SBX_E_LOAD_NAME_MISMATCH, where,
                    "configured as 'alias'");
    snprintf(where, sizeof where, "%s/corrupt.so: cannot open", dir);
    expect_rejected(ctx, "corrupt", SBX_E_LOAD_OPEN, where, "invalid ELF header");
    snprintf(where, sizeof where, "%s/unresolved.so: cannot open", libs);
    expect_rejected(ctx, "unresolved", SBX_E_LOAD_OPEN, where,
                    "undefined symbol: sbx_test_missing_symbol");

    sbx_ctx_free(ctx);
}

/* @src copied to @dst with @mode. */
static void copy_module(const char *src, const char *dst, mode_t mode)
{
    char buf[65536];
    size_t n;
    FILE *in = fopen(src, "rb"), *out = fopen(dst, "wb");

    if (!in || !out)
        bail(dst);
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, out) != n)
            bail(dst);
    if (fclose(in) != 0 || fclose(out) != 0 || chmod(dst, mode) != 0)
        bail(dst);
}

/* A module's constructors run with the caller's privileges (root's, for
 * the local provider): one another user could change is never opened. */
static void test_unsafe_modules(void)
{
    static const struct {
        const char *name, *dir;
        mode_t mode, dir_mode;
        uid_t owner;           /* (uid_t)-1: ours */
        const char *field;
    } cases[] = {
        {"world", "w", 0666, 0755, (uid_t)-1, "is writable by everyone"},
        {"group", "g", 0664, 0755, (uid_t)-1, "is writable by its group"},
        {"indir", "d", 0644, 0777, (uid_t)-1, "which others may write (mode 0777, not sticky)"},
        {"other", "o", 0644, 0755, 65534, "is owned by uid 65534"},
    };
    char dir[512], path[1024], sub[768], good[1100], extra[1200], link[1024];
    sbx_ctx *ctx;

    new_confdir("unsafe", "[core]\n", dir, sizeof dir);
    snprintf(good, sizeof good, "%s/good.so", libs);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(sub, sizeof sub, "%s/%s", dir, cases[i].dir);
        snprintf(path, sizeof path, "%s/%s.so", sub, cases[i].name);
        if (mkdir(sub, 0700) != 0)
            bail(sub);
        copy_module(good, path, cases[i].mode);
        if (chmod(sub, cases[i].dir_mode) != 0)
            bail(sub);
        if (cases[i].owner != (uid_t)-1 && (geteuid() != 0 || chown(path, cases[i].owner, 0) != 0))
            continue; /* not root: skipped below */
        snprintf(extra, sizeof extra, "enabled = true\nmodule = %s", path);
        conf(dir, cases[i].name, extra, NULL);
    }
    /* The same module, safe, loads; a safe link to an unsafe one does not. */
    snprintf(sub, sizeof sub, "%s/safe", dir);
    snprintf(path, sizeof path, "%s/good.so", sub);
    if (mkdir(sub, 0755) != 0)
        bail(sub);
    copy_module(good, path, 0644);
    snprintf(extra, sizeof extra, "enabled = true\nmodule = %s", path);
    conf(dir, "good", extra, NULL);
    snprintf(link, sizeof link, "%s/linked.so", sub);
    snprintf(path, sizeof path, "%s/w/world.so", dir);
    if (symlink(path, link) != 0)
        bail(link);
    snprintf(extra, sizeof extra, "enabled = true\nmodule = %s", link);
    conf(dir, "linked", extra, NULL);

    ctx = open_ctx(dir);
    ok(ctx != NULL, "sbx_ctx_new with modules others could change");
    if (!ctx)
        return;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        if (cases[i].owner != (uid_t)-1 && geteuid() != 0) {
            ok(1, "# SKIP %s: chown needs root", cases[i].name);
            continue;
        }
        snprintf(path, sizeof path, "%s/%s/%s.so", dir, cases[i].dir, cases[i].name);
        expect_rejected(ctx, cases[i].name, SBX_E_LOAD_UNSAFE, path, cases[i].field);
    }
    expect_rejected(ctx, "linked", SBX_E_LOAD_UNSAFE, link, "is writable by everyone");
    expect_state(ctx, "good", SBX_PROVIDER_READY, "the same module, safe: ready");
    sbx_ctx_free(ctx);
}

/* optional=true drops failures; no conf or enabled=false is disabled;
 * unknown settings are refused before init. */
static void test_optional_disabled_settings(void)
{
    char dir[1024], where[4096];
    const sbx_provider *p;
    size_t n_ours = 0;
    sbx_ctx *ctx;

    new_confdir("optional", "[core]\n", dir, sizeof dir);
    conf(dir, "good", "enabled = true", "greeting = hi\nbogus = 1\n");
    conf(dir, "bad_magic", "enabled = true\noptional = true", NULL);
    conf(dir, "init_error", "enabled = true\noptional = true", NULL);
    conf(dir, "ghost", "enabled = true\noptional = true", NULL);
    conf(dir, "abi_minor", "enabled = false", NULL);

    ctx = open_ctx(dir);
    ok(ctx != NULL, "sbx_ctx_new with optional providers");
    if (!ctx)
        return;
    snprintf(where, sizeof where, "%s/providers.d/good.ini:", dir);
    expect_rejected(ctx, "good", SBX_E_CONFIG, where,
                    "unknown key 'bogus' for provider 'good' (accepted: greeting)");
    p = sbx_ctx_find_provider(ctx, "good");
    ok(p && sbx_provider_reason(p) &&
           !strncmp(sbx_provider_reason(p), where, strlen(where)) &&
           isdigit((unsigned char)sbx_provider_reason(p)[strlen(where)]),
       "good: the unknown key's message starts with FILE:LINE");
    ok(sbx_ctx_find_provider(ctx, "bad_magic") == NULL,
       "bad_magic: optional and broken, so not listed");
    ok(sbx_ctx_find_provider(ctx, "init_error") == NULL,
       "init_error: optional and failing init, so not listed");
    ok(sbx_ctx_find_provider(ctx, "ghost") == NULL,
       "ghost: optional and missing, so not listed");
    expect_state(ctx, "abi_minor", SBX_PROVIDER_DISABLED,
                 "enabled = false: disabled and not loaded (no ABI error)");
    expect_state(ctx, "abi_major", SBX_PROVIDER_DISABLED,
                 "no conf: disabled and not loaded");

    /* Every module of .libs but the two dropped ones is listed. */
    for (size_t i = 0; i < sbx_ctx_provider_count(ctx); i++) {
        const char *path = sbx_provider_path(sbx_ctx_provider(ctx, i));
        if (path && !strncmp(path, libs, strlen(libs)))
            n_ours++;
    }
    ok(n_ours == 27 - 2, "every module found is listed except the dropped ones (%zu)",
       n_ours);
    sbx_ctx_free(ctx);
}

/* ABI 1.9's typed settings: a good value loads, a bad one is refused with
 * FILE:LINE and the key; a provider built against 1.8 still loads. */
static void test_typed_settings(void)
{
    char dir[1024], where[4096];
    sbx_ctx *ctx;

    new_confdir("typed-good", "[core]\n", dir, sizeof dir);
    conf(dir, "typed_settings", "enabled = true", "timeout = 1500ms\nverbose = yes\n");
    conf(dir, "settings_old_abi", "enabled = true", "timeout = whatever 1.8 took\n");
    if (!(ctx = open_ctx(dir)))
        bail("sbx_ctx_new");
    expect_state(ctx, "typed_settings", SBX_PROVIDER_READY,
                 "ABI 1.9, settings read by the core: ready");
    expect_state(ctx, "settings_old_abi", SBX_PROVIDER_READY,
                 "built against ABI 1.8, reading with config_get: ready");
    sbx_ctx_free(ctx);

    new_confdir("typed-bad", "[core]\n", dir, sizeof dir);
    conf(dir, "typed_settings", "enabled = true", "verbose = no\ntimeout = 2h\n");
    if (!(ctx = open_ctx(dir)))
        bail("sbx_ctx_new");
    snprintf(where, sizeof where, "%s/providers.d/typed_settings.ini:5:", dir);
    expect_rejected(ctx, "typed_settings", SBX_E_LOAD_INIT, where,
                    "timeout = '2h': must be from 1s to 1h");
    sbx_ctx_free(ctx);

    new_confdir("typed-unknown", "[core]\n", dir, sizeof dir);
    conf(dir, "typed_settings", "enabled = true", "colour = red\n");
    if (!(ctx = open_ctx(dir)))
        bail("sbx_ctx_new");
    snprintf(where, sizeof where, "%s/providers.d/typed_settings.ini:4:", dir);
    expect_rejected(ctx, "typed_settings", SBX_E_CONFIG, where,
                    "unknown key 'colour' for provider 'typed_settings' (accepted: timeout, "
                    "verbose)");
    sbx_ctx_free(ctx);
}

static int names_are(sbx_ctx *ctx, const char *const *want)
{
    size_t i;
    for (i = 0; want[i]; i++) {
        const sbx_provider *p = sbx_ctx_provider(ctx, i);
        if (!p || strcmp(sbx_provider_name(p), want[i]) != 0) {
            diag("position %zu: want %s, got %s", i, want[i],
                 p ? sbx_provider_name(p) : "(none)");
            return 0;
        }
    }
    return 1;
}

/* Priority desc then name, whatever the state; [core] order first. */
static void test_priority(void)
{
    static const char *const by_priority[] = {"bad_magic", "init_error", "good",
                                              "op_no_cap", "abi_major", NULL};
    static const char *const by_order[] = {"op_no_cap", "good", "bad_magic",
                                           "init_error", NULL};
    char dir[1024];
    const sbx_provider *p;
    sbx_ctx *ctx;

    new_confdir("priority", "[core]\n", dir, sizeof dir);
    conf(dir, "good", "enabled = true\npriority = 10", NULL);
    conf(dir, "init_error", "enabled = true\npriority = 20", NULL);
    conf(dir, "bad_magic", "enabled = true\npriority = 20", NULL);
    conf(dir, "op_no_cap", "enabled = true\npriority = 5", NULL);
    ctx = open_ctx(dir);
    ok(ctx && names_are(ctx, by_priority),
       "providers sorted by priority, then name, ready or not");
    p = ctx ? sbx_ctx_find_provider(ctx, "good") : NULL;
    ok(p && sbx_provider_priority(p) == 10, "good: priority from its conf");
    sbx_ctx_free(ctx);

    write_file(dir, "polysandbox.ini", "[core]\norder = op_no_cap, good\n");
    ctx = open_ctx(dir);
    ok(ctx && names_are(ctx, by_order), "[core] order comes before priority");
    sbx_ctx_free(ctx);
}

static int collect(void *ud, int stream, const void *buf, size_t len)
{
    char *acc = ud;
    size_t have = strlen(acc);

    if (stream == SBX_STREAM_STDOUT && have + len < 256) {
        memcpy(acc + have, buf, len);
        acc[have + len] = '\0';
    }
    return 0;
}

/* The ready path end to end: settings reach init, exec output comes back. */
static void test_run_good(void)
{
    static const char *const argv[] = {"anything", NULL};
    char dir[1024], seen[256] = "";
    sbx_create_opts *c = NULL;
    sbx_exec_opts *x = NULL;
    sbx_result *r = NULL;
    const void *out;
    size_t len = 0;
    sbx_ctx *ctx;
    int rc;

    new_confdir("run", "[core]\n", dir, sizeof dir);
    conf(dir, "good", "enabled = true", "greeting = hello\n");
    ctx = open_ctx(dir);
    if (!ctx) {
        ok(0, "run through good");
        return;
    }
    c = sbx_create_opts_new();
    x = sbx_exec_opts_new();
    rc = (c && x) ? SBX_OK : SBX_E_NOMEM;
    if (rc == SBX_OK)
        rc = sbx_create_opts_set_provider(c, "good");
    if (rc == SBX_OK)
        rc = sbx_exec_opts_set_argv(x, argv);
    if (rc == SBX_OK)
        rc = sbx_exec_opts_set_output_cb(x, collect, seen);
    if (rc == SBX_OK)
        rc = sbx_run(ctx, c, x, &r);
    if (rc != SBX_OK)
        diag("sbx_run: %s", sbx_error_message(sbx_ctx_last_error(ctx)));
    out = r ? sbx_result_stdout(r, &len) : NULL;
    ok(rc == SBX_OK && r && sbx_result_status(r) == SBX_RUN_OK &&
           sbx_result_exit_code(r) == 0 && len == 6 && !memcmp(out, "hello\n", 6),
       "good: runs, and its [settings] greeting reached init");
    ok(!strcmp(seen, "hello\n"), "good: output went through the callback");
    sbx_result_free(r);
    sbx_exec_opts_free(x);
    sbx_create_opts_free(c);
    sbx_ctx_free(ctx);
}

/* Two threads load the same modules at once: same verdicts, no crash. */
static void *load_in_thread(void *arg)
{
    sbx_ctx *ctx = NULL;
    long verdict = -1;

    if (sbx_ctx_new(&ctx, arg) == SBX_OK) {
        const sbx_provider *g = sbx_ctx_find_provider(ctx, "good");
        const sbx_provider *b = sbx_ctx_find_provider(ctx, "reserved");
        verdict = g && b && sbx_provider_get_state(g) == SBX_PROVIDER_READY &&
                  sbx_provider_reason_code(b) == SBX_E_LOAD_RESERVED;
    }
    sbx_ctx_free(ctx);
    return (void *)verdict;
}

static void test_threads(void)
{
    char dir[1024];
    pthread_t t[4];
    int all = 1;

    new_confdir("threads", "[core]\n", dir, sizeof dir);
    conf(dir, "good", "enabled = true", NULL);
    conf(dir, "reserved", "enabled = true", NULL);
    conf(dir, "bad_name", "enabled = true", NULL);
    for (int i = 0; i < 4; i++)
        if (pthread_create(&t[i], NULL, load_in_thread, dir) != 0)
            bail("pthread_create");
    for (int i = 0; i < 4; i++) {
        void *v;
        if (pthread_join(t[i], &v) != 0)
            bail("pthread_join");
        all = all && (long)v == 1;
    }
    ok(all, "four threads loading at once all get the same verdicts");
}

/* SBX_PROVIDER_F_GLOBAL_SYMBOLS.  Last, and alone: once a module is global
 * its sandbox_provider_v1 is in the global scope, which AddressSanitizer
 * reports as an ODR violation when further modules are opened. */
static void test_global(void)
{
    char dir[1024];
    sbx_ctx *ctx;

    ok(dlsym(RTLD_DEFAULT, "sbx_test_global_marker") == NULL,
       "global_syms: not in the global scope before it is loaded");
    new_confdir("global", "[core]\n", dir, sizeof dir);
    conf(dir, "global_syms", "enabled = true", NULL);
    ctx = open_ctx(dir);
    if (ctx)
        expect_state(ctx, "global_syms", SBX_PROVIDER_READY,
                     "a provider asking for global symbols is ready");
    else
        ok(0, "global_syms: context");
    ok(dlsym(RTLD_DEFAULT, "sbx_test_global_marker") != NULL,
       "global_syms: its symbols are in the global scope");
    sbx_ctx_free(ctx);
}

int main(void)
{
    const char *top = getenv("top_builddir");

    if (!top) {
        printf("1..0 # SKIP top_builddir is not set (run through make check)\n");
        return 0;
    }
    snprintf(libs, sizeof libs, "%s/tests/loader/.libs", top);
    confdir_begin("sbx-loader");
    /* Only the test modules: no system or build-tree providers. */
    if (setenv("POLYSANDBOX_PROVIDER_PATH", libs, 1) != 0)
        bail("setenv");
    unsetenv("POLYSANDBOX_PROVIDER");

    test_every_module();
    test_unsafe_modules();
    test_optional_disabled_settings();
    test_typed_settings();
    test_priority();
    test_run_good();
    test_threads();
    test_global();

    confdir_end();
    return tap_done();
}
