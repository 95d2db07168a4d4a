/* tests/provider/testprov.h - the reference test provider: what every
 * flavour shares
 *
 * One provider for the tests, built into one module per flavour
 * (tests/provider/local.mk).  testprov.c holds the skeleton every flavour
 * uses: the state, init and fini, sandboxes that are one fixed id
 * ("NAME-1", openable by any process), destroy, and small helpers.  Each
 * flavour file (good.c, marker.c, probe.c, flaky.c...) adds its exec, the
 * settings it reads (tp_setup) and its descriptor, so that a test reads
 * one short file for the behaviour it relies on.
 *
 * TP_NAME (a string literal, -DTP_NAME='"good"') is the provider's name,
 * which is also its module's base name.  A flavour built under several
 * names (flaky and flaky2, evalfail/evalflaky/evalnop) is one file.
 */
#ifndef POLYSANDBOX_TESTS_TESTPROV_H
#define POLYSANDBOX_TESTS_TESTPROV_H

#include <stdatomic.h>

#include <polysandbox/provider.h>

/* Every module's local.mk lines give the name; this default is for the
 * static analysers, which see the sources without them. */
#ifndef TP_NAME
#define TP_NAME "testprov"
#endif

struct tp {
    const sbx_host_v1 *host;
    sbx_host_handle *h;
    atomic_ulong creates;   /* creates asked for, failed ones included */
    void *own;              /* the flavour's state, freed by tp_teardown */
};

/* The flavour's part of init and fini, in its file: read the settings into
 * @t (or t->own).  SBX_OK, or the code of host->set_error. */
int tp_setup(struct tp *t);
void tp_teardown(struct tp *t);

/* Skeleton ops (testprov.c), for the flavours' ops tables. */
int tp_init(const sbx_host_v1 *host, sbx_host_handle *h, void **prov);
void tp_fini(void *prov);
/* The one sandbox, TP_NAME "-1": create counts and hands it out, attach
 * opens it from any process, release and destroy do nothing. */
int tp_create(void *prov, const sbx_create_spec_v1 *spec, void **sb, char id[SBX_ID_MAX]);
int tp_attach(void *prov, const char *id, void **sb);
void tp_release(void *prov, void *sb);
int tp_destroy(void *prov, void *sb);

/* Setting @key as a whole number from @lo to @hi into *@out (unset: left
 * as it is); SBX_E_CONFIG naming it otherwise. */
int tp_setting_num(struct tp *t, const char *key, unsigned long lo, unsigned long hi,
                   unsigned long *out);
/* Whether setting @key is "yes" (unset: @dflt). */
int tp_setting_yes(struct tp *t, const char *key, int dflt);
/* Write @text on stdout through @sink (if any); what write returned. */
int tp_say(const sbx_output_sink_v1 *sink, const char *text);
/* Fill @out as a command that exited with @code. */
void tp_exited(sbx_exec_outcome_v1 *out, int code);

#endif
