/* sdk/conformance/kit.h - the conformance kit: test table and helpers
 *
 * Every test drives one provider through the public embedding API only
 * (<polysandbox/sandbox.h>) and records what it expected and what it got
 * on its conf_case.
 */
#ifndef CONF_KIT_H
#define CONF_KIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <polysandbox/sandbox.h>

#include "tap.h"

#define KIB ((size_t)1024)
#define MIB ((size_t)1024 * 1024)
#define SEC_NS UINT64_C(1000000000)

/* The provider under test. */
typedef struct conf_kit {
    sbx_ctx *ctx;
    const char *provider;
    /* The template every sandbox is created with (--template), or NULL:
     * its image.PROVIDER puts the whole kit in that image's root. */
    const char *template_name;
    uint64_t caps;
    bool verbose;
} conf_kit;

typedef void (*conf_fn)(conf_kit *k, conf_case *c);

/* One test: its name (used by --only), the capabilities it needs (all of
 * them), the function, and one line saying what it proves. */
typedef struct conf_test {
    const char *name;
    uint64_t caps;
    conf_fn fn;
    const char *summary;
} conf_test;

/* The groups, each a table ending with a zeroed entry. */
extern const conf_test conf_exec_tests[];
extern const conf_test conf_output_tests[];
extern const conf_test conf_lifecycle_tests[];
extern const conf_test conf_find_tests[];
extern const conf_test conf_files_tests[];
extern const conf_test conf_policy_tests[];
extern const conf_test conf_zygote_tests[];

/* ---- options ------------------------------------------------------------ */

/* Create options naming the provider under test (and the --template),
 * or NULL (failure recorded). */
sbx_create_opts *conf_copts(conf_kit *k, conf_case *c);
/* Exec options running @line with /bin/sh -c, or NULL (failure recorded). */
sbx_exec_opts *conf_xshell(conf_case *c, const char *line);
/* Exec options running @argv directly, or NULL (failure recorded). */
sbx_exec_opts *conf_xargv(conf_case *c, const char *const *argv);
/* Record a failure if a setter returned an error; returns rc == SBX_OK. */
bool conf_set_ok(conf_case *c, const char *what, int rc);

/* ---- running ------------------------------------------------------------ */

/* sbx_run with @copts (NULL: the provider with every default).  Returns
 * the result or NULL (failure recorded with the context's error). */
sbx_result *conf_run(conf_kit *k, conf_case *c, const sbx_create_opts *copts,
                     const sbx_exec_opts *x);
/* conf_run of a shell line with default options. */
sbx_result *conf_run_shell(conf_kit *k, conf_case *c, const char *line);
/* A sandbox of the provider, persistent if asked, or NULL (failure
 * recorded). */
sbx_sandbox *conf_box(conf_kit *k, conf_case *c, const sbx_create_opts *copts,
                      bool persistent);
/* sbx_sandbox_exec; the result or NULL (failure recorded). */
sbx_result *conf_exec(conf_kit *k, conf_case *c, sbx_sandbox *sb,
                      const sbx_exec_opts *x);
/* sbx_sandbox_exec of a shell line. */
sbx_result *conf_exec_shell(conf_kit *k, conf_case *c, sbx_sandbox *sb,
                            const char *line);
/* sbx_sandbox_destroy, recording a failure. */
void conf_destroy(conf_kit *k, conf_case *c, sbx_sandbox *sb);

/* ---- checks (each records expected vs got and returns true on match) --- */

/* An API return code; on mismatch shows the context's error. */
bool conf_expect_rc(conf_kit *k, conf_case *c, const char *what, int want,
                    int got);
/* A run status; on mismatch describes the whole result. */
bool conf_expect_status(conf_case *c, const char *what, sbx_run_status want,
                        const sbx_result *r);
bool conf_expect_int(conf_case *c, const char *what, long long want,
                     long long got);
bool conf_expect_true(conf_case *c, const char *what, bool got);
/* Bytes compared exactly; on mismatch shows lengths, the first
 * difference and previews. */
bool conf_expect_bytes(conf_case *c, const char *what, const void *want,
                       size_t want_len, const void *got, size_t got_len);
bool conf_expect_stdout(conf_case *c, const char *what, const char *want,
                        const sbx_result *r);
bool conf_expect_stderr(conf_case *c, const char *what, const char *want,
                        const sbx_result *r);

/* Add diagnostic lines describing @r (status, codes, error, output). */
void conf_describe(conf_case *c, const sbx_result *r);

/* ---- helpers ------------------------------------------------------------ */

/* A token unique to this process and call, e.g. "c1234x7x9f3a". */
void conf_token(char *out, size_t cap);
/* Deterministic pseudo-random bytes (xorshift), for binary payloads. */
void conf_fill_random(void *buf, size_t len, uint64_t seed);
/* The stdout of @r is exactly @s. */
bool conf_stdout_is(const sbx_result *r, const char *s);

/* ---- many execs ---------------------------------------------------------- */

/* For tests that run many commands: a persistent sandbox when the provider
 * claims SBX_CAP_PERSISTENT (fast, and state is kept), else NULL, meaning
 * "one sbx_run per command".  *ok is false when creating it failed. */
sbx_sandbox *conf_multi_box(conf_kit *k, conf_case *c, bool *ok);
/* conf_exec in @sb, or conf_run when @sb is NULL. */
sbx_result *conf_multi_exec(conf_kit *k, conf_case *c, sbx_sandbox *sb,
                            const sbx_exec_opts *x);

#endif /* CONF_KIT_H */
