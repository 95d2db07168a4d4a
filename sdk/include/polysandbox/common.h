/* polysandbox/common.h - codes and enums shared by embedders and providers
 *
 * Part of the provider SDK, installed with <polysandbox/provider.h> and
 * polysandbox-provider.pc, so that a provider builds with the SDK alone;
 * the embedding API's <polysandbox/sandbox.h> includes it in turn (the
 * core depends on the SDK, never the other way).  Depends on <stdint.h>,
 * <stddef.h>, <stdbool.h> and <signal.h> only.  Since: 0.1; in the SDK's files since 0.3 (the
 * same header, path and definitions as before: no API or ABI change).
 *
 * Every enum here is append-only: values are never renumbered or reused.
 * A retired value stays as SBX_E_OBSOLETE_n.
 */
#ifndef POLYSANDBOX_COMMON_H
#define POLYSANDBOX_COMMON_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * sbx_status:
 *
 * Return code of every fallible function in the embedding API and of every
 * provider op.  0 is success.  Detail (message, provider) lives in the
 * calling thread's error object, see sbx_ctx_last_error().
 *
 * Since: 0.1
 */
typedef enum sbx_status {
    SBX_OK = 0,
    SBX_E_NOMEM = 1,          /* allocation failed */
    SBX_E_INVAL = 2,          /* bad argument or request */
    SBX_E_CONFIG = 3,         /* bad configuration file or value */
    SBX_E_NOTSUP = 4,         /* the provider lacks this operation */
    SBX_E_DECLINED = 5,       /* "not mine, try the next provider" */
    SBX_E_NOT_FOUND = 6,      /* no such sandbox, provider, template, file */
    SBX_E_PROVIDER_UNAVAILABLE = 7, /* enabled but failed to load or init */
    SBX_E_BACKEND = 8,        /* the backend failed (sandbox error) */
    SBX_E_AUTH = 9,           /* credentials refused */
    SBX_E_TIMEOUT = 10,       /* a backend operation (not the code) timed out */
    SBX_E_IO = 11,            /* local I/O or system call failure */
    SBX_E_LIMIT = 12,         /* a requested limit is above the allowed maximum */
    SBX_E_BUSY = 13,          /* resource exhausted, try later */
    SBX_E_NETWORK = 14,       /* transport failure talking to a backend (retryable) */
    SBX_E_RATE_LIMITED = 15,  /* backend said 429 (retryable) */
    SBX_E_PERM = 16,          /* not permitted (host lacks a privilege) */
    SBX_E_EXISTS = 17,        /* already exists */
    SBX_E_INTERNAL = 18,      /* a bug: please report */
    SBX_E_PATH = 19,          /* unsafe path (link, "..", absolute) refused */
    SBX_E_SERVER = 20,        /* backend answered a server error, 5xx (retryable) */
    SBX_E_CANCELLED = 21,     /* the caller cancelled it (sbx_cancel; since 0.2) */

    /* Loader rejections, one per validation step (Since: 0.1). */
    SBX_E_LOAD_OPEN = 32,         /* dlopen failed */
    SBX_E_LOAD_NO_SYMBOL = 33,    /* no sandbox_provider_v1 symbol */
    SBX_E_LOAD_BAD_MAGIC = 34,    /* magic number is not SBX_PROVIDER_MAGIC */
    SBX_E_LOAD_ABI_MAJOR = 35,    /* ABI major differs from the core's */
    SBX_E_LOAD_ABI_MINOR = 36,    /* ABI minor newer than the core's */
    SBX_E_LOAD_SIZE = 37,         /* struct_size or ops_size too small */
    SBX_E_LOAD_STRING = 38,       /* a required string is missing or empty */
    SBX_E_LOAD_NAME_MISMATCH = 39, /* name differs from the file's base name */
    SBX_E_LOAD_MISSING_OP = 40,   /* a mandatory op is NULL */
    SBX_E_LOAD_CAPS = 41,         /* capability mask disagrees with the ops */
    SBX_E_LOAD_INIT = 42,         /* init failed */
    SBX_E_LOAD_BAD_NAME = 43,     /* name has characters outside [a-z0-9_] */
    SBX_E_LOAD_RESERVED = 44,     /* a reserved field is not zero */
    SBX_E_LOAD_UNSAFE = 45,       /* another user could change the module (owner, mode) */
} sbx_status;

/**
 * sbx_run_status:
 *
 * What became of one execution: one fixed taxonomy on every backend.
 * SBX_RUN_SANDBOX_ERROR is never a verdict on the code under test.
 *
 * Since: 0.1
 */
typedef enum sbx_run_status {
    SBX_RUN_OK = 0,             /* exited with code 0 */
    SBX_RUN_NONZERO_EXIT = 1,   /* exited with a non-zero code */
    SBX_RUN_SIGNAL = 2,         /* killed by a signal (not ours) */
    SBX_RUN_TIMEOUT = 3,        /* wall-clock limit reached, killed */
    SBX_RUN_CPU_LIMIT = 4,      /* CPU-time limit reached */
    SBX_RUN_MEMORY_LIMIT = 5,   /* OOM-killed under the memory limit */
    SBX_RUN_OUTPUT_LIMIT = 6,   /* an output stream passed its cap, killed */
    SBX_RUN_COMPILE_ERROR = 7,  /* the template's compile step failed */
    SBX_RUN_SANDBOX_ERROR = 8,  /* the sandbox failed, not the code */
    SBX_RUN_NOT_FOUND = 9,      /* the command does not exist (exit 127) */
    SBX_RUN_NOT_EXECUTABLE = 10, /* the command cannot be executed (exit 126) */
    SBX_RUN_SECCOMP = 11,       /* killed by the system-call filter */
    SBX_RUN_PIDS_LIMIT = 12,    /* process-count limit hit and the run failed */
} sbx_run_status;

#define SBX_RUN_STATUS_COUNT 13

/** Output streams, as passed to output callbacks.  Since: 0.1 */
enum {
    SBX_STREAM_STDOUT = 1,
    SBX_STREAM_STDERR = 2
};

/** Network policies of a sandbox.  Since: 0.1 */
typedef enum sbx_network {
    SBX_NET_NONE = 0,   /* no network; loopback inside the sandbox only */
    SBX_NET_HOST = 1,   /* the host's network: UNSAFE, opt-in only */
    /* Since 0.3: outbound network through a user-mode stack (the local
     * provider's slirp4netns, docker's bridge), only where the sandbox's
     * template allows it (its `network = egress`): a request may narrow
     * its template's policy, never widen it.  Never in a provider's
     * create spec: that carries sbx_create_spec_v1.egress instead. */
    SBX_NET_EGRESS = 2
} sbx_network;

/**
 * Capability bits of a provider (append-only, 64 bits).  A provider that
 * claims a bit must implement the ops it names; the loader checks it and
 * the conformance kit proves it.  Since: 0.1
 */
#define SBX_CAP_FILES          (UINT64_C(1) << 0) /* upload, download */
#define SBX_CAP_PERSISTENT     (UINT64_C(1) << 1) /* attach, release */
#define SBX_CAP_LABELS         (UINT64_C(1) << 2) /* labels kept, list filters */
#define SBX_CAP_STREAM         (UINT64_C(1) << 3) /* output streamed while running */
#define SBX_CAP_STDIN          (UINT64_C(1) << 4) /* stdin delivered */
#define SBX_CAP_NETWORK_POLICY (UINT64_C(1) << 5) /* network policy enforced */
#define SBX_CAP_LIST           (UINT64_C(1) << 6) /* list */
#define SBX_CAP_CONCURRENT     (UINT64_C(1) << 7) /* many sandboxes at once */
#define SBX_CAP_MEMORY_LIMIT   (UINT64_C(1) << 8) /* memory limit enforced */
#define SBX_CAP_CPU_STATS      (UINT64_C(1) << 9) /* CPU time and peak memory reported */
#define SBX_CAP_ZYGOTE         (UINT64_C(1) << 10) /* spec zygote (1.12); exec_zygote (1.2) */
#define SBX_CAP_CANCEL         (UINT64_C(1) << 11) /* exec honours cancel_fd (since 0.2, ABI 1.3) */
#define SBX_CAP_STDIN_STREAM   (UINT64_C(1) << 12) /* exec feeds stdin_fd as it runs (since 0.2, ABI 1.4) */
#define SBX_CAP_SIGNAL         (UINT64_C(1) << 13) /* exec delivers signal_fd's signals (since 0.3, ABI 1.8) */
#define SBX_CAP_EGRESS         (UINT64_C(1) << 14) /* create honours egress (since 0.3, ABI 1.11) */

/**
 * Limit bits: one per limit, numbered as sbx_limit of the embedding API
 * (<polysandbox/sandbox.h>) and as the fields of sbx_limits_v1 of the
 * provider SDK, for sets of limits (those a sandbox runs without:
 * sbx_result_unenforced_limits(), host->limits_unenforced).  Since: 0.2
 */
#define SBX_LIMIT_BIT_WALL     (UINT64_C(1) << 0)
#define SBX_LIMIT_BIT_CPU      (UINT64_C(1) << 1)
#define SBX_LIMIT_BIT_MEMORY   (UINT64_C(1) << 2)
#define SBX_LIMIT_BIT_PIDS     (UINT64_C(1) << 3)
#define SBX_LIMIT_BIT_NOFILE   (UINT64_C(1) << 4)
#define SBX_LIMIT_BIT_FSIZE    (UINT64_C(1) << 5)
#define SBX_LIMIT_BIT_DISK     (UINT64_C(1) << 6)
#define SBX_LIMIT_BIT_STDOUT   (UINT64_C(1) << 7)
#define SBX_LIMIT_BIT_STDERR   (UINT64_C(1) << 8)
/**
 * The network policy, among the limits a sandbox runs without: network =
 * none (SBX_NET_NONE, the default) asked of a provider that cannot
 * enforce it (no SBX_CAP_NETWORK_POLICY, or one that says so through
 * host->limits_unenforced); named "network".  Not an sbx_limit: a bit
 * of its own, clear of the limits to come.  Since: 0.2
 */
#define SBX_LIMIT_BIT_NETWORK  (UINT64_C(1) << 32)

/**
 * sbx_signal_deliverable:
 * @sig: a signal number (Linux numbering)
 *
 * True for the eight signals a running command may be sent through
 * sbx_exec_opts_set_signal_fd (and a provider's signal_fd, with
 * SBX_CAP_SIGNAL): SIGHUP, SIGINT, SIGQUIT, SIGUSR1, SIGUSR2, SIGTERM,
 * SIGALRM and SIGWINCH.  Every other number is refused by the callers and
 * dropped by the providers; SIGKILL is sbx_cancel's, and SIGSTOP would
 * leave a command that no one resumes.  One list for the server, the
 * providers and the helpers they run inside sandboxes (header-only, so a
 * static helper needs no library).
 *
 * Since: 0.3
 */
static inline bool sbx_signal_deliverable(int sig)
{
    return sig == SIGHUP || sig == SIGINT || sig == SIGQUIT || sig == SIGUSR1 ||
           sig == SIGUSR2 || sig == SIGTERM || sig == SIGALRM || sig == SIGWINCH;
}

/** Log levels for the host table's log().  Since: 0.1 */
enum {
    SBX_LOG_ERROR = 0,
    SBX_LOG_WARNING = 1,
    SBX_LOG_INFO = 2,
    SBX_LOG_DEBUG = 3
};

/** Longest sandbox id, including the terminating NUL.  Since: 0.1 */
#define SBX_ID_MAX 128

#ifdef __cplusplus
}
#endif
#endif /* POLYSANDBOX_COMMON_H */
