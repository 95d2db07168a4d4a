/* core/eval/eval-judge-blob.c - the judged tests' runner's bytes, built by
 * core/local.mk (a static program, core/eval/eval-judge-runner.c) and
 * included here whole (sdk/inside/embed.h). */
#include "config.h"

#include "eval-int.h"
#include "eval-judge-runner.h"
#include "inside/embed.h"

SBX_EMBED(core_jr_blob, CORE_JR_BIN);

const unsigned char *core_eval_runner_blob(size_t *len)
{
    /* cppcheck-suppress comparePointers ; the linker's start and end of one blob */
    *len = (size_t)(core_jr_blob_end - core_jr_blob);
    return core_jr_blob;
}
