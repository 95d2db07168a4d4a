/* polysandbox/provider.h - the provider plugin SDK, ABI 1
 *
 * A provider is a shared object that exports exactly one data symbol,
 * `sandbox_provider_v1`, defined with SBX_PROVIDER_DEFINE().  The core
 * dlopens it, validates the descriptor (magic, ABI, sizes, strings, name,
 * mandatory ops, capabilities, in that order), copies descriptor and ops
 * into zeroed storage of its own, then calls ops->init with the host table.
 *
 * Rules for provider authors:
 *  - Never link libpolysandbox: everything the core lends is in the host
 *    table (sbx_host_v1).  Do not print; log through host->log.
 *  - Whoever allocates frees.  Each op says who owns each pointer:
 *    "(transfer none)" = borrowed for the call only; "(transfer full)" =
 *    ownership passes to the callee.
 *  - Ops may be called from several threads at once, on different
 *    sandboxes; calls on one sandbox are serialised by the core.
 *  - On failure an op returns an sbx_status and should call
 *    host->set_error() with a message naming what failed.  If it does not,
 *    the core records a generic error and the conformance kit flags it.
 *
 * ABI policy: the descriptor, ops table and host table are append-only.
 * New slots go after the "ABI 1.N ends here" markers; the core copies
 * min(struct_size, its own size) and treats missing slots as NULL.  A new
 * major means a new symbol (sandbox_provider_v2).
 *
 * Depends on <stdint.h> and <stddef.h> only (through common.h).
 */
#ifndef POLYSANDBOX_PROVIDER_H
#define POLYSANDBOX_PROVIDER_H

#include <polysandbox/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/** "SBXP": first field of every descriptor.  Since: 0.1 */
#define SBX_PROVIDER_MAGIC UINT32_C(0x53425850)
/** The ABI this header describes.  Since: 0.1 */
#define SBX_ABI_MAJOR 1
#define SBX_ABI_MINOR 12

/**
 * SBX_PROVIDER_ABI_MINOR:
 *
 * The minor a provider's descriptor declares (SBX_PROVIDER_DEFINE), by
 * default SBX_ABI_MINOR.  A provider that keeps an older minor's contract
 * while built against this header (say it still gives its retry hints
 * through host->not_started, as before 1.12) defines it to that minor
 * before including this header: the core then treats it as that minor.
 * Since 0.3, ABI 1.12 */
#ifndef SBX_PROVIDER_ABI_MINOR
#define SBX_PROVIDER_ABI_MINOR SBX_ABI_MINOR
#endif

/** Opaque per-provider handle the core passes back in host calls. */
typedef struct sbx_host_handle sbx_host_handle;

/** A key/value pair (labels, settings).  Since: 0.1 */
typedef struct sbx_kv_v1 {
    const char *key;
    const char *value;
} sbx_kv_v1;

/**
 * sbx_limits_v1:
 *
 * Limits of a sandbox, always concrete: the core resolves defaults and
 * administrator maxima before any op sees them, so no field is 0 except
 * where noted.  Since: 0.1
 */
typedef struct sbx_limits_v1 {
    uint64_t wall_ns;        /* wall clock per exec (exec spec may lower it) */
    uint64_t cpu_ns;         /* CPU time per exec */
    uint64_t memory_bytes;   /* memory, swap excluded (swap is 0) */
    uint64_t pids;           /* processes and threads */
    uint64_t nofile;         /* open files per process */
    uint64_t fsize_bytes;    /* largest file a process may write */
    uint64_t disk_bytes;     /* writable work area (tmpfs size) */
    uint64_t stdout_bytes;   /* cap on collected stdout per exec */
    uint64_t stderr_bytes;   /* cap on collected stderr per exec */
} sbx_limits_v1;

/**
 * sbx_create_spec_v1:
 *
 * What to create.  All pointers (transfer none): valid for the create call
 * only; copy what you keep.  Since: 0.1
 */
typedef struct sbx_create_spec_v1 {
    size_t struct_size;          /* sizeof(sbx_create_spec_v1) of the core */
    const char *template_name;   /* language template name, or NULL */
    const char *image;           /* image or root filesystem, or NULL for the provider default */
    sbx_limits_v1 limits;
    sbx_network network;
    int persistent;              /* non-zero: outlives the creating process until destroy */
    const sbx_kv_v1 *env;        /* default environment of every exec */
    size_t n_env;
    const sbx_kv_v1 *labels;     /* includes the core's owner and ttl labels */
    size_t n_labels;
    uint64_t ttl_ns;             /* time-to-live for reaping leaked sandboxes; 0 = none */
    /* ABI 1.0 ends here. */

    /* Since 0.3, ABI 1.7 (the core always passes it; a provider built
     * against an older header never reads it).
     *
     * Non-zero when @image was asked for: the caller's (polysandbox run
     * --image, sbx_create_opts_set_image) or the template's
     * image.PROVIDER naming this provider.  Zero when @image is NULL or
     * only the template's plain `image` key, a default meant for the
     * providers that run such images (docker names, say).  A provider
     * that cannot run the image it is given (it runs no images, or
     * none of that kind) refuses an asked one with SBX_E_NOTSUP, having
     * started nothing, in a message that names itself and the image; it may ignore a default one (and says so in
     * its doctor).  A limit that cannot be applied is refused, never
     * silently dropped: an image is no different. */
    int image_explicit;

    /* Since 0.3, ABI 1.11 (the core always passes it; a provider built
     * against an older header never reads it, and never gets a non-zero
     * one: the core passes it only to a provider claiming SBX_CAP_EGRESS,
     * which the loader refuses from one built before 1.11).
     *
     * Non-zero: the sandbox may open outbound connections (its template
     * says `network = egress`, and the request did not narrow it), through
     * a user-mode network of the provider's (@network stays SBX_NET_NONE).
     * A provider that cannot give it here (a helper missing on the host,
     * say) refuses the create with SBX_E_NOTSUP, having started nothing,
     * in a message naming what is missing; it never runs the sandbox
     * without network instead, nor with the host's. */
    int egress;
} sbx_create_spec_v1;

/** A file to place in the work directory before an exec.  Since: 0.1 */
typedef struct sbx_file_v1 {
    const char *path;    /* relative to the work directory; no "..", not absolute */
    const void *data;
    size_t len;
    uint32_t mode;       /* permission bits, e.g. 0644 or 0755 */
} sbx_file_v1;

/**
 * sbx_exec_spec_v1:
 *
 * One execution.  All pointers (transfer none), valid for the exec call.
 * Since: 0.1
 */
typedef struct sbx_exec_spec_v1 {
    size_t struct_size;
    const char *const *argv;     /* NULL-terminated, argv[0] looked up in PATH */
    const sbx_kv_v1 *env;        /* added to (and overriding) the sandbox's */
    size_t n_env;
    const char *cwd;             /* NULL: the work directory */
    const void *stdin_data;      /* NULL with stdin_len 0: stdin is empty (EOF) */
    size_t stdin_len;
    const sbx_file_v1 *files;    /* written before the command starts */
    size_t n_files;
    uint64_t timeout_ns;         /* wall clock of this exec, never 0 */
    /* The output caps, in bytes per stream.  The core applies them, in
     * the sink (see sbx_output_sink_v1); a provider may use them to read
     * or ask its backend for no more than it needs (cap + 1 bytes tells
     * "cut" from "whole"), never to keep output under a cap itself. */
    uint64_t stdout_cap;
    uint64_t stderr_cap;
    /* ABI 1.0 ends here. */

    /* Since 0.2, ABI 1.3 (the core always passes it; a provider built
     * against an older header never reads it).
     *
     * -1, or a file descriptor (transfer none, never read nor closed by
     * the provider) that becomes readable (POLLIN) when the caller
     * cancels this exec (sbx_cancel).  A provider that claims
     * SBX_CAP_CANCEL polls it beside the command's output and, once it is
     * readable (also when it already is at the start), kills the command
     * and every process it started and returns SBX_E_CANCELLED, promptly
     * (within a second or so).  Others ignore it: the core then stops the
     * command at its next output, or it runs to timeout_ns. */
    int cancel_fd;

    /* Since 0.2, ABI 1.4 (the core always passes it).
     *
     * -1, or a file descriptor (transfer none: never closed by the
     * provider) to read the command's stdin from while it runs, in place
     * of stdin_data (which is then empty): every byte read is delivered
     * to the command's stdin in order, as soon as the command can take
     * it (a provider reads no more while the command has not taken what
     * it read: a slow reader holds the writer back), and end of file on
     * it closes the command's stdin.  It may be a blocking fd: read it
     * only when poll() says POLLIN (or POLLHUP).  When the command closes
     * its stdin, what it did not take is dropped.  Set only for a
     * provider that claims SBX_CAP_STDIN_STREAM (the core refuses the
     * exec for the others).  Never set for a template's compile step. */
    int stdin_fd;

    /* Since 0.3, ABI 1.8 (the core always passes it).
     *
     * -1, or a file descriptor (transfer none: never closed by the
     * provider) of signals for the running command: each byte read is a
     * signal number, one of SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2,
     * SIGTERM, SIGALRM or SIGWINCH (Linux numbering: those
     * sbx_signal_deliverable of common.h accepts), which the provider
     * delivers to the command's process group as soon as the command
     * runs (one read before it started is held until it does); other
     * bytes are ignored (the core's caller checks them: SIGKILL is
     * sbx_cancel's).  End of file: no more signals.  Read it only when
     * poll() says POLLIN.  Set only for a provider that claims
     * SBX_CAP_SIGNAL (the core refuses the exec for the others).  Never
     * set for a template's compile step. */
    int signal_fd;
    /* ABI 1.8 ends here. */

    /* Since 0.3, ABI 1.12 (the core always passes it; a provider built
     * against an older header never reads it, and is asked through
     * ops->exec_zygote instead).
     *
     * NULL, or the template's `zygote` key (NULL-terminated): the warm
     * interpreter, then what it may preload.  A provider that claims
     * SBX_CAP_ZYGOTE starts the command by forking that prepared
     * interpreter instead of executing it afresh, when it can; with the
     * same limits, statuses and outcome as without, and each exec still
     * in a fresh sandbox of its own (namespaces, cgroup, filter, work and
     * temporary directories): the zygote never runs untrusted code and
     * nothing of one exec is visible to the next.  When this command
     * cannot go through a zygote (another program, no zygote to be had)
     * it runs as if @zygote were NULL.  Others ignore it. */
    const char *const *zygote;
} sbx_exec_spec_v1;

/**
 * sbx_output_sink_v1:
 *
 * Where a provider delivers output, chunk by chunk, in order, while the
 * command runs (SBX_CAP_STREAM) or after it.  Buffers are (transfer none).
 *
 * The core holds the output caps here, once, for every provider: it keeps
 * at most stdout_cap/stderr_cap bytes of each stream, drops the rest, sets
 * the result's truncated flag of a stream it cut and makes the run an
 * SBX_RUN_OUTPUT_LIMIT, whatever the provider then reports.  A provider
 * need not count bytes nor set the outcome's truncated flags (since 0.3;
 * the core still honours them when set).
 *
 * @write returns 0, or non-zero to ask the provider to stop delivering
 * (past a cap, or when the caller or a cancellation stopped the exec).  A
 * provider must then stop delivering, kill the command and every process
 * it started, and report SBX_RUN_OUTPUT_LIMIT.  One that does not is still
 * cut at the caps (its output is bounded), but its command runs on to its
 * end or timeout_ns.  Since: 0.1
 */
typedef struct sbx_output_sink_v1 {
    int (*write)(void *ud, int stream, const void *buf, size_t len);
    void *ud;
} sbx_output_sink_v1;

/**
 * sbx_exec_outcome_v1:
 *
 * Filled by ops->exec.  The core zeroes it and sets struct_size before
 * the call.  Unknown figures stay at -1 where the type is signed; the core
 * presets cpu_ns and peak_memory_bytes to -1.  Since: 0.1
 */
typedef struct sbx_exec_outcome_v1 {
    size_t struct_size;
    sbx_run_status status;
    int exit_code;             /* valid when the process exited */
    int signal;                /* terminating signal, or 0 */
    int stdout_truncated;      /* optional: the core sets the flags of */
    int stderr_truncated;      /* the streams it cut (sbx_output_sink_v1) */
    int64_t cpu_ns;            /* user + system CPU, -1 unknown */
    int64_t peak_memory_bytes; /* -1 unknown */
    uint64_t start_ns;         /* time spent before the command ran */
    uint64_t exec_ns;          /* time the command ran */
    /* ABI 1.0 ends here. */

    /* Since 0.3, ABI 1.12: the retry hints of a failed exec, read by the
     * core only when ops->exec returns an error (it zeroes them before
     * the call).  A core before 1.12 hands a smaller outcome: write them
     * only when SBX_OUTCOME_HAS(out, field) says the slot is there (such
     * a core then does not retry on them, which is safe).
     *
     * Non-zero: the exec never started the command (the request was
     * refused before reaching the sandbox, say), so the core may run it
     * again on the same sandbox.  Set it only when sure. */
    int not_started;
    /* The backend asked to wait this long before trying again (HTTP 429
     * or 503 with Retry-After); 0: it said nothing.  The core waits at
     * least that long, up to its [retry] max_retry_after, before a
     * retry. */
    uint64_t retry_after_ms;
} sbx_exec_outcome_v1;

/**
 * SBX_OUTCOME_HAS:
 * @out: the sbx_exec_outcome_v1 * that exec was given
 * @field: a slot of sbx_exec_outcome_v1
 *
 * Non-zero when the core's outcome has @field (its struct_size covers
 * it).  Since 0.3, ABI 1.12
 */
#define SBX_OUTCOME_HAS(out, field)                                          \
    ((out)->struct_size >= offsetof(sbx_exec_outcome_v1, field) +            \
                               sizeof((out)->field))

/** Callback of ops->list: one sandbox.  Strings (transfer none).  Since: 0.1 */
typedef int (*sbx_list_cb_v1)(void *ud, const char *id, const sbx_kv_v1 *labels,
                              size_t n_labels, uint64_t created_unix_ns);

/** Callback of ops->doctor: one host check.  A check that passes but
 * advises a change (a host setting that would be safer otherwise) says
 * so with "advice:" in @detail; 'polysandbox doctor' shows it as WARN.
 * Since: 0.1 */
typedef void (*sbx_doctor_cb_v1)(void *ud, const char *check, int ok,
                                 const char *detail);

/**
 * sbx_setting_type_v1:
 *
 * How host->settings_read reads one key of providers.d/NAME.ini, and
 * what it stores at the entry's offset.  Every numeric type has the
 * grammar of the core's own settings (polysandbox.ini(5)): one number,
 * an optional unit, nothing else; fractions only where they come out
 * whole ("1.5s", "0.5K"); no sign except an integer's "-".
 *  - SBX_SETTING_STRING: `const char *` (transfer none: the core's copy,
 *    or the entry's default, valid until fini).
 *  - SBX_SETTING_SECRET: `int`, 1 when the credential is set, else 0.
 *    The key must be one of the descriptor's secret_keys; its value is
 *    never read here nor shown in an error: open it with secret_get.
 *  - SBX_SETTING_BOOL: `int`, 0 or 1, from true/false, yes/no, on/off or
 *    1/0 (any case).
 *  - SBX_SETTING_INT: `int64_t`, a whole number ("-3", "40").
 *  - SBX_SETTING_DURATION: `uint64_t` nanoseconds, from ns, us, ms, s, m
 *    or h ("250ms", "30s", "5m"); a bare number is seconds.
 *  - SBX_SETTING_SIZE: `uint64_t` bytes, from K, M, G or T, powers of
 *    1024 in any spelling ("64M", "1GiB"); a bare number is bytes.
 *  - SBX_SETTING_ENUM: `int`, the index in the entry's choices of the
 *    value (compared exactly).
 * Since 0.3, ABI 1.9
 */
typedef enum sbx_setting_type_v1 {
    SBX_SETTING_STRING = 1,
    SBX_SETTING_SECRET,
    SBX_SETTING_BOOL,
    SBX_SETTING_INT,
    SBX_SETTING_DURATION,
    SBX_SETTING_SIZE,
    SBX_SETTING_ENUM
} sbx_setting_type_v1;

/**
 * sbx_setting_v1:
 *
 * One entry of the table a provider gives host->settings_read; a table
 * ends with an entry whose @key is NULL.  Every string is (transfer
 * none) and static in practice: the core keeps none of them past the
 * call, except that a STRING field may point at @def.  Since 0.3, ABI 1.9
 */
typedef struct sbx_setting_v1 {
    /* The ini key: one of the descriptor's config_keys (or secret_keys). */
    const char *key;
    /* An sbx_setting_type_v1. */
    int type;
    /* The value when the key is unset or empty, written in the grammar
     * of @type ("60s", "true", "auto"); NULL: an unset key leaves the
     * field as it is (0 or NULL from the caller's calloc, say). */
    const char *def;
    /* Inclusive bounds of INT, DURATION and SIZE values, written like a
     * value ("1s", "1h", "64M", "-5"); NULL: none on that side.  Ignored
     * by the other types. */
    const char *min;
    const char *max;
    /* ENUM: the accepted values, NULL-terminated.  Ignored otherwise. */
    const char *const *choices;
    /* Optional: a check of a parsed, in-bounds value (the ini's text, or
     * @def): NULL when it is fine, else why not, a static string
     * ("is not an http(s) URL") that the core puts after the file, line,
     * key and value.  Not called for SECRET nor for an unset key
     * without a default. */
    const char *(*check)(const char *value);
    /* Where the value goes: offsetof() the field in the caller's @base. */
    size_t offset;
} sbx_setting_v1;

/**
 * sbx_host_v1:
 *
 * The core's table, handed to ops->init.  Valid until ops->fini returns.
 * Never assume a field past struct_size exists.  Since: 0.1
 */
typedef struct sbx_host_v1 {
    size_t struct_size;
    uint32_t abi_major;
    uint32_t abi_minor;

    /* Log a line tagged with the provider name.  Never log secrets. */
    void (*log)(sbx_host_handle *h, int level, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
    /* Set the calling thread's error: code and message.  Returns code. */
    int (*set_error)(sbx_host_handle *h, int code, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));
    /* A setting from providers.d/NAME.ini (one of the declared keys), or
     * NULL if unset.  (transfer none): valid until fini. */
    const char *(*config_get)(sbx_host_handle *h, const char *key);
    /* Open a credential setting into secure memory.  On success *out
     * points at a NUL-terminated value of *len bytes (transfer none);
     * give it back with secret_release as soon as the call needs it no
     * more.  SBX_E_NOT_FOUND if the key is unset. */
    int (*secret_get)(sbx_host_handle *h, const char *key,
                      const char **out, size_t *len);
    void (*secret_release)(sbx_host_handle *h, const char *value);
    /* Allocation with the core's allocator, for anything the core frees. */
    void *(*alloc)(size_t size);
    void (*free)(void *p);
    /* Where the provider may keep state across processes (e.g.
     * $localstatedir/lib/polysandbox/NAME); the provider creates it.
     * (transfer none). */
    const char *(*state_dir)(sbx_host_handle *h);
    /* ABI 1.0 ends here. */

    /* Since 0.1, ABI 1.1 (check host->struct_size or host->abi_minor >= 1
     * before calling).  Both describe the error the current op is about to
     * return, on the calling thread; call them before or after set_error.
     *
     * Since ABI 1.12 an exec gives its hints in its outcome
     * (sbx_exec_outcome_v1.not_started and retry_after_ms), and the core
     * ignores these two during the exec of a provider that declares 1.12
     * or later: both are deprecated for exec, kept for the providers
     * built before.  Create has no outcome: it keeps retry_after (an
     * out-parameter would have changed the create op's signature, which
     * the append-only ABI cannot; create's hint, unlike exec's, needs no
     * per-call record the provider holds: it is the error it returns). */

    /* The backend asked to wait @ms before trying again (HTTP 429 or 503
     * with Retry-After).  The core waits at least that long, up to its
     * [retry] max_retry_after, before retrying a retryable error.  For
     * create, attach, list, destroy and the file ops; an exec of a 1.12
     * provider says it in its outcome instead. */
    void (*retry_after)(sbx_host_handle *h, uint64_t ms);
    /* Deprecated since ABI 1.12 (the outcome's not_started): the failing
     * exec never started the command (e.g. the request was refused before
     * reaching the sandbox), so the core may safely retry it on the same
     * sandbox.  Call it only when sure.  Honoured only from a provider
     * that declares a minor before 1.12. */
    void (*not_started)(sbx_host_handle *h);
    /* ABI 1.1 ends here. */

    /* Since 0.2, ABI 1.5 (check host->struct_size covers it and that it
     * is not NULL before calling: a core before 1.5 has no such slot).
     *
     * A limit that was asked for and cannot be applied is refused or
     * reported, never silently dropped.  Call this from ops->create when
     * the sandbox being made will run without the limits @limits
     * (SBX_LIMIT_BIT_* of <polysandbox/common.h>; every limit of
     * sbx_limits_v1 is always asked for), once per reason, before
     * anything of the caller's runs; @why (transfer none) says why
     * ("cgroup v1 and not root: no memory cgroup to write").  Call it
     * from ops->attach too (a sandbox opened again runs without them
     * still).
     *
     * The core decides, from the administrator's unenforced_limits
     * setting (polysandbox.ini(5)):
     *  - SBX_OK: allowed; go on.  The results of the sandbox's execs say
     *    which limits were not enforced, and why.
     *  - SBX_E_PERM, with the thread's error set (naming the limits,
     *    their values, @why and the setting): in ops->create, return it,
     *    having undone what create made (the core destroys a sandbox
     *    whose create returned SBX_OK all the same).  In ops->attach it
     *    is never returned: the core refuses every exec of that sandbox
     *    instead, so that it can still be destroyed. */
    int (*limits_unenforced)(sbx_host_handle *h, uint64_t limits, const char *why);
    /* ABI 1.5 ends here. */

    /* Since 0.2, ABI 1.6 (check host->struct_size covers it and that it
     * is not NULL before calling: a core before 1.6 has no such slot).
     * The orchestrator's own host paths, which no sandbox may ever
     * show: the configuration directories read (the one in use, the
     * system one, the user's), the state directory and the directories
     * provider modules come from.  Absolute, as configured (not resolved); a
     * NULL-terminated list, (transfer none), valid until fini. */
    const char *const *(*private_paths)(sbx_host_handle *h);
    /* ABI 1.6 ends here. */

    /* Since 0.3, ABI 1.9 (check host->struct_size covers it and that it
     * is not NULL before calling: a core before 1.9 has no such slot;
     * SBX_HOST_HAS(host, settings_read) does both).
     *
     * Read the provider's [settings] into @base, one entry of @table at a
     * time, in order (see sbx_setting_v1; @entry_size is
     * sizeof(sbx_setting_v1), so that entries may grow).  An unset or
     * empty key takes the entry's default.  Keys the provider does not
     * declare never reach it: the loader refuses them before init, as
     * for every provider.  Nothing is allocated: nothing to free.
     *
     * Returns SBX_OK; SBX_E_CONFIG for a bad value, with the thread's
     * error set to "FILE:LINE: KEY = 'VALUE': why" (the file and line the
     * value came from, "command line" for an override; a credential's
     * value is never shown); SBX_E_INVAL, error set, for a defect of the
     * table itself (an undeclared key, an unknown type, a default or a
     * bound that does not parse), which is the provider's bug.  On an
     * error, the entries before the failing one are stored. */
    int (*settings_read)(sbx_host_handle *h, const sbx_setting_v1 *table,
                         size_t entry_size, void *base);
    /* ABI 1.9 ends here. */

    /* Since 0.3, ABI 1.10 (SBX_HOST_HAS(host, path_check) and
     * SBX_HOST_HAS(host, clock_ns) check before calling).
     *
     * Check a file path of upload or download (or any path a caller
     * names inside the work directory) with the rule every provider
     * applies: 1 to SBX_PATH_MAX - 1 bytes, relative, at most
     * SBX_PATH_DEPTH_MAX components, none empty, "." or "..", no control
     * character (below 0x20, or 0x7f).  It looks at the string only: a
     * link inside the sandbox is the provider's to refuse as it opens.
     * Returns SBX_OK; SBX_E_PATH with the thread's error set to a message
     * that names the path (its control characters escaped). */
    int (*path_check)(sbx_host_handle *h, const char *path);
    /* The core's monotonic clock, in nanoseconds (CLOCK_MONOTONIC, the
     * clock of its deadlines and timings).  A provider that measures its
     * phases or waits for a deadline with it agrees with the core's
     * figures, and a unit test (polysandbox/provider-test.h) can move it. */
    uint64_t (*clock_ns)(sbx_host_handle *h);
    /* ABI 1.10 ends here. */
} sbx_host_v1;

/** Bounds of host->path_check (ABI 1.10): bytes including the NUL, and
 * components.  Since: 0.3 */
#define SBX_PATH_MAX 4096
#define SBX_PATH_DEPTH_MAX 64

/**
 * SBX_HOST_HAS:
 * @host: the const sbx_host_v1 * that init was given
 * @field: a slot of sbx_host_v1
 *
 * Non-zero when the core's host table has @field (its struct_size
 * covers it) and the slot is set.  Since 0.3, ABI 1.9
 */
#define SBX_HOST_HAS(host, field)                                           \
    ((host)->struct_size >= offsetof(sbx_host_v1, field) +                  \
                                sizeof((host)->field) &&                    \
     (host)->field != NULL)

/**
 * sbx_provider_ops_v1:
 *
 * The ops table.  Slots marked Mandatory must be non-NULL; Optional NULL
 * means "not supported" (the core answers SBX_E_NOTSUP).  `prov` is the
 * provider context init returned; `sb` a sandbox handle create or attach
 * returned.  Since: 0.1
 */
typedef struct sbx_provider_ops_v1 {
    /* Mandatory: set up the provider.  @host stays valid until fini.
     * Store @h for host calls.  *prov (transfer full) is handed back to
     * every op.  Must not start threads that outlive fini.
     * Returns SBX_OK; SBX_E_CONFIG (a bad setting: name the key),
     * SBX_E_PERM (the host lacks a privilege), SBX_E_NOMEM; any failure
     * leaves the provider unavailable (SBX_E_LOAD_INIT to the caller). */
    int (*init)(const sbx_host_v1 *host, sbx_host_handle *h, void **prov);

    /* Mandatory: release everything init made.  The code stays mapped. */
    void (*fini)(void *prov);

    /* Mandatory: create a sandbox.  On success *sb (transfer full, freed
     * by destroy or release) and @id (NUL-terminated, < SBX_ID_MAX bytes,
     * [A-Za-z0-9._-] only) are set.
     * Returns SBX_OK; SBX_E_DECLINED (not mine: the core tries the next
     * provider), SBX_E_LIMIT (a limit above what this backend allows),
     * SBX_E_NOTSUP (the spec asks what this provider cannot do), the
     * transient SBX_E_NETWORK, SBX_E_SERVER, SBX_E_RATE_LIMITED,
     * SBX_E_BUSY, SBX_E_TIMEOUT (retried), SBX_E_AUTH, SBX_E_BACKEND. */
    int (*create)(void *prov, const sbx_create_spec_v1 *spec, void **sb,
                  char id[SBX_ID_MAX]);

    /* Mandatory: run one command in @sb and wait for it.  Return SBX_OK
     * whenever the command's fate is known (whatever its status) and fill
     * @out; return an error only when the sandbox failed, which the core
     * reports as SBX_RUN_SANDBOX_ERROR.
     * Returns SBX_OK; SBX_E_BACKEND, SBX_E_IO or a transient code
     * (SBX_E_NETWORK, SBX_E_SERVER, SBX_E_BUSY, SBX_E_TIMEOUT: the core
     * retries the exec only when @out's not_started says nothing ran, and
     * waits @out's retry_after_ms first; before ABI 1.12: host->not_started
     * and host->retry_after);
     * SBX_E_CANCELLED when spec->cancel_fd fired before the command's fate
     * was known. */
    int (*exec)(void *prov, void *sb, const sbx_exec_spec_v1 *spec,
                const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *out);

    /* Mandatory: destroy the sandbox and free @sb (transfer full), even
     * when destruction failed.  Nothing the sandbox ran may survive.
     * Destroying an already destroyed sandbox by a stale handle is
     * impossible (the handle is gone); destroy by id goes through attach,
     * which answers SBX_E_NOT_FOUND.
     * Returns SBX_OK; SBX_E_BACKEND or a transient code when something
     * may have survived (the core records it for gc). */
    int (*destroy)(void *prov, void *sb);

    /* Optional (required by SBX_CAP_PERSISTENT): open an existing sandbox
     * by @id (transfer none).
     * Returns SBX_OK; SBX_E_NOT_FOUND if there is none, a transient
     * code, SBX_E_BACKEND. */
    int (*attach)(void *prov, const char *id, void **sb);

    /* Optional (required by SBX_CAP_PERSISTENT): free @sb (transfer full)
     * without destroying the sandbox. */
    void (*release)(void *prov, void *sb);

    /* Optional (required by SBX_CAP_LIST): call @cb once per sandbox of
     * this provider whose labels include every pair of @filter (transfer
     * none).  A non-zero return from @cb stops the walk and is returned.
     * Returns SBX_OK, @cb's non-zero return, or the backend's error. */
    int (*list)(void *prov, const sbx_kv_v1 *filter, size_t n_filter,
                sbx_list_cb_v1 cb, void *ud);

    /* Optional (required by SBX_CAP_FILES): write @len bytes at @path
     * (relative to the work directory) with @mode, creating parent
     * directories.  Never follows a link the sandbox made.
     * Returns SBX_OK; SBX_E_PATH (a link, "..", absolute), SBX_E_LIMIT
     * (over the sandbox's disk quota), SBX_E_IO, SBX_E_BACKEND. */
    int (*upload)(void *prov, void *sb, const char *path, const void *data,
                  size_t len, uint32_t mode);

    /* Optional (required by SBX_CAP_FILES): read the regular file at @path
     * (relative to the work directory), at most @max bytes.  *data
     * (transfer full) is allocated with host->alloc.  Never follows a link
     * the sandbox made.
     * Returns SBX_OK; SBX_E_PATH (a link, "..", absolute, not a regular
     * file), SBX_E_NOT_FOUND, SBX_E_LIMIT (larger than @max), SBX_E_IO,
     * SBX_E_BACKEND. */
    int (*download)(void *prov, void *sb, const char *path, size_t max,
                    void **data, size_t *len);

    /* Optional: cheap liveness probe of the backend.
     * Returns SBX_OK when a create would be attempted now; else the code
     * create would most likely fail with (with host->set_error). */
    int (*health)(void *prov);

    /* Optional: report what the host has and lacks for this provider. */
    void (*doctor)(void *prov, sbx_doctor_cb_v1 cb, void *ud);

    /* ABI 1.0 ends here. */

    /* Since 0.1, ABI 1.2 (a provider built against 1.0 or 1.1 has no such
     * slot: the core sees NULL).  Deprecated since ABI 1.12: the zygote is
     * the exec spec's zygote hint, and ops->exec runs it (the core calls
     * this slot only for a provider that declares a minor from 1.2 to
     * 1.11; a 1.12 provider leaves it NULL, and claims SBX_CAP_ZYGOTE
     * without it).
     *
     * Optional (required by SBX_CAP_ZYGOTE before 1.12): run @spec in @sb as exec
     * does, with the same limits, statuses and outcome, but start the
     * command by forking a prepared, warm interpreter (a zygote) instead
     * of executing it afresh.  @zygote (transfer none, NULL-terminated) is
     * the template's `zygote` key: the interpreter, then what it may
     * preload.  The zygote never runs untrusted code; each exec still
     * gets a fresh sandbox of its own (namespaces, cgroup, filter, work
     * and temporary directories), nothing of one exec is visible to the
     * next.  Return SBX_E_NOTSUP, having started nothing, when this spec
     * cannot go through a zygote (another command, no zygote to be had):
     * the core then calls exec. */
    int (*exec_zygote)(void *prov, void *sb, const char *const *zygote,
                       const sbx_exec_spec_v1 *spec, const sbx_output_sink_v1 *sink,
                       sbx_exec_outcome_v1 *out);

    /* ABI 1.2 ends here. */
} sbx_provider_ops_v1;

/* ABI 1.3 (since 0.2) adds no op: sbx_exec_spec_v1 gained cancel_fd, and
 * SBX_CAP_CANCEL says the provider honours it (the loader refuses the bit
 * from a provider built against an older minor).  ABI 1.4 (since 0.2)
 * likewise: stdin_fd, and SBX_CAP_STDIN_STREAM.  ABI 1.8 (since 0.3)
 * likewise: signal_fd, and SBX_CAP_SIGNAL.  ABI 1.9 (since 0.3) adds
 * host->settings_read and its table (sbx_setting_v1); a provider built
 * against an older minor keeps reading its keys with config_get.  ABI
 * 1.10 (since 0.3) adds host->path_check and host->clock_ns.  ABI 1.11
 * (since 0.3) adds no op: sbx_create_spec_v1 gained egress, and
 * SBX_CAP_EGRESS says the provider honours it.  ABI 1.12 (since 0.3) adds
 * no op and ends two side channels: an exec's retry hints are
 * fields of its outcome (not_started, retry_after_ms) in place of
 * host->not_started and host->retry_after, and the zygote is the exec
 * spec's zygote hint in place of ops->exec_zygote; the core keeps both
 * old ways for providers that declare an older minor. */

/** Descriptor flags.  Since: 0.1 */
#define SBX_PROVIDER_F_GLOBAL_SYMBOLS (UINT64_C(1) << 0) /* dlopen RTLD_GLOBAL */
/* Since 0.2: commands run on the host's own system directories, not in an
 * image: a template is usable when its compiler and interpreter are on
 * the host, and sbx_create_spec_v1.image is only ever an absolute path
 * (a root file system directory).  The core passes no template image to
 * such a provider and refuses a caller's image name that is not a path
 * (an older core passes both through). */
#define SBX_PROVIDER_F_HOST_ROOT (UINT64_C(1) << 1)

/**
 * sbx_provider_v1:
 *
 * The descriptor.  The header fields come first and never move.  Define it
 * with SBX_PROVIDER_DEFINE, never by hand.  Since: 0.1
 */
typedef struct sbx_provider_v1 {
    /* fixed header */
    uint32_t magic;               /* SBX_PROVIDER_MAGIC */
    uint16_t abi_major;           /* SBX_ABI_MAJOR */
    uint16_t abi_minor;           /* SBX_PROVIDER_ABI_MINOR: the minor it keeps */
    uint32_t struct_size;         /* sizeof(sbx_provider_v1) */
    uint32_t ops_size;            /* sizeof(sbx_provider_ops_v1) */
    /* metadata: static strings */
    const char *name;             /* [a-z0-9_]+, equals the file's base name */
    const char *version;
    const char *description;
    const char *license;
    uint64_t capabilities;        /* SBX_CAP_* */
    uint64_t flags;               /* SBX_PROVIDER_F_* */
    const char *const *config_keys; /* NULL-terminated keys its ini may set */
    const char *const *secret_keys; /* NULL-terminated subset holding credentials */
    const sbx_provider_ops_v1 *ops;
    uint64_t reserved[2];         /* must be zero */
    /* ABI 1.0 ends here. */
} sbx_provider_v1;

#if defined(__GNUC__)
#define SBX_PROVIDER_EXPORT __attribute__((visibility("default")))
#else
#define SBX_PROVIDER_EXPORT
#endif

/**
 * SBX_PROVIDER_DEFINE:
 * @name_: string literal, the provider (and file) name
 * @version_, @description_, @license_: string literals
 * @caps_: SBX_CAP_* mask
 * @keys_: NULL-terminated array of accepted ini keys (may be NULL)
 * @secrets_: NULL-terminated array of credential keys (may be NULL)
 * @ops_: pointer to a const sbx_provider_ops_v1
 *
 * Defines the exported `sandbox_provider_v1` descriptor.  Since: 0.1
 */
#define SBX_PROVIDER_DEFINE(name_, version_, description_, license_, caps_, \
                            keys_, secrets_, ops_)                          \
    SBX_PROVIDER_DEFINE_FLAGS(name_, version_, description_, license_,      \
                              caps_, 0, keys_, secrets_, ops_)

/**
 * SBX_PROVIDER_DEFINE_FLAGS:
 * @flags_: SBX_PROVIDER_F_* mask
 *
 * SBX_PROVIDER_DEFINE with descriptor flags.  Since: 0.2
 */
#define SBX_PROVIDER_DEFINE_FLAGS(name_, version_, description_, license_,  \
                                  caps_, flags_, keys_, secrets_, ops_)     \
    SBX_PROVIDER_EXPORT extern const sbx_provider_v1 sandbox_provider_v1;  \
    SBX_PROVIDER_EXPORT const sbx_provider_v1 sandbox_provider_v1 = {      \
        SBX_PROVIDER_MAGIC, SBX_ABI_MAJOR, SBX_PROVIDER_ABI_MINOR,          \
        (uint32_t)sizeof(sbx_provider_v1),                                  \
        (uint32_t)sizeof(sbx_provider_ops_v1),                              \
        (name_), (version_), (description_), (license_), (caps_), (flags_), \
        (keys_), (secrets_), (ops_), {0, 0}}

#ifdef __cplusplus
}
#endif
#endif /* POLYSANDBOX_PROVIDER_H */
