/* tests/fuzz/fuzz-dataset.c - evaluation datasets: JSON Lines, plain or
 * gzip, in each format (core/eval/eval-jsonl.c, core/eval/eval-dataset.c)
 *
 * The first byte chooses the format asked for (auto, humaneval, mbpp,
 * generic, judged, codecontests, apps, livecodebench, evalplus,
 * multipl-e); the rest is the file, read by sbx_eval_dataset_load as
 * `polysandbox eval --dataset` reads it.  Beyond not crashing: a refusal
 * says why, what loads has tasks with distinct ids, and every reference
 * solution's program (with its runner: EvalPlus embeds the inputs in it)
 * is built; MultiPL-E rows, which have none, get two samples each from a
 * completions line of MultiPL-E's shape, and their programs are built.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <polysandbox/eval.h>
#include <polysandbox/sandbox.h>

#include "fuzz.h"

static char *path;

static void init(void)
{
    fz_ctx();
    path = fz_path("data.jsonl");
}

/* Every program of @s over @ds is built. */
static void build_all(const sbx_eval_dataset *ds, const sbx_eval_samples *s)
{
    for (size_t i = 0; i < sbx_eval_samples_count(s); i++) {
        char *prog = sbx_eval_program(ds, s, i, NULL);
        if (!prog)
            fz_fail("no program for sample %zu", i);
        free(prog);
    }
}

/* MultiPL-E: {"name": ID, "completions": [...]} per task, as its
 * completions files, read back as samples: two per task. */
static void multiple_samples(sbx_ctx *ctx, const sbx_eval_dataset *ds)
{
    sbx_eval_samples *s = NULL;
    size_t len = 0, n = sbx_eval_dataset_size(ds);
    char *text = NULL;
    FILE *f = open_memstream(&text, &len);

    if (!f)
        fz_fail("open_memstream failed");
    for (size_t i = 0; i < n; i++) {
        json_t *o = json_pack("{s:s, s:[s, s]}", "name", sbx_eval_dataset_task_id(ds, i),
                              "completions", "    return 1\n", "");
        char *line = o ? json_dumps(o, JSON_COMPACT) : NULL;
        if (!line)
            fz_fail("cannot make a completions line");
        fprintf(f, "%s\n", line);
        free(line);
        json_decref(o);
    }
    if (fclose(f) != 0)
        fz_fail("open_memstream failed");
    if (sbx_eval_samples_parse(ctx, ds, "completions.jsonl", text, len, &s) != SBX_OK)
        fz_fail("completions of the dataset's own names refused: %s",
                sbx_error_message(sbx_ctx_last_error(ctx)));
    if (sbx_eval_samples_count(s) != 2 * n)
        fz_fail("%zu samples from %zu tasks x 2 completions", sbx_eval_samples_count(s), n);
    build_all(ds, s);
    sbx_eval_samples_free(s);
    free(text);
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
        build_all(ds, s);
    }
    sbx_eval_samples_free(s);
    if (sbx_eval_dataset_format(ds) == SBX_EVAL_FORMAT_MULTIPLE)
        multiple_samples(ctx, ds);
    sbx_eval_dataset_free(ds);
    return 0;
}

FZ_TARGET(dataset, init, one)
