/* core/cli/exec.c - building an exec request and reporting its result
 *
 * Shared by run and exec: what to run (FILE, -c CODE, --shell LINE or
 * -- CMD ARGS), its environment, files and stdin; then the streamed
 * output, the one-line note on a non-ok status and the exit status.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* Largest stdin, FILE or --file the command reads into memory; the core
 * applies its own (smaller) limits on top. */
#define CLI_INPUT_MAX ((size_t)256 << 20)

static int output_errno;    /* first failure writing streamed output */
static size_t streamed[3];  /* bytes streamed, by SBX_STREAM_* */
static const char *command; /* the command run (argv[0]), for messages */

static int on_output(void *ud, int stream, const void *buf, size_t len)
{
    int fd = stream == SBX_STREAM_STDERR ? STDERR_FILENO : STDOUT_FILENO;
    int e;

    (void)ud;
    if (output_errno != 0)
        return 1;
    e = cli_write_all(fd, buf, len);
    if (e != 0) {
        output_errno = e;
        return 1; /* nobody reads our output any more: stop the command */
    }
    streamed[fd] += len;
    return 0;
}

/* Output that reached the result without passing through the callback
 * (a provider without streaming) is written
 * once the run is over, so nothing the program said is lost. */
static void write_unstreamed(const sbx_result *r)
{
    for (int fd = STDOUT_FILENO; fd <= STDERR_FILENO; fd++) {
        size_t len = 0;
        const void *buf = fd == STDOUT_FILENO ? sbx_result_stdout(r, &len)
                                              : sbx_result_stderr(r, &len);
        int e;
        if (streamed[fd] != 0 || len == 0 || buf == NULL)
            continue;
        e = cli_write_all(fd, buf, len);
        if (e != 0 && output_errno == 0)
            output_errno = e;
    }
}

bool cli_output_failed(void)
{
    return output_errno != 0;
}

int cli_req_add_env(const cli_req *req, sbx_exec_opts *x)
{
    for (size_t i = 0; i < req->n_env; i++) {
        const char *e = req->env[i], *v;
        char *k;
        int rc;

        if (strchr(e, '=') != NULL) {
            if (!cli_split_kv(e, &k, &v)) {
                cli_err("out of memory");
                return CLI_EXIT_ERROR;
            }
        } else {
            v = getenv(e);
            if (v == NULL)
                continue; /* as docker: an unset variable is skipped */
            k = strdup(e);
            if (k == NULL) {
                cli_err("out of memory");
                return CLI_EXIT_ERROR;
            }
        }
        rc = sbx_exec_opts_add_env(x, k, v);
        free(k);
        if (rc != SBX_OK) {
            cli_err("%s: --env %s: %s", req->cmd, e, sbx_strerror(rc));
            return rc == SBX_E_INVAL ? CLI_EXIT_USAGE : CLI_EXIT_ERROR;
        }
    }
    return -1;
}

/* --file LOCAL[:REMOTE]: the first ':' splits (REMOTE defaults to the
 * base name of LOCAL); executable files stay executable. */
static int add_files(const cli_req *req, sbx_exec_opts *x)
{
    for (size_t i = 0; i < req->n_files; i++) {
        const char *spec = req->files[i], *colon = strchr(spec, ':');
        char *local = colon ? strndup(spec, (size_t)(colon - spec))
                            : strdup(spec);
        char *data = NULL, *base = NULL;
        const char *remote;
        size_t len = 0; /* for the analyser, which lets stat() fail with errno 0 */
        struct stat st;
        int e, rc;

        if (local == NULL) {
            cli_err("out of memory");
            return CLI_EXIT_ERROR;
        }
        e = stat(local, &st) != 0 ? errno
                                   : cli_read_file(local, CLI_INPUT_MAX, &data,
                                                   &len);
        if (e != 0) {
            cli_err("%s: --file %s: %s", req->cmd, local,
                    e == EFBIG ? "file too large" : strerror(e));
            free(local);
            return CLI_EXIT_USAGE;
        }
        if (colon != NULL && colon[1] != '\0') {
            remote = colon + 1;
        } else {
            base = strdup(local);
            if (base == NULL) {
                free(local);
                free(data);
                cli_err("out of memory");
                return CLI_EXIT_ERROR;
            }
            remote = basename(base);
        }
        rc = sbx_exec_opts_add_file(x, remote, data, len,
                                    (st.st_mode & 0111) ? 0755 : 0644);
        free(data);
        free(local);
        if (rc != SBX_OK) {
            cli_err("%s: --file %s: %s", req->cmd, spec, sbx_strerror(rc));
            free(base);
            return rc == SBX_E_NOMEM ? CLI_EXIT_ERROR : CLI_EXIT_USAGE;
        }
        free(base);
    }
    return -1;
}

/* Our stdin, with -i only (as docker run -i): without it the program
 * reads an empty stdin, so a script, a `while read` loop or a CI job
 * never hangs on, or loses, input meant for the commands after us.
 * Streamed where @provider can feed a running command (stdin_stream), so
 * that an interactive program answers each line as it comes and our end
 * of file closes its stdin; else (no such provider, or NULL) read whole
 * first, and the program starts once we reach end of file. */
static bool stdin_streamed; /* set_stdin_fd was used: see cli_stdin_refused */

static bool can_stream(const sbx_ctx *ctx, const char *provider)
{
    const sbx_provider *p = provider ? sbx_ctx_find_provider(ctx, provider) : NULL;

    return p != NULL && (sbx_provider_capabilities(p) & SBX_CAP_STDIN_STREAM);
}

int cli_req_stdin(const cli_req *req, const sbx_ctx *ctx, const char *provider,
                  sbx_exec_opts *x)
{
    char *data;
    size_t len;
    int e, rc;

    stdin_streamed = false;
    if (!req->stdin || fcntl(STDIN_FILENO, F_GETFD) < 0)
        return -1;
    if (can_stream(ctx, provider)) {
        rc = sbx_exec_opts_set_stdin_fd(x, STDIN_FILENO);
        stdin_streamed = rc == SBX_OK;
    } else {
        e = cli_read_fd(STDIN_FILENO, CLI_INPUT_MAX, &data, &len);
        if (e != 0) {
            cli_err("%s: reading standard input: %s", req->cmd,
                    e == EFBIG ? "too large" : strerror(e));
            return CLI_EXIT_ERROR;
        }
        rc = sbx_exec_opts_set_stdin(x, data, len);
        free(data);
    }
    if (rc != SBX_OK) {
        cli_err("%s: standard input: %s", req->cmd, sbx_strerror(rc));
        return CLI_EXIT_ERROR;
    }
    return -1;
}

bool cli_stdin_refused(const sbx_ctx *ctx, int code)
{
    const sbx_error *e = sbx_ctx_last_error(ctx);

    /* the core refuses before the provider runs anything: nothing of our
     * stdin was read */
    return stdin_streamed && code == SBX_E_NOTSUP && e != NULL &&
           sbx_error_provider(e) != NULL && !can_stream(ctx, sbx_error_provider(e));
}

/* The name code is written under in the sandbox: a FILE's own (so
 * tracebacks cite it), else a private one that no file of the user's
 * (their main.py in a persistent sandbox) is likely to have. */
static int set_source_name(const cli_req *req, const sbx_ctx *ctx,
                           const char *lang, const char *path, sbx_exec_opts *x)
{
    const sbx_template *t = sbx_ctx_find_template(ctx, lang);
    const char *exts = t != NULL ? sbx_template_extensions(t) : NULL;
    char name[96], *copy = NULL;
    const char *base = NULL;
    int rc;

    if (path != NULL && strcmp(path, "-") != 0) {
        if ((copy = strdup(path)) == NULL) {
            cli_err("out of memory");
            return CLI_EXIT_ERROR;
        }
        base = basename(copy);
    }
    if (base == NULL || base[0] == '-' || base[0] == '.') {
        /* ".polysandbox-code" and the template's first extension */
        snprintf(name, sizeof name, ".polysandbox-code%.*s",
                 exts != NULL ? (int)strcspn(exts, " ") : 0, exts ? exts : "");
        base = name;
    }
    rc = sbx_exec_opts_set_source_name(x, base);
    free(copy);
    if (rc != SBX_OK) {
        cli_err("%s: %s: %s", req->cmd, path ? path : "code", sbx_strerror(rc));
        return rc == SBX_E_NOMEM ? CLI_EXIT_ERROR : CLI_EXIT_USAGE;
    }
    return -1;
}

/* FILE [ARGS...]: the language from --lang or the file's extension. */
static int set_file(const cli_req *req, const sbx_ctx *ctx, sbx_exec_opts *x)
{
    const char *path = req->rest[0], *lang = req->lang;
    char *code;
    size_t len;
    int e, rc;

    if (lang == NULL) {
        const sbx_template *t = sbx_ctx_template_for_file(ctx, path);
        if (t == NULL)
            return cli_usage_error(req->cmd,
                                   "cannot tell the language of '%s' from "
                                   "its name; use --lang (templates: %s)",
                                   path, cli_template_list(ctx));
        lang = sbx_template_name(t);
    }
    /* "-": the code itself comes from our stdin, which is then not the
     * program's too */
    if (strcmp(path, "-") == 0 && req->stdin)
        return cli_usage_error(req->cmd, "-i and FILE '-' both want the "
                               "standard input: give the code as a file "
                               "or with -c");
    e = cli_read_file(path, CLI_INPUT_MAX, &code, &len);
    if (e != 0) {
        cli_err("%s: %s: %s", req->cmd, path,
                e == EFBIG ? "file too large" : strerror(e));
        return CLI_EXIT_USAGE;
    }
    rc = sbx_exec_opts_set_code(x, lang, code, len);
    free(code);
    if (rc == SBX_OK && (e = set_source_name(req, ctx, lang, path, x)) >= 0)
        return e;
    if (rc == SBX_OK && req->n_rest > 1)
        rc = sbx_exec_opts_set_args(x, (const char *const *)req->rest + 1);
    if (rc != SBX_OK) {
        cli_err("%s: %s: %s", req->cmd, path, sbx_strerror(rc));
        return CLI_EXIT_ERROR;
    }
    return -1;
}

/* run's words without "--": FILE [ARGS...] when the first is "-", an
 * existing regular file, or a name with a template's extension (so a
 * missing script.py is reported as a missing file); else one word holding
 * a blank or a shell character is a shell line, and anything else is a
 * command and its arguments (as in 'polysandbox run ls -l'). */
enum run_words { RUN_FILE, RUN_SHELL, RUN_COMMAND };

static enum run_words run_words_kind(const cli_req *req, const sbx_ctx *ctx)
{
    const char *w = req->rest[0];
    struct stat st;

    if (strcmp(w, "-") == 0 || req->lang != NULL ||
        (stat(w, &st) == 0 && S_ISREG(st.st_mode)) ||
        sbx_ctx_template_for_file(ctx, w) != NULL)
        return RUN_FILE;
    if (req->n_rest == 1 && strpbrk(w, " \t\n;|&<>()$`'\"\\*?") != NULL)
        return RUN_SHELL;
    return RUN_COMMAND;
}

/* What to run: exactly one of FILE, -c, --shell, -- CMD. */
static int set_program(const cli_req *req, const sbx_ctx *ctx,
                       bool rest_is_file, sbx_exec_opts *x)
{
    int modes = (req->code != NULL) + (req->shell != NULL);
    int rc, e;

    if (req->code == NULL && req->n_rest > 0)
        modes++;
    if (modes == 0)
        return cli_usage_error(req->cmd, "nothing to run: give %s-c CODE, "
                               "--shell LINE or -- COMMAND [ARGS...]",
                               rest_is_file ? "FILE, " : "");
    if (modes > 1)
        return cli_usage_error(req->cmd, "give only one of %s-c, --shell "
                               "and -- COMMAND",
                               rest_is_file ? "FILE, " : "");
    if (req->lang != NULL && req->code == NULL &&
        (req->shell != NULL || req->argv_mode))
        return cli_usage_error(req->cmd, "--lang applies to -c CODE%s only",
                               rest_is_file ? " and FILE" : "");
    if (req->code != NULL) {
        if (req->lang == NULL)
            return cli_usage_error(req->cmd, "-c needs --lang LANG "
                                   "(templates: %s)", cli_template_list(ctx));
        rc = sbx_exec_opts_set_code(x, req->lang, req->code, (size_t)-1);
        if (rc == SBX_OK && (e = set_source_name(req, ctx, req->lang, NULL, x)) >= 0)
            return e;
        if (rc == SBX_OK && req->n_rest > 0)
            rc = sbx_exec_opts_set_args(x, (const char *const *)req->rest);
    } else if (req->shell != NULL) {
        rc = sbx_exec_opts_set_shell(x, req->shell);
    } else if (req->argv_mode) {
        rc = sbx_exec_opts_set_argv(x, (const char *const *)req->rest);
        command = req->rest[0];
    } else if (rest_is_file) {
        switch (run_words_kind(req, ctx)) {
        case RUN_FILE:
            return set_file(req, ctx, x);
        case RUN_SHELL:
            rc = sbx_exec_opts_set_shell(x, req->rest[0]);
            break;
        default:
            rc = sbx_exec_opts_set_argv(x, (const char *const *)req->rest);
            command = req->rest[0];
            break;
        }
    } else {
        return cli_usage_error(req->cmd, "unexpected argument '%s': put the "
                               "command after '--'", req->rest[0]);
    }
    if (rc != SBX_OK) {
        cli_err("%s: %s", req->cmd, sbx_strerror(rc));
        return rc == SBX_E_INVAL ? CLI_EXIT_USAGE : CLI_EXIT_ERROR;
    }
    return -1;
}

int cli_req_exec_opts(const cli_req *req, const sbx_ctx *ctx,
                      bool rest_is_file, sbx_exec_opts *x)
{
    int rc;

    if ((rc = set_program(req, ctx, rest_is_file, x)) >= 0 ||
        (rc = cli_req_add_env(req, x)) >= 0 || (rc = add_files(req, x)) >= 0)
        return rc;
    if (req->cwd != NULL && sbx_exec_opts_set_cwd(x, req->cwd) != SBX_OK) {
        cli_err("%s: --cwd %s: invalid directory", req->cmd, req->cwd);
        return CLI_EXIT_USAGE;
    }
    if (req->timeout_ns != 0 &&
        sbx_exec_opts_set_timeout(x, req->timeout_ns) != SBX_OK) {
        cli_err("%s: --timeout %s: invalid value", req->cmd, req->timeout_text);
        return CLI_EXIT_USAGE;
    }
    if (!req->json &&
        sbx_exec_opts_set_output_cb(x, on_output, NULL) != SBX_OK) {
        cli_err("%s: cannot stream output", req->cmd);
        return CLI_EXIT_ERROR;
    }
    return -1;
}

int cli_exit_status(const sbx_result *r)
{
    int code = sbx_result_exit_code(r), sig = sbx_result_signal(r);

    switch (sbx_result_status(r)) {
    case SBX_RUN_OK:
        return CLI_EXIT_OK;
    case SBX_RUN_NONZERO_EXIT:
        return (code & 0xff) != 0 ? code & 0xff : CLI_EXIT_FAIL;
    case SBX_RUN_SIGNAL:
        return sig > 0 && sig < 128 ? 128 + sig : CLI_EXIT_ERROR;
    case SBX_RUN_SECCOMP:
        return 128 + (sig > 0 && sig < 128 ? sig : SIGSYS);
    case SBX_RUN_TIMEOUT:
    case SBX_RUN_CPU_LIMIT:
        return CLI_EXIT_TIMEOUT;
    case SBX_RUN_MEMORY_LIMIT:
        return CLI_EXIT_MEMORY;
    case SBX_RUN_OUTPUT_LIMIT:
        return CLI_EXIT_OUTPUT;
    case SBX_RUN_COMPILE_ERROR:
        return CLI_EXIT_FAIL;
    case SBX_RUN_NOT_FOUND:
        return CLI_EXIT_NOTFOUND;
    case SBX_RUN_NOT_EXECUTABLE:
        return CLI_EXIT_NOEXEC;
    case SBX_RUN_PIDS_LIMIT:
        /* the program failed on its own terms: keep its status */
        if ((code & 0xff) != 0)
            return code & 0xff;
        return sig > 0 && sig < 128 ? 128 + sig : CLI_EXIT_FAIL;
    case SBX_RUN_SANDBOX_ERROR:
        /* a bad request (a --cwd that is not there) is the caller's */
        return sbx_result_error_code(r) == SBX_E_INVAL ? CLI_EXIT_USAGE : CLI_EXIT_ERROR;
    default:
        return CLI_EXIT_ERROR;
    }
}

/* The provider the run landed on refused its --image (create failed, so
 * nothing ran): the caller's mistake, as when create says so. */
static bool image_refused(const cli_req *req, const sbx_result *r)
{
    return sbx_result_status(r) == SBX_RUN_SANDBOX_ERROR &&
           cli_req_image_refused(req, sbx_result_error_code(r), sbx_result_error(r));
}

/* The one-line note on stderr for a status that is not plain. */
static void note(const cli_req *req, const sbx_result *r)
{
    const char *err = sbx_result_error(r);
    char what[64];
    size_t olen = 0, elen = 0;
    int sig = sbx_result_signal(r);

    switch (sbx_result_status(r)) {
    case SBX_RUN_TIMEOUT:
        if (req->timeout_ns != 0)
            cli_format_duration(req->timeout_ns, what, sizeof what);
        else
            cli_format_duration(sbx_result_timing(r, SBX_TIMING_EXEC), what,
                                sizeof what);
        cli_err("timeout after %s", what);
        break;
    case SBX_RUN_CPU_LIMIT:
        if (req->limits[SBX_LIMIT_CPU] != 0) {
            cli_format_duration(req->limits[SBX_LIMIT_CPU], what, sizeof what);
            cli_err("CPU time limit of %s reached", what);
        } else {
            cli_err("CPU time limit reached");
        }
        break;
    case SBX_RUN_MEMORY_LIMIT:
        if (req->limits[SBX_LIMIT_MEMORY] != 0) {
            cli_format_size(req->limits[SBX_LIMIT_MEMORY], what, sizeof what);
            cli_err("memory limit of %s reached", what);
        } else {
            cli_err("memory limit reached");
        }
        break;
    case SBX_RUN_OUTPUT_LIMIT:
        break; /* the truncation note below says it */
    case SBX_RUN_PIDS_LIMIT:
        cli_err("process limit reached");
        break;
    case SBX_RUN_SIGNAL:
        cli_err("killed by signal %d (%s)", sig,
                sig > 0 ? strsignal(sig) : "unknown");
        break;
    case SBX_RUN_SECCOMP:
        cli_err("killed by the system-call filter");
        break;
    case SBX_RUN_COMPILE_ERROR:
        cli_err("compile error%s%s", err ? ": " : "", err ? err : "");
        break;
    case SBX_RUN_SANDBOX_ERROR:
        if (image_refused(req, r))
            cli_err("%s: --image %s: %s", req->cmd, req->image, err);
        else
            cli_err("sandbox error: %s", err ? err : "unknown error");
        break;
    case SBX_RUN_NOT_FOUND:
        if (command != NULL && (err == NULL || strstr(err, command) == NULL))
            cli_err("command not found: '%s'%s%s", command, err ? ": " : "",
                    err ? err : "");
        else
            cli_err("command not found%s%s", err ? ": " : "", err ? err : "");
        break;
    case SBX_RUN_NOT_EXECUTABLE:
        cli_err("command not executable%s%s", err ? ": " : "",
                err ? err : "");
        break;
    case SBX_RUN_OK:
    case SBX_RUN_NONZERO_EXIT:
    default:
        break;
    }
    sbx_result_stdout(r, &olen);
    sbx_result_stderr(r, &elen);
    if (sbx_result_stdout_truncated(r) || sbx_result_stderr_truncated(r) ||
        sbx_result_status(r) == SBX_RUN_OUTPUT_LIMIT) {
        uint64_t at = req->limits[SBX_LIMIT_STDOUT];
        if (at == 0)
            at = sbx_result_stdout_truncated(r) ? olen : elen;
        cli_format_size(at, what, sizeof what);
        cli_err("output truncated at %s", what);
    }
}

/* Limits the sandbox ran without (allowed by unenforced_limits): said on
 * stderr, whatever the program did, unless -q. */
static void note_unenforced(const sbx_result *r)
{
    uint64_t bits = sbx_result_unenforced_limits(r);
    const char *why = sbx_result_unenforced_reason(r);
    char names[160] = "";
    size_t off = 0;

    if (bits == 0)
        return;
    for (int i = 0; i < 64 && off < sizeof names; i++)
        if ((bits & (UINT64_C(1) << i)) && sbx_unenforced_name(i))
            off += (size_t)snprintf(names + off, sizeof names - off, "%s%s",
                                    !off ? "" : i < 63 && bits >> (i + 1) ? ", " : " and ",
                                    sbx_unenforced_name(i));
    cli_err("note: the sandbox ran without the %s limit%s (not enforced by provider "
            "'%s'; unenforced_limits allows it)%s%s", names, bits & (bits - 1) ? "s" : "",
            sbx_result_provider(r), why ? ": " : "", why ? why : "");
}

int cli_report_result(const cli_req *req, const cli_global *g,
                      const sbx_result *r)
{
    int sig = cli_interrupted();
    bool cancelled = sbx_result_status(r) == SBX_RUN_SANDBOX_ERROR &&
                     sbx_result_error_code(r) == SBX_E_CANCELLED;

    if (!g->quiet)
        note_unenforced(r);
    if (req->json) {
        char *s = sbx_result_to_json(r);
        int e;
        if (s == NULL) {
            cli_err("%s: out of memory building the JSON result", req->cmd);
            return CLI_EXIT_ERROR;
        }
        e = cli_write_all(STDOUT_FILENO, s, strlen(s));
        if (e == 0)
            e = cli_write_all(STDOUT_FILENO, "\n", 1);
        free(s);
        if (e != 0) {
            if (e != EPIPE)
                cli_err("writing standard output: %s", strerror(e));
            return CLI_EXIT_ERROR;
        }
    } else {
        write_unstreamed(r);
        if (output_errno != 0) {
            if (output_errno != EPIPE)
                cli_err("writing output: %s", strerror(output_errno));
            return CLI_EXIT_ERROR;
        }
        /* errors are always told; -q silences notes about the code */
        if (sig != 0 && cancelled)
            cli_err("%s: interrupted by signal %d (%s)", req->cmd, sig, strsignal(sig));
        else if (!g->quiet || sbx_result_status(r) == SBX_RUN_SANDBOX_ERROR)
            note(req, r);
    }
    if (req->artifacts_dir && cli_save_artifacts(req->artifacts_dir, r, g->quiet) != 0)
        return CLI_EXIT_ERROR;
    /* as a shell reports a command a signal ended */
    return sig != 0 ? 128 + sig : image_refused(req, r) ? CLI_EXIT_USAGE : cli_exit_status(r);
}
