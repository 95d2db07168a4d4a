/* tests/fuzz/fuzz-dataset.c - evaluation datasets: JSON Lines, plain or
 * gzip, in each format (core/eval-jsonl.c, core/eval-dataset.c)
 *
 * The first byte chooses the format asked for (auto, humaneval, mbpp,
 * generic, judged, codecontests, apps, livecodebench, evalplus); the rest
 * is the file, read by sbx_eval_dataset_load as `polysandbox eval
 * --dataset` reads it.  Beyond not crashing: a refusal says why, what
 * loads has tasks with distinct ids, and every reference solution's
 * program (with its runner: EvalPlus embeds the inputs in it) is built.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <polysandbox/eval.h>
#include <polysandbox/sandbox.h>

#include "fuzz.h"

static char *path;

static void init(void)
{
    fz_ctx();
    path = fz_path("data.jsonl");
}

static int one(const uint8_t *data, size_t size)
{
    sbx_ctx *ctx = fz_ctx();
    sbx_eval_format fmt = size ? (sbx_eval_format)(data[0] % (SBX_EVAL_FORMAT_LAST + 1))
                                : SBX_EVAL_FORMAT_AUTO;
    sbx_eval_dataset *ds = NULL;
    sbx_eval_samples *s = NULL;

    if (!path)
        init();
    fz_write("data.jsonl", size ? data + 1 : data, size ? size - 1 : 0);
    if (sbx_eval_dataset_load(ctx, path, fmt, &ds) != SBX_OK) {
        if (!sbx_error_message(sbx_ctx_last_error(ctx))[0])
            fz_fail("a dataset refused without a message");
        return 0;
    }
    if (sbx_eval_dataset_size(ds) == 0)
        fz_fail("a dataset without tasks loaded");
    for (size_t i = 0; i < sbx_eval_dataset_size(ds); i++) {
        const char *id = sbx_eval_dataset_task_id(ds, i);
        if (!id)
            fz_fail("task %zu has no id", i);
        for (size_t j = 0; j < i; j++)
            if (!strcmp(id, sbx_eval_dataset_task_id(ds, j)))
                fz_fail("tasks %zu and %zu are both '%s'", j, i, id);
    }
    /* The reference solutions, as --canonical takes them. */
    if (sbx_eval_samples_canonical(ctx, ds, &s) == SBX_OK) {
        if (sbx_eval_samples_count(s) != sbx_eval_dataset_size(ds))
            fz_fail("%zu reference solutions for %zu tasks", sbx_eval_samples_count(s),
                    sbx_eval_dataset_size(ds));
        for (size_t i = 0; i < sbx_eval_samples_count(s); i++) {
            char *prog = sbx_eval_program(ds, s, i, NULL);
            if (!prog)
                fz_fail("no program for reference solution %zu", i);
            free(prog);
        }
    }
    sbx_eval_samples_free(s);
    sbx_eval_dataset_free(ds);
    return 0;
}

FZ_TARGET(dataset, init, one)
