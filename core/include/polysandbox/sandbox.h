/* polysandbox/sandbox.h - the embedding API of libpolysandbox
 *
 * Run code in any sandbox backend through one API:
 *
 *     sbx_ctx *ctx;
 *     sbx_result *r;
 *     if (sbx_ctx_new(&ctx, NULL) != SBX_OK) ...;
 *     sbx_exec_opts *x = sbx_exec_opts_new();
 *     sbx_exec_opts_set_code(x, "python", "print(6*7)", (size_t)-1);
 *     if (sbx_run(ctx, NULL, x, &r) == SBX_OK)
 *         fwrite(sbx_result_stdout(r, &n), 1, n, stdout);
 *
 * Every type is opaque.  Every fallible function returns an sbx_status and,
 * on failure, records the detail in the calling thread's error object for
 * that context (sbx_ctx_last_error).  One context may be used from many
 * threads at once; one sandbox handle from one thread at a time.
 *
 * Since: 0.1
 */
#ifndef POLYSANDBOX_SANDBOX_H
#define POLYSANDBOX_SANDBOX_H

#include <polysandbox/common.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define SBX_API __attribute__((visibility("default")))
#else
#define SBX_API
#endif

typedef struct sbx_ctx sbx_ctx;
typedef struct sbx_provider sbx_provider;
typedef struct sbx_template sbx_template;
typedef struct sbx_sandbox sbx_sandbox;
typedef struct sbx_create_opts sbx_create_opts;
typedef struct sbx_exec_opts sbx_exec_opts;
typedef struct sbx_result sbx_result;
typedef struct sbx_error sbx_error;
typedef struct sbx_cancel sbx_cancel;

/* ---- library ---------------------------------------------------------- */

/** sbx_version: the library's version string, e.g. "0.1.0".  Since: 0.1 */
SBX_API const char *sbx_version(void);

/** sbx_strerror: static text for an sbx_status.  Since: 0.1 */
SBX_API const char *sbx_strerror(int code);

/** sbx_error_known: whether an SBX_OK or SBX_E_* constant of this
 * library names @code (sbx_strerror gives "unknown error" for the rest).
 * Since: 0.3 */
SBX_API bool sbx_error_known(int code);

/**
 * sbx_path_check: whether @path is a file path the library accepts inside
 * a sandbox's work directory, the rule every provider's upload and
 * download apply: relative, shorter than SBX_PATH_MAX bytes, at most
 * SBX_PATH_DEPTH_MAX parts, no empty, "." or ".." part, no control
 * character.  Use it to check a name that comes from a sandbox before
 * making it a path on the host.
 * Returns SBX_OK, or SBX_E_PATH with the reason, naming @path (control
 * characters escaped), written to @msg (@size bytes; @msg may be NULL
 * when @size is 0).  Since: 0.3
 */
SBX_API int sbx_path_check(const char *path, char *msg, size_t size);

/** sbx_run_status_name: "ok", "nonzero_exit", ... (static).  Since: 0.1 */
SBX_API const char *sbx_run_status_name(sbx_run_status s);

/* ---- context ---------------------------------------------------------- */

/**
 * sbx_ctx_new:
 * @out: (out) (transfer full): the new context, free with sbx_ctx_free
 * @config_dir: directory holding polysandbox.ini, providers.d/ and
 *   templates.d/; NULL means $POLYSANDBOX_CONFIG_DIR if set, else the
 *   system directory (then $XDG_CONFIG_HOME/polysandbox on top).
 *
 * Reads the configuration and finds the providers (the provider path and
 * providers.d/), but opens no provider module: each enabled provider is
 * loaded and initialised the first time it is needed (a create or run
 * that selects it or falls back to it, sbx_provider_health, doctor, gc,
 * a pool, or a call below that reports what only loading tells: state,
 * reason, version, description, capabilities).  A provider that fails to
 * load is kept as unavailable with its reason, reported the same way every
 * time; that is never an error of sbx_ctx_new.
 * Errors: SBX_E_CONFIG (the message names
 * file:line), SBX_E_NOMEM.  On error *out is still set when possible so
 * sbx_ctx_last_error() can be read; free it.
 *
 * Since: 0.1
 */
SBX_API int sbx_ctx_new(sbx_ctx **out, const char *config_dir);

/**
 * sbx_ctx_new_with:
 * @overrides: NULL-terminated "section.key=value" strings applied on top
 *   of every file and the environment (command-line flags), e.g.
 *   "core.default_provider=local", "limits.memory=1G".
 *
 * As sbx_ctx_new.  Since: 0.1
 */
SBX_API int sbx_ctx_new_with(sbx_ctx **out, const char *config_dir,
                             const char *const *overrides);

/** sbx_ctx_free: destroy the sandboxes whose destroy failed earlier (see
 * sbx_sandbox_destroy; a warning is logged for each that still fails),
 * fini every provider that was initialised, free everything.  NULL is
 * fine. */
SBX_API void sbx_ctx_free(sbx_ctx *ctx);

/**
 * sbx_ctx_last_error:
 *
 * The calling thread's last error on @ctx (transfer none), valid until the
 * next call on @ctx from this thread.  Never NULL; its code is SBX_OK when
 * the last call succeeded.  Since: 0.1
 */
SBX_API const sbx_error *sbx_ctx_last_error(const sbx_ctx *ctx);
SBX_API int sbx_error_code(const sbx_error *e);
/** The message: names what was wrong and where.  Never contains secrets. */
SBX_API const char *sbx_error_message(const sbx_error *e);
/** The provider the error came from, or NULL. */
SBX_API const char *sbx_error_provider(const sbx_error *e);

/* ---- providers -------------------------------------------------------- */

/** Provider states.  Since: 0.1 */
typedef enum sbx_provider_state {
    SBX_PROVIDER_READY = 0,       /* loaded and initialised */
    SBX_PROVIDER_UNAVAILABLE = 1, /* enabled, but failed: see reason */
    SBX_PROVIDER_DISABLED = 2     /* found, but not enabled */
} sbx_provider_state;

/** Number of providers found (ready, unavailable or disabled).  An
 * optional provider that fails to load is not counted, so this loads the
 * enabled optional ones; the others are not loaded by counting. */
SBX_API size_t sbx_ctx_provider_count(const sbx_ctx *ctx);
/** The @i-th provider (transfer none), by priority, or NULL. */
SBX_API const sbx_provider *sbx_ctx_provider(const sbx_ctx *ctx, size_t i);
/** The provider called @name (transfer none), or NULL (loads it only when
 * it is optional: NULL then means it failed). */
SBX_API const sbx_provider *sbx_ctx_find_provider(const sbx_ctx *ctx,
                                                  const char *name);
SBX_API const char *sbx_provider_name(const sbx_provider *p);
SBX_API const char *sbx_provider_version(const sbx_provider *p);
SBX_API const char *sbx_provider_description(const sbx_provider *p);
SBX_API const char *sbx_provider_path(const sbx_provider *p);
/** The providers.d ini file that configures @p (the last one read when a
 * user's directory overrides the system's), or NULL when none does.
 * Valid while the context lives.  Since: 0.2 */
SBX_API const char *sbx_provider_config_file(const sbx_provider *p);
/**
 * sbx_ctx_provider_price:
 * @name: a provider's name, as in providers.d/NAME.ini
 * @per_second: (out) (optional): the price of a second of a sandbox
 * @per_sandbox: (out) (optional): the price of each sandbox
 * @currency: (out) (optional) (transfer none): its currency ("USD" when
 *   the file names none), valid while the context lives
 *
 * What @name's sandboxes cost, as its [provider] price_per_second,
 * price_per_sandbox and currency say.  False, with nothing set, when its
 * file sets no price, or there is no such provider (never loads it).
 * Since: 0.3
 */
SBX_API bool sbx_ctx_provider_price(const sbx_ctx *ctx, const char *name, double *per_second,
                                    double *per_sandbox, const char **currency);
/** The configuration directories @ctx read (NULL-terminated, transfer
 * none, valid while the context lives), in order: a providers.d/NAME.ini
 * of a later one replaces an earlier one's.  Since: 0.2 */
SBX_API const char *const *sbx_ctx_config_dirs(const sbx_ctx *ctx);
/** The keys of @p's [settings] that hold credentials, as its module
 * declares them (NULL-terminated, possibly empty; transfer none, valid
 * while the context lives), or NULL when its module cannot be read.  For
 * a provider that is not ready the module is opened and validated to read
 * them, then closed again: it is never initialised.  Since: 0.2 */
SBX_API const char *const *sbx_provider_credential_keys(const sbx_provider *p);
/** Loads @p first if it was not loaded yet (thread-safe, once per
 * context); so do reason, reason_code, version, description and
 * capabilities.  Name, path and priority need no loading. */
SBX_API sbx_provider_state sbx_provider_get_state(const sbx_provider *p);
/** Why an unavailable provider is unavailable, else NULL. */
SBX_API const char *sbx_provider_reason(const sbx_provider *p);
/** The sbx_status of the failure of an unavailable provider, else 0. */
SBX_API int sbx_provider_reason_code(const sbx_provider *p);
SBX_API uint64_t sbx_provider_capabilities(const sbx_provider *p);
SBX_API int sbx_provider_priority(const sbx_provider *p);
/** Name of one SBX_CAP_* bit ("files", "persistent", ...), or NULL. */
SBX_API const char *sbx_capability_name(uint64_t bit);

/**
 * sbx_provider_doctor:
 * Calls @cb once per host check of a ready provider; a passed check
 * whose @detail holds "advice:" advises a change to the host.
 * SBX_E_NOTSUP if the provider has no checks.  Since: 0.1
 */
typedef void (*sbx_doctor_cb)(void *ud, const char *check, bool ok,
                              const char *detail);
SBX_API int sbx_provider_doctor(sbx_ctx *ctx, const char *provider,
                                sbx_doctor_cb cb, void *ud);

/** The name of the provider used when a request names none, or NULL:
 * [core] default_provider, else the first provider in order that loads
 * (those after it are not loaded). */
SBX_API const char *sbx_ctx_default_provider(const sbx_ctx *ctx);

/**
 * sbx_setting_cb:
 * One KEY = VALUE of an application section; @where says where it was
 * set ("FILE:LINE", "command line").  All (transfer none), valid during
 * the call.  Return non-zero to stop the walk.
 */
typedef int (*sbx_setting_cb)(void *ud, const char *key, const char *value,
                              const char *where);
/**
 * sbx_ctx_settings:
 * @section: an application section: "server" (polysandboxd's)
 *
 * polysandbox.ini keeps some sections for the programs built on the
 * library rather than for the library itself.  Their keys are read with
 * the rest of the configuration (the same files in the same order, then
 * "SECTION.KEY=VALUE" overrides of sbx_ctx_new_with), the last value of
 * each key winning, and checked by nobody but the program: this calls
 * @cb once per key set, in the order the keys were first set, so that
 * the program can check them and name where a bad one came from.
 * Returns SBX_OK, the first non-zero return of @cb, or SBX_E_NOT_FOUND
 * when @section is not an application section.  Since: 0.2
 */
SBX_API int sbx_ctx_settings(const sbx_ctx *ctx, const char *section, sbx_setting_cb cb,
                             void *ud);

/** True when the provider's ini says optional = true.  Since: 0.1 */
SBX_API bool sbx_provider_is_optional(const sbx_provider *p);

/**
 * sbx_breaker_state:
 *
 * A provider's circuit breaker.  Closed: creates go to it.  Open: after
 * [breaker] failures consecutive failed creates, creates skip it (next in
 * the fallback chain) for [breaker] open_time.  Half-open: then [breaker]
 * trials creates may try it; a success closes it, a failure opens it again.
 * The state lives in the context (per process).  Since: 0.1
 */
typedef enum sbx_breaker_state {
    SBX_BREAKER_CLOSED = 0,
    SBX_BREAKER_OPEN = 1,
    SBX_BREAKER_HALF_OPEN = 2
} sbx_breaker_state;

/** The breaker of @p (closed for a provider that is not ready).  An open
 * breaker whose open_time has passed reads as half-open.  Since: 0.1 */
SBX_API sbx_breaker_state sbx_provider_breaker(const sbx_provider *p);
/** Consecutive failed creates the breaker of @p has counted.  Since: 0.1 */
SBX_API unsigned sbx_provider_breaker_failures(const sbx_provider *p);
/** "closed", "open", "half-open" (static).  Since: 0.1 */
SBX_API const char *sbx_breaker_state_name(sbx_breaker_state s);

/**
 * sbx_provider_health:
 * @provider: a provider name (NULL: the default provider)
 * @latency_ns: (out) (optional): how long the probe took
 *
 * Probes a ready provider once, without retries: its health op; else, for
 * a provider without one, list when it has it.  A provider with neither is
 * probed by creating and destroying a sandbox with the default limits,
 * through the normal create path (retries and breaker included).  SBX_OK when
 * healthy; else the probe's error (message names the provider), or
 * SBX_E_NOT_FOUND / SBX_E_PROVIDER_UNAVAILABLE for a provider that is
 * unknown or not ready.  Since: 0.1
 */
SBX_API int sbx_provider_health(sbx_ctx *ctx, const char *provider,
                                uint64_t *latency_ns);

/* ---- templates (languages) -------------------------------------------- */

SBX_API size_t sbx_ctx_template_count(const sbx_ctx *ctx);
SBX_API const sbx_template *sbx_ctx_template(const sbx_ctx *ctx, size_t i);
SBX_API const sbx_template *sbx_ctx_find_template(const sbx_ctx *ctx,
                                                  const char *name);
/** The template whose extensions match @filename's, or NULL. */
SBX_API const sbx_template *sbx_ctx_template_for_file(const sbx_ctx *ctx,
                                                      const char *filename);
SBX_API const char *sbx_template_name(const sbx_template *t);
/** Space-separated extensions, e.g. ".py". */
SBX_API const char *sbx_template_extensions(const sbx_template *t);
/** sbx_template_compiled: true when @t has a compile step (its source is
 * compiled before each run, see sbx_result_compile).  Since: 0.2 */
SBX_API bool sbx_template_compiled(const sbx_template *t);
/** sbx_template_artifacts: the directory, relative to the work
 * directory, whose files come back with each run of code with @t
 * (sbx_result_artifact), or NULL when it declares none (transfer none,
 * valid while the context is).  Since: 0.3 */
SBX_API const char *sbx_template_artifacts(const sbx_template *t);
/** sbx_template_egress: true when @t says `network = egress`: its
 * sandboxes may open outbound connections (SBX_NET_EGRESS), through a
 * provider that can give them (SBX_CAP_EGRESS); false for `none`, the
 * default.  A request may narrow it, never widen it.  Since: 0.3 */
SBX_API bool sbx_template_egress(const sbx_template *t);
/**
 * sbx_template_usable:
 * @provider: the name of a provider of @ctx
 * @why: (out caller-allocates) (optional): @why_size bytes for why not,
 *   or, when usable, what it runs ("runs the host's g++", "runs image
 *   gcc:12 (not checked before a run)")
 *
 * Whether @t can run on @provider: false when the provider is unknown,
 * disabled or unavailable (its reason), or when it runs on the host's
 * own system directories (as the local provider does) and the
 * template's compiler or interpreter is not on the host.  There, a
 * template naming an image for it (image.local = NAME) is usable when
 * that image is pulled (sbx_image_root), since 0.3.  Other providers'
 * images are not looked for (a provider finds or pulls it when a sandbox
 * starts).  May load @provider.  Since: 0.2
 */
SBX_API bool sbx_template_usable(const sbx_ctx *ctx, const sbx_template *t,
                                 const char *provider, char *why, size_t why_size);
/**
 * sbx_template_cache_stale:
 * @why: (out caller-allocates) (optional): @why_size bytes for what is
 *   stale and the command that rebuilds it
 *
 * Whether @t's build cache was built by another toolchain than the
 * host's: the go template's GOENV names the go env file of a cache that
 * contrib/go-cache-warm.sh built and stamped (version, beside it) with
 * the go that built it, and the host's `go env GOVERSION` differs.  A
 * sandbox on a provider that runs the host's own go then leaves the
 * cache aside (GOENV=off: it builds cold, as without one) rather than
 * miss every entry of a read-only cache.  False without such a cache,
 * stamp or host go.  Runs the host's go once per process.  Since: 0.3
 */
SBX_API bool sbx_template_cache_stale(const sbx_template *t, char *why, size_t why_size);
/** sbx_template_source: the file name @t's code is written to in the
 * sandbox ("main.py"), which its compile and run words name (transfer
 * none, valid while the context is); NULL for NULL.  Since: 0.3 */
SBX_API const char *sbx_template_source(const sbx_template *t);
/** sbx_template_run: the words that run @t's program (after its compile
 * step, if any), NULL-terminated, as templates.d/NAME.ini's `run =`
 * (transfer none, valid while the context is); NULL for NULL.  Since: 0.3 */
SBX_API const char *const *sbx_template_run(const sbx_template *t);
/** sbx_template_env_count: how many variables @t's [env] section sets
 * (0 for NULL).  Since: 0.3 */
SBX_API size_t sbx_template_env_count(const sbx_template *t);
/** sbx_template_env: the @i th variable of @t's [env] section into *@key
 * and *@value (transfer none, valid while the context is).  False, with
 * neither set, when @i is out of range or @t is NULL.  Since: 0.3 */
SBX_API bool sbx_template_env(const sbx_template *t, size_t i, const char **key,
                              const char **value);

/* ---- limits ----------------------------------------------------------- */

/** Limits a request may set.  Since: 0.1 */
typedef enum sbx_limit {
    SBX_LIMIT_WALL = 0,     /* nanoseconds */
    SBX_LIMIT_CPU = 1,      /* nanoseconds */
    SBX_LIMIT_MEMORY = 2,   /* bytes */
    SBX_LIMIT_PIDS = 3,
    SBX_LIMIT_NOFILE = 4,
    SBX_LIMIT_FSIZE = 5,    /* bytes */
    SBX_LIMIT_DISK = 6,     /* bytes of writable work area */
    SBX_LIMIT_STDOUT = 7,   /* bytes */
    SBX_LIMIT_STDERR = 8    /* bytes */
} sbx_limit;
#define SBX_LIMIT_COUNT 9

/** sbx_limit_name: "wall", "cpu", "memory", ... as in [limits] of
 * polysandbox.ini (static), or NULL.  Since: 0.2 */
SBX_API const char *sbx_limit_name(sbx_limit which);
/** sbx_unenforced_name: the name of bit @bit (0..63) of a set of limits
 * a sandbox runs without (sbx_result_unenforced_limits): a limit's
 * name as sbx_limit_name, "network" for SBX_LIMIT_BIT_NETWORK, NULL for
 * a bit that names nothing.  Since: 0.2 */
SBX_API const char *sbx_unenforced_name(int bit);
/** sbx_ctx_limit: the default of limit @which in @ctx, from [limits] of
 * polysandbox.ini (or its built-in default, or POLYSANDBOX_TIMEOUT and
 * POLYSANDBOX_MEMORY): what a sandbox gets when its request sets none.
 * 0 for a NULL @ctx or an unknown limit.  Since: 0.3 */
SBX_API uint64_t sbx_ctx_limit(const sbx_ctx *ctx, sbx_limit which);
/** sbx_ctx_limit_max: the most a request may ask of limit @which in
 * @ctx ([limits] max_NAME), 0 when there is no such cap (or for a NULL
 * @ctx or an unknown limit).  Since: 0.3 */
SBX_API uint64_t sbx_ctx_limit_max(const sbx_ctx *ctx, sbx_limit which);

/* ---- create options --------------------------------------------------- */

/** (transfer full): free with sbx_create_opts_free.  NULL on ENOMEM. */
SBX_API sbx_create_opts *sbx_create_opts_new(void);
SBX_API void sbx_create_opts_free(sbx_create_opts *o);
/** NULL: the default provider and the fallback chain. */
SBX_API int sbx_create_opts_set_provider(sbx_create_opts *o, const char *name);
/**
 * sbx_create_opts_set_fallback:
 * @names: (transfer none) NULL-terminated provider names, copied; NULL
 *   goes back to the configuration's chain.
 *
 * The providers a create goes on to, in order, when the first one (the
 * provider set, else the default one) fails with a backend error: this
 * list instead of [core] fallback, also after a provider that was set
 * (which otherwise has no fallback).  An empty list means no fallback.
 * Names are checked when the create runs (SBX_E_NOT_FOUND then skips
 * to the next).  Errors: SBX_E_INVAL (an empty name), SBX_E_NOMEM.
 * Since: 0.2
 */
SBX_API int sbx_create_opts_set_fallback(sbx_create_opts *o, const char *const *names);
SBX_API int sbx_create_opts_set_template(sbx_create_opts *o, const char *name);
/**
 * sbx_create_opts_set_image:
 * @image: (transfer none) copied; NULL: the template's, else the
 *   provider's default.
 *
 * The image of the sandbox: on a provider on the host's root (local) a
 * pulled image's name or a root directory, else the provider's own
 * image name.  It wins over the template's image keys.  A provider that
 * cannot run it (microvm, cloudflare and volcengine run no images, e2b
 * only template ids) refuses the create with SBX_E_NOTSUP, the error
 * naming the provider and the image, where it ignores a template's
 * plain image.  Errors: SBX_E_INVAL (NULL @o), SBX_E_NOMEM.  Since: 0.1
 */
SBX_API int sbx_create_opts_set_image(sbx_create_opts *o, const char *image);
/** A value of 0 is rejected (SBX_E_INVAL): 0 never means unlimited. */
SBX_API int sbx_create_opts_set_limit(sbx_create_opts *o, sbx_limit which,
                                      uint64_t value);
/**
 * sbx_create_opts_set_network:
 *
 * The sandbox's network policy.  Unset, it is its template's (none, or
 * egress for a template with `network = egress`).  SBX_NET_NONE narrows
 * an egress template; SBX_NET_EGRESS of a template without egress (or
 * of no template) is refused by the create (SBX_E_PERM: a request never
 * widens its template), as is egress on a provider that cannot give it
 * (SBX_E_NOTSUP, no SBX_CAP_EGRESS).  SBX_NET_HOST is the administrator's
 * opt-in of each provider, as before.  Errors: SBX_E_INVAL (an unknown
 * policy).  Since: 0.1; SBX_NET_EGRESS since 0.3
 */
SBX_API int sbx_create_opts_set_network(sbx_create_opts *o, sbx_network net);
SBX_API int sbx_create_opts_set_persistent(sbx_create_opts *o, bool on);
SBX_API int sbx_create_opts_add_env(sbx_create_opts *o, const char *key,
                                    const char *value);
SBX_API int sbx_create_opts_add_label(sbx_create_opts *o, const char *key,
                                      const char *value);
SBX_API int sbx_create_opts_set_ttl(sbx_create_opts *o, uint64_t ttl_ns);

/* ---- exec options ----------------------------------------------------- */

/**
 * sbx_output_cb:
 * Called with each chunk of output as it arrives (from the thread that
 * called exec).  Return 0 to go on, non-zero to stop the command.
 */
typedef int (*sbx_output_cb)(void *ud, int stream, const void *buf, size_t len);

SBX_API sbx_exec_opts *sbx_exec_opts_new(void);
SBX_API void sbx_exec_opts_free(sbx_exec_opts *o);
/** Run @argv (NULL-terminated, copied) directly; argv[0] looked up in PATH. */
SBX_API int sbx_exec_opts_set_argv(sbx_exec_opts *o, const char *const *argv);
/** Run @line with /bin/sh -c. */
SBX_API int sbx_exec_opts_set_shell(sbx_exec_opts *o, const char *line);
/**
 * sbx_exec_opts_set_code:
 * Run source code with the template @lang (compiled first if the template
 * says so).  @len (size_t)-1 means strlen.  The code is copied.
 */
SBX_API int sbx_exec_opts_set_code(sbx_exec_opts *o, const char *lang,
                                   const char *code, size_t len);
/**
 * sbx_exec_opts_set_source_name:
 * The file name the code of set_code is written under in the sandbox's
 * working directory (copied), instead of the template's source (main.py):
 * a script keeps its own name in tracebacks, a snippet takes a private one
 * that leaves the user's files alone.  The template's compile and run
 * words naming the source (main.py), its stem (main) or ./stem follow the
 * name, with the new name's extension cut as the stem; a template that
 * names its source any other way, or a @name without the source's
 * extension, keeps the template's name.  Errors: SBX_E_INVAL (empty, a
 * leading '-', a '/', "." or "..", over 255 bytes).  Since: 0.2
 */
SBX_API int sbx_exec_opts_set_source_name(sbx_exec_opts *o, const char *name);
/** Extra arguments given to the program run by set_code (copied). */
SBX_API int sbx_exec_opts_set_args(sbx_exec_opts *o, const char *const *args);
SBX_API int sbx_exec_opts_set_stdin(sbx_exec_opts *o, const void *data, size_t len);
/**
 * sbx_exec_opts_set_stdin_fd:
 * @fd: (transfer none) a file descriptor to read the command's stdin
 *   from while it runs, or -1 for none; it must stay open until the exec
 *   returns, and the library never closes it
 *
 * Streams stdin: every byte that can be read from @fd reaches the
 * command's stdin as soon as the command takes it, and end of file on
 * @fd (the writer closing a pipe) closes the command's stdin.  For an
 * interactive program fed by another thread (polysandboxd's WebSocket
 * exec).  Replaces the bytes of sbx_exec_opts_set_stdin (which replaces
 * this in turn).  A template's compile step gets no stdin.  An exec on a
 * provider without the "stdin_stream" capability (SBX_CAP_STDIN_STREAM:
 * local, docker, kubernetes) is refused with SBX_E_NOTSUP, never run
 * without its input; a run that failed part way is not tried again (its
 * input was read).  Errors: SBX_E_INVAL (@fd below -1).  Since: 0.2
 */
SBX_API int sbx_exec_opts_set_stdin_fd(sbx_exec_opts *o, int fd);
/**
 * sbx_exec_opts_set_signal_fd:
 * @fd: (transfer none) a file descriptor of signals for the command while
 *   it runs, or -1 for none; it must stay open until the exec returns, and
 *   the library never closes it
 *
 * Each byte that can be read from @fd is a signal number, delivered to
 * the running command's process group: SIGHUP, SIGINT, SIGQUIT, SIGUSR1,
 * SIGUSR2, SIGTERM, SIGALRM or SIGWINCH (any other byte is ignored: check
 * what you write; to kill, use sbx_cancel).  A signal written before the
 * command started reaches it once it runs.  For an interactive client fed
 * by another thread (Piston's /api/v2/connect in polysandboxd).  A
 * template's compile step gets none.  An exec on a provider without the
 * "signal" capability (SBX_CAP_SIGNAL: local, docker, kubernetes) is
 * refused with SBX_E_NOTSUP, never run without its signals; a run that failed part way
 * is not tried again.  Errors: SBX_E_INVAL (@fd below -1).  Since: 0.3
 */
SBX_API int sbx_exec_opts_set_signal_fd(sbx_exec_opts *o, int fd);
SBX_API int sbx_exec_opts_add_env(sbx_exec_opts *o, const char *key,
                                  const char *value);
SBX_API int sbx_exec_opts_set_cwd(sbx_exec_opts *o, const char *cwd);
/** Wall clock of this exec; 0 is rejected. */
SBX_API int sbx_exec_opts_set_timeout(sbx_exec_opts *o, uint64_t ns);
/**
 * sbx_exec_opts_set_compile_timeout:
 * Wall clock of the compile step of a template that has one (code run
 * with sbx_exec_opts_set_code); by default it is the exec's timeout.  0
 * is rejected (SBX_E_INVAL); above [limits] max_wall the exec is refused
 * with SBX_E_LIMIT, as its timeout is.  Since: 0.2
 */
SBX_API int sbx_exec_opts_set_compile_timeout(sbx_exec_opts *o, uint64_t ns);
/**
 * sbx_step_cb:
 * @compile_ns: how long the compile step ran
 *
 * Called from the exec's thread when a template's compile step has
 * succeeded and its program is about to start, so that a caller who
 * streams output (sbx_output_cb) can tell the compiler's from the
 * program's.  Not called for a template without a compile step, nor when
 * the compile step fails (the exec then ends).  Since: 0.2
 */
typedef void (*sbx_step_cb)(void *ud, uint64_t compile_ns);
/** sbx_exec_opts_set_step_cb: NULL for none.  Since: 0.2 */
SBX_API int sbx_exec_opts_set_step_cb(sbx_exec_opts *o, sbx_step_cb cb, void *ud);
SBX_API int sbx_exec_opts_add_file(sbx_exec_opts *o, const char *path,
                                   const void *data, size_t len, uint32_t mode);
SBX_API int sbx_exec_opts_set_output_cb(sbx_exec_opts *o, sbx_output_cb cb,
                                        void *ud);
/**
 * sbx_exec_opts_set_cancel:
 * @c: (transfer none) a handle of sbx_cancel_new, or NULL for none; it
 *   must outlive every call that uses these options
 *
 * Lets another thread stop the run or exec made with these options by
 * firing @c.  A run not yet started is not started; a sandbox being
 * created is destroyed as soon as it exists; a command running is killed
 * with every process it started (within a second or so) where the
 * provider has the "cancel" capability (SBX_CAP_CANCEL: local, docker,
 * kubernetes).
 * A provider without it stops the command at its next output, else runs
 * it to its time limit.  sbx_run then destroys the sandbox as always.
 * The result of a cancelled run or exec has status SBX_RUN_SANDBOX_ERROR
 * with error code SBX_E_CANCELLED (never a verdict on the code) and the
 * output collected until then; the call still returns SBX_OK.
 * Since: 0.2
 */
SBX_API int sbx_exec_opts_set_cancel(sbx_exec_opts *o, sbx_cancel *c);

/* ---- cancellation ---------------------------------------------------------- */

/**
 * sbx_cancel_new:
 * A cancellation handle for sbx_exec_opts_set_cancel (transfer full: free
 * with sbx_cancel_free once no call uses it), not fired.  NULL on failure
 * (sbx_ctx_last_error(NULL) says why).  One handle may serve many calls:
 * firing it stops them all.  Since: 0.2
 */
SBX_API sbx_cancel *sbx_cancel_new(void);
/**
 * sbx_cancel_fire:
 * Fire @c: every run and exec using it stops (see
 * sbx_exec_opts_set_cancel).  Safe from any thread and from a signal
 * handler; firing twice is firing once; a fired handle stays fired.
 * NULL is fine.  Since: 0.2
 */
SBX_API void sbx_cancel_fire(sbx_cancel *c);
/** sbx_cancel_fired: true once @c was fired.  Since: 0.2 */
SBX_API bool sbx_cancel_fired(const sbx_cancel *c);
/** sbx_cancel_free: NULL is fine.  Since: 0.2 */
SBX_API void sbx_cancel_free(sbx_cancel *c);

/* ---- sandboxes -------------------------------------------------------- */

/**
 * sbx_sandbox_create:
 * @opts: may be NULL for every default.
 * @out: (out) (transfer full): close with sbx_sandbox_destroy or
 *   sbx_sandbox_close.
 *
 * Errors: SBX_E_NOT_FOUND (no such provider or template),
 * SBX_E_PROVIDER_UNAVAILABLE, SBX_E_LIMIT, or the provider's error.
 * Retryable failures (network, 5xx, 429, busy, backend timeout) are retried
 * with backoff ([retry] in polysandbox.ini), then the next provider of the
 * fallback chain is tried; providers whose circuit breaker is open are
 * skipped (SBX_E_PROVIDER_UNAVAILABLE when none is left).
 * Since: 0.1
 */
SBX_API int sbx_sandbox_create(sbx_ctx *ctx, const sbx_create_opts *opts,
                               sbx_sandbox **out);
/**
 * sbx_fallback_count:
 *
 * How many providers the calling thread's creates (sbx_sandbox_create,
 * sbx_run) failed on and left behind down the fallback chain since its
 * last sbx_fallback_reset: each is a step, read with sbx_fallback_step.
 * At most 8 are kept.  Per thread: another thread's creates do not show.
 * Since: 0.3
 */
SBX_API size_t sbx_fallback_count(void);
/**
 * sbx_fallback_step:
 * @provider: (out) (optional) (transfer none): the provider left behind
 * @message: (out) (optional) (transfer none): why its create failed
 * @ns: (out) (optional): the time spent on it, in nanoseconds
 *
 * The @i th step (0 first) of the calling thread's fallback trail; the
 * strings are valid until its next sbx_fallback_reset.  False,
 * with nothing set, when @i is not below sbx_fallback_count.  Since: 0.3
 */
SBX_API bool sbx_fallback_step(size_t i, const char **provider, const char **message,
                               uint64_t *ns);
/** sbx_fallback_reset: empty the calling thread's fallback trail, before a
 * create whose steps the caller means to read.  Since: 0.3 */
SBX_API void sbx_fallback_reset(void);
/** Open an existing (persistent) sandbox by id; @provider NULL: default. */
SBX_API int sbx_sandbox_open(sbx_ctx *ctx, const char *provider,
                             const char *id, sbx_sandbox **out);
/**
 * sbx_sandbox_hint:
 * @id: a sandbox id.
 *
 * Returns the name of the one ready provider that, as this user's state
 * directory records, a persistent sandbox @id was created on (owned by
 * @ctx, valid while it lives), or NULL when none or several are recorded.
 * A hint, not an answer: ids carry no provider name, so a caller opens
 * @id there with sbx_sandbox_open, which verifies it (an open that finds
 * nothing forgets the hint), and searches the providers' listings when
 * that fails.  Costs a stat per provider, no call to any.  Since: 0.2
 */
SBX_API const char *sbx_sandbox_hint(sbx_ctx *ctx, const char *id);
/**
 * sbx_sandbox_exec:
 * @out: (out) (transfer full): the result, free with sbx_result_free.
 *
 * Returns SBX_OK whenever a result was produced, including
 * SBX_RUN_SANDBOX_ERROR results (the result carries the error message).
 * Other codes mean bad arguments (no result).  Since: 0.1
 */
SBX_API int sbx_sandbox_exec(sbx_sandbox *sb, const sbx_exec_opts *opts,
                             sbx_result **out);
SBX_API int sbx_sandbox_upload(sbx_sandbox *sb, const char *path,
                               const void *data, size_t len, uint32_t mode);
/** *data (transfer full) is freed with free(). */
SBX_API int sbx_sandbox_download(sbx_sandbox *sb, const char *path,
                                 size_t max, void **data, size_t *len);
/** sbx_file_type: the kind of a directory entry (append only).  Since: 0.2 */
typedef enum sbx_file_type {
    SBX_FILE_REGULAR = 0,
    SBX_FILE_DIRECTORY = 1,
    SBX_FILE_SYMLINK = 2,       /* not followed */
    SBX_FILE_OTHER = 3          /* fifo, socket, device */
} sbx_file_type;
/** sbx_file_type_name: "file", "directory", "symlink", "other".  Since: 0.2 */
SBX_API const char *sbx_file_type_name(sbx_file_type t);
/**
 * sbx_file_cb:
 * One entry of a directory: its name (@name_len bytes, no '/', never "."
 * or "..", not NUL-terminated and not necessarily UTF-8: it is the
 * sandbox's), its type, size in bytes and modification time (seconds since
 * the epoch); all (transfer none), valid during the call.  Return non-zero
 * to stop; that value is returned by sbx_sandbox_list_files.  Since: 0.2
 */
typedef int (*sbx_file_cb)(void *ud, const char *name, size_t name_len, sbx_file_type type,
                           uint64_t size, int64_t mtime_unix);
/**
 * sbx_sandbox_list_files:
 * List the directory @dir (relative to the work directory; "" or "." is
 * the work directory itself; no "..", "." or empty parts) of @sb, in the
 * order the sandbox's shell globs them (the names, then the hidden names,
 * each sorted as its locale collates), at most @max entries (1..100000).  The listing runs as a
 * command inside the sandbox (/bin/sh and stat(1) from its image), with
 * the sandbox's own confinement, so it works on every provider; its
 * output is checked strictly.  A symbolic link is listed, not followed.
 * @truncated: (out) (optional): true when there were more than @max.
 * Errors: SBX_E_PATH (@dir absolute or with a ".." part), SBX_E_INVAL,
 * SBX_E_NOT_FOUND (no such directory), SBX_E_BACKEND (the sandbox failed
 * or its listing was malformed: the message says where), the errors of
 * sbx_sandbox_exec.  Since: 0.2
 */
SBX_API int sbx_sandbox_list_files(sbx_sandbox *sb, const char *dir, size_t max,
                                   sbx_file_cb cb, void *ud, bool *truncated);
/** Destroy the sandbox and free @sb, whatever the outcome.  Retryable
 * failures are retried ([retry]); when the tries are spent the error is
 * returned and the context keeps the sandbox's id, to try again after the
 * next successful destroy on its provider and, with retries, in
 * sbx_ctx_free (since 0.1). */
SBX_API int sbx_sandbox_destroy(sbx_sandbox *sb);
/** Free @sb, leaving a persistent sandbox running.  NULL is fine. */
SBX_API void sbx_sandbox_close(sbx_sandbox *sb);
SBX_API const char *sbx_sandbox_id(const sbx_sandbox *sb);
SBX_API const char *sbx_sandbox_provider(const sbx_sandbox *sb);

/**
 * sbx_list_cb:
 * Called once per sandbox: its id, its labels as "KEY=VALUE" strings and
 * its creation time (0 when the provider does not know it); all
 * (transfer none), valid during the call.  Return non-zero to stop the
 * walk; that value is returned by sbx_list.
 */
typedef int (*sbx_list_cb)(void *ud, const char *id, const char *const *labels,
                           size_t n_labels, uint64_t created_unix_ns);
/**
 * sbx_list:
 * The sandboxes of @provider (NULL: the default one) with their labels.
 * Errors: SBX_E_NOTSUP (the provider cannot list), SBX_E_NOT_FOUND,
 * SBX_E_PROVIDER_UNAVAILABLE, the provider's error.  Since: 0.1
 */
SBX_API int sbx_list(sbx_ctx *ctx, const char *provider, sbx_list_cb cb,
                     void *ud);
/**
 * sbx_list_labeled:
 * As sbx_list, only the sandboxes whose labels include every one of
 * @filter: @n_filter "KEY=VALUE" strings (transfer none; KEY non-empty,
 * VALUE may be empty).  Providers filter in their backend where they can;
 * the core checks each sandbox again, so every provider answers alike.
 * Errors: SBX_E_INVAL (a filter entry without '=' or with an empty key),
 * and those of sbx_list.  Since: 0.1
 */
SBX_API int sbx_list_labeled(sbx_ctx *ctx, const char *provider,
                             const char *const *filter, size_t n_filter,
                             sbx_list_cb cb, void *ud);
/**
 * sbx_sandbox_get_or_create:
 * Open the sandbox that carries every label of @opts (at least one is
 * required), else create one with @opts.  The labels name the sandbox;
 * the other options only shape a sandbox that is created.
 *
 * Only sandboxes this user and host created persistent are matched
 * (polysandbox.owner and polysandbox.persistent), of the template @opts
 * names if it names one, on the provider @opts names (NULL: the default
 * one; there is no fallback, so the next call looks where this one did).
 * Sandboxes whose time-to-live has passed are skipped.  When several
 * match, the oldest is opened.  The sandbox created is persistent,
 * whatever @opts says, so that the next call finds it.
 *
 * Calls for the same provider and labels are serialised among the
 * processes that share a state directory (a lock file under
 * STATE_DIR/locks), so two of them never create two sandboxes; callers on
 * different hosts or state directories are not serialised.
 *
 * @out: (out) (transfer full): close with sbx_sandbox_close (it stays) or
 *   sbx_sandbox_destroy.
 * @created: (out) (optional): true when the sandbox was created.
 *
 * Errors: SBX_E_INVAL (no label), SBX_E_NOTSUP (the provider cannot list
 * or keep sandboxes), SBX_E_IO (the lock), a matching sandbox that
 * cannot be opened (the message names it), and those of sbx_list_labeled
 * and sbx_sandbox_create.  Since: 0.1
 */
SBX_API int sbx_sandbox_get_or_create(sbx_ctx *ctx, const sbx_create_opts *opts,
                                      sbx_sandbox **out, bool *created);

/**
 * sbx_run:
 * create + exec + destroy.  As sbx_sandbox_exec, a sandbox failure is a
 * result with status SBX_RUN_SANDBOX_ERROR and return SBX_OK.  When the
 * sandbox failed mid-exec with a retryable error, the whole run is tried
 * again on a fresh sandbox, unless it had the host network or output
 * already reached the caller's callback (it may have had effects outside
 * the discarded sandbox).  When a warm pool's key matches @copts the
 * sandbox comes from the pool (see "pools" below).
 * Since: 0.1
 */
SBX_API int sbx_run(sbx_ctx *ctx, const sbx_create_opts *copts,
                    const sbx_exec_opts *xopts, sbx_result **out);

/* ---- pools ------------------------------------------------------------- */

/*
 * Warm pools: sandboxes created ahead, in the background, for sbx_run.
 * Each pool is configured (pools.d/NAME.ini, or "pool.NAME.KEY=VALUE"
 * overrides of sbx_ctx_new_with, see polysandbox.ini(5)) with a key
 * (provider, template, limits) and a size.  Its threads start with the
 * context and keep `size` sandboxes ready.  sbx_run takes one when its
 * create options match a pool's key exactly (and set no image, network,
 * persistence, ttl, environment or labels) -- a hit -- else it creates
 * its own -- a miss, counted when a pool matched.  A taken sandbox serves
 * one run and is destroyed, unless the pool says reuse = true: then its
 * reset command runs in it and, when that succeeds, it is ready again.
 * sbx_ctx_free stops the threads and destroys what the pools hold; it
 * must not be called while a sbx_run is under way.  Since: 0.1
 */

/** Pool statistics: indexes into sbx_pool_stats' array.  Append only. */
typedef enum sbx_pool_stat {
    SBX_POOL_STAT_SIZE = 0,             /* ready sandboxes the pool keeps */
    SBX_POOL_STAT_READY = 1,            /* ready now */
    SBX_POOL_STAT_CREATING = 2,         /* being created or reset now */
    SBX_POOL_STAT_IN_USE = 3,           /* lent to runs now */
    SBX_POOL_STAT_HITS = 4,             /* runs served by the pool */
    SBX_POOL_STAT_MISSES = 5,           /* matching runs that found none ready */
    SBX_POOL_STAT_CREATED = 6,          /* sandboxes the pool created */
    SBX_POOL_STAT_DESTROYED = 7,        /* sandboxes the pool destroyed */
    SBX_POOL_STAT_FAILURES = 8,         /* failed creates */
    SBX_POOL_STAT_EXPIRED = 9,          /* destroyed unused (idle_timeout, ttl) */
    SBX_POOL_STAT_REUSED = 10,          /* reset and ready again (reuse = true) */
    SBX_POOL_STAT_RESET_FAILURES = 11,  /* resets that failed (sandbox destroyed) */
    SBX_POOL_STAT_DESTROY_FAILURES = 12,
    SBX_POOL_STAT_WAIT_MEAN_NS = 13,    /* time a hit took to get its sandbox */
    SBX_POOL_STAT_WAIT_MEDIAN_NS = 14,  /* the same, median of the last 1024 hits */
    SBX_POOL_STAT_CREATE_MEAN_NS = 15,  /* time the pool took per create */
    SBX_POOL_STAT_ACTIVE = 16           /* 1 when running, 0 when not (see last error) */
} sbx_pool_stat;
#define SBX_POOL_STAT_COUNT 17

/** Number of configured pools. */
SBX_API size_t sbx_ctx_pool_count(const sbx_ctx *ctx);
/** Name of the @i-th pool (transfer none), or NULL. */
SBX_API const char *sbx_ctx_pool_name(const sbx_ctx *ctx, size_t i);
/** The provider and template of a pool's key (transfer none); NULL when
 *  none (no template) or no such pool. */
SBX_API const char *sbx_pool_provider(const sbx_ctx *ctx, const char *pool);
SBX_API const char *sbx_pool_template(const sbx_ctx *ctx, const char *pool);
/** "size", "ready", ... (static), or NULL for an unknown index. */
SBX_API const char *sbx_pool_stat_name(sbx_pool_stat s);
/**
 * sbx_pool_stats:
 * @out: (out caller-allocates): the first @n statistics, indexed by
 *   sbx_pool_stat, taken at one instant; indexes this library does not
 *   know are set to 0.
 *
 * Errors: SBX_E_NOT_FOUND (no such pool), SBX_E_INVAL.  Since: 0.1
 */
SBX_API int sbx_pool_stats(sbx_ctx *ctx, const char *pool, uint64_t *out, size_t n);
/**
 * sbx_pool_last_error:
 * Copy the pool's last failure (create, reset or destroy), or why it is
 * not running, into @buf ("" when none).  Since: 0.1
 */
SBX_API int sbx_pool_last_error(sbx_ctx *ctx, const char *pool, char *buf, size_t size);
/**
 * sbx_pool_wait:
 * Block until @pool (NULL: every running pool) holds its size in ready
 * sandboxes.  Errors: SBX_E_TIMEOUT after @timeout_ns (the message has
 * the pool's last error), SBX_E_PROVIDER_UNAVAILABLE for a named pool
 * that is not running, SBX_E_NOT_FOUND.  Since: 0.1
 */
SBX_API int sbx_pool_wait(sbx_ctx *ctx, const char *pool, uint64_t timeout_ns);

/* ---- garbage collection -------------------------------------------------- */

/** Flags of sbx_gc.  Since: 0.1 */
#define SBX_GC_DRY_RUN   (1u << 0)  /* report, destroy nothing */
#define SBX_GC_ANY_OWNER (1u << 1)  /* not only this user and host's sandboxes */

/**
 * sbx_gc_cb:
 * Called once per expired sandbox: @status is SBX_OK when it was
 * destroyed (or, with SBX_GC_DRY_RUN, would be), else the error of the
 * destroy with @message.  @expires_unix is its polysandbox.expires label.
 * Return non-zero to stop.
 */
typedef int (*sbx_gc_cb)(void *ud, const char *provider, const char *id,
                         int64_t expires_unix, int status, const char *message);
/**
 * sbx_gc:
 * Destroy the sandboxes of @provider (NULL: every ready provider that can
 * list) that carry this process's polysandbox.owner label (UID@HOST; any
 * owner with SBX_GC_ANY_OWNER) and whose polysandbox.expires time has
 * passed: those left behind by a process that crashed.  Sandboxes without
 * a time-to-live are never reaped.  Returns the first listing error (the
 * other providers are still reaped), else SBX_OK.  Since: 0.1
 */
SBX_API int sbx_gc(sbx_ctx *ctx, const char *provider, unsigned flags,
                   sbx_gc_cb cb, void *ud);

/* ---- results ---------------------------------------------------------- */

/** Timings of a result, nanoseconds: the phases create, start, compile
 * and exec follow one another and do not overlap.  Since: 0.1 */
typedef enum sbx_timing {
    SBX_TIMING_CREATE = 0,  /* creating the sandbox (0 for a plain exec) */
    SBX_TIMING_START = 1,   /* from exec request to the command running */
    SBX_TIMING_EXEC = 2,    /* the command running (a template's program,
                               its compile step apart since 0.2) */
    SBX_TIMING_TOTAL = 3,   /* everything, destroy included */
    SBX_TIMING_COMPILE = 4  /* a template's compile step, its start
                               included; 0 when none ran.  Since: 0.2 */
} sbx_timing;

SBX_API void sbx_result_free(sbx_result *r);
SBX_API sbx_run_status sbx_result_status(const sbx_result *r);
SBX_API int sbx_result_exit_code(const sbx_result *r);
SBX_API int sbx_result_signal(const sbx_result *r);
/** Output bytes (transfer none), not NUL-terminated, maybe with NULs. */
SBX_API const void *sbx_result_stdout(const sbx_result *r, size_t *len);
SBX_API const void *sbx_result_stderr(const sbx_result *r, size_t *len);
SBX_API bool sbx_result_stdout_truncated(const sbx_result *r);
SBX_API bool sbx_result_stderr_truncated(const sbx_result *r);
SBX_API uint64_t sbx_result_timing(const sbx_result *r, sbx_timing which);
/** -1 when the backend does not report it. */
SBX_API int64_t sbx_result_cpu_ns(const sbx_result *r);
SBX_API int64_t sbx_result_peak_memory(const sbx_result *r);
SBX_API const char *sbx_result_provider(const sbx_result *r);
SBX_API const char *sbx_result_sandbox_id(const sbx_result *r);
/**
 * sbx_result_pool:
 *
 * The name of the warm pool (pools.d/NAME.ini) whose ready sandbox
 * served the run of @r (a pool hit: its SBX_TIMING_CREATE is then the
 * wait for that sandbox, not a creation), or NULL when the run created
 * its own sandbox (no pool, a miss) or was not a sbx_run.  Transfer
 * none, valid while @r is.  Since: 0.3
 */
SBX_API const char *sbx_result_pool(const sbx_result *r);
/** For SBX_RUN_SANDBOX_ERROR (and compile errors): what failed, else NULL. */
SBX_API const char *sbx_result_error(const sbx_result *r);
/** The sbx_status of a sandbox error, else 0. */
SBX_API int sbx_result_error_code(const sbx_result *r);
/**
 * sbx_result_unenforced_limits:
 *
 * The limits the sandbox of @r ran without: SBX_LIMIT_BIT_* bits (1 <<
 * sbx_limit, and SBX_LIMIT_BIT_NETWORK for network = none a provider
 * cannot enforce; names by sbx_unenforced_name), 0 when every limit was
 * enforced.  A provider that cannot
 * apply a limit asked of it is refused unless the administrator allowed
 * it (unenforced_limits in polysandbox.ini(5)); then its results say
 * which it did not apply here.  Since: 0.2
 */
SBX_API uint64_t sbx_result_unenforced_limits(const sbx_result *r);
/**
 * sbx_result_unenforced_reason:
 *
 * Why the limits of sbx_result_unenforced_limits() were not enforced,
 * as the provider says it ("memory: no memory cgroup ..."; transfer
 * none, valid while @r is), or NULL when every limit was.  Since: 0.2
 */
SBX_API const char *sbx_result_unenforced_reason(const sbx_result *r);
/**
 * sbx_result_compile:
 * @status: (out) (optional): the compile step's own status: SBX_RUN_OK
 *   when it succeeded; when it failed (the result's status is then
 *   SBX_RUN_COMPILE_ERROR and its output is the compiler's) how it
 *   failed: SBX_RUN_NONZERO_EXIT, SBX_RUN_TIMEOUT, ...
 * @ns: (out) (optional): how long the compile step ran, nanoseconds
 *   (SBX_TIMING_COMPILE; not counted in SBX_TIMING_START or _EXEC)
 *
 * Returns false, leaving the outs alone, when no compile step ran (the
 * template has none, or the run was not of code).  Since: 0.2
 */
SBX_API bool sbx_result_compile(const sbx_result *r, sbx_run_status *status, uint64_t *ns);
/**
 * sbx_result_compile_stdout:
 * sbx_result_compile_stderr:
 * @len: (out): the length in bytes
 *
 * What the compile step wrote (transfer none, valid while @r is; not
 * NUL-terminated, maybe with NULs), kept whether it succeeded or not; ""
 * with *@len 0 when no compile step ran.  When it failed, the result's
 * own stdout and stderr hold the same bytes.  Since: 0.2
 */
SBX_API const void *sbx_result_compile_stdout(const sbx_result *r, size_t *len);
SBX_API const void *sbx_result_compile_stderr(const sbx_result *r, size_t *len);
/**
 * sbx_result_artifact_count:
 *
 * How many entries the artifacts directory of the run's template held
 * (artifacts in polysandbox.ini(5) TEMPLATES), its subdirectories'
 * included: the files brought back and those left out, in the listing's
 * order (a subdirectory's entries where it is listed).  0 when the
 * template declares none or the program wrote none.  Since: 0.3
 */
SBX_API size_t sbx_result_artifact_count(const sbx_result *r);
/**
 * sbx_result_artifact:
 * @i: 0 .. sbx_result_artifact_count() - 1
 * @data: (out) (optional) (transfer none): the file's bytes, valid while
 *   @r is; NULL when it was left out
 * @len: (out) (optional): its size in bytes (as listed, when left out)
 * @mime: (out) (optional) (transfer none): its MIME type guessed from its
 *   first bytes (image/png, image/jpeg, image/gif, application/pdf,
 *   application/json, text/plain, else application/octet-stream); NULL
 *   when left out
 * @left_out: (out) (optional) (transfer none): why it was not brought
 *   back (a cap it is over, naming the setting; a symbolic link, which is
 *   never followed; a directory more than 8 levels deep; a name that is
 *   not UTF-8 or holds a control character; a read that failed), or NULL
 *   when it was
 *
 * Returns its path relative to the artifacts directory (transfer none):
 * its names below that directory joined with '/' ("plots/a.png"), each
 * UTF-8 without control characters, never empty, "." or "..", at most 8
 * of them; or NULL when @i is out of range (the outs are then NULL and
 * 0).  A left-out entry's path may hold '?' for a control character, or
 * "(a name that is not UTF-8)".  Since: 0.3
 */
SBX_API const char *sbx_result_artifact(const sbx_result *r, size_t i, const void **data,
                                        size_t *len, const char **mime,
                                        const char **left_out);
/**
 * sbx_result_to_json:
 * One JSON object holding every field (transfer full, free()).  Output
 * that is not valid UTF-8 is base64 with "stdout_encoding": "base64".
 * "unenforced_limits" lists the limits the sandbox ran without (names,
 * [] when none) and "unenforced_reason" says why (null when none); both
 * since 0.2.  Since 0.2 too: "timings_ns" has "compile", and "compile"
 * is null when no compile step ran, else {"status", "time_ns", "stdout",
 * "stdout_encoding", "stderr", "stderr_encoding"}: the compile step's
 * own status ("ok" when it succeeded) and output.  Since 0.3:
 * "artifacts", the files brought back ([{"path", "size", "mime",
 * "base64"}], [] when none), and "artifacts_left_out", those that were
 * not ([{"path", "size", "reason"}]).
 */
SBX_API char *sbx_result_to_json(const sbx_result *r);

/* ---- sealed credentials ----------------------------------------------- */

/** Size of a key id buffer: 8 hex digits and a NUL.  Since: 0.1 */
#define SBX_SECRET_KEY_ID_SIZE 9

/**
 * sbx_secret_keygen:
 * @config_dir: where the key pair goes; NULL means
 *   $POLYSANDBOX_CONFIG_DIR if set, else the system directory
 * @force: replace an existing key pair (values sealed to the old key can
 *   no longer be opened)
 * @key_id: (out caller-allocates) (optional): SBX_SECRET_KEY_ID_SIZE
 *   bytes, the new key's id
 *
 * Creates the host key pair that sealed:v1: values are sealed to:
 * DIR/secret.key (mode 0600, the secret key) and DIR/secret.pub (0644).
 * Errors: SBX_E_EXISTS (a key exists and @force is false), SBX_E_PERM,
 * SBX_E_IO, SBX_E_CONFIG (no such directory); the message, naming the
 * file, is read with sbx_ctx_last_error(NULL).  Since: 0.1
 */
SBX_API int sbx_secret_keygen(const char *config_dir, bool force, char *key_id);

/**
 * sbx_secret_seal:
 * @config_dir: as for sbx_secret_keygen (its secret.pub is used)
 * @value: (transfer none): 1 to 4096 bytes to seal
 * @sealed: (out) (transfer full): "sealed:v1:..." to free()
 *
 * Seals @value to the host's public key, for an ini file.  Only the
 * holder of secret.key can open it.  Errors: SBX_E_INVAL (length),
 * SBX_E_CONFIG (no or damaged secret.pub), SBX_E_NOMEM; message with
 * sbx_ctx_last_error(NULL).  Since: 0.1
 */
SBX_API int sbx_secret_seal(const char *config_dir, const void *value, size_t len,
                            char **sealed);

/**
 * sbx_secret_check_cb:
 * @provider, @key: the provider and [settings] key, or "registry HOST"
 *   and "password" for an image registry's password (polysandbox.ini's
 *   [registry HOST], since 0.3)
 * @file, @line: where it is set
 * @source: "sealed", "env", "file" or "plain" (a value in clear text)
 * @code: SBX_OK when the value opens, else why not
 * @message: the error naming FILE:LINE and key, a note for "plain",
 *   else NULL.  Never holds the value.
 */
typedef void (*sbx_secret_check_cb)(void *ud, const char *provider, const char *key,
                                    const char *file, int line, const char *source,
                                    int code, const char *message);

/**
 * sbx_secret_check:
 * Opens every credential of @ctx's configuration (each key a provider
 * declares a credential, every sealed value, and each image registry's
 * password) and wipes it again,
 * calling @cb once for each.  Returns SBX_OK when every one opened, else
 * SBX_E_CONFIG.  Makes the process undumpable.  Since: 0.1
 */
SBX_API int sbx_secret_check(sbx_ctx *ctx, sbx_secret_check_cb cb, void *ud);

/**
 * sbx_secret_open:
 * @ctx: the context whose configuration directory holds the host key
 *   (NULL: $POLYSANDBOX_CONFIG_DIR, else the system directory)
 * @ref: (transfer none) a credential reference as a provider's settings
 *   take it: "sealed:v1:...", "env:NAME", "file:PATH", or a value in
 *   clear text
 * @where: (transfer none) what @ref is, for messages
 *   ("polysandbox.ini:12: [server] tokens"), or NULL
 * @value: (out) (transfer full): the opened value, NUL-terminated, in
 *   locked memory that is wiped on release: give it back with
 *   sbx_secret_free as soon as it is no longer needed
 * @len: (out): its length (it may hold NUL bytes)
 *
 * Opens a credential for the application itself (polysandboxd's tokens),
 * as the library opens providers' credentials.  The first call makes the
 * process undumpable.  Errors: SBX_E_CONFIG (no such variable, an
 * unreadable file, a value sealed for another key or altered: the message
 * starts with @where and never holds the value), SBX_E_NOMEM, SBX_E_INVAL.
 * Since: 0.2
 */
SBX_API int sbx_secret_open(const sbx_ctx *ctx, const char *ref, const char *where,
                            char **value, size_t *len);
/** sbx_secret_free: wipe and free a value of sbx_secret_open.  NULL is
 * fine.  Since: 0.2 */
SBX_API void sbx_secret_free(char *value);

/* ---- values as a user writes them ---- */

/**
 * sbx_parse_duration:
 * @s: (transfer none) a duration: "500ms", "30s", "1.5m", "2h", "250us",
 *   "100ns"; a bare number is seconds
 * @ns: (out): the duration in nanoseconds, set only on success
 * @why: (out) (optional) (transfer none): on failure, a static phrase
 *   worded to follow the value ("has an unknown unit (use ns, us, ms, s,
 *   m or h)"); may be NULL
 *
 * Reads a duration with the grammar of polysandbox.ini(5), which the
 * command line and the server share: one number, an optional unit, no
 * sign; a fraction must come out as whole nanoseconds; nothing is
 * rounded or clamped.  0 is refused (0 never means unlimited).
 * Errors: SBX_E_CONFIG.  Since: 0.3
 */
SBX_API int sbx_parse_duration(const char *s, uint64_t *ns, const char **why);
/**
 * sbx_parse_size:
 * @s: (transfer none) a size: "512", "64K", "512M", "1.5G", "1T"; powers
 *   of 1024 whatever the spelling ("KiB", "KB", "k"); a bare number is
 *   bytes
 * @bytes: (out): the size in bytes, set only on success
 * @why: (out) (optional) (transfer none): as for sbx_parse_duration
 *
 * The same rules as sbx_parse_duration.  Errors: SBX_E_CONFIG.
 * Since: 0.3
 */
SBX_API int sbx_parse_size(const char *s, uint64_t *bytes, const char **why);
/**
 * sbx_parse_count:
 * @s: (transfer none) a whole number greater than 0, without a unit
 * @n: (out): the number, set only on success
 * @why: (out) (optional) (transfer none): as for sbx_parse_duration
 *
 * Errors: SBX_E_CONFIG.  Since: 0.3
 */
SBX_API int sbx_parse_count(const char *s, uint64_t *n, const char **why);

#ifdef __cplusplus
}
#endif
#endif /* POLYSANDBOX_SANDBOX_H */
