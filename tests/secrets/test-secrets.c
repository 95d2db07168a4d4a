/* tests/secrets/test-secrets.c - the host key pair, the sealed:v1: format
 * and the opening of credentials, against the core's internals
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include <polysandbox/sandbox.h>

#include "error.h"
#include "secrets/secrets.h"
#include "../unit/tap.h"
#include "settings-read.h"

#define PLAIN "s3cr3t-value-for-the-test-0123456789"

static char dir_a[64], dir_b[64];

static mode_t mode_of(const char *dir, const char *name)
{
    char path[256];
    struct stat st;

    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (lstat(path, &st) != 0)
        return (mode_t)-1;
    return st.st_mode & 07777;
}

static const char *msg(void)
{
    return core_error_tls()->message;
}

static bool has(const char *needle)
{
    return strstr(msg(), needle) != NULL;
}

/* Open @value as the setting api_key of x.ini line 3; the plaintext is
 * compared and released.  Returns the status. */
static int try_open(const char *value, const char **plain_out)
{
    core_setting s = { (char *)"api_key", (char *)value, (char *)"/etc/x.ini", 3 };
    const char *v = NULL;
    size_t len = 0;
    int rc;

    core_error_clear();
    rc = core_secret_open(NULL, &s, &v, &len);
    if (rc == SBX_OK) {
        bool same = len == strlen(PLAIN) && memcmp(v, PLAIN, len) == 0;
        if (plain_out)
            *plain_out = same ? "same" : "different";
        core_secret_release(v);
    }
    return rc;
}

static char *seal_to(const char *dir, const char *plain)
{
    unsigned char pk[CORE_PK_BYTES], id[CORE_KEY_ID_BYTES];
    char *out = NULL;

    if (core_hostkey_load_public(dir, pk, id) != SBX_OK ||
        core_sealed_encode(pk, id, plain, strlen(plain), &out) != SBX_OK)
        return NULL;
    return out;
}

static const void *wiped_at;
static size_t wiped_len;
static bool wiped_zero;

static void on_wipe(const void *p, size_t len)
{
    const unsigned char *b = p;

    wiped_at = p;
    wiped_len = len;
    wiped_zero = true;
    for (size_t i = 0; i < len; i++)
        if (b[i])
            wiped_zero = false;
}

static void test_keygen(void)
{
    char id1[CORE_KEY_ID_HEX], id2[CORE_KEY_ID_HEX], id3[CORE_KEY_ID_HEX];
    mode_t old = umask(0);

    ok(core_hostkey_create(dir_a, false, id1) == SBX_OK, "key pair created (%s)", msg());
    ok(mode_of(dir_a, "secret.key") == 0600, "secret.key is 0600 under umask 000 (%o)",
       (unsigned)mode_of(dir_a, "secret.key"));
    ok(mode_of(dir_a, "secret.pub") == 0644, "secret.pub is 0644 (%o)",
       (unsigned)mode_of(dir_a, "secret.pub"));
    umask(0777);
    ok(core_hostkey_create(dir_a, false, id2) == SBX_E_EXISTS && has("already exists") &&
       has(dir_a), "an existing key is not replaced without force (%s)", msg());
    ok(core_hostkey_create(dir_b, false, id3) == SBX_OK, "second key pair (%s)", msg());
    ok(mode_of(dir_b, "secret.key") == 0600 && mode_of(dir_b, "secret.pub") == 0644,
       "modes do not depend on umask 777");
    umask(old);
    ok(strcmp(id1, id3) != 0, "two key pairs have two key ids (%s, %s)", id1, id3);
}

static void test_round_trip(void)
{
    const char *same = NULL;
    char *v = seal_to(dir_a, PLAIN);
    int rc;

    ok(v && !strncmp(v, "sealed:v1:", 10), "sealed: %s", v ? v : msg());
    ok(v && !strstr(v, PLAIN) && !strchr(v + 10, '=') && !strchr(v, '+') && !strchr(v, '/'),
       "URL-safe base64 without padding");
    setenv("POLYSANDBOX_CONFIG_DIR", dir_a, 1);
    rc = v ? try_open(v, &same) : -1;
    ok(rc == SBX_OK && same && !strcmp(same, "same"), "opened to the sealed value (%s)",
       msg());

    /* wrong key: the same value with the other host's key */
    setenv("POLYSANDBOX_CONFIG_DIR", dir_b, 1);
    rc = v ? try_open(v, NULL) : -1;
    ok(rc == SBX_E_CONFIG && has("/etc/x.ini:3: api_key: sealed for another key (key id") &&
       has(dir_b), "wrong key: %s", msg());
    setenv("POLYSANDBOX_CONFIG_DIR", dir_a, 1);
    free(v);
}

static void test_damage(void)
{
    char *v = seal_to(dir_a, PLAIN);
    size_t n = v ? strlen(v) : 0;
    char *w = malloc(n + 8);
    bool all_truncated = true, none_leaks = true;
    size_t bad_cut = 0;

    if (!v || !w) {
        ok(0, "seal for the damage tests");
        free(v);
        free(w);
        return;
    }
    /* Every cut, from right after the prefix to one character short. */
    for (size_t cut = 10; cut < n; cut++) {
        memcpy(w, v, cut);
        w[cut] = '\0';
        if (try_open(w, NULL) != SBX_E_CONFIG || !has("/etc/x.ini:3: api_key:") ||
            !has("truncated")) {
            if (all_truncated)
                bad_cut = cut;
            all_truncated = false;
        }
        if (has(PLAIN))
            none_leaks = false;
    }
    ok(all_truncated, "every cut value is reported truncated, naming file:line and key "
       "(first miss at %zu: %s)", bad_cut, bad_cut ? msg() : "none");

    /* A changed character inside the box. */
    memcpy(w, v, n + 1);
    w[n / 2 + 10] = w[n / 2 + 10] == 'A' ? 'B' : 'A';
    ok(try_open(w, NULL) == SBX_E_CONFIG && has("/etc/x.ini:3: api_key: sealed value is "
       "corrupt"), "altered value: %s", msg());
    if (has(PLAIN))
        none_leaks = false;

    /* A character outside the alphabet. */
    memcpy(w, v, n + 1);
    w[20] = '+';
    ok(try_open(w, NULL) == SBX_E_CONFIG && has("corrupt") && has("character 21"),
       "bad character: %s", msg());

    /* Data after the end. */
    snprintf(w, n + 8, "%sAAAA", v);
    ok(try_open(w, NULL) == SBX_E_CONFIG && has("corrupt") && has("after its end"),
       "trailing data: %s", msg());

    ok(try_open("sealed:v2:AAAA", NULL) == SBX_E_CONFIG && has("sealed:v2") &&
       has("sealed:v1"), "unknown version: %s", msg());
    ok(try_open("sealed:v1:", NULL) == SBX_E_CONFIG && has("truncated"),
       "empty sealed value: %s", msg());
    ok(none_leaks, "no message quotes the value");
    free(w);
    free(v);
}

static void test_key_file(void)
{
    char path[128], link[128];
    char *v = seal_to(dir_a, PLAIN);

    snprintf(path, sizeof path, "%s/secret.key", dir_a);
    ok(chmod(path, 0640) == 0 && try_open(v, NULL) == SBX_E_PERM && has("mode 0640") &&
       has(path), "a group-readable key is refused: %s", msg());
    chmod(path, 0600);
    ok(try_open(v, NULL) == SBX_OK, "after chmod 600 it opens (%s)", msg());

    snprintf(link, sizeof link, "%s/real.key", dir_a);
    ok(rename(path, link) == 0 && symlink(link, path) == 0 &&
       try_open(v, NULL) != SBX_OK && has("symbolic link"),
       "a key file that is a symbolic link is refused: %s", msg());
    unlink(path);
    rename(link, path);

    ok(unlink(path) == 0 && try_open(v, NULL) == SBX_E_CONFIG && has("no host key") &&
       has("polysandbox secret init"), "a missing key: %s", msg());
    {
        FILE *f = fopen(path, "w");
        if (f) {
            fputs("# a comment\nnot-a-key\n", f);
            fclose(f);
        }
        chmod(path, 0600);
    }
    ok(try_open(v, NULL) == SBX_E_CONFIG && has("damaged"), "a damaged key: %s", msg());
    free(v);
}

static void test_wipe_and_dump(void)
{
    core_setting s = { (char *)"api_key", (char *)"env:SBX_TEST_SECRET", (char *)"x.ini", 1 };
    const char *v = NULL;
    size_t len = 0;
    struct rlimit rl;

    setenv("SBX_TEST_SECRET", PLAIN, 1);
    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
    core_secret_wipe_hook = on_wipe;
    ok(core_secret_open(NULL, &s, &v, &len) == SBX_OK && len == strlen(PLAIN) &&
       !memcmp(v, PLAIN, len) && v[len] == '\0', "env: opens");
    ok(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0, "opening a secret made the process "
       "undumpable");
    ok(getrlimit(RLIMIT_CORE, &rl) == 0 && rl.rlim_cur == 0 && rl.rlim_max == 0,
       "and RLIMIT_CORE is 0");
    const void *lent = v;
    core_secret_release(v);
    ok(wiped_at == lent && wiped_len == strlen(PLAIN) + 1 && wiped_zero,
       "release wiped all %zu bytes of the lent memory before freeing it", wiped_len);
    core_secret_wipe_hook = NULL;
    unsetenv("SBX_TEST_SECRET");
}

/* A context whose configuration holds a sealed value makes a root
 * process undumpable before any provider runs. */
static void test_ctx_protect(void)
{
    char path[160];
    sbx_ctx *ctx = NULL;
    FILE *f;
    int rc;

    snprintf(path, sizeof path, "%s/providers.d", dir_b);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/providers.d/absent.ini", dir_b);
    f = fopen(path, "w");
    if (f) {
        fputs("[settings]\napi_key = sealed:v1:AAAA\n", f);
        fclose(f);
    }
    prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
    rc = sbx_ctx_new(&ctx, dir_b);
    if (geteuid() == 0)
        ok(rc == SBX_OK && prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0,
           "root: a configured sealed value makes the process undumpable at once");
    else
        ok(rc == SBX_OK && prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 1,
           "not root: undumpable only from the first open (local sandboxes need it)");
    sbx_ctx_free(ctx);
    unlink(path);
}

int main(void)
{
    char cmd[160];

    if (sodium_init() < 0)
        return 99;
    snprintf(dir_a, sizeof dir_a, "/tmp/sbx-secrets-a.XXXXXX");
    snprintf(dir_b, sizeof dir_b, "/tmp/sbx-secrets-b.XXXXXX");
    if (!mkdtemp(dir_a) || !mkdtemp(dir_b))
        return 99;
    test_keygen();
    test_round_trip();
    test_damage();
    test_key_file();
    test_ctx_protect();
    test_wipe_and_dump();
    snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", dir_a, dir_b);
    if (system(cmd) != 0)
        diag("cannot remove %s and %s", dir_a, dir_b);
    return tap_done();
}
