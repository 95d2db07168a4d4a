/* core/limit-names.c - the limits' names: one table for the ini keys, the
 * messages and the JSON of unenforced limits
 */
#include "config.h"

#include <jansson.h>

#include "limit-names.h"

static const char *const limit_key[SBX_LIMIT_COUNT] = {
    [SBX_LIMIT_WALL] = "wall", [SBX_LIMIT_CPU] = "cpu",       [SBX_LIMIT_MEMORY] = "memory",
    [SBX_LIMIT_PIDS] = "pids", [SBX_LIMIT_NOFILE] = "nofile", [SBX_LIMIT_FSIZE] = "fsize",
    [SBX_LIMIT_DISK] = "disk", [SBX_LIMIT_STDOUT] = "stdout", [SBX_LIMIT_STDERR] = "stderr",
};

const char *core_limit_key(sbx_limit which)
{
    return (unsigned)which < SBX_LIMIT_COUNT ? limit_key[which] : NULL;
}

const char *sbx_limit_name(sbx_limit which)
{
    return core_limit_key(which);
}

const char *sbx_unenforced_name(int bit)
{
    if (bit >= 0 && bit < SBX_LIMIT_COUNT)
        return core_limit_key((sbx_limit)bit);
    return bit >= 0 && bit < 64 && (UINT64_C(1) << bit) == SBX_LIMIT_BIT_NETWORK ? "network" : NULL;
}

struct json_t *core_limit_names_json(uint64_t bits)
{
    json_t *a = json_array();

    for (int i = 0; a && i < 64; i++)
        if ((bits & (UINT64_C(1) << i)) && sbx_unenforced_name(i) &&
            json_array_append_new(a, json_string(sbx_unenforced_name(i)))) {
            json_decref(a);
            return NULL;
        }
    return a;
}
