/* tests/unit/test-validate.c - the loader's checks of a descriptor
 * (core/loader/validate.c) on descriptors made in memory: one good, then
 * one bad descriptor per check, each refused with its own code and a
 * message naming the field.  tests/loader/test-loader covers the same
 * checks through real modules. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <polysandbox/provider.h>
#include <polysandbox/sandbox.h>

#include "loader/validate.h"
#include "tap.h"
#include "settings-read.h"

static int op_init(const sbx_host_v1 *host, sbx_host_handle *h, void **pctx)
{
    (void)host;
    (void)h;
    *pctx = NULL;
    return SBX_OK;
}
static void op_fini(void *pctx)
{
    (void)pctx;
}
static int op_create(void *pctx, const sbx_create_spec_v1 *spec, void **out,
                     char id[SBX_ID_MAX])
{
    (void)pctx;
    (void)spec;
    *out = NULL;
    id[0] = 0;
    return SBX_OK;
}
static int op_exec(void *pctx, void *sb, const sbx_exec_spec_v1 *spec,
                   const sbx_output_sink_v1 *sink, sbx_exec_outcome_v1 *res)
{
    (void)pctx;
    (void)sb;
    (void)spec;
    (void)sink;
    (void)res;
    return SBX_OK;
}
static int op_destroy(void *pctx, void *sb)
{
    (void)pctx;
    (void)sb;
    return SBX_OK;
}

static sbx_provider_ops_v1 good_ops;
static const char *const config_keys[] = {"level", NULL};
static const char *const secret_keys[] = {"token", NULL};

static sbx_provider_v1 good(void)
{
    sbx_provider_v1 d;

    memset(&good_ops, 0, sizeof good_ops);
    good_ops.init = op_init;
    good_ops.fini = op_fini;
    good_ops.create = op_create;
    good_ops.exec = op_exec;
    good_ops.destroy = op_destroy;
    memset(&d, 0, sizeof d);
    d.magic = SBX_PROVIDER_MAGIC;
    d.abi_major = SBX_ABI_MAJOR;
    d.abi_minor = SBX_ABI_MINOR;
    d.struct_size = sizeof d;
    d.ops_size = sizeof good_ops;
    d.name = "mock";
    d.version = "1.0";
    d.description = "a descriptor in memory";
    d.license = "MIT";
    d.ops = &good_ops;
    d.config_keys = config_keys;
    d.secret_keys = secret_keys;
    return d;
}

/* Whether @v failed with @code and a message containing @needle. */
static int refused(core_verdict *v, int code, const char *needle)
{
    int r = v->code == code && v->message && strstr(v->message, needle) != NULL;

    if (!r)
        diag("code %d, message %s", v->code, v->message ? v->message : "(none)");
    free(v->message);
    v->message = NULL;
    return r;
}

/* The header check, which copies, on @d. */
static int header(const sbx_provider_v1 *d, core_verdict *v)
{
    sbx_provider_v1 desc;
    sbx_provider_ops_v1 ops;

    return core_validate_header(d, &desc, &ops, v);
}

int main(void)
{
    sbx_provider_v1 d = good(), desc;
    sbx_provider_ops_v1 ops;
    core_verdict v;
    core_setting st = {"level", "3", "/etc/x/mock.ini", 4};

    /* a good descriptor passes every check, and is copied */
    ok(core_validate_header(&d, &desc, &ops, &v) == SBX_OK && v.code == SBX_OK &&
           !v.message && desc.name == d.name && ops.exec == op_exec,
       "a good descriptor passes the header check and is copied");
    ok(core_validate_strings(&d, "/lib/mock.so", "mock", NULL, &v) == SBX_OK &&
           v.code == SBX_OK, "a good descriptor passes the string checks");
    ok(core_validate_ops(&d, &good_ops, &v) == SBX_OK && v.code == SBX_OK,
       "a good descriptor passes the op checks");
    ok(core_validate_settings(&d, "mock", &st, 1, &v) == SBX_OK && v.code == SBX_OK,
       "a declared [settings] key passes");

    /* step 3 to 5: the header */
    d = good();
    d.magic = 0x12345678;
    ok(header(&d, &v) == SBX_OK && refused(&v, SBX_E_LOAD_BAD_MAGIC, "magic is 0x12345678"),
       "a bad magic is refused");
    d = good();
    d.abi_major = SBX_ABI_MAJOR + 1;
    ok(header(&d, &v) == SBX_OK && refused(&v, SBX_E_LOAD_ABI_MAJOR, "abi_major"),
       "another ABI major is refused");
    d = good();
    d.abi_minor = SBX_ABI_MINOR + 1;
    ok(header(&d, &v) == SBX_OK && refused(&v, SBX_E_LOAD_ABI_MINOR, "newer than"),
       "a newer ABI minor is refused");
    d = good();
    d.struct_size = 8;
    ok(header(&d, &v) == SBX_OK && refused(&v, SBX_E_LOAD_SIZE, "struct_size is 8"),
       "a short struct_size is refused");
    d = good();
    d.ops_size = 8;
    ok(header(&d, &v) == SBX_OK && refused(&v, SBX_E_LOAD_SIZE, "ops_size is 8"),
       "a short ops_size is refused");
    d = good();
    d.ops = NULL;
    ok(header(&d, &v) == SBX_OK && refused(&v, SBX_E_LOAD_MISSING_OP, "ops is NULL"),
       "a NULL ops table is refused");
    d = good();
    d.reserved[1] = 7;
    ok(header(&d, &v) == SBX_OK && refused(&v, SBX_E_LOAD_RESERVED, "reserved[1] is 0x7"),
       "a reserved word that is not zero is refused");

    /* steps 6 and 7: strings and names */
    d = good();
    d.license = NULL;
    ok(core_validate_strings(&d, "/lib/mock.so", "mock", NULL, &v) == SBX_OK &&
           refused(&v, SBX_E_LOAD_STRING, "license is NULL"), "a NULL license is refused");
    d = good();
    d.version = "";
    ok(core_validate_strings(&d, "/lib/mock.so", "mock", NULL, &v) == SBX_OK &&
           refused(&v, SBX_E_LOAD_STRING, "version is empty"), "an empty version is refused");
    d = good();
    d.name = "Mock";
    ok(core_validate_strings(&d, "/lib/Mock.so", "Mock", NULL, &v) == SBX_OK &&
           refused(&v, SBX_E_LOAD_BAD_NAME, "outside [a-z0-9_]"),
       "a name with capitals is refused");
    d = good();
    ok(core_validate_strings(&d, "/lib/other.so", "mock", NULL, &v) == SBX_OK &&
           refused(&v, SBX_E_LOAD_NAME_MISMATCH, "the file is 'other.so'"),
       "a name that is not the file's is refused");
    ok(core_validate_strings(&d, "/lib/mock.so", "moc", "/etc/x/moc.ini", &v) == SBX_OK &&
           refused(&v, SBX_E_LOAD_NAME_MISMATCH, "configured as 'moc' (/etc/x/moc.ini)"),
       "a name that is not the configured one is refused");
    ok(core_provider_name_valid("a_1", 3) && !core_provider_name_valid("a-1", 3) &&
           !core_provider_name_valid("", 0), "provider names are [a-z0-9_]+");

    /* steps 8 and 9: ops and capabilities */
    d = good();
    ops = good_ops;
    ops.exec = NULL;
    ok(core_validate_ops(&d, &ops, &v) == SBX_OK &&
           refused(&v, SBX_E_LOAD_MISSING_OP, "mandatory op 'exec' is NULL"),
       "a NULL mandatory op is refused");
    ops = good_ops;
    d.capabilities = SBX_CAP_LIST;
    ok(core_validate_ops(&d, &ops, &v) == SBX_OK &&
           refused(&v, SBX_E_LOAD_CAPS, "claim 'list' but op 'list' is NULL"),
       "a capability without its op is refused");
    d = good();
    d.capabilities = SBX_CAP_CANCEL;
    d.abi_minor = 2;
    ok(core_validate_ops(&d, &good_ops, &v) == SBX_OK &&
           refused(&v, SBX_E_LOAD_CAPS, "claim 'cancel'"),
       "a capability newer than the provider's ABI minor is refused");
    d = good();
    d.capabilities = SBX_CAP_ZYGOTE;
    ok(core_validate_ops(&d, &good_ops, &v) == SBX_OK && v.code == SBX_OK,
       "ABI 1.12: the zygote capability needs no op (the exec spec's zygote)");
    d.abi_minor = 11;
    ok(core_validate_ops(&d, &good_ops, &v) == SBX_OK &&
           refused(&v, SBX_E_LOAD_CAPS, "claim 'zygote' but op 'exec_zygote' is NULL"),
       "before 1.12 the zygote capability needs exec_zygote");

    /* step 10: settings */
    d = good();
    st.key = "colour";
    ok(core_validate_settings(&d, "mock", &st, 1, &v) == SBX_OK &&
           refused(&v, SBX_E_CONFIG, "/etc/x/mock.ini:4: unknown key 'colour'"),
       "an undeclared [settings] key is refused, naming file and line");
    st.key = "level";
    st.value = "sealed:v1:xyz";
    ok(core_validate_settings(&d, "mock", &st, 1, &v) == SBX_OK && v.located &&
           refused(&v, SBX_E_CONFIG, "holds a sealed value but is not a credential"),
       "a sealed value for a key that is not a credential is refused");
    st.key = "token";
    ok(core_validate_settings(&d, "mock", &st, 1, &v) == SBX_OK && v.code == SBX_OK,
       "a sealed credential passes");
    return tap_done();
}
