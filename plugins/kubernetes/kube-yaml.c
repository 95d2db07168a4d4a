/* plugins/kubernetes/kube-yaml.c - a kubeconfig's YAML as JSON
 *
 * libyaml's event parser builds the first document as a jansson tree, the
 * form the rest of the provider reads: mappings become objects (a repeated
 * key: the last wins, as in client-go), sequences arrays, scalars strings
 * (a plain "~", "null" or empty scalar is null).  Anchors and aliases are
 * honoured (an alias shares the anchored node; a node is known by its
 * anchor once it is complete, so no alias can make a cycle).  Nesting deeper than 64
 * levels, more than 4096 anchors or an alias to an unknown anchor is
 * refused as malformed, with the line.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "kube-int.h"

#define MAX_DEPTH 64
#define MAX_ANCHORS 4096

struct anchor {
    char *name;
    json_t *node;
};

struct build {
    yaml_parser_t parser;
    struct anchor *anchors;
    size_t n_anchors;
    char *err;
    size_t errlen;
    int failed;
};

static void fail(struct build *b, const char *what, size_t line)
{
    if (!b->failed)
        snprintf(b->err, b->errlen, "%s (line %zu)", what, line + 1);
    b->failed = 1;
}

static int remember(struct build *b, const yaml_char_t *anchor, json_t *node, size_t line)
{
    if (!anchor)
        return 0;
    if (b->n_anchors >= MAX_ANCHORS) {
        fail(b, "too many anchors", line);
        return -1;
    }
    struct anchor *na = realloc(b->anchors, (b->n_anchors + 1) * sizeof *na);
    if (!na) {
        fail(b, "out of memory", line);
        return -1;
    }
    b->anchors = na;
    if (!(na[b->n_anchors].name = strdup((const char *)anchor))) {
        fail(b, "out of memory", line);
        return -1;
    }
    na[b->n_anchors++].node = json_incref(node);
    return 0;
}

static json_t *scalar(const yaml_event_t *ev)
{
    const char *v = (const char *)ev->data.scalar.value;
    size_t n = ev->data.scalar.length;
    if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
        (n == 0 || !strcmp(v, "~") || !strcmp(v, "null") || !strcmp(v, "Null") ||
         !strcmp(v, "NULL")))
        return json_null();
    return json_stringn(v, n);
}

/* The node that starts with @ev (already taken from the parser). */
static json_t *node(struct build *b, yaml_event_t *ev, int depth)
{
    size_t line = ev->start_mark.line;
    if (depth > MAX_DEPTH) {
        fail(b, "nested too deep", line);
        return NULL;
    }
    switch (ev->type) {
    case YAML_SCALAR_EVENT: {
        json_t *s = scalar(ev);
        if (!s) {
            fail(b, "a scalar is not valid UTF-8", line);
            return NULL;
        }
        if (remember(b, ev->data.scalar.anchor, s, line)) {
            json_decref(s);
            return NULL;
        }
        return s;
    }
    case YAML_ALIAS_EVENT:
        for (size_t i = b->n_anchors; i-- > 0;)
            if (!strcmp(b->anchors[i].name, (const char *)ev->data.alias.anchor))
                return json_incref(b->anchors[i].node);
        fail(b, "alias to an unknown anchor", line);
        return NULL;
    case YAML_SEQUENCE_START_EVENT: {
        json_t *a = json_array();
        const yaml_char_t *anchor = ev->data.sequence_start.anchor;
        if (!a) {
            fail(b, "out of memory", line);
            return NULL;
        }
        for (;;) {
            yaml_event_t e;
            if (!yaml_parser_parse(&b->parser, &e)) {
                fail(b, b->parser.problem ? b->parser.problem : "malformed",
                     b->parser.problem_mark.line);
                json_decref(a);
                return NULL;
            }
            if (e.type == YAML_SEQUENCE_END_EVENT) {
                yaml_event_delete(&e);
                if (remember(b, anchor, a, line)) {
                    json_decref(a);
                    return NULL;
                }
                return a;
            }
            json_t *item = node(b, &e, depth + 1);
            yaml_event_delete(&e);
            if (!item || json_array_append_new(a, item)) {
                fail(b, "out of memory", line);
                json_decref(a);
                return NULL;
            }
        }
    }
    case YAML_MAPPING_START_EVENT: {
        json_t *o = json_object();
        const yaml_char_t *anchor = ev->data.mapping_start.anchor;
        if (!o) {
            fail(b, "out of memory", line);
            return NULL;
        }
        for (;;) {
            yaml_event_t k;
            if (!yaml_parser_parse(&b->parser, &k)) {
                fail(b, b->parser.problem ? b->parser.problem : "malformed",
                     b->parser.problem_mark.line);
                json_decref(o);
                return NULL;
            }
            if (k.type == YAML_MAPPING_END_EVENT) {
                yaml_event_delete(&k);
                if (remember(b, anchor, o, line)) {
                    json_decref(o);
                    return NULL;
                }
                return o;
            }
            if (k.type != YAML_SCALAR_EVENT) {
                fail(b, "a mapping key is not a scalar", k.start_mark.line);
                yaml_event_delete(&k);
                json_decref(o);
                return NULL;
            }
            char *key = strndup((const char *)k.data.scalar.value, k.data.scalar.length);
            size_t kline = k.start_mark.line;
            yaml_event_delete(&k);
            yaml_event_t v;
            if (!key || !yaml_parser_parse(&b->parser, &v)) {
                fail(b, key ? (b->parser.problem ? b->parser.problem : "malformed")
                            : "out of memory", key ? b->parser.problem_mark.line : kline);
                free(key);
                json_decref(o);
                return NULL;
            }
            json_t *val = node(b, &v, depth + 1);
            yaml_event_delete(&v);
            if (!val || json_object_set_new(o, key, val)) {
                if (val)
                    fail(b, "a mapping key is not valid UTF-8", kline);
                free(key);
                json_decref(o);
                return NULL;
            }
            free(key);
        }
    }
    default:
        fail(b, "unexpected YAML event", line);
        return NULL;
    }
}

json_t *kube_yaml_load(const char *text, size_t len, char *err, size_t errlen)
{
    struct build b = {.err = err, .errlen = errlen};
    json_t *root = NULL;
    err[0] = '\0';
    if (!yaml_parser_initialize(&b.parser)) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    yaml_parser_set_input_string(&b.parser, (const unsigned char *)text, len);
    for (;;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&b.parser, &ev)) {
            fail(&b, b.parser.problem ? b.parser.problem : "malformed",
                 b.parser.problem_mark.line);
            break;
        }
        yaml_event_type_t t = ev.type;
        if (t == YAML_STREAM_END_EVENT) {
            yaml_event_delete(&ev);
            break;
        }
        if (t == YAML_STREAM_START_EVENT || t == YAML_DOCUMENT_START_EVENT) {
            yaml_event_delete(&ev);
            continue;
        }
        if (t == YAML_DOCUMENT_END_EVENT) {
            yaml_event_delete(&ev);
            if (root)
                break;      /* the first document only */
            continue;
        }
        root = node(&b, &ev, 0);
        yaml_event_delete(&ev);
        if (!root)
            break;
    }
    yaml_parser_delete(&b.parser);
    for (size_t i = 0; i < b.n_anchors; i++) {
        free(b.anchors[i].name);
        json_decref(b.anchors[i].node);
    }
    free(b.anchors);
    if (b.failed) {
        json_decref(root);
        return NULL;
    }
    if (!root)
        root = json_object();   /* an empty file: an empty configuration */
    return root;
}
