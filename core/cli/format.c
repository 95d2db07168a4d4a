/* core/cli/format.c - durations and sizes written for people, in
 * messages ("1.5s", "500ms", "1 MiB"); reading them is sbx_parse_*'s */
#include "config.h"

#include <stdio.h>

#include "cli.h"

void cli_format_duration(uint64_t ns, char *buf, size_t size)
{
    static const struct {
        const char *unit;
        uint64_t div;
    } units[] = {
        { "h", UINT64_C(3600000000000) }, { "m", UINT64_C(60000000000) },
        { "s", UINT64_C(1000000000) },    { "ms", UINT64_C(1000000) },
        { "us", UINT64_C(1000) },         { "ns", 1 },
    };
    const uint64_t second = UINT64_C(1000000000);

    /* 1.5s rather than 1500ms; whole units otherwise */
    if (ns > second && ns % second != 0) {
        snprintf(buf, size, "%.3gs", (double)ns / 1e9);
        return;
    }
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        uint64_t d = units[i].div;
        if (ns >= d && ns % d == 0) {
            snprintf(buf, size, "%llu%s", (unsigned long long)(ns / d),
                     units[i].unit);
            return;
        }
    }
    snprintf(buf, size, "0s");
}

void cli_format_size(uint64_t bytes, char *buf, size_t size)
{
    static const char *const names[] = { "TiB", "GiB", "MiB", "KiB" };

    for (int i = 0; i < 4; i++) {
        uint64_t d = UINT64_C(1) << (10 * (4 - i));
        if (bytes >= d && bytes % d == 0) {
            snprintf(buf, size, "%llu %s", (unsigned long long)(bytes / d),
                     names[i]);
            return;
        }
    }
    snprintf(buf, size, "%llu byte%s", (unsigned long long)bytes,
             bytes == 1 ? "" : "s");
}
