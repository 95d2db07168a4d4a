/* polysandbox/eval.h - score code completions against benchmark datasets
 *
 * The evaluation engine of libpolysandbox: read a dataset (HumanEval,
 * MBPP, EvalPlus's HumanEval+ and MBPP+, the generic format, or judged
 * problems with stdin/expected-output tests) and a file of samples
 * (completions), run
 * every sample's program in a sandbox through sbx_run() from many worker
 * threads, and grade it:
 *
 *     sbx_eval_dataset *ds;
 *     sbx_eval_samples *s;
 *     sbx_eval_summary *sum;
 *     double p1;
 *     sbx_eval_dataset_load(ctx, "HumanEval.jsonl.gz", SBX_EVAL_FORMAT_AUTO, &ds);
 *     sbx_eval_samples_load(ctx, ds, "samples.jsonl", &s);
 *     sbx_eval_opts *o = sbx_eval_opts_new();
 *     sbx_eval_opts_set_journal(o, "results.jsonl", false);
 *     if (sbx_eval_run(ctx, ds, s, o, &sum) == SBX_OK &&
 *         sbx_eval_summary_pass_at_k(sum, 1, &p1, NULL))
 *         printf("pass@1 %.4f\n", p1);
 *
 * A verdict of "passed" comes from the exit status of the harnessed
 * program together with a per-run random marker that a process of the
 * runner's which never runs the completion prints only after every test
 * returned; the marker is in no file, object or memory the program can
 * reach (since 0.2); never from anything else the program prints (see
 * polysandbox-eval(1), VERDICTS, and doc/security.md).  A sandbox error is retried and is
 * never counted as a pass or a failure.
 *
 * Every type is opaque.  Errors are reported as in <polysandbox/sandbox.h>:
 * an sbx_status, with the detail (naming FILE:LINE for bad input) in
 * sbx_ctx_last_error().
 *
 * Since: 0.1
 */
#ifndef POLYSANDBOX_EVAL_H
#define POLYSANDBOX_EVAL_H

#include <polysandbox/sandbox.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sbx_eval_dataset sbx_eval_dataset;
typedef struct sbx_eval_samples sbx_eval_samples;
typedef struct sbx_eval_opts sbx_eval_opts;
typedef struct sbx_eval_record sbx_eval_record;
typedef struct sbx_eval_summary sbx_eval_summary;
typedef struct sbx_eval_report sbx_eval_report;

/** Dataset formats.  Since: 0.1 */
typedef enum sbx_eval_format {
    SBX_EVAL_FORMAT_AUTO = 0,       /* guessed from the first record's fields */
    SBX_EVAL_FORMAT_HUMANEVAL = 1,  /* task_id prompt canonical_solution test entry_point */
    SBX_EVAL_FORMAT_MBPP = 2,       /* task_id text code test_list test_setup_code */
    SBX_EVAL_FORMAT_GENERIC = 3,    /* task_id language prompt test files test_command */
    /* Judged problems: a program reads each test's stdin and its stdout is
     * compared with the expected output (since 0.2; see polysandbox-eval(1),
     * JUDGED PROBLEMS, for the fields each reads). */
    SBX_EVAL_FORMAT_JUDGED = 4,        /* task_id language tests compare ... */
    SBX_EVAL_FORMAT_CODECONTESTS = 5,  /* name public_tests private_tests ... */
    SBX_EVAL_FORMAT_APPS = 6,          /* problem_id input_output solutions */
    SBX_EVAL_FORMAT_LIVECODEBENCH = 7, /* question_id public_test_cases ... */
    /* HumanEval+ and MBPP+ (since 0.2): the expected outputs are the
     * canonical solution's on base_input and plus_input, and a sample gets
     * a verdict on the base inputs and one on base + extra (see
     * sbx_eval_record_base_verdict, sbx_eval_summary_pass_at_k_base). */
    SBX_EVAL_FORMAT_EVALPLUS = 8,      /* task_id prompt entry_point base_input plus_input */
    /* MultiPL-E (since 0.2): HumanEval and MBPP translated to other
     * languages; prompt + completion + tests run in the row's language
     * and pass on exit status 0 (see polysandbox-eval(1), MULTIPL-E). */
    SBX_EVAL_FORMAT_MULTIPLE = 9       /* name language prompt tests stop_tokens */
} sbx_eval_format;
/** The last format: iterate AUTO..SBX_EVAL_FORMAT_LAST.  Since: 0.2 */
#define SBX_EVAL_FORMAT_LAST SBX_EVAL_FORMAT_MULTIPLE

/**
 * sbx_eval_verdict:
 * What became of one sample.  Append-only.  SBX_VERDICT_SANDBOX_ERROR and
 * SBX_VERDICT_NO_TEMPLATE are not verdicts on the code: such samples are
 * left out of pass@k (sbx_eval_verdict_graded).
 * Since: 0.1 (SBX_VERDICT_NO_TEMPLATE: 0.3)
 */
typedef enum sbx_eval_verdict {
    SBX_VERDICT_PASSED = 0,        /* exit 0 and the harness's marker */
    SBX_VERDICT_FAILED = 1,        /* an assertion, exception, non-zero exit, early exit,
                                    * a wrong answer of a judged problem */
    SBX_VERDICT_TIMEOUT = 2,       /* wall-clock limit */
    SBX_VERDICT_CPU_LIMIT = 3,
    SBX_VERDICT_MEMORY_LIMIT = 4,
    SBX_VERDICT_OUTPUT_LIMIT = 5,  /* wrote more than the output cap */
    SBX_VERDICT_COMPILE_ERROR = 6,
    SBX_VERDICT_SIGNAL = 7,        /* killed by a signal (segfault, abort) */
    SBX_VERDICT_SECCOMP = 8,       /* killed by the system-call filter */
    SBX_VERDICT_PIDS_LIMIT = 9,
    SBX_VERDICT_SANDBOX_ERROR = 10, /* the sandbox failed every attempt */
    SBX_VERDICT_NO_TEMPLATE = 11   /* no template here runs its language: not run */
} sbx_eval_verdict;
#define SBX_VERDICT_COUNT 12

/** Whether @v is a verdict on the code, counted in pass@k: all but
 * SBX_VERDICT_SANDBOX_ERROR and SBX_VERDICT_NO_TEMPLATE.  Since: 0.3 */
SBX_API bool sbx_eval_verdict_graded(sbx_eval_verdict v);

/** "passed", "failed", "timeout", ... (static), or NULL.  Since: 0.1 */
SBX_API const char *sbx_eval_verdict_name(sbx_eval_verdict v);
/** "humaneval", "mbpp", "generic", "auto", "judged", "codecontests",
 * "apps", "livecodebench", "evalplus", "multipl-e" (static), or NULL.
 * Since: 0.1 */
SBX_API const char *sbx_eval_format_name(sbx_eval_format f);

/**
 * sbx_eval_pass_at_k:
 * The unbiased pass@k estimator 1 - C(n-c, k) / C(n, k) for a task with
 * @n graded samples of which @c passed, computed as the stable product
 * 1 - prod_{i=n-c+1..n} (1 - k/i).  Returns -1.0 when it is not
 * computable (k == 0, k > n or c > n).  Since: 0.1
 */
SBX_API double sbx_eval_pass_at_k(uint64_t n, uint64_t c, uint64_t k);

/* ---- datasets --------------------------------------------------------- */

/**
 * sbx_ctx_eval_caps:
 * @input: (out) (optional): decompressed bytes one file may hold ([eval]
 *   max_input)
 * @line: (out) (optional): bytes of one line, a record (max_line)
 * @records: (out) (optional): records of one file (max_records)
 *
 * The caps of @ctx's [eval] section on a dataset, samples or journal
 * file, which the sbx_eval_*_load functions check while they read; each
 * 0 for a NULL @ctx.  Since: 0.3
 */
SBX_API void sbx_ctx_eval_caps(const sbx_ctx *ctx, uint64_t *input, uint64_t *line,
                               uint64_t *records);

/**
 * sbx_eval_dataset_load:
 * @path: a .jsonl file, or .jsonl.gz (gzip is recognised by its content).
 * @fmt: SBX_EVAL_FORMAT_AUTO to guess it from the first record.
 * @out: (out) (transfer full): free with sbx_eval_dataset_free.
 *
 * Reads and checks every record, as a stream, within the caps of the
 * context's [eval] section (max_input decompressed bytes, max_line bytes
 * per line, max_records records; since 0.2): a file past one is refused
 * when the reading gets there.  Errors: SBX_E_IO (cannot read @path),
 * SBX_E_INVAL (bad JSON, a missing or mistyped field, a duplicate task_id,
 * an unknown language, a cap passed; the message says "PATH:LINE: ..."
 * and, for a cap, which and how to raise it), SBX_E_NOMEM.
 * Since: 0.1
 */
SBX_API int sbx_eval_dataset_load(sbx_ctx *ctx, const char *path,
                                  sbx_eval_format fmt, sbx_eval_dataset **out);
/**
 * sbx_eval_dataset_parse:
 * @name: what messages call the records ("request body"), copied
 * @data: (transfer none) @len bytes of JSON Lines (not compressed)
 *
 * As sbx_eval_dataset_load, for records an application holds in memory
 * (polysandboxd's SandboxFusion /submit takes its problem inline).
 * Errors as sbx_eval_dataset_load's, "NAME:LINE: ..." for bad records.
 * Since: 0.2
 */
SBX_API int sbx_eval_dataset_parse(sbx_ctx *ctx, const char *name, const void *data,
                                   size_t len, sbx_eval_format fmt,
                                   sbx_eval_dataset **out);
SBX_API void sbx_eval_dataset_free(sbx_eval_dataset *ds);
SBX_API sbx_eval_format sbx_eval_dataset_format(const sbx_eval_dataset *ds);
SBX_API size_t sbx_eval_dataset_size(const sbx_eval_dataset *ds);
/** The @i-th task's id (transfer none), or NULL. */
SBX_API const char *sbx_eval_dataset_task_id(const sbx_eval_dataset *ds,
                                             size_t i);

/* ---- samples ---------------------------------------------------------- */

/**
 * sbx_eval_samples_load:
 * @path: JSONL (or gzip of it), one {"task_id": ..., "completion": ...}
 *   per line; several per task for pass@k.  For a judged format, a
 *   "language" field (a template name) gives the sample's own language
 *   (since 0.2; an unknown one is SBX_E_INVAL).  For EvalPlus, a
 *   "solution" field (the whole program, prompt included) is used
 *   instead of the completion when present, as EvalPlus does (since
 *   0.2).  Other fields are ignored.
 * @out: (out) (transfer full): free with sbx_eval_samples_free.  It keeps
 *   no pointer into @ds, only task positions: use it with @ds alone.
 *
 * Read within the same caps as sbx_eval_dataset_load.
 * Errors: SBX_E_IO, SBX_E_INVAL ("PATH:LINE: ..." for bad JSON, a missing
 * field, a task_id that is not in @ds, a cap passed), SBX_E_NOMEM.
 * Since: 0.1
 */
SBX_API int sbx_eval_samples_load(sbx_ctx *ctx, const sbx_eval_dataset *ds,
                                  const char *path, sbx_eval_samples **out);
/**
 * sbx_eval_samples_canonical:
 * One sample per task: the dataset's own reference solution.  SBX_E_INVAL
 * (naming the task and the line) when a task has none.  Since: 0.1
 */
SBX_API int sbx_eval_samples_canonical(sbx_ctx *ctx, const sbx_eval_dataset *ds,
                                       sbx_eval_samples **out);
/**
 * sbx_eval_samples_parse:
 * As sbx_eval_samples_load, from @len bytes of JSON Lines at @data
 * (transfer none; @name, what messages call them, copied).  Since: 0.2
 */
SBX_API int sbx_eval_samples_parse(sbx_ctx *ctx, const sbx_eval_dataset *ds,
                                   const char *name, const void *data, size_t len,
                                   sbx_eval_samples **out);
SBX_API void sbx_eval_samples_free(sbx_eval_samples *s);
SBX_API size_t sbx_eval_samples_count(const sbx_eval_samples *s);

/**
 * sbx_eval_program:
 * The program sample @i is graded with (transfer full, free()), as it
 * would run, then the runner that runs it (which holds no marker: the
 * run's is in a file the runner removes before the program starts); for
 * inspection (polysandbox eval
 * --show-program).  *lang: the template
 * (transfer none).  NULL on a bad index or ENOMEM.  Since: 0.1
 */
SBX_API char *sbx_eval_program(const sbx_eval_dataset *ds,
                               const sbx_eval_samples *s, size_t i,
                               const char **lang);
/** As sbx_eval_program, graded with the options @o (NULL: the
 * defaults): with sbx_eval_opts_set_isolated_check, program.py, check.py
 * and the runner of the isolated check.  Since: 0.2 */
SBX_API char *sbx_eval_program_opts(const sbx_eval_dataset *ds,
                                    const sbx_eval_samples *s, size_t i,
                                    const sbx_eval_opts *o, const char **lang);

/* ---- options ---------------------------------------------------------- */

/** (transfer full): free with sbx_eval_opts_free.  NULL on ENOMEM. */
SBX_API sbx_eval_opts *sbx_eval_opts_new(void);
SBX_API void sbx_eval_opts_free(sbx_eval_opts *o);
/**
 * sbx_eval_opts_set_providers:
 * @names: NULL-terminated, copied.  A sample whose sandbox keeps failing
 * on one is retried on the next.  NULL or empty: the default provider and
 * the [core] fallback chain.  Since: 0.1
 */
SBX_API int sbx_eval_opts_set_providers(sbx_eval_opts *o,
                                        const char *const *names);
/** Worker threads; 0 (default) is the number of online processors. */
SBX_API int sbx_eval_opts_set_jobs(sbx_eval_opts *o, unsigned jobs);
/** Wall-clock limit of each program (default 3 s, as the reference
 * harness; 15 s for MultiPL-E, as its evaluator, when never set); 0 is
 * rejected (SBX_E_INVAL). */
SBX_API int sbx_eval_opts_set_timeout(sbx_eval_opts *o, uint64_t ns);
/** A sandbox limit for every sample (as sbx_create_opts_set_limit). */
SBX_API int sbx_eval_opts_set_limit(sbx_eval_opts *o, sbx_limit which,
                                    uint64_t value);
/** Extra attempts per provider after a sandbox error (default 2). */
SBX_API int sbx_eval_opts_set_retries(sbx_eval_opts *o, unsigned retries);
/**
 * sbx_eval_opts_set_isolated_check:
 * @on: grade HumanEval and MBPP samples with the check in a process the
 *   completion never runs in (default false).
 *
 * By default a sample's program runs as the reference harness runs it,
 * the tests in the same interpreter as the completion, which can then
 * fool them (an object whose __eq__ always says True; see
 * doc/security.md).  With @on the tests (the prompt and test, or MBPP's
 * setup and asserts) run in the runner's own process and call the
 * function under test in the completion's process with Python literals,
 * reading literals back (ast.literal_eval): nothing of the completion's
 * objects reaches the check.  A task whose calls pass something that is
 * not a literal fails, saying so (check the dataset with --canonical
 * first).  EvalPlus samples are always graded so; other formats as
 * without it.  Since: 0.2
 */
SBX_API int sbx_eval_opts_set_isolated_check(sbx_eval_opts *o, bool on);
/**
 * sbx_eval_opts_set_journal:
 * @path: the results JSONL file (copied); NULL: none.  Each record is
 *   appended as its sample finishes and synced to disk right after, by
 *   a thread of the run (every record is synced before sbx_eval_run
 *   returns).
 * @resume: keep the records already in @path (a torn last line is cut
 *   off) and run only the samples that have none; false replaces it by
 *   an empty file (made beside it and renamed over it, so an existing
 *   file is never truncated in place: its other links keep their
 *   records; since 0.2).  A @path that is the dataset's or the samples'
 *   file (the same file, through any link) is refused by sbx_eval_run
 *   (SBX_E_INVAL; since 0.2).
 * Since: 0.1
 */
SBX_API int sbx_eval_opts_set_journal(sbx_eval_opts *o, const char *path,
                                      bool resume);
/**
 * sbx_eval_record_cb:
 * Called once per finished sample (records read back by a resume are not
 * passed), one call at a time, from a worker thread.  @done counts the
 * samples finished so far (resumed ones included) out of @total, @passed
 * those that passed.  Return non-zero to stop: no new sample is started,
 * running ones finish, and sbx_eval_run returns SBX_OK with a partial
 * summary.
 */
typedef int (*sbx_eval_record_cb)(void *ud, const sbx_eval_record *rec,
                                  size_t done, size_t total, size_t passed);
SBX_API int sbx_eval_opts_set_callback(sbx_eval_opts *o, sbx_eval_record_cb cb,
                                       void *ud);
/**
 * sbx_eval_opts_set_cancel:
 * @c: (transfer none) a handle of sbx_cancel_new, or NULL for none; it
 *   must outlive sbx_eval_run
 *
 * Lets another thread stop the run by firing @c: no new sample starts,
 * the samples running are stopped as sbx_exec_opts_set_cancel stops a run
 * (promptly where the provider can cancel), and sbx_eval_run returns
 * SBX_OK with a partial summary.  A sample stopped that way gets no
 * record (it is neither a verdict nor a sandbox error): a resume of the
 * journal runs it again.  Since: 0.2
 */
SBX_API int sbx_eval_opts_set_cancel(sbx_eval_opts *o, sbx_cancel *c);
/**
 * sbx_eval_gate_cb:
 * @enter: true before a worker thread takes the next sample (it may find
 *   none left), false once that sample is finished (its record passed to
 *   the callback)
 *
 * Lets an application share a budget of concurrent runs among several
 * evaluations and other work of its own (polysandboxd's job_workers):
 * the call with @enter true may block until the sample may start; a
 * non-zero return from it makes that worker stop without starting one,
 * and when every worker has stopped sbx_eval_run returns SBX_OK with a
 * partial summary.  Each successful enter is matched by one call with
 * @enter false, from the same thread.  Called concurrently from the
 * worker threads.  Since: 0.2
 */
typedef int (*sbx_eval_gate_cb)(void *ud, bool enter);
SBX_API int sbx_eval_opts_set_gate(sbx_eval_opts *o, sbx_eval_gate_cb cb, void *ud);

/**
 * sbx_eval_opts_set_allow_partial:
 * @on: score a samples file that leaves some tasks of the dataset without
 *   a sample (default false: sbx_eval_run refuses it with SBX_E_INVAL,
 *   naming how many tasks and which are missing, as the reference harness
 *   does).  Since: 0.2
 */
SBX_API int sbx_eval_opts_set_allow_partial(sbx_eval_opts *o, bool on);
/**
 * sbx_eval_opts_set_judge:
 * How judged problems (SBX_EVAL_FORMAT_JUDGED and the readers after it)
 * run their tests.  @all_tests: run every test even after one failed
 *   (default false: stop at the first failure).
 * @min_ns, @factor: the time limit of each test is max(@min_ns, @factor
 *   x the task's reference time) for a task that gives a reference time
 *   (@factor 0: never relative); the sbx_eval_opts_set_timeout limit for
 *   the others.  Defaults: 1 s and 3; @min_ns 0 and a negative @factor
 *   keep the value set before.  A @factor that is not finite or above
 *   1000 is SBX_E_INVAL.
 * @compile_ns: wall-clock limit of the compile step, once per sample
 *   (default 30 s; 0 keeps the value set before).
 * Since: 0.2
 */
SBX_API int sbx_eval_opts_set_judge(sbx_eval_opts *o, bool all_tests, uint64_t min_ns,
                                    double factor, uint64_t compile_ns);
/**
 * sbx_eval_opts_set_exec_per_test:
 * How a judged problem's compiled program runs its tests after the first
 * (which also compiles it).  By default (@on false) they run in one exec
 * of a small static runner that polysandbox puts into the sandbox; a test
 * that the runner does not report as a clean exit with the right output
 * runs again on an exec of its own, whose result is the verdict, so the
 * verdicts are the same as with @on true: one exec per test, always.
 * SBX_E_INVAL for NULL @o.  Since: 0.3
 */
SBX_API int sbx_eval_opts_set_exec_per_test(sbx_eval_opts *o, bool on);
/**
 * sbx_eval_opts_set_evalplus_time:
 * EvalPlus's per-input time limits: the completion's call on each input
 * may take max(@min_ns, @factor x the reference's time on that input),
 * the reference (the dataset's canonical_solution) being timed on the
 * same input in the same sandbox run; a call over its limit fails the
 * sample as SBX_VERDICT_TIMEOUT, its reason naming the input and the
 * times.  Defaults: EvalPlus's, 1 s and 4; @min_ns 0 and a negative
 * @factor keep the value set before; @factor 0 leaves @min_ns alone as
 * the limit.  A @factor that is not finite or above 1000 is SBX_E_INVAL.
 * The sample's own wall-clock limit (sbx_eval_opts_set_timeout) holds
 * as well.
 * Since: 0.3
 */
SBX_API int sbx_eval_opts_set_evalplus_time(sbx_eval_opts *o, uint64_t min_ns, double factor);

/* ---- running ---------------------------------------------------------- */

/**
 * sbx_eval_run:
 * @out: (out) (transfer full): free with sbx_eval_summary_free.
 *
 * Runs every sample of @s not already in the journal.  Errors (no
 * summary): SBX_E_INVAL when @s leaves tasks of @ds without a sample
 * and sbx_eval_opts_set_allow_partial was not set (since 0.2; the
 * message says how many and names them), SBX_E_IO (journal), SBX_E_INVAL (a journal that belongs to
 * other samples, or graded against another dataset, other samples or
 * other options that change verdicts, as sbx_eval_journal_check says
 * (since 0.3): "PATH:LINE: ..."), a request the core refuses for every
 * sample (unknown template or provider, a limit above its maximum),
 * SBX_E_INVAL for a journal that is the dataset's or samples' file.
 * Sandbox failures are not errors: see SBX_VERDICT_SANDBOX_ERROR.
 * Since: 0.1
 */
SBX_API int sbx_eval_run(sbx_ctx *ctx, const sbx_eval_dataset *ds,
                         const sbx_eval_samples *s, const sbx_eval_opts *o,
                         sbx_eval_summary **out);

/**
 * sbx_eval_journal_check:
 * @path: a results file (sbx_eval_opts_set_journal's) to be resumed by a
 *   run of @ds, @s and @o (NULL: the defaults); a missing file is fine
 *   (no records), a torn last line is left out as a resume cuts it off
 * @n_records: (out) (optional): the samples it holds a verdict of, which
 *   a resume will not run again
 *
 * Tells, before anything runs, whether the records in @path are this
 * run's: each record names the digests of the dataset and samples it
 * was graded against (of their parsed fields: the same records from a
 * .jsonl, its .gz or a request body digest alike) and the options that
 * change verdicts (timeout, limits, isolated check, format, and for
 * judged problems all_tests, min_time, time_factor, compile_timeout),
 * as its "run" member (since 0.3; records written before carry none
 * and are checked by task alone).  Providers, jobs and retries may
 * differ.  sbx_eval_run with resume makes the same check.  Reads @path,
 * never changes it.
 *
 * Errors: SBX_E_INVAL "PATH:LINE: ..." naming the first difference and
 *   both values ("these results were graded with another timeout
 *   ("timeout_ns": 3000000000 in the results, 5000000000 now)"), or a
 *   line that is no record or belongs to other samples; SBX_E_IO
 *   (unreadable), SBX_E_NOMEM.
 * Since: 0.3
 */
SBX_API int sbx_eval_journal_check(sbx_ctx *ctx, const sbx_eval_dataset *ds,
                                   const sbx_eval_samples *s, const sbx_eval_opts *o,
                                   const char *path, size_t *n_records);

/* ---- records (one graded sample) -------------------------------------- */

SBX_API const char *sbx_eval_record_task_id(const sbx_eval_record *r);
/** The sample's index in the samples file (0-based line of samples). */
SBX_API size_t sbx_eval_record_sample(const sbx_eval_record *r);
SBX_API sbx_eval_verdict sbx_eval_record_verdict(const sbx_eval_record *r);
/** The result's run status ("ok", "nonzero_exit", ...; static), or NULL
 * when nothing ran (SBX_VERDICT_NO_TEMPLATE). */
SBX_API const char *sbx_eval_record_status(const sbx_eval_record *r);
/** The provider that gave the verdict (or failed last), or "". */
SBX_API const char *sbx_eval_record_provider(const sbx_eval_record *r);
/** Time of the graded attempt, nanoseconds (sbx_run's total). */
SBX_API uint64_t sbx_eval_record_time_ns(const sbx_eval_record *r);
/** The CPU time (user + system, ns) and peak memory (bytes) of the
 * sample's run, as its provider measured them (a judged sample's: the
 * CPU of all its tests, the largest peak); -1 when not measured.
 * Since: 0.3 */
SBX_API int64_t sbx_eval_record_cpu_ns(const sbx_eval_record *r);
SBX_API int64_t sbx_eval_record_peak_memory(const sbx_eval_record *r);
SBX_API unsigned sbx_eval_record_attempts(const sbx_eval_record *r);
/**
 * sbx_eval_record_attempt:
 * @i: 0 .. sbx_eval_record_attempts() - 1
 * @provider: (out) (transfer none) (optional): the provider that ran it, or ""
 * @verdict: (out) (optional): SBX_VERDICT_SANDBOX_ERROR, or the grade
 * @time_ns: (out) (optional): its wall time
 *
 * Attempt @i of the sample ("attempt_log" of its journal line).  False
 * past the end, and for a record read from a journal written before
 * attempts were logged.  Since: 0.3
 */
SBX_API bool sbx_eval_record_attempt(const sbx_eval_record *r, size_t i, const char **provider,
                                     sbx_eval_verdict *verdict, uint64_t *time_ns);
/** Why it is not a pass (or the sandbox error), or NULL. */
SBX_API const char *sbx_eval_record_reason(const sbx_eval_record *r);
/** The limits the sample's sandbox ran without (SBX_LIMIT_BIT_* bits, as
 * sbx_result_unenforced_limits; "unenforced_limits" of its journal line),
 * 0 when every limit was enforced.  Since: 0.2 */
SBX_API uint64_t sbx_eval_record_unenforced_limits(const sbx_eval_record *r);
/** The completion the record grades (transfer none), or "".  Since: 0.2 */
SBX_API const char *sbx_eval_record_completion(const sbx_eval_record *r);
/** The start of the program's standard output (of the failing test of a
 * judged problem), valid UTF-8, at most a few kilobytes (transfer none),
 * or NULL.  Since: 0.2 */
SBX_API const char *sbx_eval_record_output(const sbx_eval_record *r);
/** Judged problems: tests passed and tests in the task (0 and 0 for the
 * other formats).  Since: 0.2 */
SBX_API void sbx_eval_record_tests(const sbx_eval_record *r, size_t *passed,
                                   size_t *total);
/**
 * sbx_eval_record_base_verdict:
 * EvalPlus: the verdict on the base inputs alone (EvalPlus's "base"),
 * in *@v; sbx_eval_record_verdict is then the one on base + extra (a
 * pass needs both).  False (and *@v untouched) for the other formats.
 * Since: 0.2
 */
SBX_API bool sbx_eval_record_base_verdict(const sbx_eval_record *r, sbx_eval_verdict *v);
/** The journal line: one JSON object (transfer full, free()); since 0.3
 * with "run", what it was graded against (see sbx_eval_journal_check). */
SBX_API char *sbx_eval_record_to_json(const sbx_eval_record *r);

/* ---- summary ---------------------------------------------------------- */

SBX_API void sbx_eval_summary_free(sbx_eval_summary *sum);
/** Samples with a record (resumed ones included) / in the samples. */
SBX_API size_t sbx_eval_summary_done(const sbx_eval_summary *sum);
SBX_API size_t sbx_eval_summary_total(const sbx_eval_summary *sum);
/** Records read back from the journal by a resume. */
SBX_API size_t sbx_eval_summary_resumed(const sbx_eval_summary *sum);
SBX_API size_t sbx_eval_summary_count(const sbx_eval_summary *sum,
                                      sbx_eval_verdict v);
/** Records with a verdict on the code (sbx_eval_verdict_graded).  Since: 0.3 */
SBX_API size_t sbx_eval_summary_graded(const sbx_eval_summary *sum);
/** Records by sample index (transfer none); NULL for a sample not run. */
SBX_API const sbx_eval_record *sbx_eval_summary_record(const sbx_eval_summary *sum,
                                                       size_t sample);
/** Tasks that have at least one sample. */
SBX_API size_t sbx_eval_summary_task_count(const sbx_eval_summary *sum);
SBX_API const char *sbx_eval_summary_task_id(const sbx_eval_summary *sum,
                                             size_t i);
/** Graded samples (sandbox errors and unrun samples left out) and passes
 * of the @i-th task. */
SBX_API void sbx_eval_summary_task_counts(const sbx_eval_summary *sum,
                                          size_t i, size_t *n, size_t *c);
/**
 * sbx_eval_summary_pass_at_k:
 * The mean of pass@k over the tasks with at least @k graded samples.
 * Returns false (and *value untouched) when no task has; *n_tasks (may
 * be NULL) is the number of tasks averaged.  Since: 0.1
 */
SBX_API bool sbx_eval_summary_pass_at_k(const sbx_eval_summary *sum,
                                        unsigned k, double *value,
                                        size_t *n_tasks);
/**
 * sbx_eval_summary_pass_at_k_base:
 * EvalPlus: as sbx_eval_summary_pass_at_k, of the verdicts on the base
 * inputs alone ("base"; sbx_eval_summary_pass_at_k is "base + extra").
 * False for the other formats.  Since: 0.2
 */
SBX_API bool sbx_eval_summary_pass_at_k_base(const sbx_eval_summary *sum, unsigned k,
                                             double *value, size_t *n_tasks);
/**
 * sbx_eval_summary_pass_at_k_ci:
 * The 95% confidence interval of sbx_eval_summary_pass_at_k's value, by
 * a percentile bootstrap over the tasks: 2000 resamples of the averaged
 * tasks with replacement, drawn by splitmix64 from the fixed seed
 * 20261127, so the same results always give the same interval.  False
 * when pass@k is not computable (or out of memory).  Since: 0.2
 */
SBX_API bool sbx_eval_summary_pass_at_k_ci(const sbx_eval_summary *sum,
                                           unsigned k, double *lo, double *hi);
/** The index (as sbx_eval_summary_task_id's) of sample @sample's task,
 * or (size_t)-1 when @sample is out of range.  Since: 0.2 */
SBX_API size_t sbx_eval_summary_sample_task(const sbx_eval_summary *sum,
                                            size_t sample);
/**
 * sbx_eval_summary_load:
 * @path: a results file written by sbx_eval_opts_set_journal for @s
 * @out: (out) (transfer full): free with sbx_eval_summary_free
 *
 * The summary of results already recorded, without running anything
 * (and without changing @path: a torn last line is refused, not cut).
 * A sample's later record replaces a sandbox error; a sample without
 * record is not run.  Its wall time, throughput and "ran" are 0.
 * Errors: SBX_E_IO (unreadable), SBX_E_INVAL "PATH:LINE: ..." for a line
 * that is no record or belongs to other samples, SBX_E_NOMEM.
 * Since: 0.2
 */
SBX_API int sbx_eval_summary_load(sbx_ctx *ctx, const sbx_eval_dataset *ds,
                                  const sbx_eval_samples *s, const char *path,
                                  sbx_eval_summary **out);
/** Latency percentile (nearest rank, 0 < @pct <= 100) of the graded
 * samples, nanoseconds; 0 when there are none. */
SBX_API uint64_t sbx_eval_summary_latency(const sbx_eval_summary *sum,
                                          double pct);
/** Wall time of this run and samples finished per second in it. */
SBX_API uint64_t sbx_eval_summary_wall_ns(const sbx_eval_summary *sum);
SBX_API double sbx_eval_summary_throughput(const sbx_eval_summary *sum);
/**
 * sbx_eval_usage:
 * What the samples of one provider (or of all) used, and cost.  Filled
 * by sbx_eval_summary_usage; @currency is borrowed from the summary.
 * Each attempt counts on the provider that ran it: a sample retried on
 * one provider and graded on the next adds its failed attempts'
 * sandboxes, time (so cost) and sandbox errors to the first, and the
 * sample itself (samples, passed, latency, CPU, memory) to the second.
 * Since: 0.3
 */
typedef struct sbx_eval_usage {
    size_t samples;            /* records that ran in a sandbox (attempts > 0) */
    size_t passed;             /* of them, passes */
    size_t sandboxes;          /* their attempts: one sandbox each */
    uint64_t sandbox_ns;       /* the sum of their attempts' time (attempts_time_ns) */
    size_t graded;             /* the latencies are of these */
    uint64_t latency_p50_ns, latency_p90_ns, latency_max_ns;
    size_t cpu_samples;        /* records whose CPU time was measured */
    uint64_t cpu_total_ns, cpu_mean_ns;
    int64_t peak_memory_max;   /* bytes; -1 when none was measured */
    bool priced;               /* a price table applies: the cost fields are set */
    double cost_total;         /* price_per_sandbox x sandboxes + price_per_second x s */
    double cost_per_sample;    /* cost_total / samples (0 samples: 0) */
    double cost_per_pass;      /* cost_total / passed, or -1 when none passed */
    const char *currency;      /* "USD" unless configured; NULL when not priced */
    size_t sandbox_errors;     /* of sandboxes, the attempts that ended in a sandbox
                                * error (Since: 0.3) */
} sbx_eval_usage;
/** The providers that ran the summary's samples, in the order first
 * met (transfer none; NULL past the end).  Since: 0.3 */
SBX_API size_t sbx_eval_summary_provider_count(const sbx_eval_summary *sum);
SBX_API const char *sbx_eval_summary_provider(const sbx_eval_summary *sum, size_t i);
/**
 * sbx_eval_summary_usage:
 * Fill @u with the runtime figures of @provider's samples (NULL: of
 * every sample).  Its cost is that of the provider's price table
 * ([provider] price_per_second, price_per_sandbox and currency of its
 * ini, as configured when the summary was built); @u->priced is false
 * when the provider has none, and for NULL when any provider that ran
 * samples has none or the currencies differ.  False when @provider ran
 * no sample of @sum.  Since: 0.3
 */
SBX_API bool sbx_eval_summary_usage(const sbx_eval_summary *sum, const char *provider,
                                    sbx_eval_usage *u);
/**
 * sbx_eval_summary_to_json:
 * The whole summary as one JSON object (transfer full, free()), with
 * pass@k for each of @ks (n_ks values).  See polysandbox-eval(1) for its
 * fields.  NULL on ENOMEM.  Since: 0.1
 */
SBX_API char *sbx_eval_summary_to_json(const sbx_eval_summary *sum,
                                       const unsigned *ks, size_t n_ks);

/* ---- side-by-side reports (polysandbox compare) ------------------------ */

/**
 * sbx_eval_report_new:
 * @s: (transfer none) the samples every column graded; must outlive the
 *   report.
 * @dataset: the dataset's path, named in the report and digested (copied).
 * @samples_file: the samples' path (copied), or NULL for the dataset's
 *   canonical solutions.
 * @out: (out) (transfer full): free with sbx_eval_report_free.
 *
 * A report of the same samples graded on several providers, as
 * `polysandbox compare --json` prints it: add one column per run with
 * sbx_eval_report_add, then sbx_eval_report_to_json.
 * Errors: SBX_E_INVAL (no samples or dataset), SBX_E_NOMEM.  Since: 0.3
 */
SBX_API int sbx_eval_report_new(const sbx_eval_samples *s, const char *dataset,
                                const char *samples_file, sbx_eval_report **out);
SBX_API void sbx_eval_report_free(sbx_eval_report *r);
/**
 * sbx_eval_report_label:
 * @names: what columns 0 to @i are named after (each its provider, or its
 *   results file when the provider is unknown); (transfer none).
 *
 * The label a report gives column @i: @names[@i], or "NAME#N" when it is
 * the Nth column of that name ("local", "local#2"), as `polysandbox
 * compare` names its columns (and its PREFIX.LABEL.jsonl files) before
 * they run.  Transfer full: free().  NULL with errno set: EINVAL (no
 * @names[@i]), ENOMEM.  Since: 0.3
 */
SBX_API char *sbx_eval_report_label(const char *const *names, size_t i);
/**
 * sbx_eval_report_add:
 * Append a column: @label (its name in the report: "docker", "local#2";
 * NULL, "" or @provider: the report names it with sbx_eval_report_label,
 * after its provider, else its results file, so that every caller names
 * columns alike), @provider (the provider it ran on, or NULL when
 * unknown), @results (the results file its records went to, or NULL),
 * @settings (the NULL-terminated SECTION.KEY=VALUE values of its context,
 * or NULL); all copied.  @sum: (transfer none) its summary of the
 * report's samples; must outlive the report.
 * Errors: SBX_E_INVAL (no summary, no label and neither provider nor
 * results file, a summary of another number of samples), SBX_E_NOMEM.
 * Since: 0.3
 */
SBX_API int sbx_eval_report_add(sbx_eval_report *r, const char *label, const char *provider,
                                const char *results, const char *const *settings,
                                const sbx_eval_summary *sum);
/**
 * sbx_eval_report_set_opts:
 * The options the columns ran with (their limits and jobs are reported;
 * only values are copied).  NULL, the default: the report was rebuilt
 * from results files, and its limits and jobs are null.  Since: 0.3
 */
SBX_API int sbx_eval_report_set_opts(sbx_eval_report *r, const sbx_eval_opts *o);
/**
 * sbx_eval_report_set_files:
 * The prefix of the Markdown and HTML files the caller writes the report
 * to (the "report" object names PREFIX.md and PREFIX.html), or NULL (the
 * default: "report" is null).  Copied.  Since: 0.3
 */
SBX_API int sbx_eval_report_set_files(sbx_eval_report *r, const char *prefix);
/**
 * sbx_eval_report_set_input_names:
 * The names sbx_eval_report_to_html shows for the dataset and the samples
 * file in place of their paths (which are still read for the digests):
 * what a server's client called the files it uploaded.  NULL (the
 * default): the path.  Copied.  Errors: SBX_E_INVAL (no report),
 * SBX_E_NOMEM.  Since: 0.3
 */
SBX_API int sbx_eval_report_set_input_names(sbx_eval_report *r, const char *dataset,
                                            const char *samples);
/** Whether sample @sample's verdicts differ between columns (one column
 *  without its record differs too).  Since: 0.3 */
SBX_API bool sbx_eval_report_differs(const sbx_eval_report *r, size_t sample);
/** How many samples differ.  Since: 0.3 */
SBX_API size_t sbx_eval_report_diff_count(const sbx_eval_report *r);
/**
 * sbx_eval_report_to_json:
 * The report as one JSON object (transfer full, free()), with pass@k of
 * each column for each of @ks (n_ks values): the fields of
 * `polysandbox compare --json` (see polysandbox-eval(1)).  The inputs
 * are read again for their digests, and the date is now.  NULL on
 * ENOMEM.  Since: 0.3
 */
SBX_API char *sbx_eval_report_to_json(const sbx_eval_report *r, const unsigned *ks,
                                      size_t n_ks);
/**
 * sbx_eval_report_to_html:
 * The report as one self-contained HTML page (transfer full, free()): no
 * script, style sheet, font or image from the network; its metadata,
 * verdict counts and pass@k of each column for each of @ks (n_ks values)
 * with their intervals, SVG charts of pass rate, latency (log scale),
 * throughput and failures, the samples whose verdicts differ with each
 * column's reason and output, and each column's per-task table: the
 * PREFIX.html of `polysandbox compare`.  Every string that came from the
 * dataset, the samples, the records or the caller is HTML-escaped.  The
 * inputs are read again for their digests, and the date is now.  NULL
 * with errno set: EINVAL (no report), ENOMEM.  Since: 0.3
 */
SBX_API char *sbx_eval_report_to_html(const sbx_eval_report *r, const unsigned *ks,
                                      size_t n_ks);
/**
 * sbx_eval_report_to_markdown:
 * The report as Markdown (transfer full, free()): its metadata, a table
 * of each column's verdict counts, pass rate, pass@k for each of @ks
 * (n_ks values) with their intervals, latency, throughput and wall time,
 * and the samples whose verdicts differ with each column's reason: what
 * `polysandbox compare` prints and writes to PREFIX.md.  A table cell's
 * '|' is escaped and its newlines are spaces, so no string from the
 * dataset, the samples, the records or the caller breaks a row.  The
 * inputs are read again for their digests, and the date is now.  NULL
 * with errno set: EINVAL (no report), ENOMEM.  Since: 0.3
 */
SBX_API char *sbx_eval_report_to_markdown(const sbx_eval_report *r, const unsigned *ks,
                                          size_t n_ks);
/**
 * sbx_eval_meta_to_json:
 * What a report says about the run it reports, as one JSON object
 * (transfer full, free()): version, date (now), host, @dataset's and
 * @samples_file's path, size and SHA-256 (@samples_file NULL: canonical
 * samples), the limits and jobs of @o (NULL: unknown, a report rebuilt
 * from results files) and @providers (NULL-terminated, or NULL).  The
 * "meta" of `polysandbox eval --json` and of sbx_eval_report_to_json.
 * NULL on ENOMEM or without @dataset.  Since: 0.3
 */
SBX_API char *sbx_eval_meta_to_json(const char *dataset, const char *samples_file,
                                    const sbx_eval_opts *o, const char *const *providers);
/**
 * sbx_eval_input_digest:
 * The size of the regular file at @path and its SHA-256 as 64 hex digits
 * and a NUL in @sha256_hex (65 bytes); on error *@size is -1 and
 * @sha256_hex empty.  A pipe or other special file is refused without
 * being read.  Errors: SBX_E_IO, SBX_E_INVAL (no regular file).
 * Since: 0.3
 */
SBX_API int sbx_eval_input_digest(const char *path, int64_t *size, char *sha256_hex);

#ifdef __cplusplus
}
#endif
#endif /* POLYSANDBOX_EVAL_H */
