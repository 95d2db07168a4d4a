/* core/server/compat-piston.c - the Piston API (engineer-man/piston, v2)
 *
 *   GET  /api/v2/runtimes   [{language, version, aliases[], runtime?}]
 *   POST /api/v2/execute    {language, version, files[], stdin, args[],
 *                            compile_timeout, run_timeout (ms),
 *                            compile_cpu_time, run_cpu_time (ms),
 *                            compile_memory_limit, run_memory_limit (bytes)}
 *                           -> {language, version, run, compile?}
 *   WS   /api/v2/connect    (compat-piston-ws.c)
 *
 * Runtimes are our templates.  Each one's version is asked of the
 * runtime itself (a probe program run once, the first time the list is
 * asked for) where we know how, else "0.0.0"; its aliases are its
 * extensions and, for the templates Piston names otherwise (node is
 * Piston's "javascript"), Piston's own names.  Errors are Piston's
 * {"message": ...} with 400 (bad request, unknown runtime, a limit above
 * the server's maxima), 415 for a body that says it is not JSON, 500.
 *
 * Piston itself answers 415 to a body not sent as application/json; the
 * npm piston-client sends text/plain (node-fetch's default for a string),
 * so text/plain and no type are taken too.
 *
 * The sandbox has one CPU and one memory limit for its compile and run
 * steps: compile_cpu_time and compile_memory_limit are refused (400) when
 * they differ from the run's for a compiled runtime, never dropped.
 */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sodium.h>

#include "compat-piston.h"

/* ---- runtimes ------------------------------------------------------------------ */

/* What Piston calls our templates, and how to ask each its version. */
static const struct known {
    const char *tmpl, *language, *runtime, *aliases, *probe;
} known[] = {
    { "python", "python", NULL, "py py3 python3", "import sys; print(sys.version.split()[0])" },
    { "node", "javascript", "node", "node-javascript node-js javascript js node",
      "console.log(process.versions.node)" },
    { "typescript", "typescript", NULL, "ts", NULL },
    { "c", "c", "gcc", "gcc", "#include <stdio.h>\nint main(void) { printf(\"%d.%d.%d\\n\", "
      "__GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__); return 0; }\n" },
    { "cpp", "c++", "gcc", "cpp g++", "#include <cstdio>\nint main() { std::printf(\"%d.%d.%d\\n\", "
      "__GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__); }\n" },
    { "bash", "bash", NULL, "", "echo \"${BASH_VERSION%%(*}\"" },
    { "ruby", "ruby", NULL, "ruby3 rb", "puts RUBY_VERSION" },
    { "perl", "perl", NULL, "pl", "printf \"%vd\\n\", $^V;" },
    { "lua", "lua", NULL, "", "print((_VERSION:gsub('Lua ', '')))" },
    { "go", "go", NULL, "golang", "package main\nimport (\"fmt\"; \"runtime\")\nfunc main() "
      "{ fmt.Println(runtime.Version()[2:]) }\n" },
};

static pthread_mutex_t rt_lock = PTHREAD_MUTEX_INITIALIZER;
static srv_piston_runtime *runtimes;   /* probed once, kept for the process */
static size_t n_runtimes;

static const struct known *known_of(const char *tmpl)
{
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp(known[i].tmpl, tmpl) == 0)
            return &known[i];
    return NULL;
}

/* "3.11.2" from the probe's first line, or "0.0.0" when it said nothing
 * that looks like a version (the runtime is missing, or says otherwise). */
static void probe_version(srv_req *r, const sbx_template *t, const struct known *k,
                          char *buf, size_t size)
{
    sbx_exec_opts *x;
    sbx_result *res = NULL;
    size_t len = 0, n = 0;
    const char *out;
    int dots = 0;

    snprintf(buf, size, "0.0.0");
    if (!k || !k->probe || !(x = sbx_exec_opts_new()))
        return;
    sbx_exec_opts_set_code(x, sbx_template_name(t), k->probe, (size_t)-1);
    sbx_exec_opts_set_timeout(x, UINT64_C(20000000000));
    sbx_exec_opts_set_cancel(x, r->cancel);
    if (sbx_run(r->s->ctx, NULL, x, &res) == SBX_OK && sbx_result_status(res) == SBX_RUN_OK) {
        out = sbx_result_stdout(res, &len);
        while (n < len && n + 1 < size && ((out[n] >= '0' && out[n] <= '9') || out[n] == '.')) {
            dots += out[n] == '.';
            n++;
        }
        if (n && out[0] != '.' && (n == len || out[n] == '\n' || out[n] == '\r')) {
            memcpy(buf, out, n);
            buf[n] = '\0';
            /* SemVer wants three numbers. */
            for (; dots < 2 && n + 3 < size; dots++, n += 2)
                memcpy(buf + n, ".0", 3);
        }
    }
    if (!res || sbx_result_status(res) != SBX_RUN_OK)
        srv_log(r, "piston: no version from the %s runtime (%s); it says 0.0.0",
                sbx_template_name(t), res ? sbx_run_status_name(sbx_result_status(res))
                : sbx_error_message(sbx_ctx_last_error(r->s->ctx)));
    sbx_result_free(res);
    sbx_exec_opts_free(x);
}

static json_t *aliases_of(const sbx_template *t, const struct known *k, const char *language)
{
    json_t *a = json_array();
    const char *name = sbx_template_name(t);
    char word[64];

    if (strcmp(name, language) != 0)
        json_array_append_new(a, json_string(name));
    for (int pass = 0; pass < 2; pass++) {
        const char *s = pass ? (k ? k->aliases : "") : sbx_template_extensions(t);
        while (s && *s) {
            size_t n = strcspn(s, " ,");
            const char *w = s;
            if (pass == 0 && *w == '.')
                w++, n--;
            if (n && n < sizeof word) {
                bool dup = strncmp(w, language, n) == 0 && !language[n];
                memcpy(word, w, n);
                word[n] = '\0';
                for (size_t i = 0; !dup && i < json_array_size(a); i++)
                    dup = strcmp(json_string_value(json_array_get(a, i)), word) == 0;
                if (!dup)
                    json_array_append_new(a, json_string(word));
            }
            s += strcspn(s, " ,");
            s += strspn(s, " ,");
        }
    }
    return a;
}

/* The runtimes, probed the first time (under the lock, so that two
 * first requests probe once).  NULL with 0 on ENOMEM. */
const srv_piston_runtime *srv_piston_runtimes(srv_req *r, size_t *n)
{
    sbx_ctx *ctx = r->s->ctx;

    pthread_mutex_lock(&rt_lock);
    if (!runtimes) {
        size_t nt = sbx_ctx_template_count(ctx), k = 0;
        srv_piston_runtime *v = calloc(nt ? nt : 1, sizeof *v);
        for (size_t i = 0; v && i < nt; i++) {
            const sbx_template *t = sbx_ctx_template(ctx, i);
            const struct known *kn = known_of(sbx_template_name(t));
            srv_piston_runtime *rt = &v[k++];
            rt->tmpl = sbx_template_name(t);
            rt->language = kn ? kn->language : rt->tmpl;
            rt->runtime = kn ? kn->runtime : NULL;
            rt->compiled = sbx_template_compiled(t);
            probe_version(r, t, kn, rt->version, sizeof rt->version);
            rt->aliases = aliases_of(t, kn, rt->language);
        }
        if (v && !sbx_cancel_fired(r->cancel)) {
            runtimes = v;
            n_runtimes = k;
        } else if (v) {
            for (size_t i = 0; i < k; i++)
                json_decref(v[i].aliases);
            free(v);
        }
    }
    *n = n_runtimes;
    pthread_mutex_unlock(&rt_lock);
    return runtimes;
}

/* A SemVer selector as Piston's clients send them: "*", "x", "3",
 * "3.11", "3.x", "3.11.2", with an optional leading ^ ~ = v. */
static bool version_matches(const char *have, const char *want)
{
    while (*want == '^' || *want == '~' || *want == '=' || *want == 'v')
        want++;
    if (!*want || !strcmp(want, "*") || !strcasecmp(want, "x"))
        return true;
    for (;;) {
        size_t nw = strcspn(want, "."), nh = strcspn(have, ".");
        if (!(nw == 1 && (*want == '*' || *want == 'x' || *want == 'X')) &&
            (nw != nh || strncmp(want, have, nw) != 0))
            return false;
        want += nw;
        have += nh;
        if (!*want)
            return true;
        if (!*have)
            return false;
        want++;
        have++;
    }
}

const srv_piston_runtime *srv_piston_find(srv_req *r, const char *language,
                                          const char *version)
{
    size_t n;
    const srv_piston_runtime *v = srv_piston_runtimes(r, &n);

    for (size_t i = 0; v && i < n; i++) {
        bool named = strcmp(v[i].language, language) == 0;
        for (size_t a = 0; !named && a < json_array_size(v[i].aliases); a++)
            named = strcmp(json_string_value(json_array_get(v[i].aliases, a)), language) == 0;
        if (named && version_matches(v[i].version, version))
            return &v[i];
    }
    return NULL;
}

/* Piston's error shape: {"message": ...}. */
#define message(r, status, ...) srv_compat_message(r, status, "message", __VA_ARGS__)

static void list_runtimes(srv_req *r)
{
    size_t n;
    const srv_piston_runtime *v = srv_piston_runtimes(r, &n);
    json_t *arr = json_array();

    if (!v || !arr) {
        json_decref(arr);
        message(r, 500, "out of memory");
        return;
    }
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_pack("{s:s, s:s, s:O}", "language", v[i].language, "version",
                              v[i].version, "aliases", v[i].aliases);
        if (o && v[i].runtime)
            json_object_set_new(o, "runtime", json_string(v[i].runtime));
        json_array_append_new(arr, o);
    }
    srv_reply_json(r, 200, arr);
}

/* ---- execute --------------------------------------------------------------------- */

/* One limit field: absent, null or 0 is "the default" (as Piston),
 * -1 "none" where @none_ok; else a positive number.  -1 after a reply;
 * 0 with *v = 0 for the default. */
static int limit_field(srv_req *r, json_t *j, const char *name, bool none_ok, double *v,
                       char *err, size_t errsz)
{
    json_t *f = json_object_get(j, name);

    *v = 0;
    if (!f || json_is_null(f))
        return 0;
    if (!json_is_number(f)) {
        snprintf(err, errsz, "If specified, %s must be a number", name);
        return -1;
    }
    *v = json_number_value(f);
    if (!isfinite(*v) || (*v < 0 && !(none_ok && *v == -1))) {
        snprintf(err, errsz, "%s must be non-negative", name);
        return -1;
    }
    if (*v > 1e15) {
        snprintf(err, errsz, "%s is too large", name);
        return -1;
    }
    (void)r;
    return 0;
}

/* Piston's "hex" encoding, as srv_b64_decode: 0, EINVAL or ENOMEM. */
static int hex_decode(const char *text, size_t len, unsigned char **out, size_t *out_len)
{
    size_t cap = len / 2 + 1;
    unsigned char *buf = malloc(cap);
    const char *end = NULL;

    if (!buf)
        return ENOMEM;
    if (sodium_hex2bin(buf, cap, text, len, NULL, out_len, &end) != 0 || end != text + len) {
        free(buf);
        return EINVAL;
    }
    *out = buf;
    return 0;
}

/* The first file that is text (utf8) is the program; the others go
 * beside it, decoded.  NULL entry: err says why. */
static int add_files(srv_req *r, json_t *files, sbx_exec_opts *x, const char *tmpl,
                     const char **entry, size_t *entry_len, char *err, size_t errsz)
{
    *entry = NULL;
    for (size_t i = 0; i < json_array_size(files); i++) {
        json_t *f = json_array_get(files, i);
        json_t *content = json_is_object(f) ? json_object_get(f, "content") : NULL;
        const char *name = NULL, *enc = "utf8";
        unsigned char *data = NULL;
        size_t len = 0;
        int rc;

        if (!json_is_string(content)) {
            snprintf(err, errsz, "files[%zu].content is required as a string", i);
            return -1;
        }
        if (json_is_string(json_object_get(f, "name")))
            name = json_string_value(json_object_get(f, "name"));
        if (json_is_string(json_object_get(f, "encoding")) &&
            (!strcmp(json_string_value(json_object_get(f, "encoding")), "base64") ||
             !strcmp(json_string_value(json_object_get(f, "encoding")), "hex")))
            enc = json_string_value(json_object_get(f, "encoding"));
        if (!strcmp(enc, "utf8") && !*entry) {
            *entry = json_string_value(content);
            *entry_len = json_string_length(content);
            continue;
        }
        if (!name || !*name) {
            /* Piston names them file1.code...; nothing can refer to them. */
            continue;
        }
        if (!srv_path_safe(name)) {
            snprintf(err, errsz, "File path \"%s\" tries to escape parent directory", name);
            return -1;
        }
        if (!strcmp(enc, "utf8")) {
            rc = sbx_exec_opts_add_file(x, name, json_string_value(content),
                                        json_string_length(content), 0644);
        } else {
            const char *text = json_string_value(content);
            size_t tl = json_string_length(content);
            rc = !strcmp(enc, "hex") ? hex_decode(text, tl, &data, &len)
                                     : srv_b64_decode(text, tl, " \r\n", &data, &len);
            if (rc == ENOMEM) {
                snprintf(err, errsz, "out of memory");
                return -1;
            }
            if (rc != 0) {
                snprintf(err, errsz, "files[%zu].content is not valid %s", i, enc);
                return -1;
            }
            rc = sbx_exec_opts_add_file(x, name, data, len, 0644);
            free(data);
        }
        if (rc != SBX_OK) {
            snprintf(err, errsz, "files[%zu]: %s", i,
                     sbx_error_message(sbx_ctx_last_error(r->s->ctx)));
            return -1;
        }
    }
    (void)tmpl;
    if (!*entry) {
        snprintf(err, errsz, "files must include at least one utf8 encoded file");
        return -1;
    }
    return 0;
}

int srv_piston_request(srv_req *r, json_t *j, srv_piston_job *job, char *err, size_t errsz)
{
    const char *language, *version, *entry = NULL;
    json_t *files = json_object_get(j, "files"), *v;
    double ms[6];
    static const char *const limit_names[6] = {
        "compile_timeout", "run_timeout", "compile_cpu_time", "run_cpu_time",
        "compile_memory_limit", "run_memory_limit",
    };
    size_t entry_len = 0;

    memset(job, 0, sizeof *job);
    if (!json_is_string(json_object_get(j, "language"))) {
        snprintf(err, errsz, "language is required as a string");
        return -1;
    }
    language = json_string_value(json_object_get(j, "language"));
    if (!json_is_string(json_object_get(j, "version"))) {
        snprintf(err, errsz, "version is required as a string");
        return -1;
    }
    version = json_string_value(json_object_get(j, "version"));
    if (!json_is_array(files)) {
        snprintf(err, errsz, "files is required as an array");
        return -1;
    }
    for (size_t i = 0; i < json_array_size(files); i++)
        if (!json_is_string(json_object_get(json_array_get(files, i), "content"))) {
            snprintf(err, errsz, "files[%zu].content is required as a string", i);
            return -1;
        }
    if (!(job->rt = srv_piston_find(r, language, version))) {
        snprintf(err, errsz, "%s-%s runtime is unknown", language, version);
        return -1;
    }
    for (int i = 0; i < 6; i++)
        if (limit_field(r, j, limit_names[i], i >= 4, &ms[i], err, errsz) != 0)
            return -1;
    /* One CPU and one memory limit serve both steps. */
    for (int i = 2; job->rt->compiled && i < 6; i += 2)
        if (ms[i] > 0 && ms[i] != ms[i + 1]) {
            snprintf(err, errsz, "%s must equal %s on this server (the compile and run "
                     "steps share one sandbox and its limit)", limit_names[i], limit_names[i + 1]);
            return -1;
        }
    if (!(job->create = sbx_create_opts_new()) || !(job->exec = sbx_exec_opts_new())) {
        snprintf(err, errsz, "out of memory");
        return -1;
    }
    sbx_create_opts_set_template(job->create, job->rt->tmpl);
    if (add_files(r, files, job->exec, job->rt->tmpl, &entry, &entry_len, err, errsz) != 0)
        return -1;
    sbx_exec_opts_set_code(job->exec, job->rt->tmpl, entry, entry_len);
    if (ms[0] > 0)
        sbx_exec_opts_set_compile_timeout(job->exec, (uint64_t)(ms[0] * 1e6));
    if (ms[1] > 0)
        sbx_exec_opts_set_timeout(job->exec, (uint64_t)(ms[1] * 1e6));
    if (ms[3] > 0)
        sbx_create_opts_set_limit(job->create, SBX_LIMIT_CPU, (uint64_t)(ms[3] * 1e6));
    if (ms[5] > 0)
        sbx_create_opts_set_limit(job->create, SBX_LIMIT_MEMORY, (uint64_t)ms[5]);
    if ((v = json_object_get(j, "args")) && !json_is_null(v)) {
        const char **a;
        if (!json_is_array(v)) {
            snprintf(err, errsz, "args must be an array of strings");
            return -1;
        }
        if (!(a = calloc(json_array_size(v) + 1, sizeof *a))) {
            snprintf(err, errsz, "out of memory");
            return -1;
        }
        for (size_t i = 0; i < json_array_size(v); i++) {
            json_t *e = json_array_get(v, i);
            /* Piston passes what JavaScript makes of each: numbers too. */
            if (!json_is_string(e)) {
                free(a);
                snprintf(err, errsz, "args[%zu] must be a string", i);
                return -1;
            }
            a[i] = json_string_value(e);
        }
        sbx_exec_opts_set_args(job->exec, a);
        free(a);
    }
    if ((v = json_object_get(j, "stdin")) && !json_is_null(v)) {
        if (!json_is_string(v)) {
            snprintf(err, errsz, "stdin must be a string");
            return -1;
        }
        job->stdin_data = json_string_value(v);
        job->stdin_len = json_string_length(v);
    }
    return 0;
}

void srv_piston_job_free(srv_piston_job *job)
{
    sbx_create_opts_free(job->create);
    sbx_exec_opts_free(job->exec);
    memset(job, 0, sizeof *job);
}

/* A stage as Piston reports it, from a status and the phase's output. */
json_t *srv_piston_stage(sbx_run_status st, const sbx_result *res, const srv_phase *ph,
                         bool with_output, bool figures)
{
    const char *status = NULL, *signal = NULL;
    char msg[512] = "";
    int code = sbx_result_exit_code(res), sig = sbx_result_signal(res);
    bool has_code = false;
    /* The result's figures are the last step's. */
    int64_t cpu = figures ? sbx_result_cpu_ns(res) : -1;
    int64_t mem = figures ? sbx_result_peak_memory(res) : -1;
    json_t *o;

    switch (st) {
    case SBX_RUN_OK:
        has_code = true;
        code = 0;
        break;
    case SBX_RUN_NONZERO_EXIT:
    case SBX_RUN_NOT_FOUND:
    case SBX_RUN_NOT_EXECUTABLE:
        status = "RE";
        has_code = true;
        snprintf(msg, sizeof msg, "Exited with error status %d", code);
        break;
    case SBX_RUN_PIDS_LIMIT:
        status = "RE";
        has_code = code >= 0;
        snprintf(msg, sizeof msg, "Process limit reached");
        break;
    case SBX_RUN_SIGNAL:
    case SBX_RUN_SECCOMP:
        status = "SG";
        signal = srv_signal_name(sig);
        snprintf(msg, sizeof msg, st == SBX_RUN_SECCOMP ? "Killed by the system-call filter "
                 "(signal %d)" : "Caught fatal signal %d", sig);
        break;
    case SBX_RUN_TIMEOUT:
        status = "TO";
        signal = "SIGKILL";
        snprintf(msg, sizeof msg, "Time limit exceeded (wall clock)");
        break;
    case SBX_RUN_CPU_LIMIT:
        status = "TO";
        signal = "SIGKILL";
        snprintf(msg, sizeof msg, "Time limit exceeded");
        break;
    case SBX_RUN_MEMORY_LIMIT:
        status = "SG";
        signal = "SIGKILL";
        snprintf(msg, sizeof msg, "Memory limit exceeded");
        break;
    case SBX_RUN_OUTPUT_LIMIT:
        status = sbx_result_stderr_truncated(res) && !sbx_result_stdout_truncated(res) ? "EL"
                                                                                       : "OL";
        signal = "SIGKILL";
        snprintf(msg, sizeof msg, "%s length exceeded", status[0] == 'E' ? "stderr" : "stdout");
        break;
    case SBX_RUN_COMPILE_ERROR:   /* not a step's own status */
    case SBX_RUN_SANDBOX_ERROR:
    default:
        status = "XX";
        snprintf(msg, sizeof msg, "%s", sbx_result_error(res) ? sbx_result_error(res)
                                                              : "internal error");
        break;
    }
    o = json_object();
    json_object_set_new(o, "stdout", srv_json_text(ph->out, ph->out_len));
    json_object_set_new(o, "stderr", srv_json_text(ph->err, ph->err_len));
    if (with_output)
        json_object_set_new(o, "output", ph->mix || !(ph->out_len + ph->err_len)
                            ? srv_json_text(ph->mix, ph->mix_len)
                            : srv_json_text(ph->out, ph->out_len));
    json_object_set_new(o, "code", has_code ? json_integer(code) : json_null());
    json_object_set_new(o, "signal", signal ? json_string(signal) : json_null());
    json_object_set_new(o, "status", status ? json_string(status) : json_null());
    json_object_set_new(o, "message", msg[0] ? json_string(msg) : json_null());
    json_object_set_new(o, "memory", mem >= 0 ? json_integer(mem) : json_null());
    json_object_set_new(o, "cpu_time", cpu >= 0 ? json_real((double)cpu / 1e6) : json_null());
    json_object_set_new(o, "wall_time", json_real((double)ph->ns / 1e6));
    return o;
}

/* The stages of a finished capture: {compile?, run}. */
json_t *srv_piston_stages(const srv_capture *cap)
{
    json_t *o = json_object(), *compile = NULL;
    sbx_run_status st = sbx_result_status(cap->res);

    if (cap->compiled) {
        compile = srv_piston_stage(cap->compile_status, cap->res, &cap->compile, true,
                                   st == SBX_RUN_COMPILE_ERROR);
        json_object_set(o, "compile", compile);
    }
    if (st == SBX_RUN_COMPILE_ERROR && compile)
        json_object_set(o, "run", compile);   /* as Piston: run is the compile stage */
    else
        json_object_set_new(o, "run", srv_piston_stage(st, cap->res, &cap->run, true, true));
    json_decref(compile);
    return o;
}

/* The library refused the run: Piston's 400 for what the request asked
 * (a limit above the maxima), else 500. */
void srv_piston_refused(srv_req *r, int rc)
{
    const char *msg = sbx_error_message(sbx_ctx_last_error(r->s->ctx));

    if (rc == SBX_E_LIMIT || rc == SBX_E_INVAL)
        message(r, 400, "%s", msg && *msg ? msg : sbx_strerror(rc));
    else
        message(r, rc == SBX_E_PROVIDER_UNAVAILABLE || rc == SBX_E_BUSY ? 503 : 500, "%s",
                msg && *msg ? msg : sbx_strerror(rc));
}

/* Piston's 415: JSON, or what the npm client sends (text/plain), or none. */
bool srv_piston_json_type(srv_req *r)
{
    const char *ct = srv_req_header(r, "Content-Type");

    if (!ct || !strncasecmp(ct, "application/json", 16) || !strncasecmp(ct, "text/plain", 10))
        return true;
    message(r, 415, "requests must be of type application/json");
    return false;
}

static void execute(srv_req *r)
{
    char err[1024];
    json_t *j, *o;
    srv_piston_job job;
    srv_capture cap;

    if (!srv_piston_json_type(r))
        return;
    if (!(j = srv_compat_body(r, err, sizeof err))) {
        message(r, 400, "%s", err);
        return;
    }
    if (srv_piston_request(r, j, &job, err, sizeof err) != 0) {
        message(r, 400, "%s", err);
        goto out;
    }
    /* Piston ends stdin with a newline when it has none. */
    {
        srv_bytes in = {0};
        if (srv_bytes_add(&in, job.stdin_data, job.stdin_len) != 0 ||
            ((!in.len || in.data[in.len - 1] != '\n') && srv_bytes_add(&in, "\n", 1) != 0)) {
            srv_bytes_free(&in);
            message(r, 500, "out of memory");
            goto out;
        }
        sbx_exec_opts_set_stdin(job.exec, in.data, in.len);
        srv_bytes_free(&in);
    }
    if (srv_capture_run(r, job.create, job.exec, job.rt->tmpl, NULL, 0, &cap) != SBX_OK) {
        srv_piston_refused(r, cap.rc);
        srv_capture_free(&cap);
        goto out;
    }
    if (sbx_result_status(cap.res) == SBX_RUN_SANDBOX_ERROR &&
        sbx_result_error_code(cap.res) == SBX_E_CANCELLED) {
        srv_error(r, 499, "client_closed", NULL, "the client closed the connection");
    } else {
        o = srv_piston_stages(&cap);
        json_object_set_new(o, "language", json_string(job.rt->language));
        json_object_set_new(o, "version", json_string(job.rt->version));
        srv_reply_json(r, 200, o);
    }
    srv_capture_free(&cap);
out:
    srv_piston_job_free(&job);
    json_decref(j);
}

static const srv_route routes[] = {
    { SRV_GET, "/api/v2/runtimes", list_runtimes, SRV_R_WORKER },
    { SRV_POST, "/api/v2/execute", execute, SRV_R_WORKER },
};

int srv_routes_piston(struct srv_router *rt)
{
    return srv_router_add(rt, routes, sizeof routes / sizeof routes[0]) != 0 ||
           srv_routes_piston_ws(rt) != 0 ? -1 : 0;
}
