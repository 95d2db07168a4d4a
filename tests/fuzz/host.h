/* tests/fuzz/host.h - a provider under the harness: a host table for it,
 * and its ops driven against canned answers
 *
 * The host is the SDK's test host (<polysandbox/provider-test.h>), given
 * fixed settings and secrets.  Every message a provider writes is
 * checked: a secret's value in one breaks a promise of the project (no
 * credential in a log line or an error).
 */
#ifndef POLYSANDBOX_TESTS_FUZZ_HOST_H
#define POLYSANDBOX_TESTS_FUZZ_HOST_H

#include <polysandbox/provider-test.h>

/* What one provider is given: NULL-terminated key, value pairs. */
typedef struct fz_host_conf {
    const char *const *settings;
    const char *const *secrets;
    const sbx_provider_v1 *desc; /* set by fz_provider_start: its declared keys */
    sbx_test_host *host;         /* made by fz_provider_start, kept for the process */
} fz_host_conf;

/* The last error the provider started or driven last set ("" when none). */
const char *fz_host_error(void);
void fz_host_clear(void);

/* Initialises the provider @d with @conf, whose settings with a NULL
 * value (the service's URLs) are set to the canned server's first; dies
 * when it does not start. */
void *fz_provider_start(const sbx_provider_v1 *d, fz_host_conf *conf, const char **settings);

/* Runs ops of @conf's provider (started: @prov) the way the core
 * would, on answers of the canned server: the first byte of @data says
 * which (list, create or attach, exec, download, upload, health; then
 * destroy or release), the second sizes caps and limits, the rest is the
 * answers, separated by FZ_SEPARATOR.  Checks what every provider
 * promises (outcomes within the taxonomy, output within its caps, an
 * error message with every failure). */
void fz_drive(fz_host_conf *conf, void *prov, const uint8_t *data, size_t size);

#endif
