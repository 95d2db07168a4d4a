/* tests/fuzz/fuzz-samples.c - what an evaluation reads beside its
 * dataset: the samples file (core/eval/eval-dataset.c) and, with --resume, the
 * results of an earlier run (core/eval/eval-journal.c, core/eval/eval-record.c)
 *
 * The datasets are fixed (three HumanEval tasks, two MultiPL-E rows).
 * The first byte chooses what the rest is: a samples file read by
 * sbx_eval_samples_load for either (MultiPL-E's: completions files too),
 * or a results file checked by sbx_eval_journal_check and resumed by
 * core_journal_open for the three reference solutions.  Beyond not crashing: refusals say why, and every resumed
 * record is one of the samples and has the task of that sample.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <polysandbox/eval.h>
#include <polysandbox/sandbox.h>

#include "eval/eval-int.h"
#include "fuzz.h"
#include "error.h"

static const char dataset[] =
    "{\"task_id\": \"T/0\", \"prompt\": \"def f(x):\\n\", \"entry_point\": \"f\", "
    "\"canonical_solution\": \"    return x\\n\", \"test\": \"def check(c):\\n    assert c(1) == 1\\n\"}\n"
    "{\"task_id\": \"T/1\", \"prompt\": \"def g():\\n\", \"entry_point\": \"g\", "
    "\"canonical_solution\": \"    return 2\\n\", \"test\": \"def check(c):\\n    pass\\n\"}\n"
    "{\"task_id\": 7, \"prompt\": \"def h():\\n\", \"entry_point\": \"h\", "
    "\"canonical_solution\": \"    pass\\n\", \"test\": \"\"}\n";

static const char multiple[] =
    "{\"name\": \"HumanEval_0_f\", \"language\": \"py\", \"prompt\": \"def f(x):\\n\", "
    "\"tests\": \"assert f(1) == 1\\n\", \"stop_tokens\": [\"\\ndef\"]}\n"
    "{\"name\": \"HumanEval_1_g\", \"language\": \"cs\", \"prompt\": \"class Problem {\\n\", "
    "\"tests\": \"}\\n\", \"stop_tokens\": []}\n";

static sbx_eval_dataset *ds, *mds;
static sbx_eval_samples *canonical;
static char *samples_path, *results_path;
static sbx_eval_opts *dflt;
static json_t *prov;

static void init(void)
{
    char *p;

    fz_write("fixed-dataset.jsonl", dataset, sizeof dataset - 1);
    p = fz_path("fixed-dataset.jsonl");
    if (sbx_eval_dataset_load(fz_ctx(), p, SBX_EVAL_FORMAT_AUTO, &ds) != SBX_OK ||
        sbx_eval_samples_canonical(fz_ctx(), ds, &canonical) != SBX_OK)
        fz_fail("the harness's dataset does not load");
    free(p);
    fz_write("fixed-multipl-e.jsonl", multiple, sizeof multiple - 1);
    p = fz_path("fixed-multipl-e.jsonl");
    if (sbx_eval_dataset_load(fz_ctx(), p, SBX_EVAL_FORMAT_AUTO, &mds) != SBX_OK ||
        sbx_eval_dataset_format(mds) != SBX_EVAL_FORMAT_MULTIPLE)
        fz_fail("the harness's MultiPL-E dataset does not load as one");
    free(p);
    samples_path = fz_path("samples.jsonl");
    results_path = fz_path("results.jsonl");
    if (!(dflt = sbx_eval_opts_new()))
        fz_fail("out of memory");
}

static void samples(const sbx_eval_dataset *d, const uint8_t *data, size_t size)
{
    sbx_ctx *ctx = fz_ctx();
    sbx_eval_samples *s = NULL;

    fz_write("samples.jsonl", data, size);
    if (sbx_eval_samples_load(ctx, d, samples_path, &s) != SBX_OK) {
        if (!sbx_error_message(sbx_ctx_last_error(ctx))[0])
            fz_fail("a samples file refused without a message");
        return;
    }
    if (sbx_eval_samples_count(s) == 0)
        fz_fail("a samples file without samples loaded");
    sbx_eval_samples_free(s);
}

static void results(const uint8_t *data, size_t size)
{
    sbx_journal *j = NULL;
    sbx_eval_record *records[3] = { NULL, NULL, NULL };
    size_t n = 0;
    int rc;

    fz_write("results.jsonl", data, size);
    /* checked first (it reads, never cuts), then resumed, both against the
     * provenance of the defaults: a "run" member is parsed too */
    if (sbx_eval_journal_check(fz_ctx(), ds, canonical, NULL, results_path, &n) != SBX_OK &&
        !core_error_tls()->message[0])
        fz_fail("a results file refused by the check without a message");
    if (!prov && !(prov = core_eval_provenance(ds, canonical, dflt)))
        fz_fail("no provenance");
    n = 0;
    rc = core_journal_open(&j, results_path, true, ds, canonical, prov, records, &n);
    if (rc == SBX_OK)
        sbx_journal_close(j);
    else if (!core_error_tls()->message[0])
        fz_fail("a results file refused without a message");
    for (size_t i = 0; i < 3; i++) {
        if (records[i] && strcmp(records[i]->task_id, sbx_eval_dataset_task_id(ds, i)))
            fz_fail("sample %zu resumed as task '%s'", i, records[i]->task_id);
        if (records[i] && records[i]->sample != i)
            fz_fail("slot %zu holds the record of sample %zu", i, records[i]->sample);
        core_eval_record_free(records[i]);
    }
    if (rc == SBX_OK && n > 3)
        fz_fail("%zu records resumed for 3 samples", n);
    core_error_clear();
}

static int one(const uint8_t *data, size_t size)
{
    if (!ds)
        init();
    if (size && data[0] % 2)
        results(data + 1, size - 1);
    else if (size && data[0] % 4 == 2)
        samples(mds, data + 1, size - 1);
    else
        samples(ds, size ? data + 1 : data, size ? size - 1 : 0);
    return 0;
}

FZ_TARGET(samples, init, one)
