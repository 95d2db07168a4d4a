/* core/server/opts.c - the one mapping from a JSON body to the library's
 * create and exec options
 *
 *   {"language":"python","code":"print(1)"}  or  {"argv":["/bin/true"]}
 *   or {"shell":"echo hi"}; "args", "stdin" / "stdin_base64", "files",
 *   "env", "cwd", "timeout"; "provider", "fallback", "template", "image",
 *   "network", "limits":{"memory":"256M","wall":5,...}; "labels", "ttl",
 *   "get_or_create" for sandboxes.
 *
 * Durations are a number of seconds (fractions allowed) or a string with
 * a unit ("500ms", "2m"); sizes a number of bytes or a string ("64K",
 * "1G"); the same grammar as the command line.  A bad field is a 400
 * naming it; a language or provider the server does not have a 422.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "server.h"

static const char *const create_fields[] = {
    "provider", "fallback", "template", "image", "limits", "network", NULL
};
static const char *const persist_fields[] = { "labels", "ttl", "get_or_create", "env", NULL };
static const char *const exec_fields[] = {
    "language", "code", "args", "argv", "shell", "stdin", "stdin_base64", "files", "env",
    "cwd", "timeout", NULL
};

static bool listed(const char *const *v, const char *name)
{
    for (; v && *v; v++)
        if (strcmp(*v, name) == 0)
            return true;
    return false;
}

static int bad(srv_req *r, const char *field, const char *fmt, const char *detail)
{
    srv_error(r, 400, "invalid", NULL, "field '%s': %s%s", field, fmt, detail ? detail : "");
    return -1;
}

static const char *type_name(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    default: return "null";
    }
}

static int want(srv_req *r, const char *field, const json_t *v, json_type t, const char *what)
{
    if (json_typeof(v) == t)
        return 0;
    srv_error(r, 400, "invalid", NULL, "field '%s' must be %s, not %s", field, what,
              type_name(v));
    return -1;
}

int srv_json_string(srv_req *r, json_t *j, const char *field, const char **out)
{
    json_t *v = json_object_get(j, field);

    *out = NULL;
    if (!v || json_is_null(v))
        return 0;
    if (want(r, field, v, JSON_STRING, "a string") != 0)
        return -1;
    *out = json_string_value(v);
    return 0;
}

int srv_json_bool(srv_req *r, json_t *j, const char *field, bool *out)
{
    json_t *v = json_object_get(j, field);

    *out = false;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_boolean(v)) {
        srv_error(r, 400, "invalid", NULL, "field '%s' must be true or false, not %s", field,
                  type_name(v));
        return -1;
    }
    *out = json_is_true(v);
    return 0;
}

/* The three kinds of quantity a body gives: a number in the base unit
 * (seconds: fractions allowed; bytes; a count) or a string with a unit in
 * the command line's grammar. */
static const struct quantity {
    uint64_t scale;          /* of an integer */
    bool fractions;          /* a real number is allowed (seconds) */
    bool (*parse)(const char *, uint64_t *, const char **);
    const char *what;
} quantities[] = {
    [SRV_DURATION] = { 1000000000u, true, cli_parse_duration,
                       "a number of seconds or a duration such as \"500ms\"" },
    [SRV_SIZE] = { 1, false, cli_parse_size, "a number of bytes or a size such as \"64M\"" },
    [SRV_COUNT] = { 1, false, cli_parse_count, "a whole number" },
};

int srv_json_quantity(srv_req *r, json_t *v, const char *field, int kind, uint64_t *out)
{
    const struct quantity *q = &quantities[kind];
    const char *why = NULL;

    if (json_is_integer(v)) {
        json_int_t n = json_integer_value(v);
        if (n <= 0)
            return bad(r, field, "must be greater than 0", NULL);
        if ((uint64_t)n > UINT64_MAX / q->scale)
            return bad(r, field, "is too large", NULL);
        *out = (uint64_t)n * q->scale;
        return 0;
    }
    if (json_is_real(v) && q->fractions) {
        double x = json_real_value(v);
        if (!(x > 0) || !isfinite(x))
            return bad(r, field, "must be greater than 0", NULL);
        if (x > 1.8e19 / (double)q->scale)
            return bad(r, field, "is too large", NULL);
        *out = (uint64_t)llround(x * (double)q->scale);
        if (*out == 0)
            return bad(r, field, "is shorter than a nanosecond", NULL);
        return 0;
    }
    if (json_is_string(v)) {
        if (!q->parse(json_string_value(v), out, &why))
            return bad(r, field, "", why);
        return 0;
    }
    srv_error(r, 400, "invalid", NULL, "field '%s' must be %s, not %s", field, q->what,
              type_name(v));
    return -1;
}

int srv_base64_decode(srv_req *r, const char *field, const char *text, size_t len,
                      unsigned char **out, size_t *out_len)
{
    int rc = srv_b64_decode(text, len, " \t\r\n", out, out_len);

    if (rc == ENOMEM) {
        srv_error(r, 500, "nomem", NULL, "out of memory decoding '%s'", field);
        return -1;
    }
    return rc != 0 ? bad(r, field, "is not valid base64", NULL) : 0;
}

/* A NULL-terminated copy of an array of strings. */
static int strings(srv_req *r, json_t *v, const char *field, bool nonempty, char ***out)
{
    size_t n;
    char **a;

    if (want(r, field, v, JSON_ARRAY, "an array of strings") != 0)
        return -1;
    n = json_array_size(v);
    if (nonempty && n == 0)
        return bad(r, field, "must not be empty", NULL);
    if (!(a = calloc(n + 1, sizeof *a))) {
        srv_error(r, 500, "nomem", NULL, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(v, i);
        if (!json_is_string(e)) {
            srv_error(r, 400, "invalid", NULL, "field '%s[%zu]' must be a string, not %s",
                      field, i, type_name(e));
            free(a);
            return -1;
        }
        a[i] = (char *)json_string_value(e);   /* borrowed from the JSON */
    }
    *out = a;
    return 0;
}

/* A path inside the work directory: relative, no "..", no empty parts. */
bool srv_path_safe(const char *p)
{
    if (!*p || *p == '/')
        return false;
    for (const char *s = p; *s;) {
        size_t n = strcspn(s, "/");
        if (n == 0 || (n == 2 && s[0] == '.' && s[1] == '.'))
            return false;
        s += n;
        if (*s == '/')
            s++;
    }
    return true;
}

static int file_mode(srv_req *r, json_t *v, const char *field, uint32_t *mode)
{
    long m;
    char *end;

    if (json_is_integer(v)) {
        m = (long)json_integer_value(v);
    } else if (json_is_string(v)) {
        m = strtol(json_string_value(v), &end, 8);
        if (*end || end == json_string_value(v))
            return bad(r, field, "must be an octal mode such as \"0755\"", NULL);
    } else {
        return bad(r, field, "must be an octal mode such as \"0755\"", NULL);
    }
    if (m < 0 || m > 07777)
        return bad(r, field, "must be a mode between 0 and 07777", NULL);
    *mode = (uint32_t)m;
    return 0;
}

static int add_file(srv_req *r, sbx_exec_opts *x, const char *field, const char *path,
                    const unsigned char *data, size_t len, uint32_t mode)
{
    if (!srv_path_safe(path)) {
        srv_error(r, 400, "path", NULL, "field '%s': path '%s' must be relative, without "
                  "'..' or empty parts", field, path);
        return -1;
    }
    if (sbx_exec_opts_add_file(x, path, data, len, mode) != SBX_OK) {
        srv_error_lib(r, sbx_error_code(sbx_ctx_last_error(r->s->ctx)), 400);
        return -1;
    }
    return 0;
}

/* "files": {"path": "BASE64", ...} or [{"path", "content" | "content_base64", "mode"}]. */
static int files(srv_req *r, json_t *v, sbx_exec_opts *x)
{
    char field[96];

    if (json_is_object(v)) {
        const char *path;
        json_t *e;
        json_object_foreach(v, path, e) {
            unsigned char *data;
            size_t len;
            int rc;
            snprintf(field, sizeof field, "files.%.60s", path);
            if (want(r, field, e, JSON_STRING, "base64 text") != 0 ||
                srv_base64_decode(r, field, json_string_value(e), json_string_length(e),
                                  &data, &len) != 0)
                return -1;
            rc = add_file(r, x, field, path, data, len, 0644);
            free(data);
            if (rc)
                return -1;
        }
        return 0;
    }
    if (!json_is_array(v))
        return want(r, "files", v, JSON_ARRAY, "an object of base64 contents or an array");
    for (size_t i = 0; i < json_array_size(v); i++) {
        json_t *e = json_array_get(v, i), *c, *c64, *m;
        const char *path;
        uint32_t mode = 0644;
        unsigned char *data = NULL;
        size_t len = 0;
        int rc;

        snprintf(field, sizeof field, "files[%zu]", i);
        if (want(r, field, e, JSON_OBJECT, "an object") != 0)
            return -1;
        snprintf(field, sizeof field, "files[%zu].path", i);
        if (srv_json_string(r, e, "path", &path) != 0)
            return -1;
        if (!path)
            return bad(r, field, "is missing", NULL);
        c = json_object_get(e, "content");
        c64 = json_object_get(e, "content_base64");
        m = json_object_get(e, "mode");
        if ((c != NULL) == (c64 != NULL)) {
            snprintf(field, sizeof field, "files[%zu]", i);
            return bad(r, field, "needs one of content and content_base64", NULL);
        }
        snprintf(field, sizeof field, "files[%zu].mode", i);
        if (m && file_mode(r, m, field, &mode) != 0)
            return -1;
        if (c) {
            snprintf(field, sizeof field, "files[%zu].content", i);
            if (want(r, field, c, JSON_STRING, "a string") != 0)
                return -1;
            rc = add_file(r, x, field, path, (const unsigned char *)json_string_value(c),
                          json_string_length(c), mode);
        } else {
            snprintf(field, sizeof field, "files[%zu].content_base64", i);
            if (want(r, field, c64, JSON_STRING, "base64 text") != 0 ||
                srv_base64_decode(r, field, json_string_value(c64), json_string_length(c64),
                                  &data, &len) != 0)
                return -1;
            rc = add_file(r, x, field, path, data, len, mode);
            free(data);
        }
        if (rc)
            return -1;
    }
    return 0;
}

/* "env": {"K": "V"} into the exec (runs) or the sandbox (create). */
static int env(srv_req *r, json_t *v, sbx_create_opts *c, sbx_exec_opts *x)
{
    const char *k;
    json_t *e;
    char field[96];

    if (want(r, "env", v, JSON_OBJECT, "an object of strings") != 0)
        return -1;
    json_object_foreach(v, k, e) {
        snprintf(field, sizeof field, "env.%.60s", k);
        if (want(r, field, e, JSON_STRING, "a string") != 0)
            return -1;
        if (!*k || strchr(k, '='))
            return bad(r, "env", "keys must be non-empty and without '='", NULL);
        if ((x ? sbx_exec_opts_add_env(x, k, json_string_value(e))
               : sbx_create_opts_add_env(c, k, json_string_value(e))) != SBX_OK) {
            srv_error(r, 500, "nomem", NULL, "out of memory");
            return -1;
        }
    }
    return 0;
}

static int limits(srv_req *r, json_t *v, sbx_create_opts *c)
{
    static const struct {
        const char *key;
        sbx_limit which;
        int kind;
    } map[] = {
        { "wall", SBX_LIMIT_WALL, SRV_DURATION },   { "cpu", SBX_LIMIT_CPU, SRV_DURATION },
        { "memory", SBX_LIMIT_MEMORY, SRV_SIZE },   { "pids", SBX_LIMIT_PIDS, SRV_COUNT },
        { "nofile", SBX_LIMIT_NOFILE, SRV_COUNT },  { "fsize", SBX_LIMIT_FSIZE, SRV_SIZE },
        { "disk", SBX_LIMIT_DISK, SRV_SIZE },       { "stdout", SBX_LIMIT_STDOUT, SRV_SIZE },
        { "stderr", SBX_LIMIT_STDERR, SRV_SIZE },
    };
    const char *k;
    json_t *e;
    char field[64];

    if (want(r, "limits", v, JSON_OBJECT, "an object") != 0)
        return -1;
    json_object_foreach(v, k, e) {
        size_t i;
        uint64_t val;
        for (i = 0; i < sizeof map / sizeof map[0]; i++)
            if (strcmp(map[i].key, k) == 0)
                break;
        snprintf(field, sizeof field, "limits.%.40s", k);
        if (i == sizeof map / sizeof map[0])
            return bad(r, field, "is not a limit (known: wall, cpu, memory, pids, nofile, "
                       "fsize, disk, stdout, stderr)", NULL);
        if (srv_json_quantity(r, e, field, map[i].kind, &val) != 0)
            return -1;
        if (sbx_create_opts_set_limit(c, map[i].which, val) != SBX_OK)
            return bad(r, field, "is not valid", NULL);
    }
    return 0;
}

/* "labels": {"K": "V"} */
static int labels(srv_req *r, json_t *v, srv_opts *o)
{
    const char *k;
    json_t *e;
    char field[96];

    if (want(r, "labels", v, JSON_OBJECT, "an object of strings") != 0)
        return -1;
    if (!(o->labels = calloc(json_object_size(v) + 1, sizeof *o->labels))) {
        srv_error(r, 500, "nomem", NULL, "out of memory");
        return -1;
    }
    json_object_foreach(v, k, e) {
        snprintf(field, sizeof field, "labels.%.60s", k);
        if (want(r, field, e, JSON_STRING, "a string") != 0)
            return -1;
        if (!*k || strchr(k, '='))
            return bad(r, "labels", "keys must be non-empty and without '='", NULL);
        if (sbx_create_opts_add_label(o->create, k, json_string_value(e)) != SBX_OK) {
            srv_error_lib(r, sbx_error_code(sbx_ctx_last_error(r->s->ctx)), 400);
            return -1;
        }
        if (asprintf(&o->labels[o->n_labels], "%s=%s", k, json_string_value(e)) < 0) {
            o->labels[o->n_labels] = NULL;
            srv_error(r, 500, "nomem", NULL, "out of memory");
            return -1;
        }
        o->n_labels++;
    }
    o->has_labels = o->n_labels > 0;
    return 0;
}

static int names_of(const sbx_ctx *ctx, bool providers, char *buf, size_t size)
{
    size_t n = providers ? sbx_ctx_provider_count(ctx) : sbx_ctx_template_count(ctx), used = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < n && used < size; i++) {
        const char *name = providers ? sbx_provider_name(sbx_ctx_provider(ctx, i))
                                     : sbx_template_name(sbx_ctx_template(ctx, i));
        int k = snprintf(buf + used, size - used, "%s%s", i ? ", " : "", name);
        if (k < 0)
            break;
        used += (size_t)k;
    }
    return 0;
}

static int known_provider(srv_req *r, const char *field, const char *name)
{
    char list[512];

    if (sbx_ctx_find_provider(r->s->ctx, name))
        return 0;
    names_of(r->s->ctx, true, list, sizeof list);
    srv_error(r, 422, "not_found", name, "field '%s': unknown provider '%s' (providers: %s)",
              field, name, list);
    return -1;
}

static int known_template(srv_req *r, const char *field, const char *name)
{
    char list[512];

    if (sbx_ctx_find_template(r->s->ctx, name))
        return 0;
    names_of(r->s->ctx, false, list, sizeof list);
    srv_error(r, 422, "not_found", NULL, "field '%s': unknown %s '%s' (templates: %s)", field,
              strcmp(field, "language") == 0 ? "language" : "template", name, list);
    return -1;
}

static int create_part(srv_req *r, json_t *j, srv_opts *o)
{
    const char *s;
    json_t *v;

    if (srv_json_string(r, j, "provider", &o->provider) != 0)
        return -1;
    if (o->provider && (known_provider(r, "provider", o->provider) != 0 ||
                        sbx_create_opts_set_provider(o->create, o->provider) != SBX_OK))
        return -1;
    if ((v = json_object_get(j, "fallback")) && !json_is_null(v)) {
        char **names;
        int rc = SBX_OK;
        if (strings(r, v, "fallback", false, &names) != 0)
            return -1;
        for (size_t i = 0; names[i]; i++)
            if (known_provider(r, "fallback", names[i]) != 0) {
                free(names);
                return -1;
            }
        rc = sbx_create_opts_set_fallback(o->create, (const char *const *)names);
        free(names);
        if (rc != SBX_OK) {
            srv_error_lib(r, rc, 422);
            return -1;
        }
    }
    if (srv_json_string(r, j, "template", &o->template_name) != 0)
        return -1;
    if (o->template_name && known_template(r, "template", o->template_name) != 0)
        return -1;
    if (srv_json_string(r, j, "image", &s) != 0)
        return -1;
    if (s && sbx_create_opts_set_image(o->create, s) != SBX_OK)
        return bad(r, "image", "is not valid", NULL);
    if (srv_json_string(r, j, "network", &s) != 0)
        return -1;
    if (s) {
        if (strcmp(s, "none") && strcmp(s, "host") && strcmp(s, "egress"))
            return bad(r, "network", "must be \"none\", \"egress\" or \"host\"", NULL);
        sbx_create_opts_set_network(o->create, !strcmp(s, "host") ? SBX_NET_HOST
                                               : !strcmp(s, "egress") ? SBX_NET_EGRESS
                                               : SBX_NET_NONE);
    }
    if ((v = json_object_get(j, "limits")) && !json_is_null(v) && limits(r, v, o->create) != 0)
        return -1;
    return 0;
}

static int persist_part(srv_req *r, json_t *j, srv_opts *o)
{
    json_t *v;
    uint64_t ttl;

    if ((v = json_object_get(j, "labels")) && !json_is_null(v) && labels(r, v, o) != 0)
        return -1;
    if ((v = json_object_get(j, "ttl")) && !json_is_null(v)) {
        if (srv_json_quantity(r, v, "ttl", SRV_DURATION, &ttl) != 0)
            return -1;
        sbx_create_opts_set_ttl(o->create, ttl);
    }
    if (srv_json_bool(r, j, "get_or_create", &o->get_or_create) != 0)
        return -1;
    if (o->get_or_create && !o->has_labels)
        return bad(r, "get_or_create", "needs labels to find the sandbox by", NULL);
    if ((v = json_object_get(j, "env")) && !json_is_null(v) && env(r, v, o->create, NULL) != 0)
        return -1;
    return 0;
}

static int exec_part(srv_req *r, json_t *j, srv_opts *o)
{
    json_t *code = json_object_get(j, "code"), *argv = json_object_get(j, "argv");
    json_t *shell = json_object_get(j, "shell"), *v;
    const char *s;
    int modes = (code != NULL) + (argv != NULL) + (shell != NULL);
    sbx_exec_opts *x = o->exec;

    if (modes != 1) {
        srv_error(r, 400, "invalid", NULL, modes ? "give only one of code (with language), "
                  "argv and shell" : "nothing to run: give language and code, argv or shell");
        return -1;
    }
    if (srv_json_string(r, j, "language", &o->language) != 0)
        return -1;
    if (code) {
        if (want(r, "code", code, JSON_STRING, "a string") != 0)
            return -1;
        if (!o->language)
            return bad(r, "language", "is missing (code needs a language)", NULL);
        if (known_template(r, "language", o->language) != 0)
            return -1;
        if (sbx_exec_opts_set_code(x, o->language, json_string_value(code),
                                   json_string_length(code)) != SBX_OK) {
            srv_error(r, 500, "nomem", NULL, "out of memory");
            return -1;
        }
        if (!o->template_name && o->create)
            sbx_create_opts_set_template(o->create, o->language);
    } else if (o->language) {
        return bad(r, "language", "goes with code, not with argv or shell", NULL);
    }
    if (argv) {
        char **a;
        int rc;
        if (strings(r, argv, "argv", true, &a) != 0)
            return -1;
        rc = sbx_exec_opts_set_argv(x, (const char *const *)a);
        free(a);
        if (rc != SBX_OK)
            return bad(r, "argv", "is not valid", NULL);
    }
    if (shell) {
        if (want(r, "shell", shell, JSON_STRING, "a string") != 0)
            return -1;
        if (sbx_exec_opts_set_shell(x, json_string_value(shell)) != SBX_OK)
            return bad(r, "shell", "is not valid", NULL);
    }
    if ((v = json_object_get(j, "args")) && !json_is_null(v)) {
        char **a;
        int rc;
        if (!code)
            return bad(r, "args", "goes with code (argv carries its own arguments)", NULL);
        if (strings(r, v, "args", false, &a) != 0)
            return -1;
        rc = sbx_exec_opts_set_args(x, (const char *const *)a);
        free(a);
        if (rc != SBX_OK)
            return bad(r, "args", "is not valid", NULL);
    }
    if ((v = json_object_get(j, "stdin")) && !json_is_null(v)) {
        if (want(r, "stdin", v, JSON_STRING, "a string") != 0)
            return -1;
        if (json_object_get(j, "stdin_base64"))
            return bad(r, "stdin", "give stdin or stdin_base64, not both", NULL);
        sbx_exec_opts_set_stdin(x, json_string_value(v), json_string_length(v));
    }
    if ((v = json_object_get(j, "stdin_base64")) && !json_is_null(v)) {
        unsigned char *data;
        size_t len;
        if (want(r, "stdin_base64", v, JSON_STRING, "base64 text") != 0 ||
            srv_base64_decode(r, "stdin_base64", json_string_value(v), json_string_length(v),
                              &data, &len) != 0)
            return -1;
        sbx_exec_opts_set_stdin(x, data, len);
        free(data);
    }
    if ((v = json_object_get(j, "files")) && !json_is_null(v) && files(r, v, x) != 0)
        return -1;
    if ((v = json_object_get(j, "env")) && !json_is_null(v) && env(r, v, NULL, x) != 0)
        return -1;
    if (srv_json_string(r, j, "cwd", &s) != 0)
        return -1;
    if (s && sbx_exec_opts_set_cwd(x, s) != SBX_OK)
        return bad(r, "cwd", "is not valid", NULL);
    if ((v = json_object_get(j, "timeout")) && !json_is_null(v)) {
        uint64_t ns;
        if (srv_json_quantity(r, v, "timeout", SRV_DURATION, &ns) != 0)
            return -1;
        sbx_exec_opts_set_timeout(x, ns);
    }
    return 0;
}

int srv_opts_from_json(srv_req *r, json_t *j, unsigned which, const char *const *extra,
                       srv_opts *o)
{
    const char *k;
    json_t *v;

    memset(o, 0, sizeof *o);
    json_object_foreach(j, k, v) {
        if (((which & SRV_OPT_CREATE) && listed(create_fields, k)) ||
            ((which & SRV_OPT_PERSIST) && listed(persist_fields, k)) ||
            ((which & SRV_OPT_EXEC) && listed(exec_fields, k)) || listed(extra, k))
            continue;
        srv_error(r, 400, "invalid", NULL, "unknown field '%s'", k);
        return -1;
    }
    if ((which & (SRV_OPT_CREATE | SRV_OPT_PERSIST)) && !(o->create = sbx_create_opts_new()))
        goto nomem;
    if ((which & SRV_OPT_EXEC) && !(o->exec = sbx_exec_opts_new()))
        goto nomem;
    /* The client going away (or a shutdown) stops what these options run. */
    if (o->exec)
        sbx_exec_opts_set_cancel(o->exec, r->cancel);
    if ((which & SRV_OPT_CREATE) && create_part(r, j, o) != 0)
        goto fail;
    if ((which & SRV_OPT_PERSIST) && persist_part(r, j, o) != 0)
        goto fail;
    if ((which & SRV_OPT_EXEC) && exec_part(r, j, o) != 0)
        goto fail;
    return 0;
nomem:
    srv_error(r, 500, "nomem", NULL, "out of memory");
fail:
    srv_opts_free(o);
    return -1;
}

void srv_opts_free(srv_opts *o)
{
    sbx_create_opts_free(o->create);
    sbx_exec_opts_free(o->exec);
    for (size_t i = 0; o->labels && o->labels[i]; i++)
        free(o->labels[i]);
    free(o->labels);
    memset(o, 0, sizeof *o);
}
