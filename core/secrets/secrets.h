/* core/secrets/secrets.h - sealed credentials (core/secrets/)
 *
 * Included by the files that open, seal or protect credentials: the rest
 * of the core need not see them.
 */
#ifndef SBX_CORE_SECRETS_H
#define SBX_CORE_SECRETS_H

#include <stdbool.h>
#include <stddef.h>

#include <polysandbox/sandbox.h>

#include "conf.h"
#include "settings-read.h"

/* ---- secrets (core/secrets/secrets.c) ------------------------------------ */

/* Resolve a credential reference ("env:NAME", "file:PATH", "sealed:v1:...")
 * into secure memory.  (transfer full) release with core_secret_release. */
int core_secret_open(const struct sbx_ctx *ctx, const core_setting *s,
                     const char **out, size_t *len);
void core_secret_release(const char *value);
/* Make the process undumpable (no core file, no ptrace, /proc/PID/environ
 * and mem closed to others) and RLIMIT_CORE 0.  Done by core_secret_open
 * and, for root, at context creation when a sealed value is configured. */
int core_secret_protect_process(void);
/* core_secret_protect_process when running as root and an enabled
 * provider has a sealed value. */
int core_secret_ctx_protect(const core_config *cfg);
/* Tests only: called by core_secret_release with the value's memory after
 * it was wiped and before it is freed. */
extern void (*core_secret_wipe_hook)(const void *value, size_t len);

/* ---- the host key pair (core/secrets/secret-key.c) ----------------------- */

#define CORE_PK_BYTES 32        /* crypto_box_PUBLICKEYBYTES */
#define CORE_SK_BYTES 32        /* crypto_box_SECRETKEYBYTES */
#define CORE_KEY_ID_BYTES 4
#define CORE_KEY_ID_HEX (2 * CORE_KEY_ID_BYTES + 1)
/* The largest value `secret seal` seals: longer ones belong in file:PATH. */
#define CORE_SEALED_MAX 4096

/* The directory the key pair lives in: @config_dir, else
 * $POLYSANDBOX_CONFIG_DIR, else the system directory (transfer none). */
int core_hostkey_dir(const char *config_dir, const char **out);
/* DIR/secret.key (@pub false) or DIR/secret.pub; (transfer full), NULL on ENOMEM. */
char *core_hostkey_path(const char *dir, bool pub);
/* The key id of @pk: the first bytes of its BLAKE2b hash. */
void core_hostkey_id(const unsigned char pk[CORE_PK_BYTES],
                     unsigned char id[CORE_KEY_ID_BYTES]);
void core_hostkey_id_hex(const unsigned char id[CORE_KEY_ID_BYTES],
                         char hex[CORE_KEY_ID_HEX]);
/* Create the key pair in @dir (SBX_E_EXISTS unless @force). */
int core_hostkey_create(const char *dir, bool force, char id_hex[CORE_KEY_ID_HEX]);
int core_hostkey_load_public(const char *dir, unsigned char pk[CORE_PK_BYTES],
                             unsigned char id[CORE_KEY_ID_BYTES]);
/* The secret key into guarded memory (*sk, sodium_free it; no access
 * until sodium_mprotect_readonly), its public key and id; *path (transfer
 * full, even on error) names the key file. */
int core_hostkey_load_secret(const char *dir, unsigned char **sk,
                             unsigned char pk[CORE_PK_BYTES],
                             unsigned char id[CORE_KEY_ID_BYTES], char **path);

/* ---- the sealed:v1: format (core/secrets/sealed.c) ----------------------- */

typedef struct core_sealed {
    unsigned char id[CORE_KEY_ID_BYTES];  /* the key it was sealed to */
    unsigned char *box;                   /* crypto_box_seal output (owned) */
    size_t boxlen;
} core_sealed;

/* Seal @len bytes to @pk: *out (transfer full) is "sealed:v1:...". */
int core_sealed_encode(const unsigned char pk[CORE_PK_BYTES],
                       const unsigned char id[CORE_KEY_ID_BYTES],
                       const void *plain, size_t len, char **out);
/* Parse @value; on error *why says whether it is truncated or corrupt
 * (never quoting the value) and SBX_E_CONFIG is returned. */
int core_sealed_parse(const char *value, core_sealed *out, char *why, size_t whylen);
void core_sealed_free(core_sealed *s);

#endif
