/* core/eval/eval-judge-blob.c - the judged tests' runner's bytes, built by
 * core/local.mk (a static program, core/eval/eval-judge-runner.c) and
 * included here whole (.incbin of the path eval-judge-runner.h names; that
 * header carries the runner's checksum, so the dependency tracking
 * rebuilds this file when the runner changes). */
#include "config.h"

#include "eval-int.h"
#include "eval-judge-runner.h"

extern const unsigned char core_jr_blob[], core_jr_blob_end[];

__asm__(".section .rodata\n"
        ".balign 16\n"
        ".globl core_jr_blob\n.hidden core_jr_blob\n"
        "core_jr_blob:\n"
        ".incbin \"" CORE_JR_BIN "\"\n"
        ".globl core_jr_blob_end\n.hidden core_jr_blob_end\n"
        "core_jr_blob_end:\n"
        ".byte 0\n"
        ".previous\n");

const unsigned char *core_eval_runner_blob(size_t *len)
{
    /* cppcheck-suppress comparePointers ; the linker's start and end of one blob */
    *len = (size_t)(core_jr_blob_end - core_jr_blob);
    return core_jr_blob;
}
