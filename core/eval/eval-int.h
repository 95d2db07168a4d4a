/* core/eval/eval-int.h - internals of the evaluation engine (core only) */
#ifndef POLYSANDBOX_EVAL_INT_H
#define POLYSANDBOX_EVAL_INT_H

#include <polysandbox/eval.h>
#include <polysandbox/journal.h>

#include <sys/types.h>


/* ---- reading JSONL, plain or gzip (core/eval/eval-jsonl.c) ----------------------- */

struct json_t;
/* Called per non-blank line with the parsed object (borrowed) and its
 * 1-based line number; return SBX_OK to go on, else an error (set). */
typedef int (*core_jsonl_cb)(void *ud, struct json_t *obj, size_t line);
/* Which file was read: a results file must not be it (eval-journal.c). */
typedef struct core_file_id {
    dev_t dev;
    ino_t ino;
} core_file_id;
/* What one file may hold, from the context's [eval] (sbx_ctx_eval_caps). */
typedef struct core_jsonl_caps {
    uint64_t input;         /* decompressed bytes of one file */
    uint64_t line;          /* bytes of one line (record) */
    uint64_t records;       /* records of one file */
} core_jsonl_caps;
/* @ctx's caps into *@c; returns @c. */
const core_jsonl_caps *core_jsonl_caps_of(const sbx_ctx *ctx, core_jsonl_caps *c);
/* Read @path (gzip recognised by content), as a stream, within @caps,
 * and call @cb per record; *@id (may be NULL) says which file it was.
 * Bad JSON, a line that is not an object or a file past a cap is
 * SBX_E_INVAL "PATH[:LINE]: ..." (a cap's message says how to raise it). */
int core_jsonl_read(const char *path, const core_jsonl_caps *caps, core_jsonl_cb cb,
                    void *ud, core_file_id *id);
/* The same over @len bytes at @data (not compressed), within @caps;
 * @path names them in messages. */
int core_jsonl_parse(const char *path, const char *data, size_t len,
                     const core_jsonl_caps *caps, core_jsonl_cb cb, void *ud);
/* A field as a task id: a string, or an integer written in decimal
 * (MBPP's ids are numbers).  (transfer full) or NULL. */
char *core_jsonl_task_id(struct json_t *obj);
/* The same of the field @key (each judged format names its tasks). */
char *core_jsonl_field_id(struct json_t *obj, const char *key);

/* ---- datasets and samples (core/eval/eval-dataset.c) ----------------------------- */

typedef struct core_eval_file {
    char *path;
    char *data;
    size_t len;
} core_eval_file;

/* One stdin/expected-output test of a judged problem. */
typedef struct core_eval_case {
    char *in, *out;
    size_t in_len, out_len;
} core_eval_case;

/* How a judged problem's output is compared (core/eval/eval-compare.c). */
typedef enum core_eval_cmp {
    CORE_EVAL_CMP_LINES = 0,      /* per line, whitespace runs alike; trailing blank lines */
    CORE_EVAL_CMP_EXACT,          /* byte for byte */
    CORE_EVAL_CMP_NUMERIC         /* tokens; numbers within a tolerance */
} core_eval_cmp;

typedef struct core_eval_task {
    char *id;
    size_t line;           /* in the dataset file */
    char *lang;            /* template: "python" for HumanEval and MBPP */
    char *prompt;          /* HumanEval prompt / generic prompt, or NULL */
    char *canonical;       /* reference solution, or NULL */
    char *test;            /* HumanEval test / generic test, or NULL */
    char *entry_point;     /* HumanEval */
    char *setup;           /* MBPP test_setup_code, or NULL */
    char **tests;          /* MBPP test_list (NULL-terminated) */
    char *test_command;    /* generic: a shell line run instead of the template */
    char *program_file;    /* generic with test_command: where the program goes */
    core_eval_file *files; /* generic: extra files */
    size_t n_files;
    core_eval_case *cases; /* judged: the tests (n_cases > 0) */
    size_t n_cases;
    core_eval_cmp cmp;
    double tolerance;      /* numeric: absolute or relative */
    uint64_t ref_ns;       /* judged: reference solution's time per test, or 0 */
    char *canonical_lang;  /* judged: the reference's language when not lang, or NULL */
    char *inputs;          /* EvalPlus: [base_input, plus_input] as ASCII JSON */
    double atol;           /* EvalPlus: absolute tolerance of float answers */
    bool no_template;      /* MultiPL-E: lang is the row's code, which no template runs */
    const struct core_eval_scan *scan; /* MultiPL-E: output that fails a run, or NULL */
} core_eval_task;

struct sbx_eval_dataset {
    sbx_eval_format fmt;
    char *path;
    core_file_id file;
    core_eval_task *tasks;
    size_t n;
};

typedef struct core_eval_sample {
    size_t task;           /* index into the dataset */
    char *completion;
    char *lang;            /* judged: the sample's own language, or NULL (the task's) */
    bool whole;            /* EvalPlus: an EvalPlus "solution", the prompt included */
} core_eval_sample;

struct sbx_eval_samples {
    core_eval_sample *v;
    size_t n;
    bool canonical;
    core_file_id file;            /* the samples file (not for canonical) */
    char *path;                   /* what messages call it, or NULL (canonical) */
};

/* Whether @ds is of a judged format (stdin/expected output tests). */
bool core_eval_judged(const sbx_eval_dataset *ds);

/* ---- EvalPlus (core/eval/eval-evalplus.c) ---------------------------------------- */

/* Fill @t from the HumanEval+ / MBPP+ record @o at @line of @path;
 * errors (set) name "PATH:LINE" and the field. */
int core_eval_evalplus_task(const char *path, struct json_t *o, size_t line,
                            core_eval_task *t);

/* EvalPlus's per-input limit max(MIN, FACTOR x the reference's time):
 * evalplus/config.py's defaults. */
#define CORE_EVAL_EP_MIN_NS UINT64_C(1000000000)
#define CORE_EVAL_EP_FACTOR 4.0
/* The keeper's line of an input over its limit is
 * "\n" PREFIX TIMEOUT marker " " reason "\n". */
#define CORE_EVAL_MARKER_TIMEOUT "timeout "

/* ---- MultiPL-E (core/eval/eval-multipl-e.c) ------------------------------------- */

/* MultiPL-E's evaluator gives each step 15 s (safe_subprocess). */
#define CORE_EVAL_MULTIPLE_TIMEOUT_NS UINT64_C(15000000000)
/* Fill @t from the MultiPL-E row @o at @line of @path: the program is
 * prompt + completion + "\n" + tests, in the template of the row's
 * language (a code with no template sets t->no_template, a verdict of
 * each of its samples, not an error of the dataset); errors (set) name
 * "PATH:LINE" and the field. */
int core_eval_multiple_task(sbx_ctx *ctx, const char *path, struct json_t *o, size_t line,
                            core_eval_task *t);
/* The record of a sample of @t (no_template): SBX_VERDICT_NO_TEMPLATE,
 * the reason saying why it cannot run. */
int core_eval_multiple_no_template(const core_eval_task *t, sbx_eval_record *rec);
/* What MultiPL-E's evaluator of a language reads in the output of a run
 * that exited 0 to call it failed: @text on stdout (@on_stdout) or on
 * stderr (@on_stderr). */
typedef struct core_eval_scan {
    const char *text;
    bool on_stdout, on_stderr;
    const char *reason;    /* the record's reason when it is found */
} core_eval_scan;
/* The scan of MultiPL-E's language @code, or NULL when it reads none. */
const core_eval_scan *core_eval_multiple_scan_of(const char *code);
/* Why @r fails under @scan (static), or NULL when it does not. */
const char *core_eval_multiple_scan(const core_eval_scan *scan, const sbx_result *r);

/* ---- judged problems (core/eval/eval-judged.c, core/eval/eval-compare.c) -------------- */

/* Fill @t from the record @o at @line of @path in the judged format @fmt;
 * errors (set) name "PATH:LINE" and the field. */
int core_eval_judged_task(sbx_ctx *ctx, const char *path, sbx_eval_format fmt,
                          struct json_t *o, size_t line, core_eval_task *t);
void core_eval_judged_free(core_eval_task *t);
/* Whether the output @got (@glen bytes, hostile) is the expected @want
 * under @cmp (@tol for numeric). */
bool core_eval_compare(core_eval_cmp cmp, double tol, const char *want, size_t wlen,
                       const char *got, size_t glen);
/* The comparison mode called @name, or -1. */
int core_eval_cmp_from_name(const char *name);

/* One attempt of a judged sample on @provider (NULL: the default): a
 * sandbox, the compile step once with the first test, then every test
 * (or up to the first failure).  SBX_OK with *graded true and @rec
 * filled, or SBX_OK with *graded false after a sandbox error noted on
 * @rec; else an error that stops the run (set). */
int core_eval_judge(sbx_ctx *ctx, const sbx_eval_opts *o, const core_eval_task *t,
                    const char *lang, const char *program, const char *provider,
                    sbx_eval_record *rec, bool *graded);

/* ---- a judged sample's tests in one exec (core/eval/eval-judge-batch.c) -------- */

/* What the runner said of one test: @reported only with a complete,
 * well-formed report; @clean when it exited 0 in time within the caps
 * (only then is @out, its stdout, to be compared). */
typedef struct core_jr_test {
    bool reported, clean;
    char *out;                    /* owned */
    size_t out_len;
} core_jr_test;

/* Run tests @first.. of @t in one exec of the runner in @sb, the program
 * run with @tc's run words, each test held to @limit and the caps
 * @out_cap and @err_cap (the sandbox's), up to the first test that is not
 * clean unless @o->all_tests; the exec's own limit, a bound for a runner
 * gone wrong, at most @max_ns (limits.max_wall; 0: none).  SBX_OK with *@tests (t->n_cases - @first
 * of them; free with core_eval_batch_free) and *@res, the exec's result
 * (for the usage; NULL when it failed), both NULL when nothing could run;
 * else SBX_E_NOMEM (set). */
int core_eval_batch(sbx_sandbox *sb, const sbx_eval_opts *o, const sbx_template *tc,
                    const core_eval_task *t, size_t first, uint64_t limit, uint64_t out_cap,
                    uint64_t err_cap, uint64_t max_ns, core_jr_test **tests, sbx_result **res);
void core_eval_batch_free(core_jr_test *tests, size_t n);
/* Read the runner's report @out (@len bytes, hostile) for @n tests into
 * @tests (zeroed by the caller): a test is reported only when its "T" line
 * and its chunks before it are complete and well-formed, in order, after a
 * start line with @marker.  SBX_OK, or SBX_E_NOMEM (set). */
int core_eval_batch_parse(const char *out, size_t len, const char *marker, uint64_t out_cap,
                          core_jr_test *tests, size_t n);
/* The runner's bytes (core/eval/eval-judge-blob.c): a static program. */
const unsigned char *core_eval_runner_blob(size_t *len);
/* The Python programs' runner (core/eval/eval-judge-driver.py): its source. */
const unsigned char *core_eval_driver_blob(size_t *len);
/* Whether @tc runs a Python script (`python3[.N] SCRIPT [ARG...]`), whose
 * tests the Python runner can run in one exec. */
bool core_eval_python_run(const sbx_template *tc);

/* The index of task @id in @ds, or (size_t)-1. */
size_t core_eval_find_task(const sbx_eval_dataset *ds, const char *id);

/* ---- programs (core/eval/eval-program.c) ---------------------------------------- */

#include "eval-judge-proto.h"   /* CORE_EVAL_MARKER_PREFIX */
/* EvalPlus: the line of a sample that passed the base inputs is
 * "\n" PREFIX BASE marker "\n" (not the pass line, which has no word) */
#define CORE_EVAL_MARKER_BASE "base "
#define CORE_EVAL_MARKER_LEN 32    /* hex digits of the random part */
#define CORE_EVAL_PROGRAM_FILE "program.py"   /* HumanEval and MBPP programs */
#define CORE_EVAL_RUNNER_FILE "main.py"       /* what the python template runs */
#define CORE_EVAL_CHECK_FILE "check.py"       /* the tests, with --isolated-check */
#define CORE_EVAL_MARKER_FILE ".polysandbox-marker" /* the run's marker, removed at once */

/* Fill @marker (CORE_EVAL_MARKER_LEN + 1 bytes) with fresh random hex. */
int core_eval_new_marker(char *marker);
/* Whether the format's programs print the marker (Python ones do). */
bool core_eval_uses_marker(const sbx_eval_dataset *ds);
/* The program of @completion for @t: (transfer full) or NULL on ENOMEM.
 * For the formats that use a marker it goes to CORE_EVAL_PROGRAM_FILE and
 * core_eval_runner() is the code the template runs, with the marker in
 * CORE_EVAL_MARKER_FILE.  @isolated (core_eval_can_isolate): the completion alone
 * (and the prompt or setup), the tests going to core_eval_build_check's
 * CORE_EVAL_CHECK_FILE. */
char *core_eval_build_program(const sbx_eval_dataset *ds, const core_eval_task *t,
                              const core_eval_sample *smp, bool isolated);
char *core_eval_build_check(const sbx_eval_dataset *ds, const core_eval_task *t);
char *core_eval_runner(const sbx_eval_dataset *ds, const core_eval_task *t, bool isolated,
                       const sbx_eval_opts *o);
/* Can @t be checked in a process the completion never runs in? */
bool core_eval_can_isolate(const sbx_eval_dataset *ds, const core_eval_task *t);
/* Whether sample programs of @t run with the check apart (@want: the
 * user asked for it; EvalPlus's always are). */
bool core_eval_isolated(const sbx_eval_dataset *ds, const core_eval_task *t, bool want);
/* EvalPlus: the keeper's part of the runner, which sets _st (transfer
 * full), or NULL on ENOMEM (core/eval/eval-evalplus.c).  @o: the per-input
 * time limits (NULL: EvalPlus's defaults). */
char *core_eval_evalplus_check(const core_eval_task *t, const sbx_eval_opts *o);
/* The reason of the keeper's timeout line in @r's output (copied to @buf
 * of @size bytes), or NULL when no input went over its limit. */
const char *core_eval_evalplus_timeout(const sbx_result *r, const char *marker, char *buf,
                                       size_t size);

/* ---- verdicts (core/eval/eval-verdict.c) ---------------------------------------- */

/* Grade @r.  @marker NULL: exit status alone decides.  *reason (static or
 * NULL) says why it is not a pass. */
sbx_eval_verdict core_eval_verdict(const sbx_result *r, const char *marker,
                                   const char **reason);
/* EvalPlus: whether @r's stdout holds the line of a base pass. */
bool core_eval_base_passed(const sbx_result *r, const char *marker);
/* The verdict called @name, or -1. */
int core_eval_verdict_from_name(const char *name);

/* ---- records (core/eval/eval-record.c) ------------------------------------------- */


/* One attempt at a sample: the provider that spent it, whether it
 * ended in a sandbox error or graded the code, and its wall time. */
typedef struct core_eval_attempt {
    char *provider;             /* "" when no provider claimed it */
    sbx_eval_verdict verdict;   /* SBX_VERDICT_SANDBOX_ERROR, or the grade */
    char *reason;               /* a sandbox error's message, or NULL */
    uint64_t time_ns;
} core_eval_attempt;

struct sbx_eval_record {
    char *task_id;
    size_t sample;
    sbx_eval_verdict verdict;
    const char *status;     /* static run status name */
    int exit_code;          /* -1 when none */
    int signal;
    char *provider;
    uint64_t time_ns;
    int64_t cpu_ns;         /* CPU time of its run(s), or -1 when not measured */
    int64_t peak_memory;    /* bytes, the most of its run(s), or -1 */
    unsigned attempts;
    uint64_t attempts_ns;   /* wall time of every attempt, failed ones too (0: unknown) */
    core_eval_attempt *tries;  /* each attempt, in order ("attempt_log"); NULL in
                                * records of before it was kept */
    size_t n_tries;
    char *reason;           /* or NULL */
    char *stderr_tail;      /* the end of stderr of a non-pass, or NULL */
    char *completion;       /* the sample's completion */
    char *output;           /* the start of stdout (a judged failure's test), or NULL */
    size_t tests_passed, tests_total;  /* judged problems */
    bool resumed;
    uint64_t unenforced;    /* SBX_LIMIT_BIT_* its sandbox ran without */
    bool has_base;          /* EvalPlus: base_verdict is set */
    sbx_eval_verdict base_verdict;  /* EvalPlus: on the base inputs alone */
    char *run;              /* its provenance as compact JSON ("run"), or NULL */
};

void core_eval_record_free(sbx_eval_record *r);
/* Take @r's CPU time and peak memory into @rec: in place of its own, or
 * (@add) added to them, the peak the larger. */
void core_eval_record_usage(sbx_eval_record *rec, const sbx_result *r, bool add);
/* Replace, in place, every byte of @s that is not part of valid UTF-8
 * with '?', so the text can go into JSON whatever a program wrote. */
void core_eval_utf8_sanitize(char *s);
/* The first @max bytes of @data as valid UTF-8 text without NULs
 * (transfer full), or NULL when @len is 0 or out of memory. */
char *core_eval_excerpt(const char *data, size_t len, size_t max, bool tail);
/* Note on @rec an outcome that is no verdict on the code (@v:
 * SBX_VERDICT_SANDBOX_ERROR, the last one kept, or _NO_TEMPLATE) and why. */
int core_eval_note_ungraded(sbx_eval_record *rec, sbx_eval_verdict v, const char *provider,
                            const char *msg);
static inline int core_eval_note_sandbox_error(sbx_eval_record *rec, const char *provider,
                                               const char *msg)
{
    return core_eval_note_ungraded(rec, SBX_VERDICT_SANDBOX_ERROR, provider, msg);
}
/* ---- a record's attempts (core/eval/eval-attempt.c) ---------------------------- */

/* Log the attempt that has just ended, @ns long: its provider, verdict
 * and (a sandbox error's) reason are @rec's own now.  Also counts it in
 * attempts_ns.  The providers its create failed on down the [core]
 * fallback chain (the fallback trail, reset before the attempt) come
 * first, each an attempt of its own with its part of @ns.  SBX_E_NOMEM. */
int core_eval_attempt_add(sbx_eval_record *rec, uint64_t ns);
void core_eval_attempts_free(sbx_eval_record *rec);
/* "attempt_log" of @rec as a JSON array (transfer full), or NULL on ENOMEM. */
struct json_t *core_eval_attempts_json(const sbx_eval_record *rec);
/* Read "attempt_log" @arr (may be NULL or not an array: none) into @rec.
 * SBX_E_NOMEM. */
int core_eval_attempts_from_json(sbx_eval_record *rec, const struct json_t *arr);

/* A record from a journal line; SBX_E_INVAL with *why (static) if bad. */
int core_eval_record_from_json(struct json_t *obj, sbx_eval_record **out,
                               const char **why);

/* ---- statistics (core/eval/eval-stats.c) ----------------------------------------- */

/* Nearest-rank percentile of @n sorted values. */
uint64_t core_eval_percentile(const uint64_t *sorted, size_t n, double pct);
/* The 95% percentile-bootstrap interval of the mean of @n per-task
 * values: CORE_EVAL_BOOTSTRAP_ROUNDS resamples of the tasks with
 * replacement, drawn by splitmix64 from CORE_EVAL_BOOTSTRAP_SEED (fixed:
 * the same results always give the same interval).  SBX_E_INVAL when
 * @n is 0, SBX_E_NOMEM; nothing set. */
#define CORE_EVAL_BOOTSTRAP_ROUNDS 2000
#define CORE_EVAL_BOOTSTRAP_SEED 20261127u
int core_eval_bootstrap(const double *per_task, size_t n, double *lo, double *hi);

/* ---- the journal (core/eval/eval-journal.c) -------------------------------------- */

/* Open the results file @path (an sbx_journal).  With @resume, read its
 * records into @records (indexed by sample; later lines replace sandbox
 * errors) after cutting off a torn last line; else replace it by an
 * empty file (a new one renamed over it).  SBX_E_INVAL when @path is the
 * dataset's or the samples' file. */
int core_journal_open(sbx_journal **j, const char *path, bool resume,
                      const sbx_eval_dataset *ds, const sbx_eval_samples *s,
                      const struct json_t *prov, sbx_eval_record **records,
                      size_t *n_resumed);
/* Append one record as a line; the journal's thread syncs it soon after.
 * Fails when the write or an earlier sync failed. */
int core_journal_append(sbx_journal *j, const sbx_eval_record *r);

/* ---- provenance (core/eval/eval-provenance.c) ------------------------------------ */

/* What records of @ds, @s graded with @o carry as "run": the digests of
 * the dataset and the samples as parsed, and the options that change
 * verdicts (transfer full), or NULL on ENOMEM. */
struct json_t *core_eval_provenance(const sbx_eval_dataset *ds, const sbx_eval_samples *s,
                                    const sbx_eval_opts *o);
/* SBX_OK when the record @rec (a parsed line @lineno of @path) carries no
 * "run" or the one @want is (NULL: anything); else SBX_E_INVAL, the
 * message naming the first field that differs and both values. */
int core_eval_provenance_check(const struct json_t *want, struct json_t *rec,
                               const char *path, size_t lineno);

/* ---- options (core/eval/eval-opts.c) --------------------------------------------- */

struct sbx_eval_opts {
    char **providers;             /* NULL: default + fallback chain */
    unsigned jobs;                /* 0: online processors */
    uint64_t timeout_ns;
    bool timeout_set;             /* by the caller: else MultiPL-E's own default */
    uint64_t limits[SBX_LIMIT_COUNT]; /* 0: not set */
    unsigned retries;
    char *journal;
    bool resume;
    bool isolated;                /* --isolated-check */
    bool allow_partial;
    bool all_tests;               /* judged: every test, not up to the first failure */
    bool exec_per_test;           /* judged: never the runner (core/eval/eval-judge-batch.c) */
    uint64_t min_ns;              /* judged: T_min */
    double factor;                /* judged: k of k x T_reference */
    uint64_t compile_ns;
    uint64_t ep_min_ns;           /* EvalPlus: the floor of an input's limit */
    double ep_factor;             /* EvalPlus: k of k x the reference's time */
    sbx_eval_record_cb cb;
    void *cb_ud;
    sbx_cancel *cancel;           /* (borrowed) or NULL */
    sbx_eval_gate_cb gate;        /* or NULL */
    void *gate_ud;
};

/* ---- usage and cost (core/eval/eval-usage.c) ------------------------------------ */

typedef struct core_eval_use {
    char *provider;               /* owned; NULL for the whole summary's */
    sbx_eval_usage u;
    char currency[16];            /* what u.currency points to when priced */
} core_eval_use;

/* Gather the usage of the @n @records (NULL entries skipped) per provider
 * in *@uses (*@n_uses, free with core_eval_usage_free) and of them all in
 * @all, priced from @ctx's providers (NULL: no prices).  SBX_E_NOMEM (set). */
int core_eval_usage_build(const sbx_ctx *ctx, sbx_eval_record *const *records, size_t n,
                          core_eval_use **uses, size_t *n_uses, core_eval_use *all);
void core_eval_usage_free(core_eval_use *uses, size_t n);
/* @u as a JSON object, its "cost" there only when priced; NULL on ENOMEM. */
struct json_t *core_eval_usage_json(const sbx_eval_usage *u);

/* ---- summaries (core/eval/eval-summary.c) ---------------------------------------- */

struct sbx_eval_summary {
    char *dataset;                /* the dataset's path */
    sbx_eval_format fmt;
    sbx_eval_record **records;    /* by sample index; owned */
    size_t n_samples;
    size_t done, resumed;
    size_t counts[SBX_VERDICT_COUNT];
    char **task_ids;              /* tasks with samples, dataset order; owned */
    size_t *task_n, *task_c;
    size_t *task_cb;              /* EvalPlus: base passes per task, or NULL */
    size_t n_tasks;
    size_t *sample_task;          /* by sample index: its summary task */
    uint64_t *latencies;          /* sorted, graded records */
    size_t n_latencies;
    uint64_t wall_ns;
    size_t ran;                   /* records made by this run */
    core_eval_use *uses;          /* per provider, first met first */
    size_t n_uses;
    core_eval_use all;            /* of every record */
};

/* Build a summary taking ownership of @records (n_samples entries),
 * priced from @ctx's providers (NULL: no prices). */
int core_eval_summary_build(const sbx_ctx *ctx, const sbx_eval_dataset *ds, const sbx_eval_samples *s,
                            sbx_eval_record **records, size_t resumed, size_t ran,
                            uint64_t wall_ns, sbx_eval_summary **out);

#endif /* POLYSANDBOX_EVAL_INT_H */
