/* core/cli/cli.h - shared declarations of the polysandbox command
 *
 * The command uses the public embedding API only (<polysandbox/sandbox.h>).
 * Every function here is internal to the program and prefixed cli_.
 */
#ifndef POLYSANDBOX_CLI_H
#define POLYSANDBOX_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <polysandbox/sandbox.h>

/* ---- exit statuses (see EXIT STATUS in doc/polysandbox.1) ---------------- */

enum {
    CLI_EXIT_OK = 0,
    CLI_EXIT_FAIL = 1,        /* a command's own failure: doctor, destroy */
    CLI_EXIT_USAGE = 2,       /* bad usage of polysandbox itself */
    CLI_EXIT_PATH = 3,        /* files, upload, download: a path escaping the work directory */
    CLI_EXIT_DATA = 65,       /* eval: a bad dataset, samples or results file */
    CLI_EXIT_TIMEOUT = 124,   /* wall-clock or CPU-time limit */
    CLI_EXIT_ERROR = 125,     /* polysandbox, configuration or sandbox error */
    CLI_EXIT_NOEXEC = 126,    /* the command cannot be executed */
    CLI_EXIT_NOTFOUND = 127,  /* the command was not found */
    CLI_EXIT_MEMORY = 137,    /* 128 + SIGKILL: memory limit */
    CLI_EXIT_OUTPUT = 141     /* 128 + SIGPIPE: output limit */
};

/* ---- global options (main.c) ---------------------------------------------- */

typedef struct cli_global {
    const char *config_dir;   /* --config-dir, or NULL */
    const char *provider;     /* --provider, or NULL */
    const char **overrides;   /* -o/--set, NULL-terminated (owned array) */
    size_t n_overrides;
    bool quiet;               /* -q */
    bool pools;               /* start the configured pools (else core.pools=false) */
} cli_global;

/* A command: argv[0] is the command's name; returns the exit status. */
typedef int (*cli_cmd_fn)(cli_global *g, int argc, char **argv);

int cli_cmd_run(cli_global *g, int argc, char **argv);
int cli_cmd_create(cli_global *g, int argc, char **argv);
int cli_cmd_exec(cli_global *g, int argc, char **argv);
int cli_cmd_list(cli_global *g, int argc, char **argv);
int cli_cmd_destroy(cli_global *g, int argc, char **argv);
int cli_cmd_upload(cli_global *g, int argc, char **argv);
int cli_cmd_download(cli_global *g, int argc, char **argv);
int cli_cmd_files(cli_global *g, int argc, char **argv);
int cli_cmd_providers(cli_global *g, int argc, char **argv);
int cli_cmd_templates(cli_global *g, int argc, char **argv);
int cli_cmd_doctor(cli_global *g, int argc, char **argv);
int cli_cmd_secret(cli_global *g, int argc, char **argv);
int cli_cmd_gc(cli_global *g, int argc, char **argv);
int cli_cmd_pools(cli_global *g, int argc, char **argv);
int cli_cmd_eval(cli_global *g, int argc, char **argv);
int cli_cmd_compare(cli_global *g, int argc, char **argv);
int cli_cmd_image(cli_global *g, int argc, char **argv);
/* image build (cmd-image-build.c): argv[0] is "build". */
int cli_image_build(cli_global *g, int argc, char **argv);

/* ---- messages and the context (util.c) -------------------------------------- */

/* "polysandbox: ..." on stderr. */
void cli_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Report a usage error naming the bad word, hint at --help; returns 2. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* getopt_long's own message was printed: add the --help hint; returns 2. */
int cli_bad_option(const char *cmd);
/* For clang's analyser (contrib/analyze.sh), which sees one file at a time:
 * both return CLI_EXIT_USAGE, never a value below 0 that the commands read
 * as "go on". The build never sees this (core/error.h, core_error_set). */
#ifdef __clang_analyzer__
#define cli_usage_error(...) (cli_usage_error(__VA_ARGS__), CLI_EXIT_USAGE)
#define cli_bad_option(cmd) (cli_bad_option(cmd), CLI_EXIT_USAGE)
#endif
/* The exit status of a library error @code: 2 for the caller's mistakes
 * (SBX_E_INVAL, SBX_E_NOT_FOUND, SBX_E_LIMIT: a bad id or --cwd, no such
 * sandbox or language, a limit above its maximum), else 125. */
int cli_exit_for(int code);
/* Report the last library error on @ctx with a prefix; returns
 * cli_exit_for(@code). */
int cli_lib_error(const sbx_ctx *ctx, int code, const char *what);
/* Report a failed file operation of command @cmd on @path in a sandbox
 * (upload, download, files) like cli_lib_error ("CMD: PATH: why");
 * returns 3 for a path leaving the sandbox's work directory (SBX_E_PATH),
 * else cli_exit_for(@code). */
int cli_file_exit(const sbx_ctx *ctx, int code, const char *cmd, const char *path);

/* Build the context from the global options; on failure prints the
 * library's message and returns NULL (the caller exits 125).  Pools are
 * started only when g->pools: a one-shot command would fill them only to
 * destroy them at exit ("-o core.pools=true" still turns them on). */
sbx_ctx *cli_ctx_new(const cli_global *g);
/* Check that @provider (NULL: nothing to check) is known and ready;
 * prints a message naming it and returns false otherwise. */
bool cli_provider_ok(const sbx_ctx *ctx, const char *provider);
/* The same for each of the comma-separated @names (NULL: nothing). */
bool cli_providers_ok(const sbx_ctx *ctx, const char *names);
/* "python, c, ..." of every template (static buffer). */
const char *cli_template_list(const sbx_ctx *ctx);

/* Read all of @fd (binary safe) up to @max bytes. (transfer full) *data is
 * NUL-terminated for convenience.  Returns 0, or an errno value (EFBIG
 * when larger than @max). */
int cli_read_fd(int fd, size_t max, char **data, size_t *len);
/* Read a whole file; "-" is stdin.  Same return as cli_read_fd. */
int cli_read_file(const char *path, size_t max, char **data, size_t *len);
/* Write all of @buf to @fd, retrying on EINTR and short writes; 0 or errno. */
int cli_write_all(int fd, const void *buf, size_t len);
/* Write the file @path whole or not at all: @fill (returning 0 or an
 * errno) writes it to a new file beside @path, which then replaces it
 * (rename), so no reader sees half of it and an existing file is never
 * truncated in place.  A @path that is not a regular file (/dev/null, a
 * pipe) is written as it is.  0 or an errno. */
int cli_write_file(const char *path, int (*fill)(FILE *f, void *ud), void *ud);

/* Split "KEY=VALUE" into a new key and a pointer into @kv for the value.
 * Returns false on an empty key or a missing '='. (transfer full) *key. */
bool cli_split_kv(const char *kv, char **key, const char **value);
/* "a,b" split at its commas into a NULL-terminated vector, in one block
 * (transfer full: free() it); NULL when out of memory. */
char **cli_split_names(const char *s);
/* Whether @s is NAME[,NAME...], with no empty name. */
bool cli_names_ok(const char *s);

/* ---- units (the library's sbx_parse_*, format.c) ------------------------- */

/* The grammar of polysandbox.ini(5), read by the library: "500ms", "10s",
 * "2m", "1h"; a bare number is seconds.  0, negatives, overflow and junk
 * are rejected; *why says why (static, worded to follow the value). */
static inline bool cli_parse_duration(const char *s, uint64_t *ns, const char **why)
{
    return sbx_parse_duration(s, ns, why) == SBX_OK;
}
/* "512", "64K", "512M", "1G", "1T" (powers of 1024; "KiB", "KB" too). */
static inline bool cli_parse_size(const char *s, uint64_t *bytes, const char **why)
{
    return sbx_parse_size(s, bytes, why) == SBX_OK;
}
/* A plain positive count. */
static inline bool cli_parse_count(const char *s, uint64_t *n, const char **why)
{
    return sbx_parse_count(s, n, why) == SBX_OK;
}
/* Human forms for messages: "2s", "1.5s", "500ms"; "1 MiB", "100 bytes". */
void cli_format_duration(uint64_t ns, char *buf, size_t size);
void cli_format_size(uint64_t bytes, char *buf, size_t size);

/* ---- run and exec (exec.c) ---------------------------------------------------- */

/* What run/exec/create parse: one struct so the three share one parser. */
typedef struct cli_req {
    const char *cmd;          /* "run", "exec" or "create" */
    const char *provider;
    const char *fallback;     /* --fallback "a,b", or NULL */
    const char *template_name;
    const char *image;
    const char *lang;
    const char *code;         /* -c */
    const char *shell;        /* -s */
    const char *cwd;
    const char *artifacts_dir; /* --artifacts DIR, or NULL */
    bool json;
    bool stdin;               /* -i: pass our standard input */
    bool persistent;
    bool get_or_create;       /* create --get-or-create */
    bool keep;                /* run --keep: keep the sandbox, print its id */
    bool reuse;               /* run --reuse: the sandbox with the --labels */
    bool deps;                /* run --deps: fetch go.mod's modules first (deps.c) */
    bool network_set;
    sbx_network network;
    uint64_t timeout_ns;      /* 0: not given */
    const char *timeout_text;
    uint64_t ttl_ns;
    uint64_t limits[SBX_LIMIT_COUNT]; /* 0: not given */
    char **env;               /* "K=V" or "K" strings as given (borrowed) */
    size_t n_env;
    char **labels;            /* "K=V" (borrowed) */
    size_t n_labels;
    char **files;             /* "LOCAL[:REMOTE]" (borrowed) */
    size_t n_files;
    char **rest;              /* FILE ARGS... or CMD ARGS... (borrowed) */
    int n_rest;
    bool argv_mode;           /* "--" came before rest */
} cli_req;

/* Which options a command takes (bits). */
enum {
    CLI_OPT_CREATE = 1 << 0,  /* --template --image --label --memory ... */
    CLI_OPT_EXEC = 1 << 1,    /* --lang -c -s -e --cwd --file --json ... */
    CLI_OPT_PERSIST = 1 << 2, /* --persistent --ttl --get-or-create (create) */
    CLI_OPT_RUN = 1 << 3      /* --keep --reuse (run) */
};

/* --artifacts DIR: save @r's artifacts under @dir (created if missing),
 * never overwriting a file; say each one left out, and (unless @quiet)
 * each one saved, on stderr.  0, or -1 when one could not be saved. */
int cli_save_artifacts(const char *dir, const sbx_result *r, bool quiet);

/* Parse the options of run/exec/create into @req.  Returns -1 when they
 * were fine, else the exit status (0 after --help, 2 on bad usage). */
int cli_req_parse(cli_req *req, unsigned which, int argc, char **argv,
                  void (*help)(void));
void cli_req_free(cli_req *req);
/* Fill create options from @req; on failure reports and returns false. */
bool cli_req_create_opts(const cli_req *req, sbx_create_opts *o);
/* cli_lib_error for a create (or run) of @req: an --image the provider
 * cannot run is the caller's mistake, named as the option (exit 2). */
int cli_req_create_error(const cli_req *req, const sbx_ctx *ctx, int code, const char *what);
/* Whether error @code with message @msg (NULL: none) is the refusal of
 * @req's --image: not pulled, malformed, or one the provider cannot run. */
bool cli_req_image_refused(const cli_req *req, int code, const char *msg);
/* Build exec options (code/argv/shell, env, cwd, files, timeout,
 * streaming; stdin is cli_req_stdin's).  @rest_is_file: rest[0] is a FILE to run (run only).
 * Returns -1 when built, else the exit status to return. */
int cli_req_exec_opts(const cli_req *req, const sbx_ctx *ctx,
                      bool rest_is_file, sbx_exec_opts *x);
/* --env of @req into @x.  Returns -1 when set, else the exit status. */
int cli_req_add_env(const cli_req *req, sbx_exec_opts *x);
/* run --deps (deps.c): FILE's go.mod modules fetched in its sandbox
 * (where its template allows egress), then FILE built and run there.
 * @xo is FILE's exec (cli_req_exec_opts).  Returns the exit status. */
int cli_run_deps(const cli_req *req, const cli_global *g, sbx_ctx *ctx,
                 sbx_create_opts *co, sbx_exec_opts *xo);
/* -i: our stdin into @x, streamed as the command runs when @provider
 * (NULL: unknown) has the stdin_stream capability, else read whole.
 * Returns -1 when set, else the exit status to return. */
int cli_req_stdin(const cli_req *req, const sbx_ctx *ctx, const char *provider,
                  sbx_exec_opts *x);
/* True when the exec just refused (@code) was refused because the
 * provider it landed on (a fallback) cannot stream the stdin that
 * cli_req_stdin set: nothing was read; set it again with NULL and retry. */
bool cli_stdin_refused(const sbx_ctx *ctx, int code);
/* Print the result (JSON or notes) and map it to an exit status. */
int cli_report_result(const cli_req *req, const cli_global *g,
                      const sbx_result *r);
/* SIGINT/SIGTERM/SIGHUP from now on fire a cancel handle set on @x (the
 * first one; a second kills); call just before the run or exec, and
 * cli_interrupt_end after it.  Returns -1, else the exit status. */
int cli_interrupt_begin(sbx_exec_opts *x);
/* SIGINT, SIGTERM and SIGHUP from now on call @fn once (a second one
 * kills), but one ignored at start stays ignored (a background job's
 * SIGINT, SIGHUP under nohup); cli_interrupt_end restores them.  0, or
 * -1 having said why. */
int cli_interrupt_catch(void (*fn)(int));
/* The signal that interrupted the run or exec, or 0. */
int cli_interrupted(void);
/* Restore the signals' handling; free the handle. */
void cli_interrupt_end(void);
/* The exit status for a result (the table in the man page). */
int cli_exit_status(const sbx_result *r);
/* True when writing streamed output to our stdout/stderr failed. */
bool cli_output_failed(void);

/* ---- sandboxes by id (locate.c) ----------------------------------------------- */

/* Open the sandbox @id for command @cmd on @provider; NULL: the one ready
 * provider that lists @id (an id found on none or on several is an error
 * naming it).  Returns -1 with *out set (transfer full), else the exit
 * status after a message: 2 for an unknown or ambiguous id, 125 else. */
int cli_sandbox_open(sbx_ctx *ctx, const char *cmd, const char *provider,
                     const char *id, sbx_sandbox **out);
/* The context of @g in *@ctx (transfer full, free it whatever the
 * outcome) and the sandbox @id in it as cli_sandbox_open finds it; NULL
 * with *@exit set after a message. */
sbx_sandbox *cli_sandbox_open_by_id(const cli_global *g, sbx_ctx **ctx, const char *cmd,
                                    const char *provider, const char *id, int *exit);

/* ---- JSON output (util.c) ------------------------------------------------------ */

struct json_t;
/* Print @j (decref'd) on stdout followed by a newline; returns 0 or 125. */
int cli_print_json(struct json_t *j);

/* ---- providers, templates, pools as JSON (info-json.c) ---------------------- */

/* "ready", "unavailable", "disabled" (static). */
const char *cli_state_name(sbx_provider_state s);
/* Capability names of @mask, comma-separated into @buf ("-" for none), or
 * appended to the JSON array @arr when it is not NULL. */
void cli_caps(uint64_t mask, char *buf, size_t size, struct json_t *arr);
/* One object each (new reference), NULL on ENOMEM.  @v: the pool's
 * sbx_pool_stats, @err its last error ("" for none). */
struct json_t *cli_provider_json(const sbx_provider *p);
struct json_t *cli_template_json(const sbx_template *t);
struct json_t *cli_pool_json(sbx_ctx *ctx, const char *name, const uint64_t *v,
                             const char *err);

/* Help lines of the sandbox and limit options (request.c). */
extern const char cli_help_sandbox[];
extern const char cli_help_limits[];

#endif /* POLYSANDBOX_CLI_H */
