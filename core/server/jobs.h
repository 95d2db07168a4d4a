/* core/server/jobs.h - batch and eval jobs: what their files share
 *
 * A job is a directory under [server] state_dir/jobs/ID:
 *
 *   job.json       what was asked (written once, before the 202)
 *   dataset,       an eval's inputs, copied or written there (the job
 *   samples          never reads the caller's files again)
 *   results.jsonl  one line per finished item, appended and synced as
 *                  each finishes (an sbx_journal: the evaluation engine's
 *                  own results file for an eval, the server's for a batch)
 *   state.json     how it ended (written once, when it ended)
 *
 * so a server killed at any moment finds at its next start every item
 * that finished (and runs only the others again, resuming as
 * `polysandbox eval --resume` does) and every job that ended as it ended.
 * In memory a job keeps, per item, where its line is in results.jsonl
 * (never the line itself), and the lines in the order they came: the
 * job's events, numbered from 1, the same after a restart.
 *
 * jobs.c keeps the jobs (a job, its records and end, the registry, the
 * scheduler), jobs-gate.c the gate that shares the runs with interactive
 * requests, jobs-life.c loading at start, expiry and stop, jobs-store.c
 * their files, jobs-view.c their JSON, jobs-batch.c and jobs-eval.c the
 * two kinds, jobs-compare.c eval jobs that ended side by side,
 * native-jobs.c the routes.
 */
#ifndef POLYSANDBOX_SERVER_JOBS_H
#define POLYSANDBOX_SERVER_JOBS_H

#include <pthread.h>
#include <time.h>

#include <polysandbox/eval.h>
#include <polysandbox/journal.h>

#include "server.h"

enum job_state { JOB_QUEUED, JOB_RUNNING, JOB_SUCCEEDED, JOB_FAILED, JOB_CANCELLED };

#define JOB_ID_LEN 25          /* "j" and 24 hex digits */
#define JOB_CODES 24           /* room for a kind's item codes */

typedef struct srv_job srv_job;

/* One item: a run of a batch, a sample of an eval. */
struct job_item {
    uint64_t off;              /* its line in results.jsonl */
    uint32_t len;
    uint32_t task;             /* eval: its task's number (first seen first) */
    uint64_t time_ns;          /* how long it ran */
    uint32_t fp;               /* batch: a hash of what it did (for agreement) */
    int16_t code;              /* the kind's code: run status, verdict */
    bool done;
};

/* One accepted line of results.jsonl: the job's event number n+1. */
struct job_event {
    uint64_t off;
    uint32_t len;
    uint32_t item;
    uint32_t done, passed;     /* progress after it */
};

/* What a line of results.jsonl says (a kind's index function fills it). */
struct job_line {
    size_t item;
    int code;
    uint32_t task;
    uint64_t time_ns;
    uint32_t fp;
};

/* A kind of job. */
typedef struct job_kind {
    const char *name;                       /* "batch", "eval" */
    /* The kind's state from job.json's "spec" (at start and creation). */
    int (*load)(srv_job *j, json_t *spec);
    /* What @line (a parsed line of results.jsonl) says: 0, 1 to ignore
     * it (a second record of an item), -1 when it is not one of this
     * job's records. */
    int (*index)(srv_job *j, json_t *line, struct job_line *out);
    /* The name of an item code ("ok", "passed"), and whether it counts as
     * passed. */
    const char *(*code_name)(int code);
    bool (*passed)(int code);
    /* Run the job to its end (the runner thread); ends with job_finish
     * unless the server stops it. */
    void (*run)(srv_job *j);
    /* The kind's fields of the job's JSON (under j->mu); the bulky ones
     * only when @full. */
    void (*view)(srv_job *j, json_t *o, bool full);
    void (*free)(srv_job *j);
} job_kind;

extern const job_kind job_kind_batch, job_kind_eval;
/* The kinds in the order of the counts of /metrics. */
#define JOB_KINDS 2
extern const job_kind *const job_kinds[JOB_KINDS];

struct srv_job {
    srv *s;
    char id[JOB_ID_LEN + 1];
    char owner[SRV_OWNER_LEN + 1]; /* the token that made it (srv_auth_owner), "" none */
    const job_kind *kind;
    char *dir;                 /* (owned) */
    atomic_int refs;
    pthread_mutex_t mu;        /* what follows */
    int state;
    double created, started, finished;   /* Unix time, 0: not yet */
    char *err_code, *err_msg;  /* a failed job's error */
    size_t total, done, passed;
    struct job_item *items;    /* [total] */
    struct job_event *events;
    size_t n_events, cap_events;
    size_t counts[JOB_CODES];
    int results_fd;            /* results.jsonl, for reading lines; -1: none yet */
    uint64_t results_end;      /* bytes of it indexed */
    sbx_journal *journal;      /* a batch's results while it runs */
    sbx_cancel *cancel;        /* fired by DELETE, or by the server stopping */
    bool cancel_asked;         /* by DELETE */
    bool closed;               /* the server stops: event streams end */
    uint64_t run_t0;           /* monotonic start of this process's run */
    size_t run_done0;          /* done when it started */
    double rate;               /* items per second (kept when it ended) */
    json_t *summary;           /* a kind's final summary (eval), or NULL */
    srv_stream **subs;         /* event streams (a reference each) */
    size_t n_subs;
    char *idem;                /* "TOKEN:KEY" of its Idempotency-Key, or NULL */
    unsigned char idem_fp[SRV_IDEM_FP_SIZE];
    void *k;                   /* the kind's state */
    /* the gate (jobs.c's gate lock) */
    unsigned in_flight, waiting;
    /* the registry (jobs.c's lock) */
    srv_job *next;             /* all jobs, newest first */
    srv_job *queue_next;
    bool queued_now;
};

/* The server's jobs (s->jobs). */
struct srv_jobs {
    pthread_mutex_t lock;        /* the list, the queue, the counts */
    srv_job *head;               /* every job, newest first */
    size_t n, reserved;          /* jobs kept; places kept for jobs being made */
    srv_job *q_head, *q_tail;    /* queued, oldest first (a reference each) */
    unsigned running, runners;
    pthread_cond_t idle;         /* runners reached 0 */
    atomic_bool stopping;
    char *dir;                   /* STATE_DIR/jobs */
    char *off;                   /* why there are no jobs (the default directory
                                    is unusable), or NULL */
    /* the gate */
    pthread_mutex_t gate_mu;
    pthread_cond_t gate_cv;
    unsigned in_flight, workers;
    srv_job **gated;             /* the running jobs */
    size_t n_gated, cap_gated;
    /* the counts of /metrics: items that ended in this process (not the
     * ones a restart found done), by kind (JOB_KIND_*) */
    atomic_bool loaded;          /* the kept jobs are loaded: what ends now counts */
    atomic_ullong items_done[JOB_KINDS], items_failed[JOB_KINDS];
    /* the ticker */
    pthread_t ticker;
    bool ticker_on, tick_stop;
    pthread_cond_t tick_cv;
};

/* ---- jobs.c ------------------------------------------------------------------ */

/* A new job's object (transfer full @dir), or NULL. */
srv_job *job_alloc(srv *s, const job_kind *kind, const char *id, char *dir, size_t total);
/* Under J->lock: queue @j (taking a reference); start queued jobs while
 * there is room. */
void job_enqueue(struct srv_jobs *J, srv_job *j);
void job_kick(struct srv_jobs *J, srv *s);
/* Under J->lock: take @j out of the list.  The caller then forgets it,
 * outside the lock: its event streams end, its files are removed, the
 * list's reference is dropped. */
void job_unlink(struct srv_jobs *J, srv_job *j);
void job_forget(srv_job *j, const char *why);
/* The server lets @j go: its event streams end (and the job lets them go). */
void job_close(srv_job *j);
/* Set the end (under nothing); false when it had ended already. */
bool job_finish(srv_job *j, int state, const char *code, const char *msg, json_t *summary);
/* The CLOCK_REALTIME time @ns from now, for timed waits. */
struct timespec job_deadline(uint64_t ns);

srv_job *job_ref(srv_job *j);
void job_unref(srv_job *j);
/* The job @id of @owner (a reference), or NULL: a job is seen only with
 * the token that made it (srv_auth_owner), so another token's job is as
 * absent as one never made. */
srv_job *job_find(srv *s, const char *id, const char *owner);
/* A new job of @kind from the validated @spec (kept in job.json) with
 * @total items, its directory @dir already made and filled (transfer
 * full): written, registered and queued.  Replies 202 (or an error) to @r. */
void job_submit(srv_req *r, const job_kind *kind, char *dir, json_t *spec, size_t total);
/* Before a job is made: refuse (having replied) when the server stops,
 * when the Idempotency-Key names a job already made (its reply again),
 * or when [server] jobs_max jobs are kept.  0: go on. */
int job_admit(srv_req *r);
/* A new directory for a job (transfer full) and its id into @id, or
 * NULL having replied 500. */
char *job_new_dir(srv_req *r, char id[JOB_ID_LEN + 1]);
/* A kind's run ended: the job is cancelled when DELETE asked, failed
 * with @code and @msg when given, succeeded when every item is done, and
 * otherwise (the server stops) left to run again at the next start.
 * @summary (transfer full): the kind's final summary, or NULL.  The end
 * is kept in state.json. */
void job_ended(srv_job *j, const char *code, const char *msg, json_t *summary);
/* Whether the job's items should stop: cancelled, or the server stops. */
bool job_stopping(srv_job *j);
/* After job_admit: give back the place it kept when no job was made. */
void job_admit_end(srv_req *r);
/* The gate: before and after each item runs.  Shares the runs with the
 * interactive requests and among the running jobs: at most job_workers
 * at once, a job with fewer running first, none while requests wait for
 * a worker (but one always may run).  -1: the job is cancelled or the
 * server stops. */
int job_gate_enter(srv_job *j);
void job_gate_leave(srv_job *j);
/* Items of jobs running now, and how many may ([server] job_workers). */
void job_gate_stats(srv *s, unsigned *running, unsigned *workers);
/* A job starts or stops running (its items then count for fairness);
 * job_gate_wake: a job was cancelled or the server stops. */
int job_gate_join(struct srv_jobs *J, srv_job *j);
void job_gate_part(struct srv_jobs *J, srv_job *j);
void job_gate_wake(struct srv_jobs *J);
/* Stop the job (DELETE): fires its cancel.  False when it had ended. */
bool job_cancel(srv_job *j);
/* The jobs of @owner, newest first, for GET /v1/jobs: up to @max
 * references into @out, skipping @skip, with the state @state (-1: any)
 * and kind @kind (NULL: any); *total gets how many match. */
size_t job_list(srv *s, const char *owner, int state, const char *kind, size_t skip,
                srv_job **out, size_t max, size_t *total);
/* Add an event stream of @j (transfer full). */
void job_subscribe(srv_job *j, srv_stream *st);
/* A line was appended to results.jsonl at @off: index it, as an event.
 * Under j->mu.  -1 when it is not one of the job's records. */
int job_index_line(srv_job *j, const char *line, size_t len, uint64_t off);
/* Open @j's results.jsonl for reading (j->results_fd) and index every
 * line of it (a torn last line cut off).  -1 on an error (the library's
 * message set). */
int job_index_results(srv_job *j);
/* Something new for the event streams (under j->mu). */
void job_poke(srv_job *j);

/* Items of jobs that may run at once ([server] job_workers): the threads
 * a job runs its items with (the gate holds them to it). */
unsigned job_concurrency(const srv *s);
/* The fields of @body are all @known (NULL-terminated).  -1 having
 * replied 400 naming the one that is not. */
int job_check_fields(srv_req *r, json_t *body, const char *const *known);
/* A "providers" list of a body: known names, none twice.  -1 having
 * replied 400 or 422 naming the field. */
int job_check_providers(srv_req *r, json_t *pv);

/* The bodies of POST /v1/batch and /v1/eval: checked, made a job (202),
 * or refused naming the field.  (jobs-batch.c, jobs-eval.c) */
void jobs_batch_create(srv_req *r);
void jobs_eval_create(srv_req *r);

/* What an eval job was asked (jobs-eval.c; fixed once it is loaded, so
 * read without its lock while a reference is held): false for a job of
 * another kind.  The strings are the job's. */
struct job_eval_facts {
    const unsigned *ks;        /* its k values */
    size_t n_ks;
    const char *provider;      /* the first provider asked, or NULL: the default */
    const char *source;        /* the dataset's name as given, or "(inline)" */
    const char *samples_source;/* the samples' likewise; NULL: canonical */
    bool canonical;
};
bool job_eval_facts(srv_job *j, struct job_eval_facts *out);
/* An eval job's dataset and samples as the engine loads them from its
 * directory (transfer full both); an SBX_E_* code. */
int job_eval_inputs(srv_job *j, sbx_eval_dataset **ds, sbx_eval_samples **smp);
/* The "k" of an eval body or a compare (@v): 1 to JOB_MAX_KS whole
 * numbers from 1 to 1000000, none twice, into @ks and *@n.  -1 having
 * replied 400 naming the field. */
#define JOB_MAX_KS 16
int job_parse_ks(srv_req *r, json_t *v, unsigned *ks, size_t *n);
/* POST /v1/compare: finished eval jobs of the same samples side by side,
 * the report of `polysandbox compare --json` (jobs-compare.c). */
void jobs_compare(srv_req *r);

/* What /metrics tells of the jobs (metrics.c). */
struct job_stats {
    size_t jobs[JOB_KINDS][JOB_CANCELLED + 1];  /* kept, by kind and state */
    size_t items_pending[JOB_KINDS];            /* of queued and running jobs, not done */
    unsigned long long items_done[JOB_KINDS];   /* ended in this process */
    unsigned long long items_failed[JOB_KINDS]; /* ... and not passed (the kind's pass) */
};
/* Fill @st (zeros when the server keeps no jobs). */
void job_stats(srv *s, struct job_stats *st);

/* ---- jobs-store.c: the files --------------------------------------------- */

/* Write @j (compact) to DIR/NAME atomically (a temporary file, fsync,
 * rename, fsync of the directory).  0, or -1 with errno. */
int job_write_json(const char *dir, const char *name, json_t *j);
/* The temporary file job_write_json writes DIR/NAME through:
 * DIR/.NAME.tmp (transfer full), or NULL on ENOMEM. */
char *job_tmp_path(const char *dir, const char *name);
/* Whether the file name @file is such a temporary file (".NAME.tmp"): a
 * write a kill cut short, never renamed, so never a finished file. */
bool job_is_tmp_name(const char *file);
/* Write @len bytes to DIR/NAME (a new file, synced).  0, or -1 with errno. */
int job_write_file(const char *dir, const char *name, const void *data, size_t len);
/* Copy what @fd reads to the new file DIR/NAME (synced), a megabyte at a
 * time.  0, or JOB_COPY_READ (reading @fd failed) or JOB_COPY_WRITE,
 * with errno. */
enum { JOB_COPY_READ = -2, JOB_COPY_WRITE = -1 };
int job_copy_file(int fd, const char *dir, const char *name);
/* Read DIR/NAME as JSON (transfer full), or NULL (errno ENOENT when it is
 * not there, *why set otherwise). */
json_t *job_read_json(const char *dir, const char *name, char *why, size_t why_size);
/* mkdir -p @path, 0700 for what it makes.  0, or -1 with errno. */
int job_make_dirs(const char *path);
/* Remove the directory @dir and what it holds.  0 or -1. */
int job_remove_dir(const char *dir);
/* DIR/NAME (transfer full), or NULL. */
char *job_path(const char *dir, const char *name);
/* Read the bytes of line @off, @len of results.jsonl (transfer full,
 * NUL-terminated), or NULL. */
char *job_read_line(const srv_job *j, uint64_t off, uint32_t len);
/* The server's state directory: [server] state_dir, else the default
 * (transfer full), or NULL on ENOMEM. */
char *job_state_dir(const srv *s);

/* ---- jobs-view.c: the JSON ---------------------------------------------------- */

const char *job_state_name(int state);
/* The state called @name, or -1. */
int job_state_from_name(const char *name);
/* The job as GET /v1/jobs/{id} answers it (new reference): with a page of
 * items [@offset, @offset + @limit) when @limit > 0; without the kind's
 * bulky fields (an eval's summary) when not @full (the list). */
json_t *job_view(srv_job *j, size_t offset, size_t limit, bool full);
/* An item for the events and the pages: {"index", "state", "record"}
 * (new reference); @line NULL for a pending item. */
json_t *job_item_json(size_t index, const char *line);
/* "2026-11-26T23:38:52.123Z", or JSON null for 0. */
json_t *job_time_json(double t);
double job_now(void);

#endif /* POLYSANDBOX_SERVER_JOBS_H */
