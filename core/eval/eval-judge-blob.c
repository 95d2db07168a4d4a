/* core/eval/eval-judge-blob.c - the judged tests' runners' bytes: the static
 * program built by core/local.mk (core/eval/eval-judge-runner.c) and the
 * Python one's source (core/eval/eval-judge-driver.py), included here whole
 * (sdk/inside/embed.h). */
#include "config.h"

#include "eval-int.h"
#include "eval-judge-driver.h"
#include "eval-judge-runner.h"
#include "inside/embed.h"

SBX_EMBED(core_jr_blob, CORE_JR_BIN);
SBX_EMBED(core_jd_blob, CORE_JD_PY);

const unsigned char *core_eval_runner_blob(size_t *len)
{
    /* cppcheck-suppress comparePointers ; the linker's start and end of one blob */
    *len = (size_t)(core_jr_blob_end - core_jr_blob);
    return core_jr_blob;
}

const unsigned char *core_eval_driver_blob(size_t *len)
{
    /* cppcheck-suppress comparePointers ; the linker's start and end of one blob */
    *len = (size_t)(core_jd_blob_end - core_jd_blob);
    return core_jd_blob;
}
