/* tests/fuzz/fuzz-units.c - durations, sizes, counts and booleans: the
 * configuration's parsers (core/units.c) and the public sbx_parse_*
 * the command line and the server read with (the same parser, worded to
 * follow a value), which promise the same grammar and values; and image
 * platforms (core/platform.c)
 *
 * Beyond not crashing: a value is accepted by one exactly when the
 * other accepts it, with the same result, and 0 only when asked for; a
 * platform accepted is read back the same, and matches itself.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <polysandbox/sandbox.h>

#include "cli.h"
#include "units.h"
#include "platform.h"
#include "fuzz.h"

typedef int (*core_fn)(const char *, bool, uint64_t *, const char **);
typedef bool (*cli_fn)(const char *, uint64_t *, const char **);

static void compare(const char *what, const char *s, core_fn core, cli_fn cli)
{
    uint64_t a = 0, b = 0, z = 0;
    const char *why_a = NULL, *why_b = NULL, *why_z = NULL;
    int ra = core(s, false, &a, &why_a);
    bool rb = cli(s, &b, &why_b);
    int rz = core(s, true, &z, &why_z);

    if ((ra == SBX_OK) != rb)
        fz_fail("%s '%s': the configuration %s it (%s), the command line %s it (%s)", what, s,
                ra == SBX_OK ? "accepts" : "refuses", why_a ? why_a : "",
                rb ? "accepts" : "refuses", why_b ? why_b : "");
    if (ra == SBX_OK && a != b)
        fz_fail("%s '%s': %llu in the configuration, %llu on the command line", what, s,
                (unsigned long long)a, (unsigned long long)b);
    if (ra == SBX_OK && a == 0)
        fz_fail("%s '%s': 0 accepted though zero is not allowed", what, s);
    if ((ra != SBX_OK && (!why_a || !*why_a)) || (!rb && (!why_b || !*why_b)))
        fz_fail("%s '%s' refused without a reason", what, s);
    if (ra == SBX_OK && (rz != SBX_OK || z != a))
        fz_fail("%s '%s': allowing zero changed a non-zero answer", what, s);
    if (rz == SBX_OK && ra != SBX_OK && z != 0)
        fz_fail("%s '%s': refused, but %llu when zero is allowed", what, s,
                (unsigned long long)z);
}

static void platform(const char *s)
{
    core_platform p, q;
    const char *why = NULL;
    char out[96];

    if (!core_platform_parse(s, &p, &why)) {
        if (!why || !*why)
            fz_fail("platform '%s' refused without a reason", s);
        return;
    }
    core_platform_format(&p, out, sizeof out);
    if (!core_platform_parse(out, &q, &why) || memcmp(&p, &q, sizeof p) != 0)
        fz_fail("platform '%s' read as '%s', which reads otherwise", s, out);
    if (!core_platform_match(&p, p.os, p.arch, p.variant))
        fz_fail("platform '%s' does not match itself", s);
}

static int one(const uint8_t *data, size_t size)
{
    char *s = fz_strndup(data, size);
    bool b;
    const char *why = NULL;

    compare("duration", s, core_parse_duration, cli_parse_duration);
    compare("size", s, core_parse_size, cli_parse_size);
    compare("count", s, core_parse_count, cli_parse_count);
    if (core_parse_bool(s, &b, &why) != SBX_OK && (!why || !*why))
        fz_fail("boolean '%s' refused without a reason", s);
    platform(s);
    free(s);
    return 0;
}

FZ_TARGET(units, NULL, one)
