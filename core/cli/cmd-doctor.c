/* core/cli/cmd-doctor.c - polysandbox doctor: the providers' host checks */
#include "config.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void doctor_help(void)
{
    fputs(
"Usage: polysandbox doctor [--provider NAME]\n"
"Run the host checks of a provider (default: every enabled provider) and\n"
"print one line per check: OK, WARN (it passed, with advice on making the\n"
"host safer) or MISSING.  Exit status 0 when every check passed (warnings\n"
"included), 1 otherwise.\n"
"\n"
"  -p, --provider NAME    check this provider only\n"
"  -h, --help             show this help\n",
        stdout);
}

typedef struct doctor_state {
    const char *provider;
    unsigned failed;
    unsigned checks;
} doctor_state;

static void on_check(void *ud, const char *check, bool ok, const char *detail)
{
    doctor_state *st = ud;

    /* a passed check that gives advice (the provider says "advice:") is
     * a warning: the sandbox works, the host could be safer */
    bool advice = ok && detail != NULL && strstr(detail, "advice:") != NULL;

    st->checks++;
    if (!ok)
        st->failed++;
    printf("%-8s %s: %s%s%s\n", advice ? "WARN" : ok ? "OK" : "MISSING", st->provider,
           check ? check : "?", detail && *detail ? ": " : "",
           detail ? detail : "");
}

/* Check one provider; false when a check failed or it could not run. */
static bool check_one(sbx_ctx *ctx, const sbx_provider *p)
{
    doctor_state st = { .provider = sbx_provider_name(p) };
    int rc;

    if (sbx_provider_get_state(p) == SBX_PROVIDER_UNAVAILABLE) {
        const char *why = sbx_provider_reason(p);
        printf("%-8s %s: load: %s\n", "MISSING", st.provider,
               why ? why : "unavailable");
        return false;
    }
    rc = sbx_provider_doctor(ctx, st.provider, on_check, &st);
    if (rc == SBX_E_NOTSUP) {
        printf("%-8s %s: no host checks\n", "OK", st.provider);
        return true;
    }
    if (rc != SBX_OK) {
        const sbx_error *e = sbx_ctx_last_error(ctx);
        const char *msg = e && sbx_error_code(e) ? sbx_error_message(e)
                                                 : sbx_strerror(rc);
        printf("%-8s %s: doctor: %s\n", "MISSING", st.provider, msg);
        return false;
    }
    return st.failed == 0;
}

static const struct option doctor_opts[] = {
    { "help", no_argument, NULL, 'h' },
    { "provider", required_argument, NULL, 'p' },
    { NULL, 0, NULL, 0 }
};

int cli_cmd_doctor(cli_global *g, int argc, char **argv)
{
    const char *provider = g->provider;
    bool all_ok = true;
    size_t checked = 0;
    sbx_ctx *ctx;
    int c, rc;

    optind = 0;
    while ((c = getopt_long(argc, argv, "+hp:", doctor_opts, NULL)) != -1) {
        switch (c) {
        case 'h': doctor_help(); return CLI_EXIT_OK;
        case 'p': provider = optarg; break;
        default: return cli_bad_option("doctor");
        }
    }
    if (optind < argc)
        return cli_usage_error("doctor", "unexpected argument '%s'",
                               argv[optind]);
    if ((ctx = cli_ctx_new(g)) == NULL)
        return CLI_EXIT_ERROR;
    if (provider != NULL) {
        const sbx_provider *p = sbx_ctx_find_provider(ctx, provider);
        if (p == NULL || sbx_provider_get_state(p) == SBX_PROVIDER_DISABLED) {
            cli_provider_ok(ctx, provider); /* says why */
            sbx_ctx_free(ctx);
            return CLI_EXIT_ERROR;
        }
        all_ok = check_one(ctx, p);
        checked = 1;
    } else {
        for (size_t i = 0; i < sbx_ctx_provider_count(ctx); i++) {
            const sbx_provider *p = sbx_ctx_provider(ctx, i);
            if (sbx_provider_get_state(p) == SBX_PROVIDER_DISABLED)
                continue;
            if (!check_one(ctx, p))
                all_ok = false;
            checked++;
        }
    }
    /* a template's stale build cache: a warning, its samples build cold */
    for (size_t i = 0; i < sbx_ctx_template_count(ctx); i++) {
        char why[1024];
        const sbx_template *t = sbx_ctx_template(ctx, i);
        if (sbx_template_cache_stale(t, why, sizeof why))
            printf("%-8s template %s: %s\n", "WARN", sbx_template_name(t), why);
    }
    if (checked == 0) {
        printf("%-8s no enabled provider\n", "MISSING");
        all_ok = false;
    }
    rc = fflush(stdout) != 0 ? CLI_EXIT_ERROR
                             : all_ok ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    sbx_ctx_free(ctx);
    return rc;
}
