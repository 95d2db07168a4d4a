/* tests/cli/units-test.c - the command's duration and size parser (the
 * library's sbx_parse_*) and its human forms of them */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "../unit/tap.h"

static void ok_in(bool cond, const char *what, const char *input)
{
    ok(cond, "%s '%s'", what, input);
}

typedef bool parse_fn(const char *s, uint64_t *v, const char **why);

/* @parse takes @s as @want. */
static void parses(parse_fn *parse, const char *what, const char *s, uint64_t want)
{
    uint64_t v = 0;
    const char *why = NULL;
    bool r = parse(s, &v, &why);
    ok_in(r && v == want, what, s);
}

/* The public @parse refuses @s with SBX_E_CONFIG and exactly @want. */
static void says(int (*parse)(const char *, uint64_t *, const char **), const char *s,
                 const char *want)
{
    uint64_t v = 0;
    const char *why = NULL;
    ok_in(parse(s, &v, &why) == SBX_E_CONFIG && why && !strcmp(why, want), want, s);
}

/* @parse refuses @s and says why. */
static void refuses(parse_fn *parse, const char *what, const char *s)
{
    uint64_t v = 0;
    const char *why = NULL;
    bool r = parse(s, &v, &why);
    ok_in(!r && why != NULL && *why != '\0', what, s);
}

static void dur(const char *s, uint64_t want) { parses(cli_parse_duration, "duration", s, want); }
static void dur_bad(const char *s) { refuses(cli_parse_duration, "duration rejected", s); }
static void size(const char *s, uint64_t want) { parses(cli_parse_size, "size", s, want); }
static void size_bad(const char *s) { refuses(cli_parse_size, "size rejected", s); }
static void count_bad(const char *s) { refuses(cli_parse_count, "count rejected", s); }

static void fmt_dur(uint64_t ns, const char *want)
{
    char buf[64];
    cli_format_duration(ns, buf, sizeof buf);
    ok_in(strcmp(buf, want) == 0, "duration formats as", want);
}

static void fmt_size(uint64_t b, const char *want)
{
    char buf[64];
    cli_format_size(b, buf, sizeof buf);
    ok_in(strcmp(buf, want) == 0, "size formats as", want);
}

int main(void)
{
    uint64_t v = 0;
    const char *why;

    tap_plan(63);
    dur("10", UINT64_C(10000000000));
    dur("100ns", 100);
    dur("250us", 250000);
    dur("500ms", 500000000);
    dur("2s", UINT64_C(2000000000));
    dur("2m", UINT64_C(120000000000));
    dur("1h", UINT64_C(3600000000000));
    dur("18446744073709551615ns", UINT64_MAX);
    dur_bad("");
    dur_bad("0");
    dur_bad("0s");
    dur_bad("-1s");
    dur_bad("+1s");
    dur_bad(" 1s");
    dur_bad("1s ");
    dur("1.5s", UINT64_C(1500000000));
    dur("0.25ms", 250000);
    dur_bad("1.s");
    dur_bad("1.0000000001ns");         /* finer than a nanosecond */
    dur_bad("10x");
    dur_bad("s");
    dur_bad("18446744073709551616ns"); /* UINT64_MAX + 1 */
    dur_bad("5124096h");               /* overflows when scaled */
    size("512", 512);
    size("64K", 65536);
    size("64k", 65536);
    size("512M", UINT64_C(512) << 20);
    size("1G", UINT64_C(1) << 30);
    size("1T", UINT64_C(1) << 40);
    size("1KiB", 1024);
    size("1MB", UINT64_C(1) << 20);
    size("7B", 7);
    size_bad("0");
    size_bad("0K");
    size_bad("-1M");
    size_bad("1X");
    size("1KIB", 1024);
    size("0.5G", UINT64_C(1) << 29);
    size_bad("1Ki");
    size_bad("1KBB");
    size_bad("0.3");                   /* not a whole number of bytes */
    size_bad("16777216T");             /* 2^64 bytes */
    count_bad("0");
    count_bad("12a");
    count_bad("1.5");
    ok_in(cli_parse_count("128", &v, &why) && v == 128, "count", "128");
    /* The reasons users read after "invalid value 'V' for --timeout: ". */
    says(sbx_parse_duration, "5x", "has an unknown unit (use ns, us, ms, s, m or h)");
    says(sbx_parse_duration, "0", "must be greater than 0");
    says(sbx_parse_duration, "-1", "must not be negative");
    says(sbx_parse_duration, "", "is empty");
    says(sbx_parse_duration, "s", "is not a number");
    says(sbx_parse_duration, "99999999999999999999", "is too large");
    says(sbx_parse_duration, "1.", "has a decimal point without digits after it");
    says(sbx_parse_duration, "0.1ns", "is finer than a nanosecond");
    says(sbx_parse_size, "1q", "has an unknown unit (use K, M, G or T)");
    says(sbx_parse_size, "0.3", "is not a whole number of bytes");
    says(sbx_parse_count, "1.5", "must be a whole number");
    fmt_dur(UINT64_C(2000000000), "2s");
    fmt_dur(UINT64_C(1500000000), "1.5s");
    fmt_dur(UINT64_C(500000000), "500ms");
    fmt_size(UINT64_C(1) << 20, "1 MiB");
    fmt_size(1536, "1536 bytes");
    fmt_size(UINT64_C(3) << 30, "3 GiB");
    return tap_done();
}
