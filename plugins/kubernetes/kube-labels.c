/* plugins/kubernetes/kube-labels.c - sandbox labels as Kubernetes labels
 *
 * Kubernetes label keys are [prefix/]name and values are at most 63
 * characters of [A-Za-z0-9._-] starting and ending alphanumeric; ours are
 * anything ("polysandbox.owner" = "1000@host").  So every label goes on
 * the pod twice: exactly, in the annotation polysandbox.io/labels (a JSON
 * object), and encoded, as label.polysandbox.io/<name> = <value>, where a
 * name or value that is not valid label syntax becomes "x-" and 40 hex
 * digits of its SHA-256.  Lists select on the encoded labels server-side
 * (labelSelector) and check the exact ones from the annotation.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "kube-int.h"

static bool alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool kube_label_value_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0)
        return true;
    if (n > 63 || !alnum(s[0]) || !alnum(s[n - 1]))
        return false;
    for (size_t i = 0; i < n; i++)
        if (!alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return false;
    return true;
}

bool kube_label_name_ok(const char *s)
{
    return *s && kube_label_value_ok(s);
}

char *kube_label_encode(const char *s)
{
    if (kube_label_value_ok(s) && strncmp(s, "x-", 2))
        return strdup(s);
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (!EVP_Digest(s, strlen(s), md, &mdlen, EVP_sha256(), NULL) || mdlen < 20)
        return NULL;
    char *out = malloc(2 + 40 + 1);
    if (!out)
        return NULL;
    memcpy(out, "x-", 2);
    for (unsigned i = 0; i < 20; i++)
        snprintf(out + 2 + 2 * i, 3, "%02x", md[i]);
    return out;
}

/* label.polysandbox.io/<name>: the name part at most 63 characters. */
static char *encoded_key(const char *k)
{
    char *name = NULL, *key = NULL;
    if (kube_label_name_ok(k) && strncmp(k, "x-", 2))
        name = strdup(k);
    else
        name = kube_label_encode(k);
    if (name && asprintf(&key, "%s%s", KUBE_L_PREFIX, name) < 0)
        key = NULL;
    free(name);
    return key;
}

char *kube_label_selector(const sbx_kv_v1 *filter, size_t n_filter)
{
    size_t cap = 256, len = 0;
    char *sel = malloc(cap);
    if (!sel)
        return NULL;
    len = (size_t)snprintf(sel, cap, "%s=%s", KUBE_L_MANAGED, KUBE_L_MANAGED_V);
    for (size_t i = 0; i < n_filter; i++) {
        char *k = encoded_key(filter[i].key ? filter[i].key : "");
        char *v = kube_label_encode(filter[i].value ? filter[i].value : "");
        size_t need = len + (k ? strlen(k) : 0) + (v ? strlen(v) : 0) + 3;
        char *grown = need > cap && k && v ? realloc(sel, need * 2) : sel;
        if (!k || !v || !grown) {
            free(k);
            free(v);
            free(sel);
            return NULL;
        }
        if (grown != sel || need > cap)
            cap = need * 2;
        sel = grown;
        len += (size_t)snprintf(sel + len, cap - len, ",%s=%s", k, v);
        free(k);
        free(v);
    }
    return sel;
}

int kube_labels_put(json_t *labels, json_t *ann, const sbx_kv_v1 *kv, size_t n)
{
    json_t *exact = json_object();
    if (!exact)
        return SBX_E_NOMEM;
    for (size_t i = 0; i < n; i++) {
        const char *k = kv[i].key, *v = kv[i].value ? kv[i].value : "";
        if (!k || !*k) {
            json_decref(exact);
            return SBX_E_INVAL;
        }
        char *ek = encoded_key(k);
        char *ev = kube_label_encode(v);
        int bad = !ek || !ev || json_object_set_new(labels, ek, json_string(ev)) ||
                  json_object_set_new(exact, k, json_string(v));
        free(ek);
        free(ev);
        if (bad) {
            json_decref(exact);
            return SBX_E_INVAL; /* not UTF-8 (or out of memory) */
        }
    }
    char *text = json_dumps(exact, JSON_COMPACT | JSON_SORT_KEYS);
    json_decref(exact);
    if (!text || json_object_set_new(ann, KUBE_A_LABELS, json_string(text))) {
        free(text);
        return SBX_E_NOMEM;
    }
    free(text);
    return SBX_OK;
}
