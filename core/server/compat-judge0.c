/* core/server/compat-judge0.c - the Judge0 CE API (judge0/judge0), the
 * subset its clients use
 *
 *   GET  /languages             [{id, name}]: Judge0's ids of our templates
 *   GET  /statuses              [{id, description}]
 *   POST /submissions?wait=&base64_encoded=&fields=
 *                               {source_code, language_id, stdin,
 *                                expected_output, cpu_time_limit,
 *                                wall_time_limit (s), memory_limit,
 *                                max_file_size (KB),
 *                                max_processes_and_or_threads,
 *                                command_line_arguments, ...}
 *                               -> 201 {token} (run in the background),
 *                                  or the submission when wait=true
 *   GET  /submissions/{token}?base64_encoded=&fields=
 *   DELETE /submissions/{token}?fields=
 *                               the finished submission forgotten, shown
 *                               in base64 ([server] judge0_delete; 400
 *                               "delete not allowed" without it, as
 *                               Judge0's default)
 *   POST /submissions/batch?base64_encoded=
 *                               {submissions: [...]} (at most 20)
 *                               -> 201 [{token} or its errors, ...]
 *   GET  /submissions/batch?tokens=A,B&base64_encoded=&fields=
 *                               {submissions: [each, or null]}
 *   GET  /languages/{id}        {id, name, is_archived}
 *
 * Clients hard-code Judge0's language ids, so the ids of Judge0 CE's
 * table map onto our templates (several ids onto one: 48, 49, 50 are all
 * "C (GCC)"); an id whose template is not configured does not exist.
 *
 * As Judge0, a submission runs in the background unless wait=true
 * (compat-judge0-queue.c, bounded as the jobs are), and within the
 * request with it.  A submission is kept (compat-judge0-store.c) for GET
 * /submissions/{token}: "In Queue", "Processing", then finished.
 *
 * Judge0's shapes: a field that does not validate is 422 {field:
 * [message]}; anything else wrong with the request is 400 {error}.
 * Without base64_encoded=true an attribute that is not UTF-8 makes the
 * answer Judge0's: 400 {error} on GET, 201 {token, error} on POST.
 * A limit this server cannot apply (stack_limit, cpu_extra_time, ...) is
 * refused with 422 naming the field, never ignored.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <sodium.h>

#include "compat-judge0.h"

/* Judge0 CE's language ids, onto our templates.  The names carry no
 * version (Judge0's do): asking each runtime would run programs. */
static const struct srv_j0_lang {
    int id;
    const char *tmpl, *name;
} langs[] = {
    { 46, "bash", "Bash" },
    { 48, "c", "C (GCC)" }, { 49, "c", "C (GCC)" }, { 50, "c", "C (GCC)" },
    { 52, "cpp", "C++ (GCC)" }, { 53, "cpp", "C++ (GCC)" }, { 54, "cpp", "C++ (GCC)" },
    { 60, "go", "Go" }, { 95, "go", "Go" },
    { 62, "java", "Java (OpenJDK)" }, { 91, "java", "Java (JDK)" },
    { 63, "node", "JavaScript (Node.js)" }, { 93, "node", "JavaScript (Node.js)" },
    { 64, "lua", "Lua" },
    { 68, "php", "PHP" },
    { 71, "python", "Python (3)" }, { 92, "python", "Python (3)" },
    { 72, "ruby", "Ruby" },
    { 73, "rust", "Rust" },
    { 74, "typescript", "TypeScript" }, { 94, "typescript", "TypeScript" },
    { 80, "r", "R" },
    { 85, "perl", "Perl" },
};
#define N_LANGS (sizeof langs / sizeof langs[0])

static const char *const statuses[] = {
    [1] = "In Queue", [2] = "Processing", [3] = "Accepted", [4] = "Wrong Answer",
    [5] = "Time Limit Exceeded", [6] = "Compilation Error",
    [7] = "Runtime Error (SIGSEGV)", [8] = "Runtime Error (SIGXFSZ)",
    [9] = "Runtime Error (SIGFPE)", [10] = "Runtime Error (SIGABRT)",
    [11] = "Runtime Error (NZEC)", [12] = "Runtime Error (Other)", [13] = "Internal Error",
    [14] = "Exec Format Error",
};
#define N_STATUSES (sizeof statuses / sizeof statuses[0])

static const char utf8_error[] = "some attributes for this submission cannot be converted to "
                                 "UTF-8, use base64_encoded=true query parameter";

/* ---- replies ------------------------------------------------------------------- */

/* Judge0's error shape: {"error": message}. */
#define error_reply(r, status, ...) srv_compat_message(r, status, "error", __VA_ARGS__)

/* Judge0's validation error, kept in @q: 422 {field: [message]}. */
static void invalid(srv_j0_req *q, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void invalid(srv_j0_req *q, const char *field, const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    json_decref(q->err);
    q->status = 422;
    q->err = json_pack("{s:[o]}", field, srv_json_text(msg, strlen(msg)));
}

/* Judge0's other error, kept in @q: {"error": message}. */
static void failed(srv_j0_req *q, unsigned status, const char *msg)
{
    json_decref(q->err);
    q->status = status;
    q->err = json_pack("{s:o}", "error", srv_json_text(msg, strlen(msg)));
}

/* Reply what @q was refused with. */
static void refused(srv_req *r, srv_j0_req *q)
{
    if (q->status == 499) {
        srv_error(r, 499, "client_closed", NULL, "the client closed the connection");
        return;
    }
    r->err_code = q->status >= 500 ? "internal" : "invalid";
    if (q->err)
        srv_reply_json(r, q->status, json_incref(q->err));
    else
        error_reply(r, 500, "out of memory");
}

/* ---- languages, statuses --------------------------------------------------------- */

static const struct srv_j0_lang *lang_of(srv *s, json_int_t id)
{
    for (size_t i = 0; i < N_LANGS; i++)
        if (langs[i].id == id && sbx_ctx_find_template(s->ctx, langs[i].tmpl))
            return &langs[i];
    return NULL;
}

static void list_languages(srv_req *r)
{
    json_t *arr = json_array();

    for (size_t i = 0; arr && i < N_LANGS; i++)
        if (lang_of(r->s, langs[i].id) == &langs[i])
            json_array_append_new(arr, json_pack("{s:i, s:s}", "id", langs[i].id, "name",
                                                 langs[i].name));
    if (!arr) {
        error_reply(r, 500, "out of memory");
        return;
    }
    srv_reply_json(r, 200, arr);
}

/* GET /languages/{id}: one of them (Judge0's compile and run commands
 * are not ours to show). */
static void show_language(srv_req *r)
{
    const char *id = srv_req_param(r, "id");
    const struct srv_j0_lang *l = NULL;
    size_t n = id ? strlen(id) : 0;

    if (n && n < 10 && strspn(id, "0123456789") == n)
        l = lang_of(r->s, strtoll(id, NULL, 10));
    if (!l) {
        error_reply(r, 404, "language with id %.16s doesn't exist", id ? id : "");
        return;
    }
    srv_reply_json(r, 200, json_pack("{s:i, s:s, s:b}", "id", l->id, "name", l->name,
                                     "is_archived", 0));
}

static void list_statuses(srv_req *r)
{
    json_t *arr = json_array();

    for (size_t i = 1; arr && i < N_STATUSES; i++)
        json_array_append_new(arr, json_pack("{s:i, s:s}", "id", (int)i, "description",
                                             statuses[i]));
    srv_reply_json(r, 200, arr);
}

/* ---- the query ------------------------------------------------------------------- */

/* ?NAME=true|false (absent: false).  -1 after a 400. */
static int query_flag(srv_req *r, const char *name, bool *out)
{
    const char *v = srv_req_query(r, name);

    *out = false;
    if (!v || !strcasecmp(v, "false"))
        return 0;
    if (!strcasecmp(v, "true")) {
        *out = true;
        return 0;
    }
    error_reply(r, 400, "the query parameter %s must be true or false", name);
    return -1;
}

/* base64_encoded and fields, as both GET and POST take them. */
static int query_show(srv_req *r, bool *base64, const char **fields)
{
    char err[512];

    if (query_flag(r, "base64_encoded", base64) != 0)
        return -1;
    *fields = srv_req_query(r, "fields");
    if (*fields && !**fields)
        *fields = NULL;
    if (srv_j0_fields_check(*fields, err, sizeof err) != 0) {
        error_reply(r, 400, "%s", err);
        return -1;
    }
    return 0;
}

/* ---- the request ----------------------------------------------------------------- */

/* @name's value, or NULL when it is absent or null (the default). */
static json_t *given(json_t *j, const char *name)
{
    json_t *v = json_object_get(j, name);
    return v && !json_is_null(v) ? v : NULL;
}

/* A positive number (a limit) in @name, or 0 when absent; -1 after a 422. */
static int number_field(srv_j0_req *q, json_t *j, const char *name, double max, double *out)
{
    json_t *v = given(j, name);

    *out = v ? json_number_value(v) : 0;
    if (v && !json_is_number(v))
        invalid(q, name, "must be a number");
    else if (v && (!isfinite(*out) || *out <= 0))
        invalid(q, name, "must be greater than 0");
    else if (v && *out > max)
        invalid(q, name, "must be less than or equal to %g", max);
    else
        return 0;
    return -1;
}

/* A boolean in @name: absent or null is @def.  -1 after a 422. */
static int bool_field(srv_j0_req *q, json_t *j, const char *name, bool def, bool *out)
{
    json_t *v = given(j, name);

    *out = v ? json_is_true(v) : def;
    if (!v || json_is_boolean(v))
        return 0;
    invalid(q, name, "must be true or false");
    return -1;
}

/* A text attribute: absent or null, or a string (base64 when asked).
 * -1 after a 422. */
static int text_field(srv_j0_req *q, json_t *j, int which, const char *name)
{
    json_t *v = given(j, name);
    srv_bytes *b = &q->sub->text[which];
    unsigned char *bin = NULL;
    size_t len = 0;
    int rc;

    if (!v)
        return 0;
    if (!json_is_string(v)) {
        invalid(q, name, "must be a string");
        return -1;
    }
    q->sub->has[which] = true;
    if (!q->base64) {
        if (srv_bytes_add(b, json_string_value(v), json_string_length(v)) == 0)
            return 0;
        failed(q, 500, "out of memory");
        return -1;
    }
    rc = srv_b64_decode(json_string_value(v), json_string_length(v), " \t\r\n", &bin, &len);
    if (rc == ENOMEM) {
        failed(q, 500, "out of memory");
        return -1;
    }
    if (rc != 0) {
        invalid(q, name, "is not valid base64 (base64_encoded=true)");
        return -1;
    }
    rc = srv_bytes_add(b, bin, len);
    free(bin);
    if (rc != 0) {
        failed(q, 500, "out of memory");
        return -1;
    }
    return 0;
}

/* command_line_arguments as the shell would split them (Judge0 puts them
 * after the run command in a shell script): blanks separate words, '...'
 * and "..." quote, a backslash escapes; nothing is expanded.  NULL with
 * @err when a quote is not closed. */
static char **split_args(const char *s, const char **err)
{
    size_t n = strlen(s), words = 0;
    char **argv = calloc(n / 2 + 2, sizeof *argv);
    char *buf = malloc(n + 1), *w = buf;

    *err = NULL;
    if (!argv || !buf) {
        free(argv);
        free(buf);
        *err = "out of memory";
        return NULL;
    }
    while (*s) {
        bool word = false;
        char *start = w;
        while (*s == ' ' || *s == '\t' || *s == '\n')
            s++;
        while (*s && *s != ' ' && *s != '\t' && *s != '\n') {
            word = true;
            if (*s == '\'') {
                const char *e = strchr(s + 1, '\'');
                if (!e) {
                    *err = "has a ' that is not closed";
                    goto fail;
                }
                memcpy(w, s + 1, (size_t)(e - s - 1));
                w += e - s - 1;
                s = e + 1;
            } else if (*s == '"') {
                for (s++; *s && *s != '"'; s++) {
                    if (*s == '\\' && (s[1] == '"' || s[1] == '\\' || s[1] == '$' || s[1] == '`'))
                        s++;
                    *w++ = *s;
                }
                if (!*s) {
                    *err = "has a \" that is not closed";
                    goto fail;
                }
                s++;
            } else if (*s == '\\' && s[1]) {
                *w++ = s[1];
                s += 2;
            } else {
                *w++ = *s++;
            }
        }
        if (word) {
            *w++ = '\0';
            if (!(argv[words++] = strdup(start))) {
                *err = "out of memory";
                goto fail;
            }
        }
        w = buf;
    }
    free(buf);
    return argv;
fail:
    for (size_t i = 0; i < words; i++)
        free(argv[i]);
    free(argv);
    free(buf);
    return NULL;
}

/* Judge0's attributes this server cannot apply: refused unless absent,
 * null or the value that asks for nothing. */
static int refuse_unapplied(srv_j0_req *q, json_t *j)
{
    static const char *const never[] = {
        "stack_limit", "cpu_extra_time", "compiler_options", "additional_files",
    };
    static const char *const only_false[] = {
        "enable_per_process_and_thread_time_limit", "enable_per_process_and_thread_memory_limit",
        "enable_network",
    };
    json_t *v;

    for (size_t i = 0; i < sizeof never / sizeof never[0]; i++)
        if ((v = given(j, never[i])) &&
            !(json_is_string(v) && !json_string_length(v))) {
            invalid(q, never[i], "cannot be applied by this server (it is refused, not "
                    "ignored); leave it out");
            return -1;
        }
    for (size_t i = 0; i < sizeof only_false / sizeof only_false[0]; i++) {
        bool on;
        if (bool_field(q, j, only_false[i], false, &on) != 0)
            return -1;
        if (on) {
            invalid(q, only_false[i], "true cannot be applied by this server: %s",
                    i == 2 ? "a submission has no network" : "its limits are the whole "
                    "sandbox's");
            return -1;
        }
    }
    if ((v = given(j, "number_of_runs")) &&
        !(json_is_integer(v) && json_integer_value(v) == 1)) {
        invalid(q, "number_of_runs", "must be 1 on this server (a submission runs once)");
        return -1;
    }
    return 0;
}

/* callback_url: absent, null or "" (none), else an http(s) URL the
 * server may PUT to ([server] judge0_callbacks).  -1 after a 422. */
static int callback_field(srv_j0_req *q, json_t *j)
{
    json_t *v = given(j, "callback_url");
    const char *why;

    if (!v || (json_is_string(v) && !json_string_length(v)))
        return 0;
    if (!json_is_string(v)) {
        invalid(q, "callback_url", "must be a string");
        return -1;
    }
    if (!q->s->conf.judge0_callbacks) {
        invalid(q, "callback_url", "setting callback is not allowed");   /* Judge0's words */
        return -1;
    }
    if (json_string_length(v) > SRV_J0_CB_URL_MAX) {
        invalid(q, "callback_url", "is too long (maximum is %d characters)", SRV_J0_CB_URL_MAX);
        return -1;
    }
    /* (unreachable while http.c refuses \u0000, and it used to print an unset
     * reason) */
    if (strlen(json_string_value(v)) != json_string_length(v)) {
        invalid(q, "callback_url", "must not contain a NUL character");
        return -1;
    }
    if (!srv_j0_cb_url_ok(json_string_value(v), &why)) {
        invalid(q, "callback_url", "%s", why);
        return -1;
    }
    if (!(q->callback_url = strdup(json_string_value(v)))) {
        failed(q, 500, "out of memory");
        return -1;
    }
    return 0;
}

void srv_j0_req_free(srv_j0_req *q)
{
    if (!q)
        return;
    sbx_create_opts_free(q->create);
    sbx_exec_opts_free(q->exec);
    for (size_t i = 0; q->argv && q->argv[i]; i++)
        free(q->argv[i]);
    free(q->argv);
    free(q->callback_url);
    srv_j0_sub_free(q->sub);
    json_decref(q->err);
    free(q);
}

/* The body made into options and the submission's first attributes.
 * -1 with q->err. */
static int parse(srv_j0_req *q, json_t *j)
{
    json_t *v = given(j, "language_id"), *a;
    json_int_t id = 0;
    double cpu, wall, mem, pids, fsize;
    const char *err;

    if (!v) {
        invalid(q, "language_id", "can't be blank");
        return -1;
    }
    if (json_is_integer(v)) {
        id = json_integer_value(v);
    } else if (json_is_string(v) && json_string_length(v) && json_string_length(v) < 10 &&
               strspn(json_string_value(v), "0123456789") == json_string_length(v)) {
        id = strtoll(json_string_value(v), NULL, 10);   /* Rails takes "71" too */
    } else {
        invalid(q, "language_id", "must be an integer");
        return -1;
    }
    if (!(q->lang = lang_of(q->s, id))) {
        invalid(q, "language_id", "language with id %lld doesn't exist", (long long)id);
        return -1;
    }
    if (!given(j, "source_code")) {
        invalid(q, "source_code", "can't be blank");
        return -1;
    }
    if (text_field(q, j, J0_SOURCE_CODE, "source_code") != 0 ||
        text_field(q, j, J0_STDIN, "stdin") != 0 ||
        text_field(q, j, J0_EXPECTED_OUTPUT, "expected_output") != 0)
        return -1;
    if (!q->sub->text[J0_SOURCE_CODE].len) {
        invalid(q, "source_code", "can't be blank");
        return -1;
    }
    if (number_field(q, j, "cpu_time_limit", 1e6, &cpu) != 0 ||
        number_field(q, j, "wall_time_limit", 1e6, &wall) != 0 ||
        number_field(q, j, "memory_limit", 1e12, &mem) != 0 ||
        number_field(q, j, "max_processes_and_or_threads", 1e9, &pids) != 0 ||
        number_field(q, j, "max_file_size", 1e12, &fsize) != 0 ||
        bool_field(q, j, "redirect_stderr_to_stdout", false, &q->redirect) != 0 ||
        refuse_unapplied(q, j) != 0)
        return -1;
    if (pids && pids != floor(pids)) {
        invalid(q, "max_processes_and_or_threads", "must be an integer");
        return -1;
    }
    if ((v = given(j, "command_line_arguments"))) {
        if (!json_is_string(v)) {
            invalid(q, "command_line_arguments", "must be a string");
            return -1;
        }
        if (json_string_length(v) > 512) {
            invalid(q, "command_line_arguments", "is too long (maximum is 512 characters)");
            return -1;
        }
        if (strlen(json_string_value(v)) != json_string_length(v)) {
            invalid(q, "command_line_arguments", "must not hold a NUL character");
            return -1;
        }
        if (!(q->argv = split_args(json_string_value(v), &err))) {
            invalid(q, "command_line_arguments", "%s", err);
            return -1;
        }
    }
    if (callback_field(q, j) != 0)
        return -1;
    if (!(q->create = sbx_create_opts_new()) || !(q->exec = sbx_exec_opts_new())) {
        failed(q, 500, "out of memory");
        return -1;
    }
    sbx_create_opts_set_template(q->create, q->lang->tmpl);
    sbx_create_opts_set_network(q->create, SBX_NET_NONE);
    sbx_exec_opts_set_code(q->exec, q->lang->tmpl, q->sub->text[J0_SOURCE_CODE].data,
                           q->sub->text[J0_SOURCE_CODE].len);
    if (q->sub->has[J0_STDIN])
        sbx_exec_opts_set_stdin(q->exec, q->sub->text[J0_STDIN].data,
                                q->sub->text[J0_STDIN].len);
    if (q->argv)
        sbx_exec_opts_set_args(q->exec, (const char *const *)q->argv);
    if (wall)
        sbx_exec_opts_set_timeout(q->exec, (uint64_t)llround(wall * 1e9));
    if (cpu)
        sbx_create_opts_set_limit(q->create, SBX_LIMIT_CPU, (uint64_t)llround(cpu * 1e9));
    if (mem)
        sbx_create_opts_set_limit(q->create, SBX_LIMIT_MEMORY, (uint64_t)llround(mem * 1024));
    if (pids)
        sbx_create_opts_set_limit(q->create, SBX_LIMIT_PIDS, (uint64_t)pids);
    if (fsize)
        sbx_create_opts_set_limit(q->create, SBX_LIMIT_FSIZE, (uint64_t)llround(fsize * 1024));
    /* What was asked, shown as Judge0 shows it. */
    a = q->sub->attrs;
    json_object_set_new(a, "language_id", json_integer(q->lang->id));
    json_object_set_new(a, "language", json_pack("{s:i, s:s}", "id", q->lang->id, "name",
                                                 q->lang->name));
    json_object_set_new(a, "cpu_time_limit", cpu ? json_real(cpu) : json_null());
    json_object_set_new(a, "wall_time_limit", wall ? json_real(wall) : json_null());
    json_object_set_new(a, "memory_limit", mem ? json_real(mem) : json_null());
    json_object_set_new(a, "max_processes_and_or_threads",
                        pids ? json_integer((json_int_t)pids) : json_null());
    json_object_set_new(a, "max_file_size", fsize ? json_real(fsize) : json_null());
    v = json_object_get(j, "command_line_arguments");
    json_object_set_new(a, "command_line_arguments", json_is_string(v) ? json_copy(v)
                                                                        : json_null());
    json_object_set_new(a, "redirect_stderr_to_stdout", json_boolean(q->redirect));
    json_object_set_new(a, "enable_network", json_false());
    json_object_set_new(a, "number_of_runs", json_integer(1));
    json_object_set_new(a, "callback_url", q->callback_url ? json_string(q->callback_url)
                                                           : json_null());
    return 0;
}

/* ---- the verdict ----------------------------------------------------------------- */

/* Judge0's comparison: each line without trailing blanks, then the
 * whole without trailing blanks and newlines. */
static size_t strip(const char *s, size_t n, char *out)
{
    size_t o = 0, line = 0;

    for (size_t i = 0; i <= n; i++) {
        if (i == n || s[i] == '\n') {
            size_t e = i;
            while (e > line && strchr(" \t\r\v\f", s[e - 1]) && s[e - 1])
                e--;
            while (e > line && s[e - 1] == '\0')
                e--;
            memcpy(out + o, s + line, e - line);
            o += e - line;
            if (i < n)
                out[o++] = '\n';
            line = i + 1;
        }
    }
    while (o && (out[o - 1] == '\n' || out[o - 1] == ' ' || out[o - 1] == '\t' ||
                 out[o - 1] == '\r' || out[o - 1] == '\v' || out[o - 1] == '\f' || !out[o - 1]))
        o--;
    return o;
}

/* 1 when they differ, 0 when not, -1 on ENOMEM. */
static int differs(const srv_bytes *want, const char *got, size_t got_len)
{
    char *a = malloc(want->len + 1), *b = malloc(got_len + 1);
    size_t na, nb;
    int rc = -1;

    if (a && b) {
        na = strip(want->data ? want->data : "", want->len, a);
        nb = strip(got ? got : "", got_len, b);
        rc = na != nb || memcmp(a, b, na) != 0;
    }
    free(a);
    free(b);
    return rc;
}

static int signal_status(int sig)
{
    return sig == SIGSEGV ? 7 : sig == SIGXFSZ ? 8 : sig == SIGFPE ? 9 : sig == SIGABRT ? 10
                                                                                        : 12;
}

static int set_text(srv_j0_sub *sub, int which, const char *data, size_t len)
{
    /* Judge0 shows an empty output as null. */
    sub->has[which] = len > 0;
    return len ? srv_bytes_add(&sub->text[which], data, len) : 0;
}

/* The limits a run can reach: Judge0 has no status of its own for most. */
static const struct {
    sbx_run_status st;
    int id;
    bool killed;            /* by us: exit_signal is SIGKILL */
    const char *msg;
} limits[] = {
    { SBX_RUN_TIMEOUT, 5, true, "Time limit exceeded (wall clock)" },
    { SBX_RUN_CPU_LIMIT, 5, true, "Time limit exceeded" },
    { SBX_RUN_MEMORY_LIMIT, 12, true, "Memory limit exceeded" },
    { SBX_RUN_OUTPUT_LIMIT, 12, true, "Output limit exceeded" },
    { SBX_RUN_PIDS_LIMIT, 12, false, "Process limit reached" },
};

/* The capture's outcome into the submission.  -1 on ENOMEM. */
static int verdict(srv_j0_sub *sub, const srv_capture *cap, bool redirect)
{
    const sbx_result *res = cap->res;
    sbx_run_status st = sbx_result_status(res);
    int code = sbx_result_exit_code(res), sig = sbx_result_signal(res), id = 13, rc = 0;
    int64_t cpu = sbx_result_cpu_ns(res), mem = sbx_result_peak_memory(res);
    bool ran = st != SBX_RUN_COMPILE_ERROR && st != SBX_RUN_SANDBOX_ERROR;
    char msg[512] = "", num[32];
    const char *err = sbx_result_error(res);

    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++)
        if (limits[i].st == st) {
            id = limits[i].id;
            sig = limits[i].killed ? SIGKILL : sig;
            snprintf(msg, sizeof msg, "%s", limits[i].msg);
        }
    switch (st) {
    case SBX_RUN_OK:
        id = 3;
        break;
    case SBX_RUN_NONZERO_EXIT:
    case SBX_RUN_NOT_FOUND:
        id = 11;
        snprintf(msg, sizeof msg, "Exited with error status %d", code);
        break;
    case SBX_RUN_NOT_EXECUTABLE:
        id = 14;
        snprintf(msg, sizeof msg, "Exited with error status %d", code);
        break;
    case SBX_RUN_SIGNAL:
        id = signal_status(sig);
        snprintf(msg, sizeof msg, "Caught fatal signal %d", sig);
        break;
    case SBX_RUN_SECCOMP:
        id = 12;
        snprintf(msg, sizeof msg, "Killed by the system-call filter (signal %d)", sig);
        break;
    case SBX_RUN_TIMEOUT:
    case SBX_RUN_CPU_LIMIT:
    case SBX_RUN_MEMORY_LIMIT:
    case SBX_RUN_OUTPUT_LIMIT:
    case SBX_RUN_PIDS_LIMIT:
        break;   /* in limits[] */
    case SBX_RUN_COMPILE_ERROR:
        id = 6;
        break;
    case SBX_RUN_SANDBOX_ERROR:
    default:
        id = 13;
        snprintf(msg, sizeof msg, "%s", err && *err ? err : "internal error");
        break;
    }
    if (id == 3 && sub->has[J0_EXPECTED_OUTPUT]) {
        int d = differs(&sub->text[J0_EXPECTED_OUTPUT], cap->run.out, cap->run.out_len);
        if (d < 0)
            return -1;
        id = d ? 4 : 3;
    }
    if (cap->compiled)
        rc |= set_text(sub, J0_COMPILE_OUTPUT, cap->compile.mix, cap->compile.mix_len);
    if (ran && redirect) {
        rc |= set_text(sub, J0_STDOUT, cap->run.mix, cap->run.mix_len);
    } else if (ran) {
        rc |= set_text(sub, J0_STDOUT, cap->run.out, cap->run.out_len);
        rc |= set_text(sub, J0_STDERR, cap->run.err, cap->run.err_len);
    }
    rc |= set_text(sub, J0_MESSAGE, msg, strlen(msg));
    json_t *a = sub->attrs;
    json_object_set_new(a, "status", json_pack("{s:i, s:s}", "id", id, "description",
                                               statuses[id]));
    json_object_set_new(a, "status_id", json_integer(id));
    snprintf(num, sizeof num, "%.3f", (double)cpu / 1e9);
    json_object_set_new(a, "time", ran && cpu >= 0 ? json_string(num) : json_null());
    snprintf(num, sizeof num, "%.3f", (double)cap->run.ns / 1e9);
    json_object_set_new(a, "wall_time", ran ? json_string(num) : json_null());
    json_object_set_new(a, "memory", ran && mem >= 0 ? json_integer(mem / 1024) : json_null());
    json_object_set_new(a, "exit_code", ran && (st == SBX_RUN_OK || st == SBX_RUN_NONZERO_EXIT ||
                                                st == SBX_RUN_NOT_FOUND ||
                                                st == SBX_RUN_NOT_EXECUTABLE)
                                        ? json_integer(st == SBX_RUN_OK ? 0 : code) : json_null());
    json_object_set_new(a, "exit_signal", ran && sig > 0 && id != 3 && id != 4 && id != 11
                                          ? json_integer(sig) : json_null());
    return rc ? -1 : 0;
}

/* An ISO 8601 time with milliseconds, as Rails shows one. */
static json_t *now_iso(void)
{
    struct timespec ts;
    struct tm tm;
    char buf[64];

    if (clock_gettime(CLOCK_REALTIME, &ts) != 0 || !gmtime_r(&ts.tv_sec, &tm))
        return json_null();
    size_t n = strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, sizeof buf - n, ".%03ldZ", ts.tv_nsec / 1000000);
    return json_string(buf);
}

static void new_token(char *out)
{
    unsigned char u[16];

    randombytes_buf(u, sizeof u);
    u[6] = (unsigned char)((u[6] & 0x0f) | 0x40);   /* version 4 */
    u[8] = (unsigned char)((u[8] & 0x3f) | 0x80);
    snprintf(out, SRV_J0_TOKEN_LEN + 1,
             "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
             u[13], u[14], u[15]);
}

/* ---- a submission ----------------------------------------------------------------- */

json_t *srv_j0_status_json(int id)
{
    return json_pack("{s:i, s:s}", "id", id, "description", statuses[id]);
}

int srv_j0_req_parse(srv_j0_req *q, json_t *body)
{
    if (!(q->sub = calloc(1, sizeof *q->sub)) || !(q->sub->attrs = json_object())) {
        failed(q, 500, "out of memory");
        return -1;
    }
    new_token(q->sub->token);
    json_object_set_new(q->sub->attrs, "token", json_string(q->sub->token));
    json_object_set_new(q->sub->attrs, "created_at", now_iso());
    return parse(q, body);
}

int srv_j0_req_run(srv_j0_req *q, sbx_cancel *cancel)
{
    srv_capture cap;
    int rc = -1;

    if (srv_capture_run_in(q->s, cancel, q->create, q->exec, q->lang->tmpl, NULL, 0, &cap) !=
        SBX_OK) {
        failed(q, cap.rc == SBX_E_LIMIT || cap.rc == SBX_E_INVAL ? 422
                  : cap.rc == SBX_E_PROVIDER_UNAVAILABLE || cap.rc == SBX_E_BUSY ? 503 : 500,
               srv_lib_message(q->s, cap.rc));
    } else if (sbx_result_status(cap.res) == SBX_RUN_SANDBOX_ERROR &&
               sbx_result_error_code(cap.res) == SBX_E_CANCELLED) {
        failed(q, 499, "the run was cancelled");
    } else {
        json_object_set_new(q->sub->attrs, "finished_at", now_iso());
        if (verdict(q->sub, &cap, q->redirect) != 0)
            failed(q, 500, "out of memory");
        else
            rc = 0;
    }
    srv_capture_free(&cap);
    return rc;
}

/* ---- the routes ------------------------------------------------------------------ */

/* POST /submissions?wait=true: run it within the request. */
static void create_wait(srv_req *r, srv_j0_req *q, const char *fields)
{
    bool utf8 = true;
    json_t *o;

    if (srv_j0_req_run(q, r->cancel) != 0) {
        refused(r, q);
        return;
    }
    o = srv_j0_show(q->sub, q->base64, fields, &utf8);
    if (!o && utf8) {
        error_reply(r, 500, "out of memory");
        return;
    }
    /* Judge0 answers 201 with the token and its error. */
    srv_reply_json(r, 201, o ? o : json_pack("{s:s, s:s}", "token", q->sub->token, "error",
                                              utf8_error));
    char *body = srv_j0_callback_body(q), token[SRV_J0_TOKEN_LEN + 1];
    memcpy(token, q->sub->token, sizeof token);
    srv_j0_keep(q->sub);
    q->sub = NULL;
    srv_j0_callback(r->s, q, token, body);
}

/* Judge0's answer to a full queue (srv_j0_queue_push's @rc). */
static void queue_refused(srv_req *r, int rc)
{
    if (rc == -2) {
        srv_error(r, 503, "shutting_down", NULL, "the server is shutting down: it takes no "
                  "submission to run in the background");
        return;
    }
    if (rc == -3) {
        error_reply(r, 500, "out of memory");
        return;
    }
    error_reply(r, 503, "queue is full");
    r->err_code = "queue_full";
}

/* POST /submissions (without wait=true: Judge0's default): 201 {token}
 * at once, the run in the background. */
static void create(srv_req *r)
{
    srv_j0_req *q = calloc(1, sizeof *q);
    bool wait;
    const char *fields;
    json_t *j = NULL;
    char why[512];
    int rc;

    if (!q) {
        error_reply(r, 500, "out of memory");
        return;
    }
    q->s = r->s;
    if (query_flag(r, "wait", &wait) != 0 || query_show(r, &q->base64, &fields) != 0)
        goto out;
    if (!(j = srv_compat_body(r, why, sizeof why))) {
        error_reply(r, 400, "%s", why);
        goto out;
    }
    if (srv_j0_req_parse(q, j) != 0) {
        refused(r, q);
        goto out;
    }
    if (wait) {
        create_wait(r, q, fields);
        goto out;
    }
    json_t *o = json_pack("{s:s}", "token", q->sub->token);
    if (!o) {
        error_reply(r, 500, "out of memory");
        goto out;
    }
    if ((rc = srv_j0_queue_push(r->s, &q, 1)) != 0) {
        json_decref(o);
        queue_refused(r, rc);
        goto out;
    }
    q = NULL;   /* the queue's */
    srv_reply_json(r, 201, o);
out:
    srv_j0_req_free(q);
    json_decref(j);
}

/* POST /submissions/batch {"submissions": [...]}: each checked on its
 * own, [{token} or its errors, ...] in their order; the valid ones run in
 * the background (all of them queued, or none: 503). */
static void create_batch(srv_req *r)
{
    srv_j0_req *qs[SRV_J0_BATCH_MAX];
    size_t n_ok = 0, n;
    bool base64, nomem = false;
    json_t *j, *subs, *out = NULL;
    char why[512];
    int rc;

    if (query_flag(r, "base64_encoded", &base64) != 0)
        return;
    if (!(j = srv_compat_body(r, why, sizeof why))) {
        error_reply(r, 400, "%s", why);
        return;
    }
    subs = json_object_get(j, "submissions");
    n = json_array_size(subs);
    if (subs && !json_is_array(subs)) {
        error_reply(r, 400, "submissions must be an array of submissions");
        goto out;
    }
    if (n == 0 || n > SRV_J0_BATCH_MAX) {
        error_reply(r, 400, n ? "number of submissions in a batch should be less than or "
                    "equal to %d" : "there should be at least one submission in a batch",
                    SRV_J0_BATCH_MAX);
        goto out;
    }
    if (!(out = json_array())) {
        error_reply(r, 500, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n && !nomem; i++) {
        json_t *item = json_array_get(subs, i), *slot;
        srv_j0_req *q = calloc(1, sizeof *q);
        if (!q) {
            nomem = true;
            break;
        }
        q->s = r->s;
        q->base64 = base64;
        if (!json_is_object(item)) {
            slot = json_pack("{s:s}", "error", "a submission must be a JSON object");
        } else if (srv_j0_req_parse(q, item) != 0) {
            slot = q->status == 422 ? json_incref(q->err) : NULL;   /* else ENOMEM */
        } else {
            slot = json_pack("{s:s}", "token", q->sub->token);
            if (slot) {
                qs[n_ok++] = q;
                q = NULL;
            }
        }
        srv_j0_req_free(q);
        nomem = !slot || json_array_append_new(out, slot) != 0;
    }
    if (nomem) {
        error_reply(r, 500, "out of memory");
    } else if (n_ok && (rc = srv_j0_queue_push(r->s, qs, n_ok)) != 0) {
        queue_refused(r, rc);
    } else {
        n_ok = 0;   /* the queue's */
        srv_reply_json(r, 201, out);
        out = NULL;
    }
    for (size_t i = 0; i < n_ok; i++)
        srv_j0_req_free(qs[i]);
out:
    json_decref(out);
    json_decref(j);
}

/* GET /submissions/batch?tokens=A,B,C: {"submissions": [each or null]}. */
static void show_batch(srv_req *r)
{
    const char *tokens = srv_req_query(r, "tokens"), *fields, *s;
    bool base64;
    size_t n = 0;
    json_t *arr, *o;

    if (query_show(r, &base64, &fields) != 0)
        return;
    /* Judge0 strips the list and splits it at commas (a last empty one
     * dropped). */
    if (!tokens)
        tokens = "";
    tokens += strspn(tokens, " \t\r\n");
    size_t len = strlen(tokens);
    while (len && strchr(" \t\r\n,", tokens[len - 1]))
        len--;
    for (size_t i = 0; len && i <= len; i++)
        n += i == len || tokens[i] == ',';
    if (n == 0 || n > SRV_J0_BATCH_MAX) {
        error_reply(r, 400, n ? "number of submissions in a batch should be less than or "
                    "equal to %d" : "there should be at least one submission in a batch",
                    SRV_J0_BATCH_MAX);
        return;
    }
    if (!(arr = json_array())) {
        error_reply(r, 500, "out of memory");
        return;
    }
    s = tokens;
    for (size_t i = 0; i < n; i++) {
        size_t k = strcspn(s, ",");
        char tok[SRV_J0_TOKEN_LEN + 1];
        int rc = -1;
        if (k > len - (size_t)(s - tokens))
            k = len - (size_t)(s - tokens);
        o = NULL;
        if (k <= SRV_J0_TOKEN_LEN) {
            memcpy(tok, s, k);
            tok[k] = '\0';
            rc = srv_j0_find(tok, base64, fields, &o);
        }
        if (rc == 1 || rc == 2) {
            json_decref(arr);
            error_reply(r, rc == 1 ? 400 : 500, "%s", rc == 2 ? "out of memory"
                        : "some attributes for one or more submissions cannot be converted "
                          "to UTF-8, use base64_encoded=true query parameter");
            return;
        }
        json_array_append_new(arr, o ? o : json_null());
        s += k + (s[k] == ',');
    }
    srv_reply_json(r, 200, json_pack("{s:o}", "submissions", arr));
}

/* 404 for a token the store does not have (any more). */
static void not_kept(srv_req *r, const char *token)
{
    error_reply(r, 404, "no submission %.64s: this server keeps the last %d finished "
                "submissions", token, SRV_J0_KEEP_MAX);
}

static void show(srv_req *r)
{
    const char *token = srv_req_param(r, "token"), *fields;
    bool base64;
    json_t *o;

    if (query_show(r, &base64, &fields) != 0)
        return;
    switch (srv_j0_find(token, base64, fields, &o)) {
    case 0:
        srv_reply_json(r, 200, o);
        break;
    case 1:
        error_reply(r, 400, "%s", utf8_error);
        break;
    case 2:
        error_reply(r, 500, "out of memory");
        break;
    default:
        not_kept(r, token);
        break;
    }
}

/* DELETE /submissions/{token}: as Judge0 with ENABLE_SUBMISSION_DELETE,
 * switched on by [server] judge0_delete; the submission forgotten is the
 * answer, in base64 whatever the query says (Judge0's "guarantees user
 * will get requested data"). */
static void destroy(srv_req *r)
{
    const char *token = srv_req_param(r, "token"), *fields;
    bool base64;
    int status;
    json_t *o;

    /* As Judge0: the query is checked first, then the switch. */
    if (query_show(r, &base64, &fields) != 0)
        return;
    if (!r->s->conf.judge0_delete) {
        error_reply(r, 400, "delete not allowed");
        r->err_code = "forbidden";
        return;
    }
    switch (srv_j0_remove(token, fields, &o, &status)) {
    case 0:
        srv_reply_json(r, 200, o);
        break;
    case 1:
        error_reply(r, 400, "submission cannot be deleted because its status is %d (%s)", status,
                    statuses[status]);
        break;
    case 2:
        error_reply(r, 500, "out of memory");
        break;
    default:
        not_kept(r, token);
        break;
    }
}

static const srv_route routes[] = {
    { SRV_GET, "/languages", list_languages, 0 },
    { SRV_GET, "/languages/{id}", show_language, 0 },
    { SRV_GET, "/statuses", list_statuses, 0 },
    { SRV_POST, "/submissions", create, SRV_R_WORKER },
    /* before /submissions/{token}: the first route that matches is taken */
    { SRV_POST, "/submissions/batch", create_batch, SRV_R_WORKER },
    { SRV_GET, "/submissions/batch", show_batch, SRV_R_WORKER },
    /* a worker: showing one may encode megabytes */
    { SRV_GET, "/submissions/{token}", show, SRV_R_WORKER },
    { SRV_DELETE, "/submissions/{token}", destroy, SRV_R_WORKER },
};

int srv_routes_judge0(struct srv_router *rt)
{
    return srv_router_add(rt, routes, sizeof routes / sizeof routes[0]);
}
