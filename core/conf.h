/* core/conf.h - the configuration as read: its types
 *
 * Ground floor, because the context (context.h) holds it and every wing
 * reads it; core/config/ fills it (config/config-load.h).
 */
#ifndef POLYSANDBOX_CONF_H
#define POLYSANDBOX_CONF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <polysandbox/provider.h>
#include <polysandbox/sandbox.h>

#include "platform.h"
#include "settings-read.h"

/* [retry] and [breaker] settings (core/retry/retry.c); the main file sets the
 * defaults, a providers.d/ file may override each key for its provider. */
enum {
    CORE_RS_ATTEMPTS,        /* [retry] attempts: tries in all, 1 = none */
    CORE_RS_BASE,            /* [retry] base: first backoff ceiling, ns */
    CORE_RS_CAP,             /* [retry] cap: largest backoff ceiling, ns */
    CORE_RS_RETRY_AFTER_MAX, /* [retry] max_retry_after, ns */
    CORE_RS_DEADLINE,        /* [retry] deadline: time budget of an op, ns */
    CORE_RS_FAILURES,        /* [breaker] failures: consecutive to open */
    CORE_RS_OPEN_TIME,       /* [breaker] open_time, ns */
    CORE_RS_TRIALS,          /* [breaker] trials in half-open at once */
    CORE_RS_COUNT
};

typedef struct core_resil_conf {
    uint64_t v[CORE_RS_COUNT];
    bool set[CORE_RS_COUNT];
} core_resil_conf;

/* [provider] price_per_second, price_per_sandbox, currency */
typedef struct core_price {
    bool set; /* a price was given: else no cost is reported */
    double per_second, per_sandbox;
    char currency[16]; /* "" until set: USD */
} core_price;

/* providers.d/NAME.ini */
typedef struct core_provider_conf {
    char *name; /* from the file name */
    char *file; /* the ini's path */
    bool enabled;
    bool optional;
    int priority;           /* higher first; default 0 (local: 100) */
    char *module;           /* explicit path to NAME.so, or NULL */
    core_setting *settings; /* the [settings] section, checked by the loader */
    size_t n_settings;
    core_resil_conf resil; /* its [retry] and [breaker] overrides */
    /* unenforced_limits, the limits it may run without: 0 when not
     * given, 1 from [settings] (the docker provider's older spelling),
     * 2 from [provider], which wins. */
    int unenforced_from;
    uint64_t unenforced_ok;
    core_price price; /* what its sandboxes cost (polysandbox eval) */
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
    char **extensions; /* NULL-terminated, each with its dot: ".py" */
    char *source;      /* file name the code is written to: "main.py" */
    char **compile;    /* NULL-terminated argv, or NULL: none */
    char **run;        /* NULL-terminated argv */
    char *image;       /* image or rootfs for providers that take one, or NULL */
    sbx_kv_v1 *images; /* image.PROVIDER = NAME: per provider (owned strings) */
    size_t n_images;
    char **zygote;  /* NULL-terminated: interpreter, modules to preload; or NULL */
    sbx_kv_v1 *env; /* extra environment (owned strings) */
    size_t n_env;
    char *artifacts;              /* output directory (relative to the work directory)
                               whose files come back with the result, or NULL */
    uint64_t artifacts_max_file;  /* per-file cap, bytes */
    uint64_t artifacts_max_total; /* cap on all of a run's artifacts, bytes */
    char **requires;              /* NULL-terminated absolute paths the runtime needs on
                               the host, or NULL */
    bool egress;                  /* network = egress: its sandboxes may connect out */
    const char *missing;          /* its compiler or interpreter when not on the host (in
                               compile or run), else the first of requires that
                               is not, else NULL */
    bool missing_required;        /* missing is one of requires */
} core_template_conf;

/* pools.d/NAME.ini, or pool.NAME.KEY overrides.  The settings are kept as
 * written ([pool] keys as "KEY", [limits] keys as "limits.KEY", in the
 * order read, later wins) and checked by core/pool/pool.c, whose errors name
 * each setting's file and line. */
typedef struct core_pool_conf {
    char *name;
    char *file; /* the ini's path, or "command line" */
    core_setting *settings;
    size_t n_settings;
} core_pool_conf;

/* [eval]: what a dataset or samples file may hold, checked while it is
 * read (core/eval/eval-jsonl.c), so a bad or hostile file is refused before it
 * takes memory. */
typedef struct core_eval_caps {
    uint64_t input;   /* decompressed bytes of one file */
    uint64_t line;    /* bytes of one line (record) */
    uint64_t records; /* records of one file */
} core_eval_caps;
#define CORE_EVAL_MAX_INPUT "256M"
#define CORE_EVAL_MAX_LINE "1M"
#define CORE_EVAL_MAX_RECORDS "1000000"

typedef struct core_config {
    char *dir;                            /* the system configuration directory */
    char **dirs;                          /* every configuration directory read, in
                                         * order (a later one overrides), or NULL */
    char *default_provider;               /* [core] default_provider, or NULL */
    char **provider_order;                /* [core] order, NULL-terminated, or NULL */
    char **fallback;                      /* [core] fallback, NULL-terminated, or NULL */
    char **provider_path;                 /* directories searched for NAME.so, NULL-terminated */
    char *state_dir;                      /* [core] state_dir */
    char *image_dir;                      /* [core] image_dir, or NULL: state_dir/images */
    core_platform image_platform;         /* [core] image_platform, when image_platform_set */
    bool image_platform_set;              /* else an index gives this machine's entry */
    uint64_t limits[SBX_LIMIT_COUNT];     /* [limits] defaults */
    uint64_t max_limits[SBX_LIMIT_COUNT]; /* [limits] max_* */
    core_provider_conf *providers;        /* every providers.d/ file */
    size_t n_providers;
    core_template_conf *templates; /* every templates.d/ file */
    size_t n_templates;
    core_resil_conf resil; /* [retry] and [breaker] */
    core_pool_conf *pools; /* every pools.d/ file and pool.* override */
    size_t n_pools;
    bool pools_off;           /* [core] pools = false: start none */
    core_eval_caps eval_caps; /* [eval] max_input, max_line, max_records */
    uint64_t unenforced_ok;   /* [core] unenforced_limits (bits) */
    core_setting *app;        /* application sections: key "SECTION.KEY" */
    size_t n_app;
    core_setting *registries; /* [registry HOST]: key "HOST.username", "HOST.password" */
    size_t n_registries;
    char **private_paths; /* host->private_paths: what sandboxes never show */
} core_config;

#endif /* POLYSANDBOX_CONF_H */
