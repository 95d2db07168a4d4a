/* core/cli/util.c - messages, the context, files and JSON for the command */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"

void cli_err(const char *fmt, ...)
{
    va_list ap;

    fputs("polysandbox: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

/* The analyser's view of these two (cli.h) is not their definition. */
#undef cli_usage_error
#undef cli_bad_option

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;

    fputs("polysandbox: ", stderr);
    if (cmd != NULL)
        fprintf(stderr, "%s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return cli_bad_option(cmd);
}

int cli_bad_option(const char *cmd)
{
    if (cmd != NULL)
        fprintf(stderr, "Try 'polysandbox %s --help' for more information.\n",
                cmd);
    else
        fputs("Try 'polysandbox --help' for more information.\n", stderr);
    return CLI_EXIT_USAGE;
}

int cli_exit_for(int code)
{
    switch (code) {
    case SBX_E_INVAL:       /* a bad request: an id, a --cwd, an -e name */
    case SBX_E_NOT_FOUND:   /* no such sandbox, language or template */
    case SBX_E_LIMIT:       /* a limit above its maximum */
        return CLI_EXIT_USAGE;
    default:
        return CLI_EXIT_ERROR;
    }
}

int cli_lib_error(const sbx_ctx *ctx, int code, const char *what)
{
    const char *msg = NULL;

    if (ctx != NULL) {
        const sbx_error *e = sbx_ctx_last_error(ctx);
        if (e != NULL && sbx_error_code(e) != SBX_OK)
            msg = sbx_error_message(e);
    }
    if (msg == NULL || *msg == '\0')
        msg = sbx_strerror(code);
    if (what != NULL)
        cli_err("%s: %s", what, msg);
    else
        cli_err("%s", msg);
    return cli_exit_for(code);
}

int cli_file_exit(const sbx_ctx *ctx, int code, const char *cmd, const char *path)
{
    char what[64 + 4096];
    int rc;

    snprintf(what, sizeof what, "%s: %s", cmd, path);
    rc = cli_lib_error(ctx, code, what);
    return code == SBX_E_PATH ? CLI_EXIT_PATH : rc;
}

sbx_ctx *cli_ctx_new(const cli_global *g)
{
    sbx_ctx *ctx = NULL;
    const char **ov = calloc(g->n_overrides + 2, sizeof *ov);
    size_t n = 0;
    int rc;

    if (ov == NULL) {
        cli_err("out of memory");
        return NULL;
    }
    if (!g->pools)
        ov[n++] = "core.pools=false";   /* first: the user's -o wins */
    for (size_t i = 0; i < g->n_overrides; i++)
        ov[n++] = g->overrides[i];
    rc = sbx_ctx_new_with(&ctx, g->config_dir, (const char *const *)ov);
    free(ov);

    if (rc != SBX_OK) {
        cli_lib_error(ctx, rc, NULL);
        sbx_ctx_free(ctx);
        return NULL;
    }
    return ctx;
}

bool cli_provider_ok(const sbx_ctx *ctx, const char *provider)
{
    const sbx_provider *p;

    if (provider == NULL)
        return true;
    p = sbx_ctx_find_provider(ctx, provider);
    if (p == NULL) {
        cli_err("unknown provider '%s' (see 'polysandbox providers')",
                provider);
        return false;
    }
    switch (sbx_provider_get_state(p)) {
    case SBX_PROVIDER_READY:
        return true;
    case SBX_PROVIDER_DISABLED:
        cli_err("provider '%s' is disabled in its configuration", provider);
        return false;
    case SBX_PROVIDER_UNAVAILABLE:
    default: {
        const char *why = sbx_provider_reason(p);
        cli_err("provider '%s' is unavailable: %s", provider,
                why != NULL ? why : "no reason given");
        return false;
    }
    }
}

bool cli_providers_ok(const sbx_ctx *ctx, const char *names)
{
    char **v;
    bool ok = true;

    if (names == NULL)
        return true;
    if (!(v = cli_split_names(names))) {
        cli_err("out of memory");
        return false;
    }
    for (char **p = v; ok && *p; p++)
        ok = cli_provider_ok(ctx, *p);
    free(v);
    return ok;
}

const char *cli_template_list(const sbx_ctx *ctx)
{
    static char buf[1024];
    size_t n = sbx_ctx_template_count(ctx), used = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < n && used < sizeof buf; i++) {
        const sbx_template *t = sbx_ctx_template(ctx, i);
        int w = snprintf(buf + used, sizeof buf - used, "%s%s",
                         i > 0 ? ", " : "", t ? sbx_template_name(t) : "?");
        if (w < 0)
            break;
        used += (size_t)w;
    }
    if (n == 0)
        snprintf(buf, sizeof buf, "none configured");
    return buf;
}

int cli_read_fd(int fd, size_t max, char **data, size_t *len)
{
    size_t cap = 0, n = 0;
    char *buf = NULL;

    for (;;) {
        ssize_t r;
        if (cap - n < 2) {
            size_t ncap = cap == 0 ? 65536 : cap * 2;
            char *nb;
            if (ncap > max + 2)
                ncap = max + 2;
            if (ncap <= cap) {
                free(buf);
                return EFBIG;
            }
            nb = realloc(buf, ncap);
            if (nb == NULL) {
                free(buf);
                return ENOMEM;
            }
            buf = nb;
            cap = ncap;
        }
        r = read(fd, buf + n, cap - n - 1);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            int e = errno;
            free(buf);
            return e;
        }
        if (r == 0)
            break;
        n += (size_t)r;
        if (n > max) {
            free(buf);
            return EFBIG;
        }
    }
    if (buf == NULL) {
        buf = malloc(1);
        if (buf == NULL)
            return ENOMEM;
    }
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return 0;
}

int cli_read_file(const char *path, size_t max, char **data, size_t *len)
{
    int fd, rc;

    if (strcmp(path, "-") == 0)
        return cli_read_fd(STDIN_FILENO, max, data, len);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno;
    rc = cli_read_fd(fd, max, data, len);
    if (close(fd) != 0 && rc == 0) {
        rc = errno;
        free(*data);
    }
    return rc;
}

int cli_write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;

    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

char **cli_split_names(const char *s)
{
    size_t n = 1, len = strlen(s);
    char **v, *copy;

    for (const char *p = s; *p; p++)
        n += *p == ',';
    if (!(v = malloc((n + 1) * sizeof *v + len + 1)))
        return NULL;
    copy = (char *)(v + n + 1);
    memcpy(copy, s, len + 1);
    n = 0;
    for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ","))
        v[n++] = tok;
    v[n] = NULL;
    return v;
}

bool cli_names_ok(const char *s)
{
    size_t n = strlen(s);

    return n > 0 && s[0] != ',' && s[n - 1] != ',' && !strstr(s, ",,");
}

bool cli_split_kv(const char *kv, char **key, const char **value)
{
    const char *eq = strchr(kv, '=');

    if (eq == NULL || eq == kv)
        return false;
    *key = strndup(kv, (size_t)(eq - kv));
    if (*key == NULL)
        return false;
    *value = eq + 1;
    return true;
}

int cli_print_json(json_t *j)
{
    char *s;
    int rc = CLI_EXIT_OK;

    if (j == NULL) {
        cli_err("out of memory building JSON");
        return CLI_EXIT_ERROR;
    }
    s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(j);
    if (s == NULL) {
        cli_err("out of memory building JSON");
        return CLI_EXIT_ERROR;
    }
    if (puts(s) == EOF || fflush(stdout) != 0) {
        cli_err("writing to standard output: %s", strerror(errno));
        rc = CLI_EXIT_ERROR;
    }
    free(s);
    return rc;
}

/* A new file beside @path (same directory, so rename is atomic), with
 * the mode a new file of ours gets (0666 less the umask); its name in
 * *tmp (transfer full). */
static int temp_beside(const char *path, char **tmp)
{
    const char *slash = strrchr(path, '/');
    size_t dir = slash ? (size_t)(slash - path + 1) : 0;
    char *t = malloc(strlen(path) + 16);
    mode_t mask;
    int fd;

    if (t == NULL) {
        errno = ENOMEM;
        return -1;
    }
    sprintf(t, "%.*s.%s.XXXXXX", (int)dir, path, path + dir);
    if ((fd = mkostemp(t, O_CLOEXEC)) < 0) {
        int e = errno;
        free(t);
        errno = e;
        return -1;
    }
    mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) != 0) {
        int e = errno;
        close(fd);
        unlink(t);
        free(t);
        errno = e;
        return -1;
    }
    *tmp = t;
    return fd;
}

int cli_write_file(const char *path, int (*fill)(FILE *f, void *ud), void *ud)
{
    struct stat st;
    char *tmp = NULL;
    FILE *f;
    int fd, e;

    /* /dev/null, a pipe, a terminal: written as they are (a rename would
     * replace the device node). */
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        fd = open(path, O_WRONLY | O_CLOEXEC);
    else
        fd = temp_beside(path, &tmp);
    if (fd < 0)
        return errno;
    if ((f = fdopen(fd, "w")) == NULL) {
        e = errno;
        close(fd);
        goto fail;
    }
    e = fill(f, ud);
    if (fflush(f) != 0 && e == 0)
        e = errno;
    if (e == 0 && tmp != NULL && fsync(fileno(f)) != 0)
        e = errno;
    if (fclose(f) != 0 && e == 0)
        e = errno;
    if (e == 0 && tmp != NULL && rename(tmp, path) != 0)
        e = errno;
fail:
    if (e != 0 && tmp != NULL)
        unlink(tmp);
    free(tmp);
    return e;
}
