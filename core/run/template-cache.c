/* core/run/template-cache.c - a template's build cache warmed by another
 * toolchain than the host's.
 *
 * The go template names, through GOENV, the go env file of a read-only
 * cache that contrib/go-cache-warm.sh built, and the script stamps it
 * with the go that built it (DIR/version, "go version go1.19.8 ...").
 * Built by another go, every entry misses and the read-only cache takes
 * no new one: each sample compiles cold, often past its time limit, with
 * nothing saying why.  Such a cache is reported (`polysandbox doctor`,
 * `templates`) with the command that rebuilds it, and runs on providers
 * that use the host's go leave it aside (GOENV=off: a cold, writable
 * cache in the sandbox's /tmp, as without one). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <polysandbox/sandbox.h>

#include "conf.h"
#include "run/template-int.h"
#include "opts-int.h"
#include "provider-int.h"

#ifndef PKGLIBEXECDIR
#define PKGLIBEXECDIR "/usr/local/libexec/polysandbox"
#endif

extern char **environ;

static pthread_once_t host_once = PTHREAD_ONCE_INIT;
static char host_go[64];    /* `go env GOVERSION` of the host's go, or "" */

/* The first "go" followed by a digit in @s, to its end of word, into
 * @out ("" when none): the stamp holds `go version`'s line or the bare
 * version. */
static void go_word(const char *s, char *out, size_t size)
{
    out[0] = '\0';
    for (const char *p = s; (p = strstr(p, "go")); p += 2) {
        if ((p == s || p[-1] == ' ') && p[2] >= '0' && p[2] <= '9') {
            size_t n = strcspn(p, " \t\r\n");
            snprintf(out, size, "%.*s", (int)(n < size ? n : size - 1), p);
            return;
        }
    }
}

/* posix_spawn with our environment and GOTOOLCHAIN=local: a go.mod in
 * the working directory must not make go 1.21+ fetch another toolchain
 * (nor report its version). */
static int spawn_local(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                       char *const argv[])
{
    size_t n = 0, k = 0;
    char **env;
    int rc;

    while (environ && environ[n])
        n++;
    if (!(env = calloc(n + 2, sizeof *env)))
        return ENOMEM;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "GOTOOLCHAIN=", 12) != 0)
            env[k++] = environ[i];
    env[k] = (char *)"GOTOOLCHAIN=local";
    rc = posix_spawn(pid, path, fa, NULL, argv, env);
    free(env);
    return rc;
}

/* Runs the go of CORE_TEMPLATE_PATH (the one a host-root sandbox runs)
 * once per process: its version does not change under a running one. */
static void host_go_once(void)
{
    char path[256], out[128] = "";
    const char *dirs = CORE_TEMPLATE_PATH;
    int fd[2];
    pid_t pid;
    posix_spawn_file_actions_t fa;

    path[0] = '\0';
    while (*dirs) {
        size_t n = strcspn(dirs, ":");
        snprintf(path, sizeof path, "%.*s/go", (int)n, dirs);
        if (access(path, X_OK) == 0)
            break;
        path[0] = '\0';
        dirs += n + (dirs[n] == ':');
    }
    if (!path[0] || pipe(fd) != 0)
        return;
    char *const argv[] = { "go", "env", "GOVERSION", NULL };
    int rc = posix_spawn_file_actions_init(&fa);
    if (rc == 0) {
        if (posix_spawn_file_actions_adddup2(&fa, fd[1], STDOUT_FILENO) != 0 ||
            posix_spawn_file_actions_addclose(&fa, fd[0]) != 0 ||
            posix_spawn_file_actions_addopen(&fa, STDERR_FILENO, "/dev/null", O_WRONLY, 0) != 0)
            rc = -1;
        else
            rc = spawn_local(&pid, path, &fa, argv);
        posix_spawn_file_actions_destroy(&fa);
    }
    close(fd[1]);
    if (rc == 0) {
        size_t len = 0;
        ssize_t k;
        while (len + 1 < sizeof out &&
               ((k = read(fd[0], out + len, sizeof out - 1 - len)) > 0 ||
                (k < 0 && errno == EINTR)))
            len += k > 0 ? (size_t)k : 0;
        out[len] = '\0';
        int st;
        while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
            ;
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            out[0] = '\0';
    }
    close(fd[0]);
    go_word(out, host_go, sizeof host_go);
}

bool core_template_cache_stale(const core_template_conf *tc, char *why, size_t why_size)
{
    const char *goenv = NULL;
    char stamp[4096], line[256] = "", built[64];
    FILE *f;

    for (size_t i = 0; tc && i < tc->n_env; i++)
        if (!strcmp(tc->env[i].key, "GOENV"))
            goenv = tc->env[i].value;
    if (!goenv || goenv[0] != '/' || !strrchr(goenv, '/'))
        return false;
    /* the stamp beside the go env file: no stamp, no cache to judge */
    int dir = (int)(strrchr(goenv, '/') - goenv);
    snprintf(stamp, sizeof stamp, "%.*s/version", dir, goenv);
    if (!(f = fopen(stamp, "re")))
        return false;
    if (!fgets(line, sizeof line, f))
        line[0] = '\0';
    fclose(f);
    go_word(line, built, sizeof built);
    pthread_once(&host_once, host_go_once);
    if (!built[0] || !host_go[0] || !strcmp(built, host_go))
        return false;
    if (why && why_size)
        snprintf(why, why_size, "build cache %.*s is stale: built by %s, the host's go is %s, "
                 "so it is left aside and each sample builds cold; rebuild it as root: "
                 PKGLIBEXECDIR "/go-cache-warm.sh %.*s", dir, goenv, built, host_go, dir, goenv);
    return true;
}

int core_template_env_add(const struct sbx_provider *p, const core_template_conf *t,
                          core_kvlist *env)
{
    static atomic_bool warned;
    char why[1024];
    /* only a sandbox on the host's own go reads the host's cache */
    bool aside = t && p && (p->desc.flags & SBX_PROVIDER_F_HOST_ROOT) &&
                 core_template_cache_stale(t, why, sizeof why);

    for (size_t i = 0; t && i < t->n_env; i++) {
        bool goenv = !strcmp(t->env[i].key, "GOENV");
        if (core_kvlist_add(env, t->env[i].key, aside && goenv ? "off" : t->env[i].value))
            return SBX_E_NOMEM;
    }
    if (aside && !atomic_exchange(&warned, true)) {
        const char *lv = secure_getenv("POLYSANDBOX_LOG");
        if (!lv || strcmp(lv, "error"))
            fprintf(stderr, "polysandbox: %s: warning: %s\n", t->name, why);
    }
    return SBX_OK;
}
