/* core/eval/eval-journal.c - the results JSONL of an evaluation: one record
 * per line in an sbx_journal (core/journal.c), read back by a resume
 *
 * A fresh run replaces an existing file by a new one (sbx_journal_open
 * renames it over), never truncating it in place, and never writes over
 * the dataset or the samples.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include <polysandbox/sandbox.h>

#include "eval-int.h"
#include "error.h"

struct loading {
    const char *path;
    const sbx_eval_dataset *ds;
    const sbx_eval_samples *s;
    sbx_eval_record **records;
    size_t *n_resumed;
    bool keep_errors;             /* a report keeps them; a resume runs them again */
    const json_t *prov;           /* what each record's "run" must be, or NULL */
};

/* Check the record @o at @lineno belongs to these samples and keep it. */
static int load_record(void *ud, json_t *o, size_t lineno)
{
    struct loading *l = ud;
    sbx_eval_record *r;
    const char *why = NULL, *want = "";
    int rc = json_is_object(o) ? core_eval_record_from_json(o, &r, &why) : SBX_E_INVAL;

    if (rc == SBX_E_NOMEM)
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    if (rc != SBX_OK)
        return core_error_set(SBX_E_INVAL, NULL, "%s:%zu: not a result record (%s)", l->path,
                              lineno, why ? why : "not an object");
    if (r->sample >= l->s->n ||
        strcmp(r->task_id, (want = l->ds->tasks[l->s->v[r->sample].task].id))) {
        if (r->sample >= l->s->n)
            core_error_set(SBX_E_INVAL, NULL,
                           "%s:%zu: sample %zu is past the %zu samples given: these results "
                           "belong to other samples", l->path, lineno, r->sample, l->s->n);
        else
            core_error_set(SBX_E_INVAL, NULL,
                           "%s:%zu: sample %zu is task \"%s\" here but \"%s\" in the samples: "
                           "these results belong to other samples", l->path, lineno,
                           r->sample, r->task_id, want);
        core_eval_record_free(r);
        return SBX_E_INVAL;
    }
    if ((rc = core_eval_provenance_check(l->prov, o, l->path, lineno)) != SBX_OK) {
        core_eval_record_free(r);
        return rc;
    }
    /* A sandbox error or a language no template ran is no verdict: a
     * resume runs that sample again, a report shows it until a later
     * record replaces it.  A second record of a finished sample (two runs
     * appending) is ignored. */
    sbx_eval_record *had = l->records[r->sample];
    if ((!sbx_eval_verdict_graded(r->verdict) && (!l->keep_errors || had)) ||
        (had && sbx_eval_verdict_graded(had->verdict))) {
        core_eval_record_free(r);
        return SBX_OK;
    }
    if (had)
        core_eval_record_free(had);
    else
        (*l->n_resumed)++;
    l->records[r->sample] = r;
    return SBX_OK;
}

static int load_line(void *ud, const char *p, size_t n, size_t lineno, uint64_t offset)
{
    struct loading *l = ud;
    json_error_t jerr;
    json_t *o;
    int rc;

    (void)offset;
    if (n == 0)
        return SBX_OK;
    if (!(o = json_loadb(p, n, 0, &jerr)))
        return core_error_set(SBX_E_INVAL, NULL, "%s:%zu:%d: bad JSON in the results: %s",
                              l->path, lineno, jerr.column, jerr.text);
    rc = load_record(ud, o, lineno);
    json_decref(o);
    return rc;
}

/* SBX_E_INVAL when @path is the dataset's or the samples' file (the same
 * inode, through any link): the results would overwrite the input. */
static int not_input(const char *path, const sbx_eval_dataset *ds, const sbx_eval_samples *s)
{
    struct stat st;

    if (stat(path, &st) != 0)
        return SBX_OK;
    if (st.st_dev == ds->file.dev && st.st_ino == ds->file.ino)
        return core_error_set(SBX_E_INVAL, NULL, "%s: the results file is the dataset %s "
                              "(the same file): it would be overwritten", path, ds->path);
    if (!s->canonical && st.st_dev == s->file.dev && st.st_ino == s->file.ino)
        return core_error_set(SBX_E_INVAL, NULL, "%s: the results file is the samples file "
                              "(the same file): it would be overwritten", path);
    return SBX_OK;
}

int core_journal_open(sbx_journal **j, const char *path, bool resume,
                      const sbx_eval_dataset *ds, const sbx_eval_samples *s,
                      const json_t *prov, sbx_eval_record **records, size_t *n_resumed)
{
    struct loading l = { path, ds, s, records, n_resumed, false, prov };
    int rc;

    *n_resumed = 0;
    *j = NULL;
    if ((rc = not_input(path, ds, s)) != SBX_OK)
        return rc;
    return sbx_journal_open(path, resume, load_line, &l, j);
}

int core_journal_append(sbx_journal *j, const sbx_eval_record *r)
{
    char *line = sbx_eval_record_to_json(r);
    int rc;

    if (!line)
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    rc = sbx_journal_append(j, line, strlen(line), NULL);
    if (rc == SBX_E_IO && errno)
        core_error_set(SBX_E_IO, NULL, "%s: cannot write a result: %s", sbx_journal_path(j),
                       strerror(errno));
    free(line);
    return rc;
}

int sbx_eval_summary_load(sbx_ctx *ctx, const sbx_eval_dataset *ds, const sbx_eval_samples *s,
                          const char *path, sbx_eval_summary **out)
{
    sbx_eval_record **records;
    size_t n = 0;
    struct loading l = { path, ds, s, NULL, &n, true, NULL };
    core_jsonl_caps caps;
    int rc;

    core_error_clear();
    if (!ctx || !ds || !s || !path || !out)
        return core_error_set(SBX_E_INVAL, NULL, "sbx_eval_summary_load: NULL argument");
    *out = NULL;
    if (!(records = calloc(s->n + 1, sizeof *records)))
        return core_error_set(SBX_E_NOMEM, NULL, "out of memory");
    l.records = records;
    rc = core_jsonl_read(path, core_jsonl_caps_of(ctx, &caps), load_record, &l, NULL);
    if (rc != SBX_OK) {
        for (size_t i = 0; i < s->n; i++)
            core_eval_record_free(records[i]);
        free(records);
        return rc;
    }
    return core_eval_summary_build(ctx, ds, s, records, n, 0, 0, out);
}

/* Each whole line of the open @f through load_line, as a resume reads
 * them: streamed (a results file may be larger than the [eval] caps of
 * inputs), a torn last line (no newline) left out. */
static int check_lines(FILE *f, struct loading *l)
{
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    ssize_t n;
    int rc = SBX_OK;

    errno = 0;
    while (rc == SBX_OK && (n = getline(&line, &cap, f)) > 0) {
        if (line[n - 1] != '\n')
            break;
        rc = load_line(l, line, (size_t)n - 1, ++lineno, 0);
    }
    if (rc == SBX_OK && ferror(f))
        rc = core_error_set(errno == ENOMEM ? SBX_E_NOMEM : SBX_E_IO, NULL,
                            "%s: cannot read: %s", l->path, strerror(errno));
    free(line);
    return rc;
}

int sbx_eval_journal_check(sbx_ctx *ctx, const sbx_eval_dataset *ds,
                           const sbx_eval_samples *s, const sbx_eval_opts *o,
                           const char *path, size_t *n_records)
{
    sbx_eval_record **records = NULL;
    sbx_eval_opts *defaults = NULL;
    json_t *prov = NULL;
    size_t n = 0;
    struct loading l = { path, ds, s, NULL, &n, false, NULL };
    FILE *f = NULL;
    int rc = SBX_OK;

    core_error_clear();
    if (n_records)
        *n_records = 0;
    if (!ctx || !ds || !s || !path)
        return core_error_set(SBX_E_INVAL, NULL, "sbx_eval_journal_check: NULL argument");
    /* a missing file is none: the resume starts afresh */
    if (!(f = fopen(path, "re")))
        return errno == ENOENT ? SBX_OK : core_error_set(SBX_E_IO, NULL, "%s: cannot open: %s",
                                                         path, strerror(errno));
    if ((!o && !(o = defaults = sbx_eval_opts_new())) ||
        !(records = calloc(s->n + 1, sizeof *records)) ||
        !(prov = core_eval_provenance(ds, s, o))) {
        rc = core_error_set(SBX_E_NOMEM, NULL, "out of memory");
        goto out;
    }
    l.records = records;
    l.prov = prov;
    if ((rc = check_lines(f, &l)) == SBX_OK && n_records)
        *n_records = n;
out:
    for (size_t i = 0; records && i < s->n; i++)
        core_eval_record_free(records[i]);
    free(records);
    json_decref(prov);
    sbx_eval_opts_free(defaults);
    fclose(f);
    return rc;
}
