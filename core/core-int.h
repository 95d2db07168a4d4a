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

#include <polysandbox/provider.h>
#include <polysandbox/sandbox.h>

/* ---- errors (core/error.c) ---------------------------------------------- */

#define CORE_MSG_MAX 1024

struct sbx_error {
    int code;
    char provider[64];
    char message[CORE_MSG_MAX];
};

/* The calling thread's error object (thread-local, one per thread). */
struct sbx_error *core_error_tls(void);
/* Reset the thread's error: every public entry point calls this first. */
void core_error_clear(void);
/* Set the thread's error; returns @code.  @provider may be NULL. */
int core_error_set(int code, const char *provider, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
int core_error_vset(int code, const char *provider, const char *fmt, va_list ap);

/* ---- string vectors (core/strv.c) ---------------------------------------- */

/* NULL-terminated vectors of owned strings.  NULL is an empty vector. */
size_t core_strv_len(char *const *v);
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

/* ---- configuration (core/config.c) ---------------------------------------- */

/* One setting as written, with where it came from (for error messages). */
typedef struct core_setting {
    char *key;
    char *value;
    char *file;     /* path of the file, or "environment", "command line" */
    int line;       /* 0 when not from a file */
} core_setting;

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
} core_provider_conf;

/* templates.d/NAME.ini */
typedef struct core_template_conf {
    char *name;
    char *file;
    char **extensions;      /* NULL-terminated, each with its dot: ".py" */
    char *source;           /* file name the code is written to: "main.py" */
    char **compile;         /* NULL-terminated argv, or NULL: none */
    char **run;             /* NULL-terminated argv */
    char *image;            /* image or rootfs for providers that take one, or NULL */
    sbx_kv_v1 *env;         /* extra environment (owned strings) */
    size_t n_env;
    bool available;         /* false when its first run word is not found on the host */
} core_template_conf;

/* pools.d/NAME.ini, or pool.NAME.KEY overrides.  The settings are kept as
 * written ([pool] keys as "KEY", [limits] keys as "limits.KEY", in the
 * order read, later wins) and checked by core/pool.c, whose errors name
 * each setting's file and line. */
typedef struct core_pool_conf {
    char *name;
    char *file;             /* the ini's path, or "command line" */
    core_setting *settings;
    size_t n_settings;
} core_pool_conf;

typedef struct core_config {
    char *dir;                          /* the system configuration directory */
    char *default_provider;             /* [core] default_provider, or NULL */
    char **provider_order;              /* [core] order, NULL-terminated, or NULL */
    char **fallback;                    /* [core] fallback, NULL-terminated, or NULL */
    char **provider_path;               /* directories searched for NAME.so, NULL-terminated */
    char *state_dir;                    /* [core] state_dir */
    uint64_t limits[SBX_LIMIT_COUNT];   /* [limits] defaults */
    uint64_t max_limits[SBX_LIMIT_COUNT]; /* [limits] max_* */
    core_provider_conf *providers;      /* every providers.d/ file */
    size_t n_providers;
    core_template_conf *templates;      /* every templates.d/ file */
    size_t n_templates;
    core_pool_conf *pools;              /* every pools.d/ file and pool.* override */
    size_t n_pools;
    bool pools_off;                     /* [core] pools = false: start none */
} core_config;

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

/* ---- providers (core/loader.c) --------------------------------------------- */

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
    struct sbx_host_handle handle;
    char *state_dir;
};

/*
 * core_loader_load_all:
 * Find provider modules in cfg->provider_path, build ctx->providers
 * (sorted by priority, then name), load and init every enabled one.
 * Failures are recorded per provider (state UNAVAILABLE, reason); only
 * allocation failure is returned as an error.
 */
int core_loader_load_all(struct sbx_ctx *ctx);
/* fini every ready provider; free the array.  Modules stay mapped. */
void core_loader_unload_all(struct sbx_ctx *ctx);

/* ---- host table (core/host.c) --------------------------------------------- */

const sbx_host_v1 *core_host_table(void);

/* ---- secrets (core/secrets.c) --------------------------------------------- */

/* Resolve a credential reference ("env:NAME", "file:PATH", "sealed:v1:...")
 * into secure memory.  (transfer full) release with core_secret_release. */
int core_secret_open(const struct sbx_ctx *ctx, const core_setting *s,
                     const char **out, size_t *len);
void core_secret_release(const char *value);

/* ---- the context (core/context.c) ----------------------------------------- */

struct sbx_ctx {
    core_config cfg;
    struct sbx_provider *providers;
    size_t n_providers;
    pthread_mutex_t lock;
    struct core_pools *pools;           /* core/pool.c, or NULL: none */
};

/* The ready provider @name, or NULL with the thread error set
 * (SBX_E_NOT_FOUND or SBX_E_PROVIDER_UNAVAILABLE). */
struct sbx_provider *core_provider_get(const struct sbx_ctx *ctx, const char *name);

/* Monotonic clock in nanoseconds. */
uint64_t core_now_ns(void);

/* ---- pools (core/pool.c) ------------------------------------------------- */

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

/* ---- garbage collection (core/gc.c) ------------------------------------- */

/* The value of the polysandbox.owner label of this process: "UID@HOST". */
void core_owner(char *buf, size_t size);

#endif /* POLYSANDBOX_CORE_INT_H */
