/* tests/unit/test-config.c - the configuration loader
 *
 * Each case writes a configuration into a fresh directory under a
 * mkdtemp() root, loads it and checks the result or the error message
 * (which must name FILE:LINE).  The process environment is cleared of
 * everything the loader reads first, and HOME points at an empty
 * directory, so nothing outside the test is read but SYSCONFDIR.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <polysandbox/sandbox.h>

#include "error.h"
#include "strv.h"
#include "labels.h"
#include "conf.h"
#include "config/config-load.h"
#include "limit-names.h"
#include "tap.h"
#include "provider-int.h"

#define S UINT64_C(1000000000)
#define MI (UINT64_C(1) << 20)
#define GI (UINT64_C(1) << 30)

static char root[512];   /* short, so paths built on it fit PATH_MAX */
static int case_no;

static const char *const env_vars[] = {
    "POLYSANDBOX_CONFIG_DIR", "POLYSANDBOX_PROVIDER", "POLYSANDBOX_PROVIDER_PATH",
    "POLYSANDBOX_STATE_DIR", "POLYSANDBOX_TIMEOUT", "POLYSANDBOX_MEMORY",
    "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR", NULL
};

static void die(const char *what)
{
    printf("Bail out! %s: %s\n", what, strerror(errno));
    exit(99);
}

static void clean_env(void)
{
    char home[PATH_MAX + 8];

    for (size_t i = 0; env_vars[i]; i++)
        unsetenv(env_vars[i]);
    snprintf(home, sizeof home, "%s/home", root);
    setenv("HOME", home, 1);
}

/* mkdir -p of @path relative to nothing (absolute). */
static void mkdirs(const char *path)
{
    char buf[PATH_MAX];

    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p == '/') {
            *p = '\0';
            if (mkdir(buf, 0755) < 0 && errno != EEXIST)
                die(buf);
            *p = '/';
        }
    }
    if (mkdir(buf, 0755) < 0 && errno != EEXIST)
        die(buf);
}

/* A new empty configuration directory. */
static char *new_dir(void)
{
    static char dir[PATH_MAX];

    snprintf(dir, sizeof dir, "%s/c%d", root, ++case_no);
    mkdirs(dir);
    return dir;
}

/* Write @text to @dir/@rel (creating directories). */
static void put(const char *dir, const char *rel, const char *text)
{
    char path[PATH_MAX * 2];
    FILE *f;

    snprintf(path, sizeof path, "%s/%s", dir, rel);
    char *slash = strrchr(path, '/');
    *slash = '\0';
    mkdirs(path);
    *slash = '/';
    f = fopen(path, "w");
    if (!f)
        die(path);
    fputs(text, f);
    if (fclose(f) != 0)
        die(path);
}

static core_config cfg;

static int load(const char *dir, const char *const *overrides)
{
    core_config_free(&cfg);
    core_error_clear();
    return core_config_load(&cfg, dir, overrides);
}

static const char *msg(void)
{
    return core_error_tls()->message;
}

/* Loading fails with SBX_E_CONFIG and a message holding every one of the
 * (up to three) given fragments. */
static void fails(const char *dir, const char *const *ov, const char *what,
                  const char *a, const char *b, const char *c)
{
    int rc = load(dir, ov);
    const char *m = msg();
    bool has = (!a || strstr(m, a)) && (!b || strstr(m, b)) && (!c || strstr(m, c));

    if (!ok(rc == SBX_E_CONFIG && core_error_tls()->code == SBX_E_CONFIG && has,
            "%s is refused", what))
        diag("rc %d, message: %s", rc, m);
    else
        diag("%s", m);
    core_config_free(&cfg);
}

/* "PATH:LINE:" of @rel in @dir. */
static const char *at(const char *dir, const char *rel, int line)
{
    static char buf[4][PATH_MAX + 64];
    static int n;
    char *b = buf[n++ % 4];

    snprintf(b, sizeof buf[0], "%s/%s:%d:", dir, rel, line);
    return b;
}

/* A file that is refused: @text written to REL in a fresh directory,
 * refused at REL:@line with the fragments @a and @b in the message. */
struct bad_file {
    const char *what, *text;
    int line;
    const char *a, *b;
};

static void fails_each(const char *rel, const struct bad_file *bad, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char *d = new_dir();
        put(d, rel, bad[i].text);
        fails(d, NULL, bad[i].what, at(d, rel, bad[i].line), bad[i].a, bad[i].b);
    }
}

static size_t count(char *const *v)
{
    size_t n = 0;
    while (v && v[n])
        n++;
    return n;
}

static const core_provider_conf *prov(const char *name)
{
    for (size_t i = 0; i < cfg.n_providers; i++)
        if (strcmp(cfg.providers[i].name, name) == 0)
            return &cfg.providers[i];
    return NULL;
}

static const core_template_conf *tmpl(const char *name)
{
    for (size_t i = 0; i < cfg.n_templates; i++)
        if (strcmp(cfg.templates[i].name, name) == 0)
            return &cfg.templates[i];
    return NULL;
}

static const uint64_t def_limits[SBX_LIMIT_COUNT] = {
    10 * S, 10 * S, 512 * MI, 128, 256, 64 * MI, 256 * MI, MI, MI
};
static const uint64_t def_max[SBX_LIMIT_COUNT] = {
    300 * S, 300 * S, 8 * GI, 4096, 65536, GI, 4 * GI, 64 * MI, 64 * MI
};

static bool limits_are_default(void)
{
    return memcmp(cfg.limits, def_limits, sizeof def_limits) == 0 &&
           memcmp(cfg.max_limits, def_max, sizeof def_max) == 0;
}

static void test_limit_keys(void)
{
    static const char *const want[] = { "wall", "cpu", "memory", "pids", "nofile",
                                        "fsize", "disk", "stdout", "stderr" };
    bool all = true;

    for (int i = 0; i < SBX_LIMIT_COUNT; i++)
        all = all && core_limit_key((sbx_limit)i) &&
              strcmp(core_limit_key((sbx_limit)i), want[i]) == 0;
    ok(all, "core_limit_key names every limit");
    ok(core_limit_key((sbx_limit)SBX_LIMIT_COUNT) == NULL &&
       core_limit_key((sbx_limit)-1) == NULL, "core_limit_key out of range is NULL");
}

static void test_defaults(void)
{
    char *d = new_dir();
    int rc = load(d, NULL);

    ok(rc == SBX_OK, "an empty directory loads (%s)", msg());
    ok(cfg.dir && strcmp(cfg.dir, d) == 0, "cfg->dir is the directory given");
    ok(limits_are_default(), "built-in limits and maxima");
    ok(!cfg.default_provider && !cfg.provider_order && !cfg.fallback,
       "no default provider, order or fallback");
    ok(count(cfg.provider_path) == 1 && strcmp(cfg.provider_path[0], PROVIDERDIR) == 0,
       "provider_path is just PROVIDERDIR");
    if (geteuid() == 0)
        ok(cfg.state_dir && strcmp(cfg.state_dir, STATEDIR) == 0,
           "root's state_dir is STATEDIR");
    else
        ok(cfg.state_dir && strncmp(cfg.state_dir, "/tmp/polysandbox-", 17) == 0,
           "a user's state_dir is /tmp/polysandbox-UID");
    const core_provider_conf *p = prov("local");
    ok(cfg.n_providers == 1 && p && p->enabled && !p->optional &&
       p->priority == 100 && strcmp(p->file, "(built-in)") == 0 && !p->module &&
       p->n_settings == 0, "built-in local provider conf");
    ok(cfg.n_templates == 0, "no templates");

    char missing[PATH_MAX + 16];
    snprintf(missing, sizeof missing, "%s/does-not-exist", d);
    /* A directory the user names must exist; a typo is not "defaults". */
    fails(missing, NULL, "a missing configuration directory", missing,
          "No such file or directory", NULL);
    setenv("POLYSANDBOX_CONFIG_DIR", d, 1);
    ok(load("", NULL) == SBX_OK && strcmp(cfg.dir, d) == 0,
       "an empty directory name is not given");
    unsetenv("POLYSANDBOX_CONFIG_DIR");
}

static void test_full_main(void)
{
    char *d = new_dir();

    put(d, "polysandbox.ini",
        "; a comment\n"
        "# another\n"
        "[core]\n"
        "default_provider = docker   ; inline comment\n"
        "order = local, docker e2b\n"
        "fallback = docker,e2b\n"
        "provider_path = /opt/a:/opt/b\n"
        "state_dir = /var/tmp/psbx\n"
        "\n"
        "[limits]\n"
        "wall = 1.5s\r\n"
        "cpu = 500ms\n"
        "   memory = 1G\n"
        "pids = 64\n"
        "nofile = 100\n"
        "fsize = 1M\n"
        "disk = 2G\n"
        "stdout = 10K\n"
        "stderr = 20K\n"
        "max_wall = 1h\n"
        "max_cpu = 2m\n"
        "max_memory = 16G\n"
        "max_pids = 10000\n"
        "max_nofile = 1000\n"
        "max_fsize = 2G\n"
        "max_disk = 8G\n"
        "max_stdout = 1G\n"
        "max_stderr = 2G\n"
        "[core]\n"
        "\n");
    ok(load(d, NULL) == SBX_OK, "a full polysandbox.ini loads (%s)", msg());
    ok(cfg.default_provider && strcmp(cfg.default_provider, "docker") == 0,
       "default_provider, inline comment dropped");
    ok(count(cfg.provider_order) == 3 && strcmp(cfg.provider_order[0], "local") == 0 &&
       strcmp(cfg.provider_order[1], "docker") == 0 &&
       strcmp(cfg.provider_order[2], "e2b") == 0, "order, commas and blanks");
    ok(count(cfg.fallback) == 2 && strcmp(cfg.fallback[1], "e2b") == 0, "fallback");
    ok(count(cfg.provider_path) == 3 && strcmp(cfg.provider_path[0], "/opt/a") == 0 &&
       strcmp(cfg.provider_path[1], "/opt/b") == 0 &&
       strcmp(cfg.provider_path[2], PROVIDERDIR) == 0,
       "provider_path, then PROVIDERDIR");
    ok(strcmp(cfg.state_dir, "/var/tmp/psbx") == 0, "state_dir");
    ok(cfg.limits[SBX_LIMIT_WALL] == 1500000000 && cfg.limits[SBX_LIMIT_CPU] == S / 2 &&
       cfg.limits[SBX_LIMIT_MEMORY] == GI && cfg.limits[SBX_LIMIT_PIDS] == 64 &&
       cfg.limits[SBX_LIMIT_NOFILE] == 100 && cfg.limits[SBX_LIMIT_FSIZE] == MI &&
       cfg.limits[SBX_LIMIT_DISK] == 2 * GI && cfg.limits[SBX_LIMIT_STDOUT] == 10240 &&
       cfg.limits[SBX_LIMIT_STDERR] == 20480,
       "every limit, CRLF and indented lines");
    ok(cfg.max_limits[SBX_LIMIT_WALL] == 3600 * S && cfg.max_limits[SBX_LIMIT_CPU] == 120 * S &&
       cfg.max_limits[SBX_LIMIT_MEMORY] == 16 * GI && cfg.max_limits[SBX_LIMIT_PIDS] == 10000 &&
       cfg.max_limits[SBX_LIMIT_NOFILE] == 1000 && cfg.max_limits[SBX_LIMIT_FSIZE] == 2 * GI &&
       cfg.max_limits[SBX_LIMIT_DISK] == 8 * GI && cfg.max_limits[SBX_LIMIT_STDOUT] == GI &&
       cfg.max_limits[SBX_LIMIT_STDERR] == 2 * GI, "every maximum");

    d = new_dir();
    put(d, "polysandbox.ini", "\xEF\xBB\xBF[core]\r\ndefault_provider = x1");
    ok(load(d, NULL) == SBX_OK && strcmp(cfg.default_provider, "x1") == 0,
       "a byte order mark, CRLF, no newline at the end (%s)", msg());

    /* Empty lists clear; an empty default_provider is none. */
    d = new_dir();
    put(d, "polysandbox.ini", "[core]\ndefault_provider =\norder =\nprovider_path =\n");
    ok(load(d, NULL) == SBX_OK && !cfg.default_provider && !cfg.provider_order &&
       count(cfg.provider_path) == 1, "empty values mean none (%s)", msg());
}

static void test_precedence(void)
{
    char *d = new_dir();
    const char *const ov[] = { "limits.memory=3G", " core.default_provider = local ",
                               "limits.max_memory=4G", NULL };

    put(d, "polysandbox.ini",
        "[core]\ndefault_provider = docker\nprovider_path = /opt/a\n"
        "state_dir = /var/tmp/file\n"
        "[limits]\nmemory = 1G\nwall = 20s\n");
    ok(load(d, NULL) == SBX_OK && cfg.limits[SBX_LIMIT_MEMORY] == GI &&
       cfg.limits[SBX_LIMIT_WALL] == 20 * S, "file over built-in");

    setenv("POLYSANDBOX_MEMORY", "2G", 1);
    setenv("POLYSANDBOX_TIMEOUT", "30s", 1);
    setenv("POLYSANDBOX_PROVIDER", "e2b", 1);
    setenv("POLYSANDBOX_STATE_DIR", "/var/tmp/env", 1);
    setenv("POLYSANDBOX_PROVIDER_PATH", "/env/a:/env/b", 1);
    ok(load(d, NULL) == SBX_OK, "with environment (%s)", msg());
    ok(cfg.limits[SBX_LIMIT_MEMORY] == 2 * GI, "POLYSANDBOX_MEMORY over the file");
    ok(cfg.limits[SBX_LIMIT_WALL] == 30 * S, "POLYSANDBOX_TIMEOUT over the file");
    ok(strcmp(cfg.default_provider, "e2b") == 0, "POLYSANDBOX_PROVIDER over the file");
    ok(strcmp(cfg.state_dir, "/var/tmp/env") == 0, "POLYSANDBOX_STATE_DIR over the file");
    ok(count(cfg.provider_path) == 4 && strcmp(cfg.provider_path[0], "/env/a") == 0 &&
       strcmp(cfg.provider_path[1], "/env/b") == 0 &&
       strcmp(cfg.provider_path[2], "/opt/a") == 0 &&
       strcmp(cfg.provider_path[3], PROVIDERDIR) == 0,
       "POLYSANDBOX_PROVIDER_PATH first, then provider_path, then PROVIDERDIR");

    ok(load(d, ov) == SBX_OK, "with overrides (%s)", msg());
    ok(cfg.limits[SBX_LIMIT_MEMORY] == 3 * GI && cfg.max_limits[SBX_LIMIT_MEMORY] == 4 * GI,
       "command line over the environment");
    ok(strcmp(cfg.default_provider, "local") == 0, "override with blanks trimmed");
    ok(cfg.limits[SBX_LIMIT_WALL] == 30 * S, "keys not overridden keep their layer");

    setenv("POLYSANDBOX_MEMORY", "", 1);
    ok(load(d, NULL) == SBX_OK && cfg.limits[SBX_LIMIT_MEMORY] == GI,
       "an empty variable is unset");
    clean_env();

    /* $POLYSANDBOX_CONFIG_DIR is the directory when none is given. */
    setenv("POLYSANDBOX_CONFIG_DIR", d, 1);
    ok(load(NULL, NULL) == SBX_OK && strcmp(cfg.dir, d) == 0 &&
       cfg.limits[SBX_LIMIT_WALL] == 20 * S, "POLYSANDBOX_CONFIG_DIR is read");
    char *d2 = new_dir();
    ok(load(d2, NULL) == SBX_OK && strcmp(cfg.dir, d2) == 0 &&
       cfg.limits[SBX_LIMIT_WALL] == 10 * S, "an explicit directory beats it");
    clean_env();
}

static void test_main_errors(void)
{
    char *d;
    const char *f = "polysandbox.ini";

    static const struct bad_file bad_lines[] = {
        { "unknown key in [core]", "[core]\ndefault_provider = local\nfoo = 1\n",
          3, "unknown key 'foo' in [core]", "known: default_provider" },
        { "unknown key in [limits]", "[limits]\nwall = 1s\nheight = 3\n",
          3, "unknown key 'height'", "max_" },
        { "unknown section", "[core]\n[colors]\nred = 1\n", 3, "unknown section [colors]", NULL },
        { "a key outside any section", "wall = 1s\n", 1, "outside", NULL },
        { "a bad duration", "[limits]\n\nwall = 10x\n", 3, "'10x'", "unknown unit" },
        { "a negative size", "[limits]\nmemory = -1G\n", 2, "negative", NULL },
        { "a zero count", "[limits]\npids = 0\n", 2, "greater than zero", NULL },
        { "an overflowing size", "[limits]\nmemory = 17179869184G\n", 2, "too large", NULL },
        { "a duplicate key", "[limits]\nwall = 1s\ncpu = 2s\n[core]\n[limits]\nwall = 2s\n",
          6, "duplicate key 'wall' in [limits]", "line 2" },
        { "a line that is not key = value",
          "[core]\nthis line has no equals sign\ndefault_provider = x\n",
          2, "syntax error", NULL },
        { "an unclosed section", "[core\n", 1, "syntax error", NULL },
        { "the first of two errors", "[core]\nfoo = 1\nnot a pair\n",
          2, "unknown key 'foo'", NULL },
        { "a syntax error before a bad key", "[core]\nnot a pair\nfoo = 1\n",
          2, "syntax error", NULL },
        { "an unknown key in [registry HOST]", "[registry 127.0.0.1:5000]\nuser = x\n",
          2, "unknown key 'user' in [registry 127.0.0.1:5000]", "username, password" },
        { "a [registry] that names no host", "[registry a/b]\nusername = x\n",
          2, "[registry a/b]: not a registry's host", NULL },
        { "a registry username holding ':'", "[registry docker.io]\nusername = a:b\n",
          2, "username in [registry docker.io] holds ':'", NULL },
        { "an empty registry password", "[registry docker.io]\npassword =\n",
          2, "empty password in [registry docker.io]", NULL },
    };
    fails_each(f, bad_lines, sizeof bad_lines / sizeof bad_lines[0]);

    {
        char big[600];
        memset(big, 'a', sizeof big);
        memcpy(big, "[core]\nstate_dir = /", 20);
        memcpy(big + sizeof big - 2, "\n", 2);
        d = new_dir();
        put(d, f, big);
        ok(load(d, NULL) == SBX_OK && strlen(cfg.state_dir) == sizeof big - 2 - 19,
           "a key = value line too long for inih is read whole (%s)", msg());
        memcpy(big, "[core]\n# comment ", 17);
        put(d, f, big);
        ok(load(d, NULL) == SBX_OK, "a long comment is skipped (%s)", msg());
        memcpy(big, "[core]\nno pair here", 19);
        put(d, f, big);
        fails(d, NULL, "a long line that is no key = value", at(d, f, 2), "line too long", NULL);
    }

    {
        size_t n = 70000;
        char *huge = malloc(n);
        if (!huge)
            die("malloc");
        memset(huge, 'c', n);
        memcpy(huge, "[core]\nstate_dir = /", 20);
        memcpy(huge + n - 2, "\n", 2);
        d = new_dir();
        put(d, f, huge);
        fails(d, NULL, "a line over 65536 characters", at(d, f, 2), "at most 65536", NULL);
        free(huge);
    }

    {
        char line[400];
        snprintf(line, sizeof line, "[core]\nstate_dir = /%0250d ; a comment  \n", 7);
        d = new_dir();
        put(d, f, line);
        ok(load(d, NULL) == SBX_OK && strlen(cfg.state_dir) == 251 &&
           cfg.state_dir[250] == '7', "a long value loses its inline comment and blanks, as a short one");
        put(d, f, "[core]\nstate_dir = /a\x01" "b\n");
        fails(d, NULL, "a 0x01 byte", at(d, f, 2), "control", NULL);
    }

    {
        /* inih's buffer is 200 bytes: 198 characters, '\n' and '\0'. */
        char line[256];
        memset(line, 'b', sizeof line);
        memcpy(line, "[core]\nstate_dir = /", 20);
        memcpy(line + 7 + 198, "\n", 2);
        d = new_dir();
        put(d, f, line);
        ok(load(d, NULL) == SBX_OK && strlen(cfg.state_dir) == 198 - 12,
           "a line of 198 characters is read whole (%s)", msg());
        memcpy(line + 7 + 198, "b\n", 3);
        put(d, f, line);
        ok(load(d, NULL) == SBX_OK && strlen(cfg.state_dir) == 199 - 12,
           "a line of 199 characters too (%s)", msg());
    }

    d = new_dir();
    {
        char path[PATH_MAX * 2];
        snprintf(path, sizeof path, "%s/%s", d, f);
        static const char text[] = "[core]\nstate_dir = /a\0b\n";
        FILE *fp = fopen(path, "w");
        if (!fp)
            die(path);
        fwrite(text, 1, sizeof text - 1, fp);
        fclose(fp);
    }
    fails(d, NULL, "a NUL byte", at(d, f, 2), "NUL", NULL);

    static const struct bad_file bad_values[] = {
        { "a relative provider_path", "[core]\nprovider_path = /opt/a:relative/dir\n",
          2, "relative directory 'relative/dir'", NULL },
        { "an empty provider_path entry", "[core]\nprovider_path = /opt/a::/opt/b\n",
          2, "empty directory", NULL },
        { "a trailing ':' in provider_path", "[core]\nprovider_path = /opt/a:\n",
          2, "empty directory", NULL },
        { "a relative state_dir", "[core]\nstate_dir = var/lib\n", 2, "absolute", NULL },
        { "a bad provider name", "[core]\ndefault_provider = Docker\n", 2, "'Docker'", NULL },
        { "a provider listed twice", "[core]\norder = local, docker, local\n", 2, "twice", NULL },
        { "a bad name in fallback", "[core]\nfallback = docker, ../x\n", 2, "'../x'", NULL },
        { "a default above the built-in maximum", "[limits]\nmemory = 16G\n",
          2, "memory = 16G is above max_memory = 8G", NULL },
        { "a maximum below the built-in default", "[limits]\nmax_wall = 5s\n",
          2, "wall = 10s (built-in default) is above max_wall = 5s", NULL },
    };
    fails_each(f, bad_values, sizeof bad_values / sizeof bad_values[0]);

    d = new_dir();
    put(d, f, "[limits]\nmax_pids = 10\n\npids = 20\n");
    fails(d, NULL, "a default above a maximum from the file", at(d, f, 4),
          "pids = 20 is above max_pids = 10", "(set at /");
    ok(strstr(msg(), "polysandbox.ini:2)") != NULL, "it names where the maximum was set");

    d = new_dir();
    put(d, f, "[limits]\nmax_pids = 10\npids = 10\n");
    ok(load(d, NULL) == SBX_OK, "a default equal to its maximum is fine");

    /* A directory where polysandbox.ini should be. */
    d = new_dir();
    put(d, "polysandbox.ini/x", "");
    fails(d, NULL, "a polysandbox.ini that is not a file", "polysandbox.ini: ",
          "not a regular file", NULL);

    /* A file where the configuration directory should be. */
    d = new_dir();
    put(d, "file", "");
    {
        char path[PATH_MAX * 2];
        snprintf(path, sizeof path, "%s/file", d);
        fails(path, NULL, "a configuration directory that is a file", path,
              "is not a directory", NULL);
    }

    if (geteuid() != 0) {
        d = new_dir();
        put(d, f, "[core]\n");
        char path[PATH_MAX * 2];
        snprintf(path, sizeof path, "%s/%s", d, f);
        chmod(path, 0);
        fails(d, NULL, "an unreadable polysandbox.ini", path, "cannot open", NULL);
    } else {
        ok(1, "an unreadable polysandbox.ini is refused # SKIP root reads anything");
    }
}

/* [registry HOST]: kept as HOST.username and HOST.password, as written. */
static void test_registries(void)
{
    char *d = new_dir();

    put(d, "polysandbox.ini",
        "[registry 127.0.0.1:5000]\n"
        "username = someone\n"
        "password = env:PS_TEST_PW\n"
        "[registry docker.io]\n"
        "password = file:/etc/pw\n");
    ok(load(d, NULL) == SBX_OK && cfg.n_registries == 3 &&
       strcmp(cfg.registries[0].key, "127.0.0.1:5000.username") == 0 &&
       strcmp(cfg.registries[0].value, "someone") == 0 &&
       strcmp(cfg.registries[1].key, "127.0.0.1:5000.password") == 0 &&
       strcmp(cfg.registries[1].value, "env:PS_TEST_PW") == 0 && cfg.registries[1].line == 3 &&
       strcmp(cfg.registries[2].key, "docker.io.password") == 0,
       "[registry HOST] username and password are kept per host (%s)", msg());

    /* -o registry.HOST.KEY: the key is after the last dot, the host
     * (with its own dots) between the first and the last. */
    const char *const ov[] = { "registry.127.0.0.1:5000.password=env:PS_OTHER",
                               "registry.ghcr.io.username=bot", NULL };
    ok(load(d, ov) == SBX_OK && cfg.n_registries == 4 &&
       strcmp(cfg.registries[1].key, "127.0.0.1:5000.password") == 0 &&
       strcmp(cfg.registries[1].value, "env:PS_OTHER") == 0 &&
       strcmp(cfg.registries[3].key, "ghcr.io.username") == 0 &&
       strcmp(cfg.registries[3].value, "bot") == 0,
       "-o registry.HOST.KEY=VALUE sets [registry HOST] KEY, HOST with dots (%s)", msg());
}

static void test_env_and_override_errors(void)
{
    char *d = new_dir();

    /* Each variable alone, refused with the message fragments a, b, c. */
    static const struct {
        const char *var, *value, *what, *a, *b, *c;
    } env[] = {
        { "POLYSANDBOX_MEMORY", "lots", "a bad POLYSANDBOX_MEMORY",
          "environment (POLYSANDBOX_MEMORY)", "'lots'", "memory" },
        { "POLYSANDBOX_TIMEOUT", "0", "a zero POLYSANDBOX_TIMEOUT",
          "environment (POLYSANDBOX_TIMEOUT)", "greater than zero", NULL },
        { "POLYSANDBOX_PROVIDER_PATH", "/ok:plugins", "a relative dir in POLYSANDBOX_PROVIDER_PATH",
          "environment (POLYSANDBOX_PROVIDER_PATH)", "'plugins'", NULL },
        { "POLYSANDBOX_STATE_DIR", "state", "a relative POLYSANDBOX_STATE_DIR",
          "environment (POLYSANDBOX_STATE_DIR)", "absolute", NULL },
        { "POLYSANDBOX_MEMORY", "9G", "POLYSANDBOX_MEMORY above the maximum",
          "environment (POLYSANDBOX_MEMORY): memory = 9G is above max_memory = 8G", NULL, NULL },
    };
    for (size_t i = 0; i < sizeof env / sizeof env[0]; i++) {
        setenv(env[i].var, env[i].value, 1);
        fails(d, NULL, env[i].what, env[i].a, env[i].b, env[i].c);
        clean_env();
    }

    /* Each override alone, refused with the message fragments a, b. */
    static const struct {
        const char *override, *what, *a, *b;
    } ov[] = {
        { "limits.memory=1X", "a bad override value", "command line:", "'1X'" },
        { "memory=1G", "an override without a section", "command line:",
          "'memory=1G' is not section.key=value" },
        { "limits.memory", "an override without a value", "command line:",
          "not section.key=value" },
        { "colors.red=1", "an override of an unknown section", "command line:",
          "unknown section [colors]" },
        { "core.colour=red", "an override of an unknown key", "command line:",
          "unknown key 'colour' in [core]" },
        { "limits.max_memory=100M", "an override putting a maximum below the default",
          "command line: memory = 512M (built-in default) is above max_memory = 100M", NULL },
        { "core.provider_path=./here", "a relative provider_path override", "command line:",
          "relative" },
        { "core.image_platform=linux", "a malformed image_platform", "command line:",
          "bad value 'linux' for image_platform in [core]" },
        { "registry.password=x", "a registry override without a host", "command line:",
          "'registry.password=x' is not registry.HOST.KEY=value" },
        { "registry.ghcr.io.=x", "a registry override without a key", "command line:",
          "'registry.ghcr.io.=x' is not registry.HOST.KEY=value" },
        { "registry.ghcr.io.token=x", "a registry override of an unknown key",
          "command line:", "unknown key 'token' in [registry ghcr.io]" },
        { "registry.a/b.username=x", "a registry override of a bad host", "command line:",
          "[registry a/b]: not a registry's host" },
    };
    for (size_t i = 0; i < sizeof ov / sizeof ov[0]; i++) {
        const char *const one[] = { ov[i].override, NULL };
        fails(d, one, ov[i].what, ov[i].a, ov[i].b, NULL);
    }
}

static void test_providers(void)
{
    char *d = new_dir();
    const char *f = "providers.d/docker.ini";

    put(d, f,
        "[provider]\n"
        "enabled = no\n"
        "optional = yes\n"
        "priority = -5\n"
        "module = /opt/x/docker.so\n"
        "[settings]\n"
        "host = unix:///run/docker.sock\n"
        "api_key = env:DOCKER_KEY\n");
    put(d, "providers.d/e2b.ini", "[provider]\npriority = 50\n");
    put(d, "providers.d/README", "not an ini\n");
    put(d, "providers.d/docker.ini~", "garbage\n");
    put(d, "providers.d/.hidden.ini", "garbage\n");
    put(d, "providers.d/docker.ini.swp", "garbage\n");
    ok(load(d, NULL) == SBX_OK, "providers.d loads, other files ignored (%s)", msg());
    ok(cfg.n_providers == 3 && strcmp(cfg.providers[0].name, "docker") == 0 &&
       strcmp(cfg.providers[1].name, "e2b") == 0 &&
       strcmp(cfg.providers[2].name, "local") == 0,
       "providers sorted by name, built-in local added");
    const core_provider_conf *p = prov("docker");
    ok(p && !p->enabled && p->optional && p->priority == -5 &&
       strcmp(p->module, "/opt/x/docker.so") == 0, "[provider] keys");
    ok(p && strstr(p->file, f) && p->file[0] == '/', "the provider's file");
    ok(p && p->n_settings == 2 && strcmp(p->settings[0].key, "host") == 0 &&
       strcmp(p->settings[0].value, "unix:///run/docker.sock") == 0 &&
       p->settings[0].line == 7 && strcmp(p->settings[0].file, p->file) == 0 &&
       strcmp(p->settings[1].key, "api_key") == 0 && p->settings[1].line == 8,
       "[settings] with file and line");
    p = prov("e2b");
    ok(p && p->enabled && !p->optional && p->priority == 50 && !p->module,
       "provider defaults: enabled, not optional");
    p = prov("local");
    ok(p && p->priority == 100 && strcmp(p->file, "(built-in)") == 0,
       "the built-in local is there");

    d = new_dir();
    put(d, "providers.d/local.ini", "[provider]\npriority = 7\n[settings]\nx = 1\n");
    ok(load(d, NULL) == SBX_OK && cfg.n_providers == 1 && (p = prov("local")) &&
       p->priority == 7 && p->file[0] == '/' && p->n_settings == 1,
       "a local.ini replaces the built-in local");

    ok(p && !p->price.set, "no price table unless one is given");
    d = new_dir();
    put(d, "providers.d/local.ini", "[provider]\nprice_per_second = 0.000014\n"
        "price_per_sandbox = 2\ncurrency = EUR\n");
    ok(load(d, NULL) == SBX_OK && (p = prov("local")) && p->price.set &&
       p->price.per_second == 0.000014 && p->price.per_sandbox == 2.0 &&
       strcmp(p->price.currency, "EUR") == 0, "a price table in [provider]");
    d = new_dir();
    put(d, "providers.d/local.ini", "[provider]\ncurrency = EUR\n");
    ok(load(d, NULL) == SBX_OK && (p = prov("local")) && !p->price.set,
       "a currency alone prices nothing");

    d = new_dir();
    put(d, "providers.d/Bad-Name.ini", "[provider]\n");
    fails(d, NULL, "a provider file with a bad name", "Bad-Name.ini:", "'Bad-Name'", NULL);

    static const struct bad_file bad_keys[] = {
        { "a bad boolean", "[provider]\nenabled = perhaps\n", 2, "'perhaps'", "enabled" },
        { "a bad priority", "[provider]\npriority = high\n", 2, "'high'", NULL },
        { "an out-of-range priority", "[provider]\npriority = 99999999999\n",
          2, "out of range", NULL },
        { "a relative module", "[provider]\nmodule = docker.so\n", 2, "absolute", NULL },
        { "an unknown [provider] key", "[provider]\nenable = true\n",
          2, "unknown key 'enable'", "known: enabled" },
        { "an unknown section in a provider file", "[provider]\n[setting]\nx = 1\n",
          3, "unknown section [setting]", NULL },
        { "a duplicate setting", "[settings]\nx = 1\ny = 2\nx = 3\n",
          4, "duplicate key 'x'", NULL },
        { "a negative price", "[provider]\nprice_per_second = -1\n", 2, "'-1'",
          "price_per_second" },
        { "a price with an exponent", "[provider]\nprice_per_sandbox = 1e3\n", 2,
          "price_per_sandbox", "not a plain decimal" },
        { "a price of two dots", "[provider]\nprice_per_second = 1.2.3\n", 2,
          "price_per_second", NULL },
        { "a price that is only a dot", "[provider]\nprice_per_second = .\n", 2,
          "price_per_second", NULL },
        { "a price of inf", "[provider]\nprice_per_sandbox = inf\n", 2,
          "price_per_sandbox", NULL },
        { "a currency that is no code", "[provider]\ncurrency = US$\n", 2, "currency",
          "'US$'" },
    };
    fails_each(f, bad_keys, sizeof bad_keys / sizeof bad_keys[0]);

    d = new_dir();
    put(d, "providers.d/x.ini/y", "");
    fails(d, NULL, "a provider .ini that is a directory", "x.ini:", "not a regular file",
          NULL);

    d = new_dir();
    put(d, "providers.d", "");
    fails(d, NULL, "a providers.d that is a file", "providers.d:", "cannot open directory",
          NULL);
}

/* provider.NAME.KEY=VALUE overrides: a provider's [settings] key. */
static void test_provider_overrides(void)
{
    char *d = new_dir();
    const core_provider_conf *p;

    put(d, "providers.d/docker.ini", "[settings]\nimage = a\nsocket = s\n");
    const char *const o1[] = { "provider.docker.image=b", "provider.docker.extra = x",
                               "provider.local.uid=1234", NULL };
    ok(load(d, o1) == SBX_OK, "provider overrides load (%s)", msg());
    p = prov("docker");
    ok(p && p->n_settings == 3 && strcmp(p->settings[0].key, "image") == 0 &&
       strcmp(p->settings[0].value, "b") == 0 &&
       strcmp(p->settings[0].file, "command line") == 0 && p->settings[0].line == 0 &&
       strcmp(p->settings[1].value, "s") == 0 && p->settings[1].line == 3,
       "an override replaces the file's value in place, the others stay");
    ok(p && strcmp(p->settings[2].key, "extra") == 0 && strcmp(p->settings[2].value, "x") == 0,
       "an override adds a key the file has not, blanks trimmed");
    p = prov("local");
    ok(p && strcmp(p->file, "(built-in)") == 0 && p->n_settings == 1 &&
       strcmp(p->settings[0].key, "uid") == 0 && strcmp(p->settings[0].value, "1234") == 0,
       "the built-in local takes overrides too");
    const char *const o2[] = { "provider.docker.image=b", "provider.docker.image=c", NULL };
    ok(load(d, o2) == SBX_OK && (p = prov("docker")) && p->n_settings == 2 &&
       strcmp(p->settings[0].value, "c") == 0, "the last override of a key wins");

    const char *const o6[] = { "provider.docker.price_per_sandbox=0.25",
                               "provider.docker.currency=CHF", NULL };
    ok(load(d, o6) == SBX_OK && (p = prov("docker")) && p->price.set &&
       p->price.per_sandbox == 0.25 && p->price.per_second == 0.0 &&
       strcmp(p->price.currency, "CHF") == 0 && p->n_settings == 2,
       "a price from the command line: the core's, not lent to the provider");
    const char *const o7[] = { "provider.docker.price_per_second=1,5", NULL };
    fails(d, o7, "a bad price from the command line", "command line:",
          "provider.docker.price_per_second", "'1,5'");
    const char *const o3[] = { "provider.e2b.key=1", NULL };
    fails(d, o3, "an override of a provider not configured", "command line:",
          "no provider 'e2b' is configured", NULL);
    const char *const o4[] = { "provider.docker=1", NULL };
    fails(d, o4, "provider.NAME without a key", "command line:",
          "is not provider.NAME.KEY", NULL);
    const char *const o5[] = { "provider.docker.a.b=1", NULL };
    fails(d, o5, "provider.NAME.KEY with a dotted key", "command line:",
          "is not provider.NAME.KEY", NULL);
    put(d, "polysandbox.ini", "[provider]\ndocker.image = a\n");
    fails(d, NULL, "a [provider] section in polysandbox.ini", "polysandbox.ini:2:",
          "unknown section [provider]", NULL);
}

static bool argv_is(char *const *v, const char *const *want)
{
    size_t i;
    for (i = 0; want[i]; i++)
        if (!v || !v[i] || strcmp(v[i], want[i]) != 0)
            return false;
    return v && !v[i];
}

static void test_templates(void)
{
    char *d = new_dir();
    const char *f = "templates.d/cc.ini";

    put(d, f,
        "[template]\n"
        "extensions = .c, .h .C\n"
        "source = main.c\n"
        "compile = cc -O2 -o main main.c -lm \"-DMSG=a b\" '-DQ=\"x\"' a\\ b \"\\\\\"\n"
        "run = ./main\n"
        "image = gcc:13\n"
        "[env]\n"
        "LC_ALL = C.UTF-8\n"
        "_X1 = two words\n");
    put(d, "templates.d/sh.ini", "[template]\nextensions = .sh\nrun = /bin/sh main.sh\n");
    put(d, "templates.d/nope.ini",
        "[template]\nextensions = .nope\nrun = polysandbox-no-such-command x\n");
    put(d, "templates.d/c++.ini", "[template]\nextensions = .cc\ncompile = /nonexistent/c++ x\n"
        "run = ./main\n");
    ok(load(d, NULL) == SBX_OK, "templates.d loads (%s)", msg());
    ok(cfg.n_templates == 4 && strcmp(cfg.templates[0].name, "c++") == 0 &&
       strcmp(cfg.templates[1].name, "cc") == 0 &&
       strcmp(cfg.templates[2].name, "nope") == 0 &&
       strcmp(cfg.templates[3].name, "sh") == 0, "templates sorted by name");
    const core_template_conf *t = tmpl("cc");
    static const char *const ext[] = { ".c", ".h", ".C", NULL };
    static const char *const comp[] = { "cc", "-O2", "-o", "main", "main.c", "-lm",
                                        "-DMSG=a b", "-DQ=\"x\"", "a b", "\\", NULL };
    static const char *const run[] = { "./main", NULL };
    ok(t && argv_is(t->extensions, ext), "extensions");
    ok(t && strcmp(t->source, "main.c") == 0, "source");
    ok(t && argv_is(t->compile, comp), "compile split with quotes and escapes");
    ok(t && argv_is(t->run, run), "run");
    ok(t && t->image && strcmp(t->image, "gcc:13") == 0, "image");
    ok(t && t->n_env == 2 && strcmp(t->env[0].key, "LC_ALL") == 0 &&
       strcmp(t->env[0].value, "C.UTF-8") == 0 && strcmp(t->env[1].key, "_X1") == 0 &&
       strcmp(t->env[1].value, "two words") == 0, "[env]");
    ok(t && strstr(t->file, f) != NULL, "the template's file");
    if (access("/usr/bin/cc", X_OK) == 0 || access("/usr/local/bin/cc", X_OK) == 0 ||
        access("/bin/cc", X_OK) == 0)
        ok(t && !t->missing, "available: the compiler is on the host, ./main is built");
    else
        ok(1, "available with a compiler # SKIP no cc on this host");
    t = tmpl("sh");
    ok(t && !t->missing && strcmp(t->source, "main.sh") == 0 && !t->compile &&
       !t->image && t->n_env == 0, "sh: available, source defaults to main.sh");
    t = tmpl("nope");
    ok(t && t->missing && strcmp(t->missing, t->run[0]) == 0,
       "a template whose command is missing is unavailable, and says which");
    t = tmpl("c++");
    ok(t && t->missing && strcmp(t->missing, t->compile[0]) == 0,
       "a template whose compiler is missing is unavailable, and says which");

    struct {
        const char *text, *what, *a, *b;
        int line;
    } bad[] = {
        { "[template]\nextensions = .x\n", "a template without run", "no run", NULL, 0 },
        { "[template]\nrun = x\n", "a template without extensions", "no extensions", NULL, 0 },
        { "[template]\nextensions = py\nrun = x\n", "an extension without a dot",
          "bad extension 'py'", NULL, 2 },
        { "[template]\nextensions = .\nrun = x\n", "an extension that is just a dot",
          "bad extension '.'", NULL, 2 },
        { "[template]\nextensions = .x\nsource = ../main.py\nrun = x\n",
          "a source with a slash", "bad source", NULL, 3 },
        { "[template]\nextensions = .x\nsource = ..\nrun = x\n", "a source of ..",
          "bad source", NULL, 3 },
        { "[template]\nextensions = .x\nrun = python3 'main.py\n", "an unterminated quote",
          "bad run command", "unterminated", 3 },
        { "[template]\nextensions = .x\nrun = a\" b\n", "an unterminated double quote",
          "unterminated", NULL, 3 },
        { "[template]\nextensions = .x\nrun = a \\\n", "a trailing backslash",
          "backslash", NULL, 3 },
        { "[template]\nextensions = .x\nrun = ''\n", "a run of one empty word",
          NULL, NULL, -1 },
        { "[template]\nextensions = .x\ncompile = \nrun = x\n", "an empty compile",
          "empty command", NULL, 3 },
        { "[template]\nextensions = .x\nrun = x\n[env]\nBAD-NAME = 1\n",
          "a bad environment name", "'BAD-NAME'", NULL, 5 },
        { "[template]\nextensions = .x\nrun = x\n[env]\nA = 1\nA = 2\n",
          "a duplicate environment key", "duplicate key 'A' in [env]", NULL, 6 },
        { "[template]\nextensions = .x\nrun = x\ncommand = y\n", "an unknown template key",
          "unknown key 'command' in [template]", NULL, 4 },
        { "[template]\nextensions = .x\nrun = x\nimage =\n", "an empty image",
          "image is empty", NULL, 4 },
        { "[template]\nextensions = .x\nrun = x\nrequires = /usr lib\n",
          "a relative path in requires", "bad requires '/usr lib'", "absolute", 4 },
        { "[template]\nextensions = .x\nrun = x\nnetwork = host\n", "a network other "
          "than none or egress", "bad network 'host' (none or egress)", NULL, 4 },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        d = new_dir();
        put(d, "templates.d/t.ini", bad[i].text);
        if (bad[i].line < 0) {
            /* '' is one empty argument: accepted, the runner will fail it. */
            ok(load(d, NULL) == SBX_OK && cfg.templates[0].run[0][0] == '\0',
               "%s is one empty argument", bad[i].what);
            continue;
        }
        char where[PATH_MAX + 64];
        if (bad[i].line)
            snprintf(where, sizeof where, "%s", at(d, "templates.d/t.ini", bad[i].line));
        else
            snprintf(where, sizeof where, "%s/templates.d/t.ini: ", d);
        fails(d, NULL, bad[i].what, where, bad[i].a, bad[i].b);
    }

    /* requires: host paths the runtime needs besides its command. */
    d = new_dir();
    put(d, "templates.d/has.ini", "[template]\nextensions = .a\nrun = /bin/sh main.a\n"
        "requires = / /bin\n");
    put(d, "templates.d/lacks.ini", "[template]\nextensions = .b\nrun = /bin/sh main.b\n"
        "requires = /bin '/polysandbox no such dir'\n");
    ok(load(d, NULL) == SBX_OK, "templates with requires load (%s)", msg());
    t = tmpl("has");
    ok(t && !t->missing && t->requires && strcmp(t->requires[1], "/bin") == 0,
       "requires: every path on the host, the template is available");
    t = tmpl("lacks");
    ok(t && t->missing && t->missing_required &&
       strcmp(t->missing, "/polysandbox no such dir") == 0,
       "requires: a path not on the host makes it unavailable, and says which");

    d = new_dir();
    put(d, "templates.d/Py.ini", "[template]\nextensions = .py\nrun = x\n");
    fails(d, NULL, "a template with a bad name", "Py.ini:", "'Py'", NULL);
}

static void test_xdg(void)
{
    char xdg[PATH_MAX + 16], home[PATH_MAX + 16];

    snprintf(xdg, sizeof xdg, "%s/xdg", root);
    snprintf(home, sizeof home, "%s/home", root);
    put(xdg, "polysandbox/polysandbox.ini", "[limits]\nwall = 42s\n");
    put(xdg, "polysandbox/providers.d/local.ini", "[provider]\npriority = 5\n");
    put(xdg, "polysandbox/templates.d/sh.ini", "[template]\nextensions = .sh\nrun = sh x\n");
    put(home, ".config/polysandbox/polysandbox.ini", "[limits]\ncpu = 43s\n");

    setenv("XDG_CONFIG_HOME", xdg, 1);
    int rc = load(NULL, NULL);
    ok(rc == SBX_OK && strcmp(cfg.dir, SYSCONFDIR) == 0,
       "with nothing given the directory is SYSCONFDIR (%s)", msg());
    ok(rc == SBX_OK && cfg.limits[SBX_LIMIT_WALL] == 42 * S,
       "$XDG_CONFIG_HOME/polysandbox/polysandbox.ini is read");
    const core_provider_conf *p = prov("local");
    ok(p && p->priority == 5 && strstr(p->file, "/xdg/polysandbox/providers.d/local.ini"),
       "its providers.d is read");
    ok(tmpl("sh") && strstr(tmpl("sh")->file, "/xdg/"), "its templates.d is read");

    char *d = new_dir();
    ok(load(d, NULL) == SBX_OK && cfg.limits[SBX_LIMIT_WALL] == 10 * S &&
       prov("local")->priority == 100, "not read when a directory is given");
    setenv("POLYSANDBOX_CONFIG_DIR", d, 1);
    ok(load(NULL, NULL) == SBX_OK && cfg.limits[SBX_LIMIT_WALL] == 10 * S,
       "not read when POLYSANDBOX_CONFIG_DIR is set");
    unsetenv("POLYSANDBOX_CONFIG_DIR");

    setenv("POLYSANDBOX_TIMEOUT", "44s", 1);
    ok(load(NULL, NULL) == SBX_OK && cfg.limits[SBX_LIMIT_WALL] == 44 * S,
       "the environment is over XDG");
    unsetenv("POLYSANDBOX_TIMEOUT");

    unsetenv("XDG_CONFIG_HOME");
    ok(load(NULL, NULL) == SBX_OK && cfg.limits[SBX_LIMIT_CPU] == 43 * S &&
       cfg.limits[SBX_LIMIT_WALL] == 10 * S, "~/.config/polysandbox without XDG_CONFIG_HOME");
    setenv("XDG_CONFIG_HOME", "relative/xdg", 1);
    ok(load(NULL, NULL) == SBX_OK && cfg.limits[SBX_LIMIT_CPU] == 43 * S,
       "a relative XDG_CONFIG_HOME is ignored");

    setenv("XDG_CONFIG_HOME", xdg, 1);
    put(xdg, "polysandbox/polysandbox.ini", "[limits]\nwall = 42s\nwall = 1s\n");
    fails(NULL, NULL, "an error in the XDG file", "/xdg/polysandbox/polysandbox.ini:3:",
          "duplicate", NULL);
    clean_env();
}

/* The shipped configurations load: etc/ (what `make install` puts in
 * SYSCONFDIR) equals the built-in defaults, tests/config is what
 * `make check` runs with. */
static void test_shipped(void)
{
    const char *top = getenv("top_srcdir");
    char path[PATH_MAX];

    if (!top) {
        ok(1, "shipped etc/ loads # SKIP top_srcdir not set");
        ok(1, "tests/config loads # SKIP top_srcdir not set");
        return;
    }
    snprintf(path, sizeof path, "%s/etc", top);
    int rc = load(path, NULL);
    ok(rc == SBX_OK && limits_are_default() && !cfg.default_provider,
       "etc/ loads and its limits are the built-in ones (%s)", msg());
    static const char *const langs[] = { "bash", "c", "cpp", "go", "java", "lua", "node", "perl",
                                         "php", "python", "python-data", "r", "ruby", "rust",
                                         "sh", "typescript", NULL };
    bool all = true;
    for (size_t i = 0; langs[i]; i++)
        all = all && tmpl(langs[i]);
    ok(rc == SBX_OK && all && cfg.n_templates == 16, "etc/templates.d has the 16 templates");
    const core_template_conf *t = tmpl("python");
    ok(t && t->n_env == 2 && strcmp(t->source, "main.py") == 0 &&
       strcmp(t->run[0], "python3") == 0, "the python template");
    t = tmpl("sh");
    ok(t && !t->missing, "the sh template is available");
    t = tmpl("c");
    ok(t && t->compile && strcmp(t->run[0], "./main") == 0, "the c template compiles");
    t = tmpl("python-data");
    ok(t && t->artifacts && strcmp(t->artifacts, "outputs") == 0 && t->requires &&
       core_kv_value(t->env, t->n_env, "MPLBACKEND") &&
       strcmp(core_kv_value(t->env, t->n_env, "MPLBACKEND"), "Agg") == 0 &&
       core_kv_value(t->env, t->n_env, "MPLCONFIGDIR"),
       "the python-data template: artifacts, requires, matplotlib's Agg and config dir");

    snprintf(path, sizeof path, "%s/tests/config", top);
    rc = load(path, NULL);
    const core_provider_conf *p = prov("local");
    ok(rc == SBX_OK && cfg.default_provider && strcmp(cfg.default_provider, "local") == 0 &&
       limits_are_default() && p && p->enabled && p->file[0] == '/' && cfg.n_templates == 16,
       "tests/config loads: default local, local.ini, the templates (%s)", msg());
    /* What no sandbox may show (host->private_paths): the directory in
     * use and the built-in one, the state directories, every provider
     * directory. */
    const char *want[] = { path, SYSCONFDIR, cfg.state_dir, STATEDIR, PROVIDERDIR };
    bool listed = rc == SBX_OK && cfg.private_paths;
    for (size_t i = 0; listed && i < sizeof want / sizeof *want; i++)
        listed = want[i] && core_strv_has(cfg.private_paths, want[i]);
    for (size_t i = 0; listed && cfg.provider_path[i]; i++)
        listed = core_strv_has(cfg.private_paths, cfg.provider_path[i]);
    ok(listed, "private paths: the configuration, state and provider directories");
}

static void rm_rf(const char *path)
{
    char cmd[PATH_MAX + 32];

    /* The root is ours (mkdtemp), so a plain rm is safe here. */
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
    if (system(cmd) != 0)
        diag("could not remove %s", path);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");

    snprintf(root, sizeof root, "%s/test-config.XXXXXX", tmp && *tmp == '/' ? tmp : "/tmp");
    if (!mkdtemp(root))
        die("mkdtemp");
    clean_env();

    test_limit_keys();
    test_defaults();
    test_full_main();
    test_precedence();
    test_main_errors();
    test_registries();
    test_env_and_override_errors();
    test_providers();
    test_provider_overrides();
    test_templates();
    test_xdg();
    test_shipped();

    core_config_free(&cfg);
    core_config_free(&cfg);
    ok(cfg.providers == NULL && cfg.dir == NULL, "core_config_free twice is harmless");
    rm_rf(root);
    return tap_done();
}
