/* core/eval/eval-judge-blob.c - the judged tests' runners' bytes: the static
 * program built by core/local.mk (core/eval/eval-judge-runner.c) and the
 * Python one's source (core/eval/eval-judge-driver.py), included here whole
 * (.incbin of the paths eval-judge-runner.h names; that header carries
 * their checksums, so the dependency tracking rebuilds this file when
 * either changes). */
#include "config.h"

#include "eval-int.h"
#include "eval-judge-runner.h"

extern const unsigned char core_jr_blob[], core_jr_blob_end[];
extern const unsigned char core_jd_blob[], core_jd_blob_end[];

__asm__(".section .rodata\n"
        ".balign 16\n"
        ".globl core_jr_blob\n.hidden core_jr_blob\n"
        "core_jr_blob:\n"
        ".incbin \"" CORE_JR_BIN "\"\n"
        ".globl core_jr_blob_end\n.hidden core_jr_blob_end\n"
        "core_jr_blob_end:\n"
        ".byte 0\n"
        ".globl core_jd_blob\n.hidden core_jd_blob\n"
        "core_jd_blob:\n"
        ".incbin \"" CORE_JD_PY "\"\n"
        ".globl core_jd_blob_end\n.hidden core_jd_blob_end\n"
        "core_jd_blob_end:\n"
        ".byte 0\n"
        ".previous\n");

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
