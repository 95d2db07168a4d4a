/* core/labels.h - the labels the core puts on every sandbox (core/labels.c)
 */
#ifndef POLYSANDBOX_LABELS_H
#define POLYSANDBOX_LABELS_H

#include <stdbool.h>
#include <stddef.h>

#include <polysandbox/provider.h>

/* What the core puts on every sandbox (see core/labels.c). */
#define CORE_LABEL_OWNER "polysandbox.owner"
#define CORE_LABEL_CREATED "polysandbox.created"
#define CORE_LABEL_EXPIRES "polysandbox.expires"
#define CORE_LABEL_TEMPLATE "polysandbox.template"
#define CORE_LABEL_PERSISTENT "polysandbox.persistent"

/* The value of the polysandbox.owner label of this process: "UID@HOST". */
void core_owner(char *buf, size_t size);
/* The value of @key among "KEY=VALUE" strings, or NULL. */
const char *core_label_value(const char *const *labels, size_t n, const char *key);
/* The value of @key among pairs, or NULL. */
const char *core_kv_value(const sbx_kv_v1 *kv, size_t n, const char *key);
/* True when every pair of @want is among @kv. */
bool core_kv_includes(const sbx_kv_v1 *kv, size_t n, const sbx_kv_v1 *want, size_t n_want);
/* True when a polysandbox.expires value (Unix seconds) is at or before
 * @now; false for NULL or a value that is not a number. */
bool core_label_expired(const char *expires, long long now);

#endif /* POLYSANDBOX_LABELS_H */
