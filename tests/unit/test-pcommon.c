/* tests/unit/test-pcommon.c - the providers' shared RFC 3339 parser and
 * random hex (plugins/common)
 */
#include "config.h"

#include <stdint.h>
#include <string.h>

#include "randhex.h"
#include "rfc3339.h"
#include "tap.h"

#define NS 1000000000ull

/* 2025-01-02T03:04:05Z */
#define T0 1735787045ull

static void is_time(const char *s, uint64_t want)
{
    uint64_t got = pc_rfc3339_ns(s);

    ok(got == want, "rfc3339 %s: %llu (want %llu)", s ? s : "NULL", (unsigned long long)got,
       (unsigned long long)want);
}

int main(void)
{
    is_time("2025-01-02T03:04:05Z", T0 * NS);
    is_time("2025-01-02t03:04:05z", T0 * NS);
    is_time("2025-01-02 03:04:05Z", T0 * NS);
    is_time("1970-01-01T00:00:00.5Z", NS / 2);
    is_time("2025-01-02T03:04:05.123Z", T0 * NS + 123000000);
    is_time("2025-01-02T03:04:05.123456789Z", T0 * NS + 123456789);
    is_time("2025-01-02T03:04:05.1234567891234Z", T0 * NS + 123456789);
    /* The offset is applied: 05:04:05+02:00 is 03:04:05 UTC. */
    is_time("2025-01-02T05:04:05+02:00", T0 * NS);
    is_time("2025-01-02T05:34:05.5+02:30", T0 * NS + NS / 2);
    is_time("2025-01-01T23:04:05-04:00", T0 * NS);
    is_time("2025-01-02T03:04:05+00:00", T0 * NS);
    is_time("2025-01-02T03:04:05-00:00", T0 * NS);
    is_time("2024-02-29T00:00:00Z", 1709164800ull * NS);
    is_time("2025-01-02T03:04:60Z", (T0 + 55) * NS);

    /* Malformed or out of range: 0. */
    is_time(NULL, 0);
    is_time("", 0);
    is_time("2025-01-02T03:04:05", 0);
    is_time("2025-01-02T03:04:05Zjunk", 0);
    is_time("2025-01-02T03:04:05+0200", 0);
    is_time("2025-01-02T03:04:05+24:00", 0);
    is_time("2025-01-02T03:04:05.Z", 0);
    is_time("2025-1-02T03:04:05Z", 0);
    is_time("2025-02-30T03:04:05Z", 0);
    is_time("2025-13-02T03:04:05Z", 0);
    is_time("2025-01-02T24:04:05Z", 0);
    is_time("1969-12-31T23:59:59Z", 0);
    is_time("1970-01-01T00:30:00+01:00", 0);

    {
        char a[65], b[65];
        int hex = 1;

        memset(a, 'x', sizeof a);
        ok(pc_random_hex(a, 16) == 0 && strlen(a) == 32, "random hex: 16 bytes, 32 digits");
        for (size_t i = 0; a[i]; i++)
            hex &= (a[i] >= '0' && a[i] <= '9') || (a[i] >= 'a' && a[i] <= 'f');
        ok(hex, "random hex: lower-case hex digits only (%s)", a);
        ok(pc_random_hex(b, 16) == 0 && strcmp(a, b) != 0, "random hex: two draws differ");
        ok(pc_random_hex(a, 100) == 0 && strlen(a) == 64, "random hex: more than 32 bytes cut to 32");
        ok(pc_random_hex(a, 0) == 0 && a[0] == '\0', "random hex: 0 bytes, empty string");
    }
    return tap_done();
}
