/* core/core-int.h - internals of libpolysandbox shared between core files
 *
 * Not installed.  Nothing declared here is exported from the library
 * (the link uses -export-symbols-regex '^sbx_'); internal names use the
 * core_ prefix.
 */
#ifndef POLYSANDBOX_CORE_INT_H
#define POLYSANDBOX_CORE_INT_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <polysandbox/provider.h>
#include <polysandbox/sandbox.h>

#include "clock.h"
#include "path-check.h"
#include "settings-read.h"

/* ---- errors (core/error.c) ---------------------------------------------- */

#define CORE_MSG_MAX 1024

struct sbx_error {
    int code;
    char provider[64];
    char message[CORE_MSG_MAX];
    uint64_t retry_after_ns;    /* host->retry_after of the failing op, or 0 */
    bool not_started;           /* host->not_started: the exec never began */
};

/* The calling thread's error object (thread-local, one per thread). */
struct sbx_error *core_error_tls(void);
/* Reset the thread's error: every public entry point calls this first. */
void core_error_clear(void);
/* Set the thread's error; returns @code.  @provider may be NULL. */
/* The eventfd of a cancel handle (readable once fired), or -1 for NULL.
 * (core/run/cancel.c) */
int core_cancel_fd(const sbx_cancel *c);

int core_error_set(int code, const char *provider, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* For clang's analyser (contrib/analyze.sh), which sees one file at a time
 * and would otherwise assume that an error path's core_error_set(SBX_E_X,
 * ...) may return SBX_OK and walk on into code that only runs on success:
 * the value is @code, as core/error.c returns it. The build never sees
 * this; the function is called either way. */
#ifdef __clang_analyzer__
#define core_error_set(code, ...)                                                                  \
    __extension__({                                                                                \
        int core_error_code_ = (code);                                                             \
        core_error_set(core_error_code_, __VA_ARGS__);                                             \
        core_error_code_;                                                                          \
    })
#endif
int core_error_vset(int code, const char *provider, const char *fmt, va_list ap);

/* ---- files (core/run/sandbox-files.c) ------------------------------------ */

/* Parse the listing script's output (hostile: the sandbox's bytes),
 * calling @cb per entry, at most @max.  Returns 0 or @cb's non-zero
 * return; *bad (with the offset *bad_at) when the bytes break the
 * grammar, *more when the script said there were more than @max. */
int core_files_parse(const char *buf, size_t len, size_t max, sbx_file_cb cb, void *ud,
                     bool *more, bool *bad, size_t *bad_at);

/* ---- ownership (core/owner.c) -------------------------------------------- */

struct stat;
/* "uid N (name)" into @buf. */
void core_owner_name(uid_t uid, char *buf, size_t size);
/* @path with every link resolved (malloc'd), or NULL with errno set. */
char *core_canonical(const char *path);
/* @st (of @path, a @what such as "provider module") owned by root or this
 * user and not writable by group or others; else error @code naming the
 * path, the owner and the fix. */
int core_owner_check(const struct stat *st, const char *path, const char *what, int code);
/* Every directory holding @path (links resolved), from /: owned by root
 * or this user, not writable by group or others unless sticky. */
int core_owner_check_parents(const char *path, const char *what, int code);
/* @path made (0700, parents too) when missing, then required to be a
 * directory (not a link) of this user's, 0700 (0755 is tightened; group-
 * or world-writable is refused), in safe parents; SBX_E_PERM naming the
 * path and its owner otherwise. */
int core_private_dir(const char *path, const char *what);

/* ---- which provider a sandbox id is on (core/run/id-hint.c) -------------- */

/* Record that @id was created on @provider (best effort: the thread error
 * is left as it was). */
void core_id_hint_put(const struct sbx_ctx *ctx, const char *provider, const char *id);
/* Forget it: destroyed, or not there any more. */
void core_id_hint_drop(const struct sbx_ctx *ctx, const char *provider, const char *id);

/* ---- string vectors (core/strv.c) ---------------------------------------- */

/* NULL-terminated vectors of owned strings.  NULL is an empty vector. */
size_t core_strv_len(char *const *v);
/* The template words @compile (may be NULL) and @run for code written
 * under @name instead of the template's source @src (source-name.c).
 * SBX_OK with new vectors (transfer full), SBX_E_NOTSUP when the template
 * keeps its own name (nothing to free), SBX_E_NOMEM. */
int core_source_rename(const char *src, char *const *compile, char *const *run,
                       const char *name, char ***compile_out, char ***run_out);
void core_strv_free(char **v);
/* A deep copy (NULL in, NULL out; NULL on ENOMEM for a non-NULL @v). */
char **core_strv_dup(const char *const *v);
/* Append a copy of @s; SBX_E_NOMEM on failure (*v stays valid). */
int core_strv_push(char ***v, const char *s);
bool core_strv_has(char *const *v, const char *s);

/* ---- units (core/units.c) ------------------------------------------------ */

/* Parse "500ms", "10s", "2m", "1h", "250us", "100ns"; a bare number is
 * seconds.  Overflow-safe.  0 and negative values are rejected when
 * @allow_zero is false.  On error returns SBX_E_CONFIG and *why (static
 * text) says what is wrong.  */
int core_parse_duration(const char *s, bool allow_zero, uint64_t *ns,
                        const char **why);
/* Parse "512", "64K", "512M", "1G", "1T" (powers of 1024; "KiB", "MB"
 * style suffixes accepted too).  Same rules as core_parse_duration. */
int core_parse_size(const char *s, bool allow_zero, uint64_t *bytes,
                    const char **why);
/* Parse a plain count ("128"). */
int core_parse_count(const char *s, bool allow_zero, uint64_t *n,
                     const char **why);
/* Parse true/false/yes/no/on/off/1/0. */
int core_parse_bool(const char *s, bool *out, const char **why);

/* ---- configuration (core/config/config.c) -------------------------------- */

/* core_setting: settings-read.h */

/* [retry] and [breaker] settings (core/retry/retry.c); the main file sets the
 * defaults, a providers.d/ file may override each key for its provider. */
enum {
    CORE_RS_ATTEMPTS,           /* [retry] attempts: tries in all, 1 = none */
    CORE_RS_BASE,               /* [retry] base: first backoff ceiling, ns */
    CORE_RS_CAP,                /* [retry] cap: largest backoff ceiling, ns */
    CORE_RS_RETRY_AFTER_MAX,    /* [retry] max_retry_after, ns */
    CORE_RS_DEADLINE,           /* [retry] deadline: time budget of an op, ns */
    CORE_RS_FAILURES,           /* [breaker] failures: consecutive to open */
    CORE_RS_OPEN_TIME,          /* [breaker] open_time, ns */
    CORE_RS_TRIALS,             /* [breaker] trials in half-open at once */
    CORE_RS_COUNT
};

typedef struct core_resil_conf {
    uint64_t v[CORE_RS_COUNT];
    bool set[CORE_RS_COUNT];
} core_resil_conf;

/* [provider] price_per_second, price_per_sandbox, currency */
typedef struct core_price {
    bool set;               /* a price was given: else no cost is reported */
    double per_second, per_sandbox;
    char currency[16];      /* "" until set: USD */
} core_price;

/* providers.d/NAME.ini */
typedef struct core_provider_conf {
    char *name;             /* from the file name */
    char *file;             /* the ini's path */
    bool enabled;
    bool optional;
    int priority;           /* higher first; default 0 (local: 100) */
    char *module;           /* explicit path to NAME.so, or NULL */
    core_setting *settings; /* the [settings] section, checked by the loader */
    size_t n_settings;
    core_resil_conf resil;  /* its [retry] and [breaker] overrides */
    /* unenforced_limits, the limits it may run without: 0 when not
     * given, 1 from [settings] (the docker provider's older spelling),
     * 2 from [provider], which wins. */
    int unenforced_from;
    uint64_t unenforced_ok;
    core_price price;       /* what its sandboxes cost (polysandbox eval) */
} core_provider_conf;

/* Artifact caps when a template sets none: 8 MiB a file, 32 MiB a run. */
#define CORE_ARTIFACTS_MAX_FILE (UINT64_C(8) << 20)
#define CORE_ARTIFACTS_MAX_TOTAL (UINT64_C(32) << 20)

/* Where templates look for their interpreters and compilers on the host. */
#define CORE_TEMPLATE_PATH "/usr/local/bin:/usr/bin:/bin"

/* templates.d/NAME.ini */
typedef struct core_template_conf {
    char *name;
    char *file;
    char **extensions;      /* NULL-terminated, each with its dot: ".py" */
    char *source;           /* file name the code is written to: "main.py" */
    char **compile;         /* NULL-terminated argv, or NULL: none */
    char **run;             /* NULL-terminated argv */
    char *image;            /* image or rootfs for providers that take one, or NULL */
    sbx_kv_v1 *images;      /* image.PROVIDER = NAME: per provider (owned strings) */
    size_t n_images;
    char **zygote;          /* NULL-terminated: interpreter, modules to preload; or NULL */
    sbx_kv_v1 *env;         /* extra environment (owned strings) */
    size_t n_env;
    char *artifacts;        /* output directory (relative to the work directory)
                               whose files come back with the result, or NULL */
    uint64_t artifacts_max_file;  /* per-file cap, bytes */
    uint64_t artifacts_max_total; /* cap on all of a run's artifacts, bytes */
    char **requires;        /* NULL-terminated absolute paths the runtime needs on
                               the host, or NULL */
    bool egress;            /* network = egress: its sandboxes may connect out */
    const char *missing;    /* its compiler or interpreter when not on the host (in
                               compile or run), else the first of requires that
                               is not, else NULL */
    bool missing_required;  /* missing is one of requires */
} core_template_conf;

/* The fallback trail (core/run/fallback-trail.c): each provider a create of
 * this thread failed on before it moved down the chain, with the time
 * spent there and why.  sandbox_create adds a step for each provider
 * that has a next; a reader resets it before its create. */
#define CORE_TRAIL_MAX 8
typedef struct core_trail_step {
    char provider[64];
    char message[256];
    uint64_t ns;
} core_trail_step;
void core_trail_reset(void);
void core_trail_add(const char *provider, uint64_t ns, const char *msg);
size_t core_trail_count(void);
const core_trail_step *core_trail_get(size_t i);

/* Whether the build cache @tc's GOENV names was warmed by another go
 * than the host's (its stamp, DIR/version, against `go env GOVERSION`):
 * then @why (optional) says so and how to rebuild it
 * (core/run/template-cache.c). */
bool core_template_cache_stale(const core_template_conf *tc, char *why, size_t why_size);
/* Add @t's environment to @env (a core_kvlist), with GOENV=off in place
 * of a stale cache's on a provider @p that runs the host's go; says so
 * on stderr once per process.  SBX_E_NOMEM (not set). */
struct core_kvlist;
int core_template_env_add(const struct sbx_provider *p, const core_template_conf *t,
                          struct core_kvlist *env);

/* The image template @t names for provider @provider: its image.PROVIDER,
 * else (on a provider that does not run on the host's root) its image;
 * NULL when none.  *@named (may be NULL) tells whether it is the
 * image.PROVIDER, asked of that provider by name, rather than the plain
 * image, a default for the providers that run such images. */
const char *core_template_image(const core_template_conf *t, const char *provider,
                                bool host_root, bool *named);

/* ---- artifacts (core/run/artifacts.c) ------------------------------------ */

/* After a run of code whose template @t declares artifacts: add to @r
 * each file of its directory, or why it was left out.  SBX_E_NOMEM only
 * (a listing or read that fails is recorded in @r as left out). */
int core_artifacts_collect(sbx_sandbox *sb, const core_template_conf *t, sbx_result *r);

/* pools.d/NAME.ini, or pool.NAME.KEY overrides.  The settings are kept as
 * written ([pool] keys as "KEY", [limits] keys as "limits.KEY", in the
 * order read, later wins) and checked by core/pool/pool.c, whose errors name
 * each setting's file and line. */
typedef struct core_pool_conf {
    char *name;
    char *file;             /* the ini's path, or "command line" */
    core_setting *settings;
    size_t n_settings;
} core_pool_conf;

/* [eval]: what a dataset or samples file may hold, checked while it is
 * read (core/eval/eval-jsonl.c), so a bad or hostile file is refused before it
 * takes memory. */
typedef struct core_eval_caps {
    uint64_t input;         /* decompressed bytes of one file */
    uint64_t line;          /* bytes of one line (record) */
    uint64_t records;       /* records of one file */
} core_eval_caps;
#define CORE_EVAL_MAX_INPUT "256M"
#define CORE_EVAL_MAX_LINE "1M"
#define CORE_EVAL_MAX_RECORDS "1000000"

/* ---- image platforms (core/platform.c) --------------------------------- */

/* An image platform as an OCI index names one, in Go's names, normalised
 * ("aarch64" is arm64, arm64's "v8" is no variant, "arm" is arm/v7). */
typedef struct core_platform {
    char os[32];
    char arch[32];
    char variant[16];                   /* "" for none */
} core_platform;

/* Parse "OS/ARCH[/VARIANT]" into @p; false with a reason in @why. */
bool core_platform_parse(const char *s, core_platform *p, const char **why);
/* This machine's: linux and uname(2)'s machine in Go's names. */
void core_platform_host(core_platform *p);
/* Is an index entry's platform (@os, @arch, @variant: each may be NULL)
 * @want, once normalised? */
bool core_platform_match(const core_platform *want, const char *os, const char *arch,
                         const char *variant);
/* "OS/ARCH" or "OS/ARCH/VARIANT" into @out. */
void core_platform_format(const core_platform *p, char *out, size_t len);

typedef struct core_config {
    char *dir;                          /* the system configuration directory */
    char **dirs;                        /* every configuration directory read, in
                                         * order (a later one overrides), or NULL */
    char *default_provider;             /* [core] default_provider, or NULL */
    char **provider_order;              /* [core] order, NULL-terminated, or NULL */
    char **fallback;                    /* [core] fallback, NULL-terminated, or NULL */
    char **provider_path;               /* directories searched for NAME.so, NULL-terminated */
    char *state_dir;                    /* [core] state_dir */
    char *image_dir;                    /* [core] image_dir, or NULL: state_dir/images */
    core_platform image_platform;       /* [core] image_platform, when image_platform_set */
    bool image_platform_set;            /* else an index gives this machine's entry */
    uint64_t limits[SBX_LIMIT_COUNT];   /* [limits] defaults */
    uint64_t max_limits[SBX_LIMIT_COUNT]; /* [limits] max_* */
    core_provider_conf *providers;      /* every providers.d/ file */
    size_t n_providers;
    core_template_conf *templates;      /* every templates.d/ file */
    size_t n_templates;
    core_resil_conf resil;              /* [retry] and [breaker] */
    core_pool_conf *pools;              /* every pools.d/ file and pool.* override */
    size_t n_pools;
    bool pools_off;                     /* [core] pools = false: start none */
    core_eval_caps eval_caps;           /* [eval] max_input, max_line, max_records */
    uint64_t unenforced_ok;             /* [core] unenforced_limits (bits) */
    core_setting *app;                  /* application sections: key "SECTION.KEY" */
    size_t n_app;
    core_setting *registries;           /* [registry HOST]: key "HOST.username", "HOST.password" */
    size_t n_registries;
    char **private_paths;               /* host->private_paths: what sandboxes never show */
} core_config;

/* The sections polysandbox.ini keeps for programs built on the library
 * (sbx_ctx_settings), NULL-terminated. */
extern const char *const core_app_sections[];

/*
 * core_config_load:
 * @cfg: (out) zeroed by the caller, filled; free with core_config_free
 *   even on failure.
 * @dir: the configuration directory, or NULL for $POLYSANDBOX_CONFIG_DIR
 *   else SYSCONFDIR/polysandbox (then $XDG_CONFIG_HOME/polysandbox on top
 *   when dir and $POLYSANDBOX_CONFIG_DIR are both unset).
 * @overrides: NULL-terminated "section.key=value" (command line), or NULL.
 *
 * Precedence: built-in defaults < @dir < XDG < environment
 * (POLYSANDBOX_PROVIDER, POLYSANDBOX_PROVIDER_PATH prepended, POLYSANDBOX_TIMEOUT,
 * POLYSANDBOX_MEMORY) < @overrides.  Errors set the thread error with code
 * SBX_E_CONFIG and a message "FILE:LINE: ..." and return SBX_E_CONFIG.
 */
int core_config_load(core_config *cfg, const char *dir,
                     const char *const *overrides);
void core_config_free(core_config *cfg);
/* Names of the [limits] keys, indexed by sbx_limit ("wall", "cpu", ...). */
const char *core_limit_key(sbx_limit which);
/* @v of limit @which as a user reads it ("64 MiB", "10 s", "128"). */
void core_limit_format(sbx_limit which, uint64_t v, char *buf, size_t size);

/* ---- limits a provider cannot enforce (core/config/unenforced.c) --------- */

/* An unenforced_limits value: "refuse" (none may go unenforced), "allow"
 * (any) or limit names separated by commas or blanks; the set into
 * *bits.  SBX_E_CONFIG with *why (static) when bad. */
int core_unenforced_parse(const char *s, uint64_t *bits, const char **why);
/* "memory (64 MiB), pids (128)": the limits of @bits with their values
 * @values (indexed by sbx_limit; NULL: names alone). */
void core_limits_text(uint64_t bits, const uint64_t *values, char *buf, size_t size);
/* Around ops->create and ops->attach: what host->limits_unenforced
 * reports in between is gathered for the call (@values: the sandbox's
 * limits), then taken by _end: the bits, and *why (transfer full; NULL
 * when none). */
void core_unenforced_begin(const uint64_t *values, bool attach);
uint64_t core_unenforced_end(char **why);
/* The limits @p may run without: its unenforced_limits, else [core]'s. */
uint64_t core_unenforced_ok(const struct sbx_ctx *ctx, const struct sbx_provider *p);
/* Set the thread's error refusing a sandbox of @p that would run without
 * @bits (of @values) for @why; returns SBX_E_PERM. */
int core_unenforced_refuse(const struct sbx_provider *p, uint64_t bits, const uint64_t *values,
                           const char *why);
/* The names of the limits of @bits as a JSON array (core/run/json.c): new
 * reference, or NULL on ENOMEM. */
struct json_t;
struct json_t *core_limit_names_json(uint64_t bits);
/* host->limits_unenforced. */
int core_host_limits_unenforced(sbx_host_handle *h, uint64_t limits, const char *why);
/* Between _begin and _end: network = none (@net) asked of @p, which has
 * no SBX_CAP_NETWORK_POLICY, is gathered as SBX_LIMIT_BIT_NETWORK and
 * refused (in create) unless allowed, as host->limits_unenforced. */
int core_unenforced_network(const struct sbx_ctx *ctx, const struct sbx_provider *p,
                            sbx_network net);

/* ---- providers (core/loader/discover.c, open.c, validate.c) -------------- */

struct sbx_host_handle {
    struct sbx_ctx *ctx;
    struct sbx_provider *prov;
};

struct sbx_provider {
    char *name;
    char *path;                 /* the .so, or NULL when not found */
    sbx_provider_state state;
    int reason_code;            /* SBX_E_LOAD_* etc. when unavailable */
    char *reason;               /* message naming file and field */
    int priority;
    const core_provider_conf *conf; /* its ini, or NULL */
    sbx_provider_v1 desc;       /* zeroed core copy */
    sbx_provider_ops_v1 ops;    /* zeroed core copy */
    void *lib;                  /* lt_dlhandle, never closed */
    void *pctx;                 /* what ops.init returned */
    struct sbx_host_handle handle;  /* ctx set at discovery; prov = this entry */
    char *state_dir;
    /* Loading is lazy (core_provider_ensure).  Until @loaded is true (read
     * with __atomic acquire), state, reason, desc, ops and pctx are not
     * final; once it is they never change again. */
    bool loaded;
    bool hidden;                /* optional and failed: not listed, not found */
    unsigned init_seq;          /* 1, 2, ... in the order of init; 0: none */
    /* core_provider_credential_keys's, under ctx->load_lock: copies of the
     * descriptor's secret_keys (NULL-terminated), once @peeked. */
    bool peeked;
    char **credential_keys;
};

/*
 * core_loader_discover:
 * Find provider modules in cfg->provider_path, build ctx->providers
 * (sorted by [core] order, priority, then name) and judge what needs no
 * module: disabled, enabled without a module, a relative module path.
 * Opens nothing: enabled modules are loaded by core_provider_ensure the
 * first time they are needed.  The array never moves afterwards.  Only
 * allocation failure is returned as an error.
 */
int core_loader_discover(struct sbx_ctx *ctx);
/*
 * core_provider_ensure:
 * Load, validate and init @p unless that was done already (once per
 * context, under ctx->load_lock, so threads may race for it).  Afterwards
 * p->state, reason, reason_code, hidden, desc and ops are final: a failure
 * is remembered with its reason and never retried.  Keeps the calling
 * thread's error as it was.  NULL is fine.
 */
void core_provider_ensure(const struct sbx_provider *p);
/*
 * core_provider_credential_keys:
 * @p's credential keys (its descriptor's secret_keys), NULL-terminated,
 * owned by @p; NULL when its module cannot be read.  A provider that is
 * not ready has its module opened and validated to read them, then closed
 * again, never initialised (once per context, under ctx->load_lock).
 */
const char *const *core_provider_credential_keys(const struct sbx_provider *p);
/* fini every ready provider (reverse order of init); free the array.
 * Modules stay mapped. */
void core_loader_unload_all(struct sbx_ctx *ctx);

/* ---- host table (core/loader/host.c) ------------------------------------- */

const sbx_host_v1 *core_host_table(void);
/* The [settings] entry of @key lent to @h's provider, or NULL (host.c). */
const core_setting *core_host_setting(const sbx_host_handle *h, const char *key);
/* core_settings_read: settings-read.h */

/* Secrets, the host key pair and sealed values: core/secrets/secrets.h.
 * Retries and circuit breakers: core/retry/retry.h. */

/* ---- the context (core/run/context.c) ------------------------------------ */

struct sbx_ctx {
    core_config cfg;
    struct sbx_provider *providers;
    size_t n_providers;
    pthread_mutex_t lock;               /* orphans */
    pthread_mutex_t load_lock;          /* core_provider_ensure's */
    unsigned n_inits;                   /* providers initialised (load_lock) */
    struct core_breaker *breakers;      /* one per provider (core/retry/breaker.c) */
    struct core_pools *pools;           /* core/pool/pool.c, or NULL: none */
    struct core_orphan *orphans;        /* core/run/orphans.c (lock) */
    size_t n_orphans;
};

/* The ready provider @name, loaded now if it was not yet (see
 * core_provider_ensure), or NULL with the thread error set
 * (SBX_E_NOT_FOUND or SBX_E_PROVIDER_UNAVAILABLE). */
struct sbx_provider *core_provider_get(const struct sbx_ctx *ctx, const char *name);


/* ---- pools (core/pool/pool.c) -------------------------------------------- */

/* A sandbox lent to sbx_run by a pool; given back with core_pool_release. */
typedef struct core_pool_lease core_pool_lease;

/* Check the pool configuration and start filling the pools (background
 * threads).  SBX_E_CONFIG names FILE:LINE of the bad setting. */
int core_pools_start(struct sbx_ctx *ctx);
/* Stop the threads and destroy every sandbox the pools hold.  Called by
 * sbx_ctx_free before the providers go. */
void core_pools_stop(struct sbx_ctx *ctx);
/*
 * core_pool_take:
 * A ready sandbox of the pool whose key (provider, template, limits)
 * matches @copts, or NULL when no pool matches or none is ready (a miss:
 * the caller creates one as usual).  Never touches the thread's error.
 * (transfer full) *lease, to be given back with core_pool_release.
 */
sbx_sandbox *core_pool_take(struct sbx_ctx *ctx, const sbx_create_opts *copts,
                            core_pool_lease **lease);
/* Give a lent sandbox back: it is destroyed (in the background), or with
 * reuse = true and @healthy, reset and made ready again.  Frees @lease. */
void core_pool_release(core_pool_lease *lease, bool healthy);
/* The name of the pool that lent @lease (transfer none, the context's). */
const char *core_pool_lease_name(const core_pool_lease *lease);

/* ---- labels (core/labels.c) ---------------------------------------------- */

/* What the core puts on every sandbox (see core/labels.c). */
#define CORE_LABEL_OWNER "polysandbox.owner"
#define CORE_LABEL_CREATED "polysandbox.created"
#define CORE_LABEL_EXPIRES "polysandbox.expires"
#define CORE_LABEL_TEMPLATE "polysandbox.template"
#define CORE_LABEL_PERSISTENT "polysandbox.persistent"

/* The value of the polysandbox.owner label of this process: "UID@HOST". */
void core_owner(char *buf, size_t size);
/* The value of @key among "KEY=VALUE" strings, or NULL. */
const char *core_label_value(const char *const *labels, size_t n, const char *key);
/* The value of @key among pairs, or NULL. */
const char *core_kv_value(const sbx_kv_v1 *kv, size_t n, const char *key);
/* True when every pair of @want is among @kv. */
bool core_kv_includes(const sbx_kv_v1 *kv, size_t n, const sbx_kv_v1 *want, size_t n_want);
/* True when a polysandbox.expires value (Unix seconds) is at or before
 * @now; false for NULL or a value that is not a number. */
bool core_label_expired(const char *expires, long long now);

/* ---- sandboxes (core/run/sandbox.c) -------------------------------------- */

/* The ready provider @provider, or the default one when NULL; NULL with
 * the thread error set. */
struct sbx_provider *core_provider_or_default(sbx_ctx *ctx, const char *provider);
/* Report a failure of @op on @p, filling in a message when the provider
 * left none; returns @rc (SBX_E_INTERNAL for SBX_OK). */
int core_provider_failed(const struct sbx_provider *p, const char *op, int rc);
/* One try at destroying the sandbox @id of @p whose handle is gone:
 * attach, then destroy.  SBX_OK when it is destroyed or was gone. */
int core_destroy_by_id(struct sbx_provider *p, const char *id);
/* For sbx_run (core/api/run.c), which joins sandboxes and pools: */
/* The template @name, or NULL with the thread error naming the known ones. */
const core_template_conf *core_find_template(const sbx_ctx *ctx, const char *name);
/* Create a sandbox for @o (provider chosen, fallback chain, retries and
 * breakers) by @deadline; *backend_failed tells a failure of the backend
 * from one of the request. */
int core_sandbox_create(sbx_ctx *ctx, const sbx_create_opts *o, uint64_t deadline,
                        sbx_sandbox **out, bool *backend_failed);
/* Run @o in @sb into the result @r (its status, output and timings). */
int core_sandbox_exec(sbx_sandbox *sb, const sbx_exec_opts *o, sbx_result *r);
/* The result of a run or exec its caller cancelled: not a verdict. */
void core_result_set_cancelled(sbx_result *r);

/* ---- sandboxes the core failed to destroy (core/run/orphans.c) ----------- */

/* Keep @id of @p, whose destroy failed after its retries, to destroy it
 * later: one more try after each later successful destroy on @p, and all
 * of them, with retries, when the context is freed.  Never touches the
 * thread's error. */
void core_orphan_keep(struct sbx_ctx *ctx, struct sbx_provider *p, const char *id);
/* One try at one kept sandbox of @p (a destroy on @p just succeeded). */
void core_orphans_retry_one(struct sbx_ctx *ctx, struct sbx_provider *p);
/* Destroy every kept sandbox, with retries; log those that still fail
 * (their time-to-live reaps them).  Called by sbx_ctx_free. */
void core_orphans_reap(struct sbx_ctx *ctx);

#endif /* POLYSANDBOX_CORE_INT_H */
