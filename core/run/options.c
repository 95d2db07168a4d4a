/* core/run/options.c - create and exec option builders */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <polysandbox/provider.h>
#include <polysandbox/sandbox.h>

#include "opts-int.h"
#include "error.h"
#include "limit-names.h"
#include "strv.h"
#include "config/config-load.h"

/* Replace *slot with a copy of @s (NULL clears). */
static int set_str(char **slot, const char *s)
{
    char *copy = NULL;

    if (s && !(copy = strdup(s)))
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    free(*slot);
    *slot = copy;
    return SBX_OK;
}

int core_kvlist_add(core_kvlist *l, const char *key, const char *value)
{
    char *k, *v;

    if (!key || !*key || !value)
        return core_error_set(SBX_E_INVAL, NULL, "empty key or NULL value");
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        sbx_kv_v1 *items = realloc(l->items, cap * sizeof *items);
        if (!items)
            return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
        l->items = items;
        l->cap = cap;
    }
    k = strdup(key);
    v = strdup(value);
    if (!k || !v) {
        free(k);
        free(v);
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    }
    l->items[l->n].key = k;
    l->items[l->n].value = v;
    l->n++;
    return SBX_OK;
}

void core_kvlist_free(core_kvlist *l)
{
    for (size_t i = 0; i < l->n; i++) {
        free((char *)l->items[i].key);
        free((char *)l->items[i].value);
    }
    free(l->items);
    memset(l, 0, sizeof *l);
}

/* Add to an environment list; keys must be usable by execve: no '=' and
 * no empty key. */
static int add_env(core_kvlist *env, const char *key, const char *value)
{
    core_error_clear();
    if (!key || !*key || strchr(key, '='))
        return core_error_set(SBX_E_INVAL, NULL,
                              "environment variable name '%s' is empty or contains '='",
                              key ? key : "(null)");
    return core_kvlist_add(env, key, value);
}

/* ---- create options ----------------------------------------------------- */

sbx_create_opts *sbx_create_opts_new(void)
{
    return calloc(1, sizeof(sbx_create_opts));
}

void sbx_create_opts_free(sbx_create_opts *o)
{
    if (!o)
        return;
    free(o->provider);
    core_strv_free(o->fallback);
    free(o->template_name);
    free(o->image);
    core_kvlist_free(&o->env);
    core_kvlist_free(&o->labels);
    free(o);
}

int sbx_create_opts_set_provider(sbx_create_opts *o, const char *name)
{
    core_error_clear();
    return o ? set_str(&o->provider, name) : SBX_E_INVAL;
}

int sbx_create_opts_set_fallback(sbx_create_opts *o, const char *const *names)
{
    char **v = NULL;

    core_error_clear();
    if (!o)
        return core_error_set(SBX_E_INVAL, NULL, "sbx_create_opts_set_fallback: NULL options");
    for (size_t i = 0; names && names[i]; i++)
        if (!names[i][0])
            return core_error_set(SBX_E_INVAL, NULL, "an empty provider name in the fallback");
    if (names && !(v = core_strv_dup(names)))
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    core_strv_free(o->fallback);
    o->fallback = v;
    return SBX_OK;
}

int sbx_create_opts_set_template(sbx_create_opts *o, const char *name)
{
    core_error_clear();
    return o ? set_str(&o->template_name, name) : SBX_E_INVAL;
}

int sbx_create_opts_set_image(sbx_create_opts *o, const char *image)
{
    core_error_clear();
    return o ? set_str(&o->image, image) : SBX_E_INVAL;
}

int sbx_create_opts_set_limit(sbx_create_opts *o, sbx_limit which, uint64_t value)
{
    core_error_clear();
    if (!o || (unsigned)which >= SBX_LIMIT_COUNT)
        return core_error_set(SBX_E_INVAL, NULL, "unknown limit %d", (int)which);
    if (value == 0)
        return core_error_set(SBX_E_INVAL, NULL,
                              "limit '%s' must be greater than 0 (0 never means unlimited)",
                              core_limit_key(which));
    o->limits[which] = value;
    return SBX_OK;
}

int sbx_create_opts_set_network(sbx_create_opts *o, sbx_network net)
{
    core_error_clear();
    if (!o || (net != SBX_NET_NONE && net != SBX_NET_HOST && net != SBX_NET_EGRESS))
        return core_error_set(SBX_E_INVAL, NULL, "unknown network policy %d", (int)net);
    o->network = net;
    o->network_set = true;
    return SBX_OK;
}

int sbx_create_opts_set_persistent(sbx_create_opts *o, bool on)
{
    core_error_clear();
    if (!o)
        return SBX_E_INVAL;
    o->persistent = on;
    return SBX_OK;
}

int sbx_create_opts_add_env(sbx_create_opts *o, const char *key, const char *value)
{
    return o ? add_env(&o->env, key, value) : SBX_E_INVAL;
}

int sbx_create_opts_add_label(sbx_create_opts *o, const char *key, const char *value)
{
    core_error_clear();
    if (!o)
        return SBX_E_INVAL;
    if (!key || !*key || strchr(key, '='))
        return core_error_set(SBX_E_INVAL, NULL, "label key '%s' is empty or contains '='",
                              key ? key : "(null)");
    return core_kvlist_add(&o->labels, key, value);
}

int sbx_create_opts_set_ttl(sbx_create_opts *o, uint64_t ttl_ns)
{
    core_error_clear();
    if (!o)
        return SBX_E_INVAL;
    o->ttl_ns = ttl_ns;
    return SBX_OK;
}

/* ---- exec options ------------------------------------------------------- */

sbx_exec_opts *sbx_exec_opts_new(void)
{
    return calloc(1, sizeof(sbx_exec_opts));
}

static void clear_command(sbx_exec_opts *o)
{
    core_strv_free(o->argv);
    o->argv = NULL;
    free(o->lang);
    o->lang = NULL;
    free(o->code);
    o->code = NULL;
    o->code_len = 0;
}

void sbx_exec_opts_free(sbx_exec_opts *o)
{
    if (!o)
        return;
    clear_command(o);
    core_strv_free(o->args);
    free(o->source);
    free(o->stdin_data);
    core_kvlist_free(&o->env);
    free(o->cwd);
    for (size_t i = 0; i < o->n_files; i++) {
        free(o->files[i].path);
        free(o->files[i].data);
    }
    free(o->files);
    free(o);
}

int sbx_exec_opts_set_argv(sbx_exec_opts *o, const char *const *argv)
{
    char **copy;

    core_error_clear();
    if (!o || !argv || !argv[0] || !argv[0][0])
        return core_error_set(SBX_E_INVAL, NULL, "the command is empty");
    if (!(copy = core_strv_dup(argv)))
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    clear_command(o);
    o->argv = copy;
    return SBX_OK;
}

int sbx_exec_opts_set_shell(sbx_exec_opts *o, const char *line)
{
    const char *argv[] = {"/bin/sh", "-c", line, NULL};

    core_error_clear();
    if (!o || !line)
        return core_error_set(SBX_E_INVAL, NULL, "the shell line is NULL");
    return sbx_exec_opts_set_argv(o, argv);
}

int sbx_exec_opts_set_source_name(sbx_exec_opts *o, const char *name)
{
    char *copy;

    core_error_clear();
    /* a leading '-' would read as an option of the compiler or interpreter */
    if (!o || !name || !*name || *name == '-' || strchr(name, '/') || !strcmp(name, ".") ||
        !strcmp(name, "..") || strlen(name) > 255)
        return core_error_set(SBX_E_INVAL, NULL, "source name '%s' is not a plain file name",
                              name ? name : "(null)");
    if (!(copy = strdup(name)))
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    free(o->source);
    o->source = copy;
    return SBX_OK;
}

int sbx_exec_opts_set_code(sbx_exec_opts *o, const char *lang, const char *code,
                           size_t len)
{
    char *l, *c;

    core_error_clear();
    if (!o || !lang || !*lang || !code)
        return core_error_set(SBX_E_INVAL, NULL, "code needs a language and a text");
    if (len == (size_t)-1)
        len = strlen(code);
    l = strdup(lang);
    c = malloc(len + 1);
    if (!l || !c) {
        free(l);
        free(c);
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    }
    memcpy(c, code, len);
    c[len] = '\0';
    clear_command(o);
    o->lang = l;
    o->code = c;
    o->code_len = len;
    return SBX_OK;
}

int sbx_exec_opts_set_args(sbx_exec_opts *o, const char *const *args)
{
    char **copy = NULL;

    core_error_clear();
    if (!o)
        return SBX_E_INVAL;
    if (args && !(copy = core_strv_dup(args)))
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    core_strv_free(o->args);
    o->args = copy;
    return SBX_OK;
}

int sbx_exec_opts_set_stdin(sbx_exec_opts *o, const void *data, size_t len)
{
    void *copy = NULL;

    core_error_clear();
    if (!o || (!data && len))
        return core_error_set(SBX_E_INVAL, NULL, "stdin data is NULL");
    if (len && !(copy = malloc(len)))
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory for %zu bytes of stdin", len);
    if (len)
        memcpy(copy, data, len);
    free(o->stdin_data);
    o->stdin_data = copy;
    o->stdin_len = len;
    o->has_stdin_fd = false;
    return SBX_OK;
}

int sbx_exec_opts_add_env(sbx_exec_opts *o, const char *key, const char *value)
{
    return o ? add_env(&o->env, key, value) : SBX_E_INVAL;
}

int sbx_exec_opts_set_cwd(sbx_exec_opts *o, const char *cwd)
{
    core_error_clear();
    return o ? set_str(&o->cwd, cwd) : SBX_E_INVAL;
}

int sbx_exec_opts_set_timeout(sbx_exec_opts *o, uint64_t ns)
{
    core_error_clear();
    if (!o)
        return SBX_E_INVAL;
    if (ns == 0)
        return core_error_set(SBX_E_INVAL, NULL,
                              "the timeout must be greater than 0 (0 never means unlimited)");
    o->timeout_ns = ns;
    return SBX_OK;
}

int sbx_exec_opts_set_stdin_fd(sbx_exec_opts *o, int fd)
{
    core_error_clear();
    if (!o || fd < -1)
        return core_error_set(SBX_E_INVAL, NULL, "sbx_exec_opts_set_stdin_fd: bad argument");
    free(o->stdin_data);
    o->stdin_data = NULL;
    o->stdin_len = 0;
    o->has_stdin_fd = fd >= 0;
    o->stdin_fd = fd;
    return SBX_OK;
}

int sbx_exec_opts_set_signal_fd(sbx_exec_opts *o, int fd)
{
    core_error_clear();
    if (!o || fd < -1)
        return core_error_set(SBX_E_INVAL, NULL, "sbx_exec_opts_set_signal_fd: bad argument");
    o->has_signal_fd = fd >= 0;
    o->signal_fd = fd;
    return SBX_OK;
}

int sbx_exec_opts_set_step_cb(sbx_exec_opts *o, sbx_step_cb cb, void *ud)
{
    core_error_clear();
    if (!o)
        return SBX_E_INVAL;
    o->step_cb = cb;
    o->step_ud = ud;
    return SBX_OK;
}

int sbx_exec_opts_set_compile_timeout(sbx_exec_opts *o, uint64_t ns)
{
    core_error_clear();
    if (!o)
        return SBX_E_INVAL;
    if (ns == 0)
        return core_error_set(SBX_E_INVAL, NULL, "the compile timeout must be greater than 0 "
                              "(0 never means unlimited)");
    o->compile_timeout_ns = ns;
    return SBX_OK;
}

int sbx_exec_opts_add_file(sbx_exec_opts *o, const char *path, const void *data,
                           size_t len, uint32_t mode)
{
    core_file *files;
    char *p;
    void *d;

    core_error_clear();
    if (!o || !path || !*path || (!data && len))
        return core_error_set(SBX_E_INVAL, NULL, "a file needs a path and data");
    if (path[0] == '/')
        return core_error_set(SBX_E_PATH, NULL,
                              "file path '%s' is absolute; paths are relative to the work directory",
                              path);
    files = realloc(o->files, (o->n_files + 1) * sizeof *files);
    if (!files)
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    o->files = files;
    p = strdup(path);
    d = malloc(len ? len : 1);
    if (!p || !d) {
        free(p);
        free(d);
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    }
    if (len)
        memcpy(d, data, len);
    o->files[o->n_files++] = (core_file){p, d, len, mode & 07777};
    /* cppcheck-suppress memleak ; p and d are now owned by o->files */
    return SBX_OK;
}

int sbx_exec_opts_set_output_cb(sbx_exec_opts *o, sbx_output_cb cb, void *ud)
{
    core_error_clear();
    if (!o)
        return SBX_E_INVAL;
    o->cb = cb;
    o->cb_ud = ud;
    return SBX_OK;
}

int sbx_exec_opts_set_cancel(sbx_exec_opts *o, sbx_cancel *c)
{
    core_error_clear();
    if (!o)
        return core_error_set(SBX_E_INVAL, NULL, "sbx_exec_opts_set_cancel: NULL options");
    o->cancel = c;
    return SBX_OK;
}
