/* tests/fuzz/fuzz-main.c - polysandbox-fuzz: the targets under libFuzzer
 *
 * One program holds every target; which one runs is named by
 * $SBX_FUZZ_TARGET or, failing that, by the program's name "fuzz-NAME"
 * (`make fuzz` links fuzz-NAME to it for each target), so that libFuzzer's
 * own re-executions keep it.  SBX_FUZZ_LIST=1 prints the names.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const fz_target *target;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *name = getenv("SBX_FUZZ_TARGET");
    size_t n;
    const fz_target *const *all = fz_targets(&n);

    if (getenv("SBX_FUZZ_LIST")) {
        for (size_t i = 0; i < n; i++)
            printf("%s\n", all[i]->name);
        exit(0);
    }
    if (!name || !*name) {
        const char *base = *argc > 0 ? strrchr((*argv)[0], '/') : NULL;
        base = base ? base + 1 : *argc > 0 ? (*argv)[0] : "";
        name = strncmp(base, "fuzz-", 5) == 0 ? base + 5 : "";
    }
    if (!(target = fz_find(name))) {
        fprintf(stderr, "polysandbox-fuzz: no target '%s': set SBX_FUZZ_TARGET or run it as "
                "fuzz-NAME; the targets are:", name);
        for (size_t i = 0; i < n; i++)
            fprintf(stderr, " %s", all[i]->name);
        fprintf(stderr, "\n");
        exit(2);
    }
    if (target->init)
        target->init();
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return target->one(data, size);
}
