/* core/server/compat-judge0-store.c - the Judge0 submissions kept, and
 * how one is shown
 *
 * A submission is kept for GET /submissions/{token}: one run with
 * wait=true once it has finished, one run in the background from its
 * creation ("In Queue", then "Processing", then replaced by the finished
 * one).  In memory, the last SRV_J0_KEEP_MAX of them within
 * SRV_J0_KEEP_BYTES, the oldest forgotten first (one still running is
 * forgotten too, when that many newer ones came: its GET is then a 404).
 * Their bytes are kept as they were, since each GET chooses base64 or
 * text again.
 */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "compat-judge0.h"

static const char *const text_names[J0_N_TEXT] = {
    "source_code", "stdin", "expected_output", "stdout", "stderr", "compile_output", "message",
};

/* Judge0's default attributes, and those beyond them we keep. */
static const char default_fields[] = "stdout,time,memory,stderr,token,compile_output,message,status";
static const char *const other_fields[] = {
    "source_code", "language_id", "language", "stdin", "expected_output", "status_id",
    "created_at", "finished_at", "wall_time", "exit_code", "exit_signal", "cpu_time_limit",
    "wall_time_limit", "memory_limit", "max_processes_and_or_threads", "max_file_size",
    "command_line_arguments", "redirect_stderr_to_stdout", "enable_network", "number_of_runs",
    "callback_url",
};

void srv_j0_sub_free(srv_j0_sub *sub)
{
    if (!sub)
        return;
    for (int i = 0; i < J0_N_TEXT; i++)
        srv_bytes_free(&sub->text[i]);
    json_decref(sub->attrs);
    free(sub);
}

srv_j0_sub *srv_j0_sub_copy(const srv_j0_sub *sub)
{
    srv_j0_sub *c = calloc(1, sizeof *c);
    int rc = 0;

    if (!c)
        return NULL;
    memcpy(c->token, sub->token, sizeof c->token);
    memcpy(c->has, sub->has, sizeof c->has);
    for (int i = 0; i < J0_N_TEXT; i++)
        if (sub->text[i].len)
            rc |= srv_bytes_add(&c->text[i], sub->text[i].data, sub->text[i].len);
    if (rc || !(c->attrs = json_deep_copy(sub->attrs))) {
        srv_j0_sub_free(c);
        return NULL;
    }
    return c;
}

static bool known_field(const char *f, size_t n)
{
    static const char *const defaults[] = {
        "stdout", "time", "memory", "stderr", "token", "compile_output", "message", "status",
    };
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++)
        if (strlen(defaults[i]) == n && !strncmp(defaults[i], f, n))
            return true;
    for (size_t i = 0; i < sizeof other_fields / sizeof other_fields[0]; i++)
        if (strlen(other_fields[i]) == n && !strncmp(other_fields[i], f, n))
            return true;
    return false;
}

int srv_j0_fields_check(const char *fields, char *err, size_t errsz)
{
    size_t used;
    bool bad = false;

    if (!fields || !strcmp(fields, "*"))
        return 0;
    used = (size_t)snprintf(err, errsz, "invalid fields: [");
    for (const char *s = fields; *s;) {
        size_t n = strcspn(s, ",");
        if (n && !known_field(s, n)) {
            int w = snprintf(err + used, used < errsz ? errsz - used : 0, "%s%.*s",
                             bad ? ", " : "", (int)(n > 64 ? 64 : n), s);
            used += w > 0 ? (size_t)w : 0;
            bad = true;
        }
        s += n;
        s += *s == ',';
    }
    if (used < errsz)
        snprintf(err + used, errsz - used, "]");
    return bad ? -1 : 0;
}

/* Ruby's Base64.encode64: lines of 60 characters, each ending in \n. */
static json_t *base64_lines(const srv_bytes *b)
{
    char *flat = srv_b64_encode(b->data, b->len), *out;
    size_t n, o = 0;
    json_t *j = NULL;

    if (!flat)
        return NULL;
    n = strlen(flat);
    if ((out = malloc(n + n / 60 + 2))) {
        for (size_t i = 0; i < n; i += 60) {
            size_t k = n - i < 60 ? n - i : 60;
            memcpy(out + o, flat + i, k);
            o += k;
            out[o++] = '\n';
        }
        j = json_stringn(out, o);
        free(out);
    }
    free(flat);
    return j;
}

static json_t *text_value(const srv_j0_sub *sub, int i, bool base64, bool *utf8)
{
    if (!sub->has[i])
        return json_null();
    if (base64)
        return base64_lines(&sub->text[i]);
    json_t *j = json_stringn(sub->text[i].data ? sub->text[i].data : "", sub->text[i].len);
    if (!j)
        *utf8 = false;
    return j;
}

static int add_field(json_t *o, const srv_j0_sub *sub, const char *f, size_t n, bool base64,
                     bool *utf8)
{
    char name[64];
    json_t *v;

    if (!n || n >= sizeof name)
        return 0;
    memcpy(name, f, n);
    name[n] = '\0';
    for (int i = 0; i < J0_N_TEXT; i++)
        if (!strcmp(text_names[i], name)) {
            if (!(v = text_value(sub, i, base64, utf8)))
                return -1;
            return json_object_set_new(o, name, v);
        }
    v = json_object_get(sub->attrs, name);
    return json_object_set_new(o, name, v ? json_incref(v) : json_null());
}

json_t *srv_j0_show(const srv_j0_sub *sub, bool base64, const char *fields, bool *utf8)
{
    json_t *o = json_object();
    int rc = 0;

    *utf8 = true;
    if (!o)
        return NULL;
    if (fields && !strcmp(fields, "*")) {
        for (const char *s = default_fields; !rc && *s;) {
            size_t n = strcspn(s, ",");
            rc = add_field(o, sub, s, n, base64, utf8);
            s += n;
            s += *s == ',';
        }
        for (size_t i = 0; !rc && i < sizeof other_fields / sizeof other_fields[0]; i++)
            rc = add_field(o, sub, other_fields[i], strlen(other_fields[i]), base64, utf8);
    } else {
        for (const char *s = fields ? fields : default_fields; !rc && *s;) {
            size_t n = strcspn(s, ",");
            rc = add_field(o, sub, s, n, base64, utf8);
            s += n;
            s += *s == ',';
        }
    }
    if (rc) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* ---- the store ------------------------------------------------------------------- */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static srv_j0_sub *kept[SRV_J0_KEEP_MAX];   /* a ring: oldest at head */
static size_t head, count, kept_bytes;

static size_t size_of(const srv_j0_sub *sub)
{
    size_t n = sizeof *sub + 1024;   /* and about that for its attributes */
    for (int i = 0; i < J0_N_TEXT; i++)
        n += sub->text[i].cap;
    return n;
}

static void drop_oldest(void)
{
    srv_j0_sub *old = kept[head];
    kept[head] = NULL;
    head = (head + 1) % SRV_J0_KEEP_MAX;
    count--;
    kept_bytes -= size_of(old);
    srv_j0_sub_free(old);
}

void srv_j0_keep(srv_j0_sub *sub)
{
    size_t n = size_of(sub);

    if (n > SRV_J0_KEEP_BYTES) {
        srv_j0_sub_free(sub);   /* never kept: its GET is a 404 */
        return;
    }
    pthread_mutex_lock(&lock);
    while (count && (count == SRV_J0_KEEP_MAX || kept_bytes + n > SRV_J0_KEEP_BYTES))
        drop_oldest();
    kept[(head + count) % SRV_J0_KEEP_MAX] = sub;
    count++;
    kept_bytes += n;
    pthread_mutex_unlock(&lock);
}

/* Under the lock: where @token is kept in kept[], or -1. */
static long slot_of(const char *token)
{
    for (size_t i = 0; i < count; i++) {
        size_t at = (head + i) % SRV_J0_KEEP_MAX;
        if (!strcmp(kept[at]->token, token))
            return (long)at;
    }
    return -1;
}

void srv_j0_replace(srv_j0_sub *sub)
{
    long at;

    pthread_mutex_lock(&lock);
    if ((at = slot_of(sub->token)) >= 0) {
        kept_bytes -= size_of(kept[at]);
        srv_j0_sub_free(kept[at]);
        kept[at] = sub;
        kept_bytes += size_of(sub);
        sub = NULL;
        while (count && kept_bytes > SRV_J0_KEEP_BYTES)
            drop_oldest();
    }
    pthread_mutex_unlock(&lock);
    srv_j0_sub_free(sub);
}

void srv_j0_set_status(const char *token, int id)
{
    long at;

    pthread_mutex_lock(&lock);
    if ((at = slot_of(token)) >= 0) {
        json_object_set_new(kept[at]->attrs, "status", srv_j0_status_json(id));
        json_object_set_new(kept[at]->attrs, "status_id", json_integer(id));
    }
    pthread_mutex_unlock(&lock);
}

int srv_j0_find(const char *token, bool base64, const char *fields, json_t **out)
{
    int rc = -1;
    bool utf8 = true;
    long at;

    *out = NULL;
    pthread_mutex_lock(&lock);
    if ((at = slot_of(token)) >= 0) {
        *out = srv_j0_show(kept[at], base64, fields, &utf8);
        rc = *out ? 0 : utf8 ? 2 : 1;
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

int srv_j0_remove(const char *token, const char *fields, json_t **out, int *status)
{
    int rc = -1;
    bool utf8 = true;
    long at;

    *out = NULL;
    *status = 0;
    pthread_mutex_lock(&lock);
    if ((at = slot_of(token)) >= 0) {
        json_int_t id = json_integer_value(json_object_get(kept[at]->attrs, "status_id"));
        if (id == 1 || id == 2) {
            *status = (int)id;   /* still to run: Judge0 keeps it */
            rc = 1;
        } else if (!(*out = srv_j0_show(kept[at], true, fields, &utf8))) {
            rc = 2;
        } else {
            /* Close the gap: the ones after it move one place back. */
            size_t i = ((size_t)at + SRV_J0_KEEP_MAX - head) % SRV_J0_KEEP_MAX;
            srv_j0_sub *gone = kept[at];
            for (; i + 1 < count; i++)
                kept[(head + i) % SRV_J0_KEEP_MAX] = kept[(head + i + 1) % SRV_J0_KEEP_MAX];
            kept[(head + count - 1) % SRV_J0_KEEP_MAX] = NULL;
            count--;
            kept_bytes -= size_of(gone);
            srv_j0_sub_free(gone);
            rc = 0;
        }
    }
    pthread_mutex_unlock(&lock);
    return rc;
}
