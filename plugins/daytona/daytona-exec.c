/* plugins/daytona/daytona-exec.c - one exec through the toolbox's
 * POST /process/execute
 *
 * The daemon answers with stdout and stderr merged into one JSON string
 * (so bytes that are not UTF-8 are lost) and -1 for a signal.  How it runs
 * the command depends on its age (wire-apis.md 4.3): current daemons feed
 * it to a shell on its standard input and honour "envs"; older ones, still
 * met in long-lived sandboxes, split it on spaces honouring only ' and "
 * (no escapes), exec the words without a shell and ignore "envs".  So
 * every exec runs a small POSIX sh wrapper, base64-encoded, in a command
 * that both read as the same argv:
 *
 *   sh -c 'eval "$(echo <base64 of the script> | base64 -d)"'
 *
 * and its environment is exported by the script, not sent as "envs".  The
 * script places the exec's files, exports its environment, runs the argv
 * with stdin, stdout and stderr in files of a scratch directory, and
 * prints one header line and both outputs in base64:
 *
 *   SBX1 R <status> <stdout bytes> <stderr bytes>
 *   <base64 of stdout, at most its cap>
 *   SBX1-E
 *   <base64 of stderr>
 *   SBX1-Z
 *
 * <status> is "w<wait status>" when perl is in the sandbox (its fork and
 * waitpid tell a signal from an exit code), "e<errno>" when the command
 * could not be executed, or "x<$?>" from the shell otherwise (where an
 * exit code above 128 and a signal look alike).  The wall-clock limit is
 * the daemon's own "timeout" (whole seconds; it kills the process group,
 * or the tree on older daemons, and answers 408).
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "daytona-int.h"

/* Scripts larger than this are uploaded and run from a file: one argument
 * of execve may not exceed 128 KiB (MAX_ARG_STRLEN). */
#define DT_ARG_MAX (96 * 1024)

/* The environment variable marking every process of one exec (its value
 * is the exec's scratch name), for the sweep after a timeout. */
#define DT_EXEC_MARKER "POLYSANDBOX_EXEC_ID"

/* fork, exec, waitpid: the wait status into $1, exec's errno into $2. */
static const char perl_runner[] =
    "($r,$x)=splice(@ARGV,0,2);$p=fork;exit 125 unless defined $p;"
    "if(!$p){exec {$ARGV[0]} @ARGV;$e=$!+0;open(F,\">\",$x)&&print F $e;exit 127}"
    "waitpid($p,0);$s=$?;open(F,\">\",$r)||exit 125;print F $s;close F;exit 0";

/* Kills (three passes, for what forks meanwhile) every process but itself
 * whose environment holds the line $_sbx_m. */
static const char sweep_script[] =
    "for _sbx_pass in 1 2 3; do _sbx_n=0; for _sbx_d in /proc/[0-9]*; do "
    "_sbx_pid=${_sbx_d#/proc/}; [ \"$_sbx_pid\" = $$ ] && continue; "
    "if tr '\\000' '\\n' < \"$_sbx_d/environ\" 2>/dev/null | grep -qxF \"$_sbx_m\"; then "
    "kill -9 \"$_sbx_pid\" 2>/dev/null && _sbx_n=$((_sbx_n+1)); fi; done; "
    "[ $_sbx_n = 0 ] && break; done\n";

int dt_scratch(struct dt_prov *p, struct dt_sb *s, char **out)
{
    char hex[17];
    int rc = dt_workdir(p, s);
    if (rc != SBX_OK)
        return rc;
    if (pc_random_hex(hex, 8) != 0)
        return p->host->set_error(p->h, SBX_E_INTERNAL, "no randomness for a scratch name: %s",
                                  strerror(errno));
    if (asprintf(out, "%s/.polysandbox/%s%llu", s->workdir, hex,
                 (unsigned long long)++s->seq) < 0)
        return p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
    return SBX_OK;
}

void dt_script_begin(dt_buf *b, const char *scratch)
{
    dt_buf_adds(b, "_sbx_s=");
    dt_buf_addq(b, scratch);
    dt_buf_adds(b, "\n"
                "mkdir -p -- \"$_sbx_s\" || { echo 'SBX1 X scratch'; exit 0; }\n"
                "exec 2>\"$_sbx_s/w\"\n"
                "_sbx_bad() { printf 'SBX1 P %s %s\\n' \"$1\" \"$2\"; "
                "rm -rf -- \"$_sbx_s\"; exit 0; }\n");
}

/* Checks each existing component of f->path (no link, directories only),
 * makes the parents and moves the file into place with its mode. */
void dt_script_place(dt_buf *b, size_t i, const struct dt_place *f)
{
    const char *path = f->path;
    const char *last = strrchr(path, '/');
    char *prefix;

    if (last) {
        dt_buf_adds(b, "for _sbx_x in");
        for (const char *c = strchr(path, '/'); c; c = strchr(c + 1, '/')) {
            if (!(prefix = strndup(path, (size_t)(c - path)))) {
                b->oom = true;
                return;
            }
            dt_buf_adds(b, " ");
            dt_buf_addq(b, prefix);
            free(prefix);
        }
        dt_buf_addf(b, "; do if [ -L \"$_sbx_x\" ]; then _sbx_bad link %zu; "
                       "elif [ -e \"$_sbx_x\" ] && [ ! -d \"$_sbx_x\" ]; then _sbx_bad notdir %zu; "
                       "fi; done\n", i, i);
    }
    dt_buf_adds(b, "if [ -L ");
    dt_buf_addq(b, path);
    dt_buf_addf(b, " ]; then _sbx_bad link %zu; elif [ -d ", i);
    dt_buf_addq(b, path);
    dt_buf_addf(b, " ]; then _sbx_bad isdir %zu; fi\n", i);
    if (f->data) {
        char *b64 = dt_base64(f->data, f->len);
        if (!b64) {
            b->oom = true;
            return;
        }
        dt_buf_addf(b, "printf %%s '%s' | base64 -d >\"$_sbx_s/f%zu\" || _sbx_bad write %zu\n",
                    b64, i, i);
        free(b64);
    }
    if (last) {
        if (!(prefix = strndup(path, (size_t)(last - path)))) {
            b->oom = true;
            return;
        }
        dt_buf_adds(b, "mkdir -p -- ");
        dt_buf_addq(b, prefix);
        dt_buf_addf(b, " || _sbx_bad mkdir %zu\n", i);
        free(prefix);
    }
    dt_buf_addf(b, "mv -f -- \"$_sbx_s/f%zu\" ", i);
    dt_buf_addq(b, path);
    dt_buf_addf(b, " || _sbx_bad write %zu\nchmod %o ", i, (unsigned)(f->mode & 07777));
    dt_buf_addq(b, path);
    dt_buf_addf(b, " || _sbx_bad chmod %zu\n", i);
}

int dt_place_failed(struct dt_prov *p, const char *what, const char *res,
                    const struct dt_place *files, size_t n)
{
    const char *l = strstr(res, "SBX1 P ");
    char why[16] = "";
    size_t i = 0;

    if (!l)
        return SBX_OK;
    if (sscanf(l, "SBX1 P %15s %zu", why, &i) != 2)
        return p->host->set_error(p->h, SBX_E_BACKEND, "daytona: %s: garbled wrapper answer", what);
    const char *path = (files && i < n) ? files[i].path : "?";
    if (!strcmp(why, "link"))
        return p->host->set_error(p->h, SBX_E_PATH,
                                  "daytona: %s: '%s': a component is a symbolic link (never followed)",
                                  what, path);
    if (!strcmp(why, "notdir"))
        return p->host->set_error(p->h, SBX_E_PATH,
                                  "daytona: %s: '%s': a parent is not a directory", what, path);
    if (!strcmp(why, "isdir"))
        return p->host->set_error(p->h, SBX_E_PATH, "daytona: %s: '%s' is a directory", what, path);
    if (!strcmp(why, "cwd"))
        return p->host->set_error(p->h, SBX_E_NOT_FOUND,
                                  "daytona: %s: cannot enter the working directory '%s'", what, path);
    return p->host->set_error(p->h, SBX_E_IO, "daytona: %s: '%s': %s failed in the sandbox", what,
                              path, why);
}

int dt_run_script(struct dt_prov *p, struct dt_sb *s, const char *what, const char *script,
                  unsigned timeout_s, size_t max_body, char **result, size_t *result_len,
                  bool *timed_out)
{
    char err[PH_ERR_MAX];
    dt_buf cmd = {0};
    char *b64 = NULL, *body = NULL, *sfile = NULL;
    ph_response r = {0};
    json_t *req = NULL, *ans = NULL;
    int rc;

    *result = NULL;
    *result_len = 0;
    *timed_out = false;
    if ((rc = dt_workdir(p, s)) != SBX_OK)
        return rc;
    if (!(b64 = dt_base64(script, strlen(script)))) {
        rc = p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
        goto out;
    }
    if (strlen(b64) <= DT_ARG_MAX) {
        dt_buf_addf(&cmd, "sh -c 'eval \"$(echo %s | base64 -d)\"'", b64);
    } else {
        /* Too long for one argument: run it from a file, named in single
         * quotes, which a shell and an older daemon's splitting read
         * alike when the name holds no single quote. */
        if (strchr(s->workdir, '\'')) {
            rc = p->host->set_error(p->h, SBX_E_LIMIT,
                                    "daytona: %s: the command is too long to pass inline and the "
                                    "work directory '%s' holds a single quote, which cannot be "
                                    "quoted for every daemon", what, s->workdir);
            goto out;
        }
        if ((rc = dt_scratch(p, s, &sfile)) != SBX_OK)
            goto out;
        char *tmp = NULL;
        if (asprintf(&tmp, "%s.sh", sfile) < 0) {
            rc = p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
            goto out;
        }
        free(sfile);
        sfile = tmp;
        if ((rc = dt_upload_raw(p, s, sfile, script, strlen(script))) != SBX_OK)
            goto out;
        /* The name goes in as $1: never parsed by the inner shell. */
        dt_buf_addf(&cmd, "sh -c 'sh \"$1\"; rm -f \"$1\"' sh '%s'", sfile);
    }
    if (cmd.oom) {
        rc = p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
        goto out;
    }
    /* Without a limit of its own a script gets the request time. */
    if (!timeout_s)
        timeout_s = (unsigned)((p->request_ms + 999) / 1000);
    req = json_pack("{s:s, s:s, s:I}", "command", cmd.p, "cwd", s->workdir, "timeout",
                    (json_int_t)timeout_s);
    if (!req || !(body = json_dumps(req, JSON_COMPACT))) {
        rc = p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
        goto out;
    }
    ph_request rq = {
        .method = "POST", .path = "/process/execute", .body = body, .body_len = strlen(body),
        .content_type = "application/json",
        /* The daemon's own limit first; then room for it to kill the tree
         * (a grace period) and for the answer to travel. */
        .timeout_ms = (long)timeout_s * 1000 + p->request_ms,
        .max_body = max_body,
    };
    rc = ph_do(s->tb, &rq, &r, err);
    if (rc == SBX_OK && dt_revive(p, s, r.status)) {
        ph_response_clear(&r);
        rc = ph_do(s->tb, &rq, &r, err);
    }
    if (rc != SBX_OK) {
        rc = p->host->set_error(p->h, rc, "daytona: sandbox %s: %s: %s", s->id, what, err);
        goto out;
    }
    if (r.status == 408) {
        *timed_out = true;
        rc = SBX_OK;
        goto out;
    }
    if (r.status < 200 || r.status >= 300) {
        rc = dt_toolbox_refused(p, s, &r, "%s", what);
        /* Refused at the door (rate limit, bad credentials, not running):
         * nothing ran. */
        if (r.status == 429 || r.status == 401 || r.status == 403)
            dt_not_started(s);
        goto out;
    }
    json_error_t jerr;
    ans = json_loadb(r.body, r.body_len, 0, &jerr);
    json_t *res = json_object_get(ans, "result");
    json_t *code = json_object_get(ans, "exitCode");
    if (!code)
        code = json_object_get(ans, "code");  /* older daemons */
    if (!json_is_string(res) || !json_is_integer(code)) {
        rc = p->host->set_error(p->h, SBX_E_BACKEND,
                                "daytona: sandbox %s: %s: the answer has no \"result\" and "
                                "\"exitCode\"", s->id, what);
        goto out;
    }
    size_t n = json_string_length(res);
    if (!(*result = malloc(n + 1))) {
        rc = p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
        goto out;
    }
    memcpy(*result, json_string_value(res), n);
    (*result)[n] = '\0';
    *result_len = n;
    if (json_integer_value(code) != 0 || !strstr(*result, "SBX1 ")) {
        /* The wrapper itself failed: no sh or base64 in the image, say. */
        rc = p->host->set_error(p->h, SBX_E_BACKEND,
                                "daytona: sandbox %s: %s: the wrapper script failed (exit %lld): %.200s",
                                s->id, what, (long long)json_integer_value(code), *result);
        free(*result);
        *result = NULL;
        *result_len = 0;
        goto out;
    }
    rc = SBX_OK;
out:
    json_decref(req);
    json_decref(ans);
    ph_response_clear(&r);
    free(body);
    free(b64);
    free(sfile);
    dt_buf_free(&cmd);
    return rc;
}

/* ---- exec ---- */

static bool env_name_ok(const char *k)
{
    if (!k || !((*k >= 'A' && *k <= 'Z') || (*k >= 'a' && *k <= 'z') || *k == '_'))
        return false;
    for (k++; *k; k++)
        if (!((*k >= 'A' && *k <= 'Z') || (*k >= 'a' && *k <= 'z') || (*k >= '0' && *k <= '9') ||
              *k == '_'))
            return false;
    return true;
}

/* Finds "\n<tag>\n" (or at the start) in [p, end). */
static const char *find_line(const char *p, const char *end, const char *tag)
{
    size_t tl = strlen(tag);
    for (const char *q = p; q + tl <= end; q++) {
        q = memchr(q, tag[0], (size_t)(end - q));
        if (!q || q + tl > end)
            return NULL;
        if ((q == p || q[-1] == '\n') && !memcmp(q, tag, tl) &&
            (q + tl == end || q[tl] == '\n'))
            return q;
    }
    return NULL;
}

/* Hands @n bytes to the core's sink, which holds the output caps; after
 * it said stop (*stopped), nothing more. */
static void deliver(const sbx_output_sink_v1 *sink, int stream, const unsigned char *d, size_t n,
                    bool *stopped)
{
    if (!*stopped && n > 0 && sink->write(sink->ud, stream, d, n) != 0)
        *stopped = true;
}

static uint64_t past_cap(uint64_t cap)
{
    return cap < UINT64_MAX ? cap + 1 : cap;
}

static int parse_outputs(struct dt_prov *p, struct dt_sb *s, const char *res, size_t len,
                         const sbx_exec_spec_v1 *spec, const sbx_output_sink_v1 *sink,
                         sbx_exec_outcome_v1 *out)
{
    const char *end = res + len;
    const char *h = NULL;
    char st[32] = "";
    unsigned long long no = 0, ne = 0;

    /* The header line: "SBX1 R " at the start of a line. */
    for (const char *q = res; q < end;) {
        if ((size_t)(end - q) > 7 && !memcmp(q, "SBX1 R ", 7)) {
            h = q;
            break;
        }
        const char *nl = memchr(q, '\n', (size_t)(end - q));
        if (!nl)
            break;
        q = nl + 1;
    }
    /* The totals are the wrapper's format; the caps are the sink's. */
    if (!h || sscanf(h, "SBX1 R %31s %llu %llu", st, &no, &ne) != 3)
        return p->host->set_error(p->h, SBX_E_BACKEND,
                                  "daytona: sandbox %s: exec: no result line from the wrapper", s->id);
    const char *o = memchr(h, '\n', (size_t)(end - h));
    const char *e = o ? find_line(o + 1, end, "SBX1-E") : NULL;
    const char *z = e ? find_line(e + 7 > end ? end : e + 7, end, "SBX1-Z") : NULL;
    if (!o || !e || !z)
        return p->host->set_error(p->h, SBX_E_BACKEND,
                                  "daytona: sandbox %s: exec: the wrapper's output is cut short",
                                  s->id);
    unsigned char *ob = NULL, *eb = NULL;
    size_t ol = 0, el = 0;
    if (dt_unbase64(o + 1, (size_t)(e - (o + 1)), &ob, &ol) != 0 ||
        dt_unbase64(e + 7, (size_t)(z - (e + 7)), &eb, &el) != 0) {
        free(ob);
        return p->host->set_error(p->h, SBX_E_BACKEND,
                                  "daytona: sandbox %s: exec: bad base64 from the wrapper", s->id);
    }
    bool stopped = false;
    deliver(sink, SBX_STREAM_STDOUT, ob, ol, &stopped);
    deliver(sink, SBX_STREAM_STDERR, eb, el, &stopped);
    free(ob);
    free(eb);

    char kind = st[0];
    long v = strtol(st + 1, NULL, 10);
    out->exit_code = -1;
    out->signal = 0;
    if (kind == 'e') {
        bool nf = v == 2 || v == 20;  /* ENOENT, ENOTDIR */
        out->status = nf ? SBX_RUN_NOT_FOUND : SBX_RUN_NOT_EXECUTABLE;
        out->exit_code = nf ? 127 : 126;
    } else if (kind == 'w' && st[1]) {
        if ((v & 0x7f) == 0) {
            out->exit_code = (int)((v >> 8) & 0xff);
            out->status = out->exit_code ? SBX_RUN_NONZERO_EXIT : SBX_RUN_OK;
        } else {
            out->signal = (int)(v & 0x7f);
            out->status = out->signal == SIGXCPU ? SBX_RUN_CPU_LIMIT : SBX_RUN_SIGNAL;
        }
    } else if (kind == 'x' && st[1] && v >= 0 && v <= 255) {
        /* $? of the wrapper's shell; a value outside 0-255 (cut to an int,
         * 4294967296 would be 0) is no status, below. */
        out->exit_code = (int)v;
        out->status = v ? SBX_RUN_NONZERO_EXIT : SBX_RUN_OK;
    } else {
        return p->host->set_error(p->h, SBX_E_BACKEND,
                                  "daytona: sandbox %s: exec: the command's status is unknown "
                                  "(the wrapper's runner died?)", s->id);
    }
    if (stopped)
        out->status = SBX_RUN_OUTPUT_LIMIT;
    return SBX_OK;
}

int dt_exec(void *prov, void *sb, const sbx_exec_spec_v1 *spec,
            const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out)
{
    struct dt_prov *p = prov;
    struct dt_sb *s = sb;
    uint64_t t0 = dt_now_ns(), t1;
    struct dt_place *pl = NULL;
    char *scratch = NULL, *res = NULL, *path = NULL;
    size_t res_len = 0, inline_budget = DT_INLINE_MAX;
    dt_buf b = {0};
    bool timed_out = false, setup_done = false;
    int rc;

    pc_hints_reset(&s->hints);
    if (!spec->argv || !spec->argv[0])
        return p->host->set_error(p->h, SBX_E_INVAL, "daytona: exec: empty argv");
    for (size_t i = 0; i < spec->n_env; i++)
        if (!env_name_ok(spec->env[i].key) || !spec->env[i].value)
            return p->host->set_error(p->h, SBX_E_INVAL,
                                      "daytona: exec: environment name '%s' is not a shell name",
                                      spec->env[i].key ? spec->env[i].key : "(null)");
    for (size_t i = 0; i < spec->n_files; i++)
        if (!dt_path_ok(spec->files[i].path))
            return p->host->set_error(p->h, SBX_E_PATH,
                                      "daytona: exec: file path '%s' must be relative, without '..'",
                                      spec->files[i].path ? spec->files[i].path : "(null)");
    if ((rc = dt_scratch(p, s, &scratch)) != SBX_OK)
        goto out;
    if (spec->n_files && !(pl = calloc(spec->n_files, sizeof *pl))) {
        rc = p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
        goto out;
    }

    /* Small files and stdin ride inside the script; larger ones are
     * uploaded to the scratch directory first. */
    for (size_t i = 0; i < spec->n_files; i++) {
        const sbx_file_v1 *f = &spec->files[i];
        pl[i] = (struct dt_place){f->path, NULL, f->len, f->mode};
        if (f->len <= inline_budget) {
            pl[i].data = f->len ? f->data : "";
            inline_budget -= f->len;
            continue;
        }
        free(path);
        if (asprintf(&path, "%s/f%zu", scratch, i) < 0) {
            path = NULL;
            rc = p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
            goto out;
        }
        if ((rc = dt_upload_raw(p, s, path, f->data, f->len)) != SBX_OK)
            goto out;
    }
    bool stdin_inline = spec->stdin_len <= inline_budget;
    if (spec->stdin_len && !stdin_inline) {
        free(path);
        if (asprintf(&path, "%s/in", scratch) < 0) {
            path = NULL;
            rc = p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
            goto out;
        }
        if ((rc = dt_upload_raw(p, s, path, spec->stdin_data, spec->stdin_len)) != SBX_OK)
            goto out;
    }

    dt_script_begin(&b, scratch);
    dt_buf_adds(&b, "_sbx_p=$(command -v perl 2>/dev/null) || _sbx_p=\n");
    for (size_t i = 0; i < spec->n_files; i++)
        dt_script_place(&b, i, &pl[i]);
    if (spec->stdin_len && stdin_inline) {
        char *b64 = dt_base64(spec->stdin_data, spec->stdin_len);
        if (!b64) {
            rc = p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
            goto out;
        }
        dt_buf_addf(&b, "printf %%s '%s' | base64 -d >\"$_sbx_s/in\"\n", b64);
        free(b64);
    }
    dt_buf_adds(&b, spec->stdin_len ? "_sbx_in=\"$_sbx_s/in\"\n" : "_sbx_in=/dev/null\n");
    if (spec->cwd && *spec->cwd) {
        dt_buf_adds(&b, "cd -- ");
        dt_buf_addq(&b, spec->cwd);
        dt_buf_adds(&b, " 2>/dev/null || _sbx_bad cwd 0\n");
    }
    for (size_t i = 0; i < spec->n_env; i++) {
        dt_buf_addf(&b, "export %s=", spec->env[i].key);
        dt_buf_addq(&b, spec->env[i].value);
        dt_buf_adds(&b, "\n");
    }
    /* Last, so that it is ours: what the command starts carries it, and
     * the sweep after a timeout finds it by it. */
    dt_buf_addf(&b, "export %s=%s\n", DT_EXEC_MARKER, strrchr(scratch, '/') + 1);
    dt_buf_adds(&b, "set --");
    for (size_t i = 0; spec->argv[i]; i++) {
        dt_buf_adds(&b, " ");
        dt_buf_addq(&b, spec->argv[i]);
    }
    dt_buf_adds(&b, "\nif [ -n \"$_sbx_p\" ]; then\n  \"$_sbx_p\" -e ");
    dt_buf_addq(&b, perl_runner);
    dt_buf_adds(&b,
        " \"$_sbx_s/rc\" \"$_sbx_s/ee\" \"$@\" <\"$_sbx_in\" >\"$_sbx_s/o\" 2>\"$_sbx_s/e\"\n"
        "  if [ -s \"$_sbx_s/ee\" ]; then _sbx_st=e$(cat \"$_sbx_s/ee\"); "
        "else _sbx_st=w$(cat \"$_sbx_s/rc\" 2>/dev/null); fi\n"
        "else\n"
        "  _sbx_st=\n"
        "  case $1 in\n"
        "  */*) if [ ! -e \"$1\" ]; then _sbx_st=e2; "
        "elif [ -d \"$1\" ] || [ ! -x \"$1\" ]; then _sbx_st=e13; fi;;\n"
        "  *) command -v -- \"$1\" >/dev/null 2>&1 || _sbx_st=e2;;\n"
        "  esac\n"
        "  if [ -z \"$_sbx_st\" ]; then (exec \"$@\") <\"$_sbx_in\" >\"$_sbx_s/o\" 2>\"$_sbx_s/e\"; "
        "_sbx_st=x$?; fi\n"
        "fi\n"
        "_sbx_no=$(($(wc -c <\"$_sbx_s/o\" 2>/dev/null)))\n"
        "_sbx_ne=$(($(wc -c <\"$_sbx_s/e\" 2>/dev/null)))\n"
        "printf 'SBX1 R %s %s %s\\n' \"$_sbx_st\" \"$_sbx_no\" \"$_sbx_ne\"\n");
    /* A byte past each cap, so that the core's sink, which holds the
     * caps, tells a cut stream from a whole one. */
    dt_buf_addf(&b, "head -c %llu \"$_sbx_s/o\" 2>/dev/null | base64\necho SBX1-E\n",
                (unsigned long long)past_cap(spec->stdout_cap));
    dt_buf_addf(&b, "head -c %llu \"$_sbx_s/e\" 2>/dev/null | base64\necho SBX1-Z\n",
                (unsigned long long)past_cap(spec->stderr_cap));
    dt_buf_adds(&b, "rm -rf -- \"$_sbx_s\"; rmdir -- \"${_sbx_s%/*}\" 2>/dev/null; exit 0\n");
    if (b.oom) {
        rc = p->host->set_error(p->h, SBX_E_NOMEM, "out of memory");
        goto out;
    }

    uint64_t secs = (spec->timeout_ns + 999999999u) / 1000000000u;
    if (secs == 0)
        secs = 1;
    if (secs > 0xffffffffu)
        secs = 0xffffffffu;
    /* Base64 grows by 4/3 plus a newline per 76; JSON escapes each
     * newline into two bytes.  Leave a generous margin. */
    uint64_t caps = spec->stdout_cap + spec->stderr_cap;
    size_t max_body = (size_t)(caps / 2 * 3 + caps / 16 + 1024 * 1024);
    t1 = dt_now_ns();
    out->start_ns = t1 - t0;
    rc = dt_run_script(p, s, "exec", b.p, (unsigned)secs, max_body, &res, &res_len, &timed_out);
    setup_done = true;
    out->exec_ns = dt_now_ns() - t1;
    if (out->exec_ns == 0)
        out->exec_ns = 1;
    if (rc != SBX_OK)
        goto out;
    if (timed_out) {
        out->status = SBX_RUN_TIMEOUT;
        out->exit_code = -1;
        /* The daemon killed the wrapper's process group (older daemons:
         * its tree), so a process the command moved to a session of its
         * own lives on: sweep every process that carries this exec's
         * marker, then tidy its scratch files. */
        dt_buf_free(&b);
        dt_buf_addf(&b, "_sbx_m='%s=%s'\n", DT_EXEC_MARKER, strrchr(scratch, '/') + 1);
        dt_buf_adds(&b, sweep_script);
        dt_buf_adds(&b, "rm -rf -- ");
        dt_buf_addq(&b, scratch);
        dt_buf_adds(&b, "; echo 'SBX1 C'\n");
        if (!b.oom) {
            char *junk = NULL;
            size_t jl;
            bool to2;
            if (dt_run_script(p, s, "cleanup", b.p, 10, 0, &junk, &jl, &to2) != SBX_OK)
                p->host->log(p->h, SBX_LOG_DEBUG, "sandbox %s: scratch cleanup failed", s->id);
            free(junk);
        }
        rc = SBX_OK;
        goto out;
    }
    if ((rc = dt_place_failed(p, "exec", res, pl, spec->n_files)) != SBX_OK) {
        if (strstr(res, "SBX1 P cwd"))
            p->host->set_error(p->h, SBX_E_NOT_FOUND,
                               "daytona: exec: cannot enter the working directory '%s'", spec->cwd);
        goto out;
    }
    if (strstr(res, "SBX1 X scratch")) {
        rc = p->host->set_error(p->h, SBX_E_IO, "daytona: sandbox %s: cannot make %s", s->id,
                                scratch);
        goto out;
    }
    rc = parse_outputs(p, s, res, res_len, spec, sink, out);
out:
    /* A failure while placing files and stdin, before the command was
     * sent, left nothing running: the core may try again. */
    if (rc != SBX_OK && !setup_done && rc != SBX_E_INVAL && rc != SBX_E_PATH)
        dt_not_started(s);
    if (rc != SBX_OK)
        pc_hints_to_outcome(&s->hints, p->host, p->h, out);
    dt_buf_free(&b);
    free(res);
    free(path);
    free(pl);
    free(scratch);
    return rc;
}
