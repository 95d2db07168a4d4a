/* tests/unit/test-units.c - durations, sizes, counts, booleans and image
 * platforms */
#include "config.h"

#include <string.h>
#include <sys/utsname.h>

#include <polysandbox/sandbox.h>

#include "units.h"
#include "platform.h"
#include "tap.h"

#define NS UINT64_C(1)
#define US UINT64_C(1000)
#define MS UINT64_C(1000000)
#define S UINT64_C(1000000000)
#define KI (UINT64_C(1) << 10)
#define MI (UINT64_C(1) << 20)
#define GI (UINT64_C(1) << 30)
#define TI (UINT64_C(1) << 40)

typedef int (*parse_fn)(const char *, bool, uint64_t *, const char **);

static void good(parse_fn f, const char *name, const char *s, bool allow_zero,
                 uint64_t want)
{
    uint64_t v = 12345;
    const char *why = NULL;
    int rc = f(s, allow_zero, &v, &why);

    if (!ok(rc == SBX_OK && v == want, "%s '%s' = %llu", name, s,
            (unsigned long long)want))
        diag("rc %d, got %llu, why %s", rc, (unsigned long long)v,
             why ? why : "(none)");
}

/* Rejected with SBX_E_CONFIG, the output untouched, and a why containing
 * @because. */
static void bad(parse_fn f, const char *name, const char *s, bool allow_zero,
                const char *because)
{
    uint64_t v = 12345;
    const char *why = NULL;
    int rc = f(s, allow_zero, &v, &why);

    if (!ok(rc == SBX_E_CONFIG && v == 12345 && why && strstr(why, because),
            "%s '%s' rejected: %s", name, s ? s : "(null)", because))
        diag("rc %d, got %llu, why %s", rc, (unsigned long long)v,
             why ? why : "(none)");
}

static void durations(void)
{
    parse_fn f = core_parse_duration;
    const char *d = "duration";

    good(f, d, "10s", false, 10 * S);
    good(f, d, "10", false, 10 * S);
    good(f, d, "1.5s", false, 1500 * MS);
    good(f, d, "0.5", false, 500 * MS);
    good(f, d, "500ms", false, 500 * MS);
    good(f, d, "250us", false, 250 * US);
    good(f, d, "100ns", false, 100 * NS);
    good(f, d, "2m", false, 120 * S);
    good(f, d, "1h", false, 3600 * S);
    good(f, d, "0.1h", false, 360 * S);
    good(f, d, "1.25m", false, 75 * S);
    good(f, d, "1.000000001s", false, S + 1);
    good(f, d, "1.10000000000000000000s", false, 1100 * MS);
    good(f, d, "1.5us", false, 1500 * NS);
    good(f, d, "0s", true, 0);
    good(f, d, "0", true, 0);
    good(f, d, "18446744073709551615ns", false, UINT64_MAX);
    good(f, d, "18446744073s", false, UINT64_C(18446744073) * S);
    good(f, d, "007s", false, 7 * S);

    bad(f, d, "0s", false, "greater than zero");
    bad(f, d, "0", false, "greater than zero");
    bad(f, d, "0.0ms", false, "greater than zero");
    bad(f, d, "-1s", false, "negative");
    bad(f, d, "-0", true, "negative");
    bad(f, d, "", false, "empty");
    bad(f, d, NULL, false, "empty");
    bad(f, d, "abc", false, "not a number");
    bad(f, d, "+5s", false, "not a number");
    bad(f, d, " 5s", false, "not a number");
    bad(f, d, ".5s", false, "not a number");
    bad(f, d, "10x", false, "unknown unit");
    bad(f, d, "10s ", false, "unknown unit");
    bad(f, d, "10 s", false, "unknown unit");
    bad(f, d, "10ss", false, "unknown unit");
    bad(f, d, "10S", false, "unknown unit");
    bad(f, d, "10s5", false, "unknown unit");
    bad(f, d, "1e3s", false, "unknown unit");
    bad(f, d, "1.s", false, "decimal point");
    bad(f, d, "1..5s", false, "decimal point");
    bad(f, d, "1.5.5s", false, "unknown unit");
    bad(f, d, "1.5ns", false, "finer than a nanosecond");
    bad(f, d, "0.0000000001s", false, "finer than a nanosecond");
    bad(f, d, "1.0000000000000000001s", false, "too many decimal places");
    bad(f, d, "99999999999h", false, "too large");
    bad(f, d, "18446744074s", false, "too large");
    bad(f, d, "18446744073709551616ns", false, "too large");
    bad(f, d, "18446744073709551616", false, "too large");
    bad(f, d, "99999999999999999999999999", false, "too large");
    bad(f, d, "18446744073709551615.5ns", false, "finer than a nanosecond");
    bad(f, d, "18446744073.9999999999s", false, "finer than a nanosecond");
    bad(f, d, "18446744073.71s", false, "too large");
}

static void sizes(void)
{
    parse_fn f = core_parse_size;
    const char *d = "size";

    good(f, d, "512", false, 512);
    good(f, d, "512B", false, 512);
    good(f, d, "64K", false, 64 * KI);
    good(f, d, "64k", false, 64 * KI);
    good(f, d, "64KB", false, 64 * KI);
    good(f, d, "64KiB", false, 64 * KI);
    good(f, d, "64kib", false, 64 * KI);
    good(f, d, "512M", false, 512 * MI);
    good(f, d, "512m", false, 512 * MI);
    good(f, d, "512MB", false, 512 * MI);
    good(f, d, "512MiB", false, 512 * MI);
    good(f, d, "1G", false, GI);
    good(f, d, "1GiB", false, GI);
    good(f, d, "1T", false, TI);
    good(f, d, "1TB", false, TI);
    good(f, d, "1.5G", false, GI + GI / 2);
    good(f, d, "0.5K", false, 512);
    good(f, d, "0.25M", false, 256 * KI);
    good(f, d, "0", true, 0);
    good(f, d, "18446744073709551615", false, UINT64_MAX);
    good(f, d, "17179869183G", false, UINT64_C(17179869183) * GI);
    good(f, d, "16777215T", false, UINT64_C(16777215) * TI);

    bad(f, d, "0", false, "greater than zero");
    bad(f, d, "0K", false, "greater than zero");
    bad(f, d, "-1M", false, "negative");
    bad(f, d, "", false, "empty");
    bad(f, d, "M", false, "not a number");
    bad(f, d, "1.5", false, "not a whole number of bytes");
    bad(f, d, "0.1K", false, "not a whole number of bytes");
    bad(f, d, "1P", false, "unknown unit");
    bad(f, d, "1GG", false, "unknown unit");
    bad(f, d, "1 G", false, "unknown unit");
    bad(f, d, "1G ", false, "unknown unit");
    bad(f, d, "1Gi", false, "unknown unit");
    bad(f, d, "1iB", false, "unknown unit");
    bad(f, d, "0x10", false, "unknown unit");
    bad(f, d, "17179869184G", false, "too large");
    bad(f, d, "16777216T", false, "too large");
    bad(f, d, "18446744073709551616", false, "too large");
    bad(f, d, "99999999999999999999K", false, "too large");
}

static void counts(void)
{
    parse_fn f = core_parse_count;
    const char *d = "count";

    good(f, d, "128", false, 128);
    good(f, d, "1", false, 1);
    good(f, d, "0", true, 0);
    good(f, d, "18446744073709551615", false, UINT64_MAX);

    bad(f, d, "0", false, "greater than zero");
    bad(f, d, "-1", false, "negative");
    bad(f, d, "", false, "empty");
    bad(f, d, "abc", false, "not a number");
    bad(f, d, "1.5", false, "not a whole number");
    bad(f, d, "1K", false, "not a whole number");
    bad(f, d, "12a", false, "not a whole number");
    bad(f, d, "12 ", false, "not a whole number");
    bad(f, d, "18446744073709551616", false, "too large");
}

static void booleans(void)
{
    static const struct {
        const char *s;
        bool v;
    } yes[] = {
        { "true", true }, { "yes", true }, { "on", true }, { "1", true },
        { "TRUE", true }, { "Yes", true }, { "ON", true },
        { "false", false }, { "no", false }, { "off", false }, { "0", false },
        { "False", false }, { "NO", false }, { "Off", false },
    };
    static const char *const no[] = { "", "maybe", "2", "truee", "yes ",
                                      " no", "t", "-1", "onn" };

    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        bool v = !yes[i].v;
        const char *why = NULL;
        int rc = core_parse_bool(yes[i].s, &v, &why);
        ok(rc == SBX_OK && v == yes[i].v, "bool '%s' = %s", yes[i].s,
           yes[i].v ? "true" : "false");
    }
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        bool v = true;
        const char *why = NULL;
        int rc = core_parse_bool(no[i], &v, &why);
        ok(rc == SBX_E_CONFIG && v && why && *why, "bool '%s' rejected (%s)",
           no[i], why ? why : "no why");
    }
    bool v = true;
    ok(core_parse_bool(NULL, &v, NULL) == SBX_E_CONFIG, "bool NULL rejected, "
       "NULL why is fine");
}

/* "OS/ARCH[/VARIANT]" read back as @want once normalised. */
static void platform_good(const char *s, const char *want)
{
    core_platform p;
    const char *why = NULL;
    char out[96] = "";
    bool r = core_platform_parse(s, &p, &why);
    if (r)
        core_platform_format(&p, out, sizeof out);
    if (!ok(r && strcmp(out, want) == 0, "platform '%s' is %s", s, want))
        diag("got '%s', why %s", out, why ? why : "(none)");
}

static void platforms(void)
{
    platform_good("linux/amd64", "linux/amd64");
    platform_good("linux/x86_64", "linux/amd64");
    platform_good("linux/aarch64", "linux/arm64");
    platform_good("linux/arm64/v8", "linux/arm64");
    platform_good("linux/arm", "linux/arm/v7");
    platform_good("linux/arm/6", "linux/arm/v6");
    platform_good("linux/armhf", "linux/arm/v7");
    platform_good("linux/i686", "linux/386");
    platform_good("windows/amd64", "windows/amd64");

    static const char *const bad_ones[] = { "linux", "linux/", "/amd64", "Linux/amd64",
                                            "linux/amd64/", "linux/arm/v7/x", "linux/a md64",
                                            "" };
    for (size_t i = 0; i < sizeof bad_ones / sizeof bad_ones[0]; i++) {
        core_platform p;
        const char *why = NULL;
        ok(!core_platform_parse(bad_ones[i], &p, &why) && why && strstr(why, "OS/ARCH"),
           "platform '%s' refused, saying the form", bad_ones[i]);
    }
    core_platform p;
    const char *why = NULL;
    ok(!core_platform_parse("linux/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", &p, &why) &&
       why && strstr(why, "too long"), "a platform part too long is refused");

    core_platform_parse("linux/arm64", &p, &why);
    ok(core_platform_match(&p, "linux", "arm64", "v8") &&
       core_platform_match(&p, "linux", "aarch64", NULL) &&
       !core_platform_match(&p, "linux", "arm", "v8") &&
       !core_platform_match(&p, "windows", "arm64", NULL) &&
       !core_platform_match(&p, NULL, "arm64", NULL),
       "an index entry's arm64 matches linux/arm64 in any spelling, nothing else");
    core_platform_parse("linux/arm/v7", &p, &why);
    ok(core_platform_match(&p, "linux", "arm", NULL) &&
       core_platform_match(&p, "linux", "arm", "7") &&
       !core_platform_match(&p, "linux", "arm", "v6"),
       "an entry's arm without a variant is arm/v7; arm/v6 is not");

    /* This machine's, from uname(2), as docker names it. */
    core_platform h;
    char out[96];
    core_platform_host(&h);
    core_platform_format(&h, out, sizeof out);
    struct utsname u;
    const char *want = uname(&u) != 0 ? NULL
                       : strcmp(u.machine, "x86_64") == 0 ? "linux/amd64"
                       : strcmp(u.machine, "aarch64") == 0 ? "linux/arm64"
                       : strcmp(u.machine, "armv7l") == 0 ? "linux/arm/v7" : NULL;
    if (want)
        ok(strcmp(out, want) == 0, "this machine (%s) is %s", u.machine, out);
    else
        ok(1, "this machine is %s # SKIP no known answer for its uname", out);
}

int main(void)
{
    uint64_t v;

    durations();
    sizes();
    counts();
    booleans();
    platforms();
    ok(core_parse_duration("x", false, &v, NULL) == SBX_E_CONFIG &&
       core_parse_size("x", false, &v, NULL) == SBX_E_CONFIG &&
       core_parse_count("x", false, &v, NULL) == SBX_E_CONFIG,
       "a NULL why is allowed");
    return tap_done();
}
