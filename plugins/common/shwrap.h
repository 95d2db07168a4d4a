/* plugins/common/shwrap.h - one exec through a service that runs shell
 * commands and hands back their output as text
 *
 * Some services (Cloudflare's sandbox bridge, the AIO sandbox behind
 * Volcengine's veFaaS) run a command line and return stdout and stderr as
 * strings: bytes that are not UTF-8 do not survive, there is no stdin, and
 * an exit code is all that is said of the command's end.  Such a provider
 * runs every exec as a small POSIX sh wrapper (the script below, as
 * `sh -c SCRIPT sbx ARGV...`) that
 *
 *   - moves files the provider put in a scratch directory into place under
 *     the work directory, refusing any path through a symbolic link,
 *   - changes to the exec's directory and exports its environment,
 *   - feeds the command the stdin file the provider put there (else
 *     /dev/null),
 *   - runs the argv with stdout and stderr each piped through base64 (perl's
 *     MIME::Base64 read by read when the image has perl, so output streams
 *     as it comes; else base64(1), which streams only in blocks), so what
 *     reaches the provider is ASCII on both streams, still in order,
 *   - and ends stdout with one status line, "SBX1 S w<wait status>" (perl
 *     ran the command), "SBX1 S e<errno>" (it could not be executed) or
 *     "SBX1 S x<$?>" (no perl in the image), or another
 *     "SBX1 <letter> ..." line when it refused to run (see sw_outcome).
 *
 * A download is the same wrapper reading one file (checked to be a regular
 * file reached through no link) to stdout.  The decoder below turns the
 * streams back into bytes.  Everything here is pure string work; the
 * provider does the transport.
 */
#ifndef SBX_PLUGINS_COMMON_SHWRAP_H
#define SBX_PLUGINS_COMMON_SHWRAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <polysandbox/provider.h>

/* A growing string; on allocation failure it turns into oom and stops. */
typedef struct sw_buf {
    char *p;
    size_t len, cap;
    bool oom;
} sw_buf;

void sw_buf_add(sw_buf *b, const void *s, size_t n);
void sw_buf_adds(sw_buf *b, const char *s);
void sw_buf_addf(sw_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* s as one single-quoted shell word. */
void sw_buf_addq(sw_buf *b, const char *s);
void sw_buf_free(sw_buf *b);

/* Whether a relative sandbox path is safe: not empty, not absolute, no
 * ".", ".." or empty component. */
bool sw_path_ok(const char *path);
/* Whether an environment name is a shell name ([A-Za-z_][A-Za-z0-9_]*). */
bool sw_env_name_ok(const char *name);

/* What the wrapper is to do besides running the argv. */
typedef struct sw_job {
    const char *workdir;        /* absolute, made when missing; NULL: the
                                 * directory the service starts us in */
    const char *scratch;        /* name of this exec's scratch directory in it */
    const char *cwd;            /* relative to workdir, or NULL */
    const sbx_kv_v1 *env;
    size_t n_env;
    /* Files the provider wrote to <scratch>.f<i> (beside the scratch
     * directory, so no parent needs making), to be moved to
     * workdir/<path> with <mode> (parents made). */
    const sbx_file_v1 *files;
    size_t n_files;
    bool stdin_file;            /* the provider wrote <scratch>.in */
    /* A download instead of a command: the file workdir/<download> to
     * stdout, at most download_max bytes (more: "SBX1 B"). */
    const char *download;
    uint64_t download_max;
} sw_job;

/* The wrapper script for @job (malloc'd; the caller frees), or NULL when
 * out of memory.  Run it as `sh -c SCRIPT sbx ARGV...` (no ARGV for a
 * download).  Paths and names must have been checked (sw_path_ok,
 * sw_env_name_ok). */
char *sw_script(const sw_job *job);

/* The wrapper and its argv as one shell command line (each word single-
 * quoted), for services that take a string; NULL when out of memory. */
char *sw_command_line(const char *script, const char *const *argv);

/* The decoder of the wrapper's two streams. */
typedef struct sw_dec {
    sw_buf line[3];             /* partial line of stdout (1) and stderr (2) */
    bool stopped;               /* the sink asked to stop */
    bool bad;                   /* a line that is neither base64 nor a status */
    char status[64];            /* the "SBX1 ..." line without "SBX1 ", or "" */
    const sbx_output_sink_v1 *sink;
} sw_dec;

void sw_dec_init(sw_dec *d, const sbx_output_sink_v1 *sink);
/* Feeds text the wrapper wrote on @stream (1 or 2).  Returns 0 to go on,
 * or 1 when delivery must stop (the sink said stop, past a cap or for the
 * caller, or the text is not the wrapper's): the provider then ends the transfer. */
int sw_dec_feed(sw_dec *d, int stream, const char *text, size_t len);
/* Feeds what is left of unterminated lines (call at the end). */
void sw_dec_finish(sw_dec *d);
void sw_dec_free(sw_dec *d);

/* What the status line says. */
typedef enum sw_kind {
    SW_NONE,        /* no status line: the wrapper did not finish */
    SW_EXITED,      /* the command ran: *code is the shell's $? */
    SW_WAITED,      /* the command ran: *code is its wait status (perl's) */
    SW_EXEC_FAILED, /* it could not be executed: *code is the errno */
    SW_PATH,        /* a file's path goes through a link (*code: its index) */
    SW_WRITE,       /* a file could not be placed (*code: its index) */
    SW_CWD,         /* the exec's directory is missing or not reachable */
    SW_MISSING,     /* download: no such file */
    SW_NOT_FILE,    /* download: not a regular file */
    SW_TOO_BIG,     /* download: larger than asked (*code unused) */
    SW_BAD,         /* a status line this code does not know */
} sw_kind;

sw_kind sw_outcome(const sw_dec *d, long *code);

/* Fills @out from what SW_EXITED, SW_WAITED or SW_EXEC_FAILED said.  With
 * only the shell's $? (no perl in the image), 126 is not executable, 127
 * not found and 129..192 a signal (128 + n: an exit code above 128 and a
 * signal then look alike). */
void sw_fill_exit(sw_kind kind, long code, sbx_exec_outcome_v1 *out);

/* A download's stdout gathered into a buffer of @cap bytes (the sink of a
 * download job): sw_collect_write stops delivery past @cap. */
typedef struct sw_collect {
    unsigned char *buf;
    size_t len, cap;
} sw_collect;
int sw_collect_write(void *ud, int stream, const void *buf, size_t len);

/* The error of an upload or download job's outcome, set through @host for
 * provider @who: SBX_OK for a completed upload (exit 0) or download
 * (SW_EXITED), else the code set. */
int sw_upload_result(const sbx_host_v1 *host, sbx_host_handle *h, const char *who,
                     const char *path, sw_kind kind, long code);
int sw_download_result(const sbx_host_v1 *host, sbx_host_handle *h, const char *who,
                       const char *path, size_t max, sw_kind kind);

#endif
