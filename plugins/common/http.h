/* plugins/common/http.h - the HTTP client the network providers share
 *
 * A thin layer over libcurl for the docker, e2b and daytona providers (and
 * any later network provider): a client bound to one base URL (TCP, TLS with
 * optional client certificates, or a unix socket), keep-alive connections
 * reused across requests, whole-request and connect timeouts, collected or
 * streamed response bodies, Retry-After, and the mapping of transport
 * failures and HTTP statuses onto sbx_status codes.
 *
 * It is a static convenience library linked into each provider module (built
 * with -fvisibility=hidden, so nothing of it is exported); it never touches
 * the host table: errors come back as a status and a message in the
 * caller's buffer, which the provider passes to host->set_error().
 *
 * Thread safety: a client may be used by several threads at once; each
 * request takes an idle connection handle of the client (or makes one).
 */
#ifndef SBX_PLUGINS_COMMON_HTTP_H
#define SBX_PLUGINS_COMMON_HTTP_H

#include <stddef.h>

#include <curl/curl.h>
#include <jansson.h>

/* Room for one error message; longer ones are cut. */
#define PH_ERR_MAX 512

typedef struct ph_client ph_client;

typedef struct ph_client_conf {
    /* "http://127.0.0.1:49983", "https://api.example.com/v1" (a path prefix
     * is kept), or "unix:///var/run/docker.sock" (requests then go to
     * http://localhost over the socket). */
    const char *base_url;
    const char *ca_file;    /* TLS trust anchors; NULL: the system's */
    const char *cert_file;  /* TLS client certificate (PEM); NULL: none */
    const char *key_file;   /* its private key (PEM); NULL: none */
    /* The same three in memory (PEM text, NUL-terminated), instead of the
     * files: a kubeconfig's *-data fields.  Copied; the key's copy is
     * wiped on free.  Since 0.1 (the kubernetes provider). */
    const char *ca_pem;
    const char *cert_pem;
    const char *key_pem;
    long connect_timeout_ms; /* 0: 10 s */
    long timeout_ms;        /* default whole-request limit; 0: none */
    /* Speak HTTP/2 (gRPC): with prior knowledge over http://, negotiated by
     * ALPN over https:// (an answer in HTTP/1.1 then fails the request);
     * 0: HTTP/1.1. */
    int http2;
} ph_client_conf;

/* Makes a client.  Strings are copied.  Returns SBX_OK, SBX_E_INVAL (bad URL
 * scheme, message in err) or SBX_E_NOMEM. */
int ph_client_new(const ph_client_conf *conf, ph_client **out, char err[PH_ERR_MAX]);

/* Frees the client, its idle connections and its headers (wiped first, as
 * they may carry credentials).  NULL is ignored. */
void ph_client_free(ph_client *c);

/* Adds "name: value" to every later request (an API key, say).  The value is
 * copied into memory that is wiped on free; it never appears in an error
 * message.  Not to be called while requests are in flight. */
int ph_client_set_header(ph_client *c, const char *name, const char *value);

typedef struct ph_request {
    const char *method;          /* "GET", "POST", "PUT", "DELETE", ... */
    const char *path;            /* appended to the base URL; escaped by the caller */
    const char *const *headers;  /* extra "Name: value" lines, NULL-terminated; may be NULL */
    const void *body;            /* request body, may be NULL */
    size_t body_len;
    const char *content_type;    /* of the body; NULL: none sent */
    long timeout_ms;             /* > 0 overrides the client's */
    /* Streaming: when on_data is set, response body bytes of a 2xx answer are
     * handed to it as they arrive instead of being collected (an error
     * answer's body is still collected, for its message).  Return 0 to go
     * on, or an sbx_status (> 0) to abort the transfer: ph_do returns it. */
    int (*on_data)(void *ud, const void *buf, size_t len);
    void *ud;
    size_t max_body;             /* cap on a collected body; 0: 16 MiB */
    /* Response headers to keep: their names (any case, no ':'),
     * NULL-terminated; may be NULL.  Those of the final answer are kept in
     * the response, to be read with ph_response_header(). */
    const char *const *keep_headers;
} ph_request;

typedef struct ph_response {
    long status;            /* HTTP status; 0 when none was received */
    char *body;             /* collected body, NUL-terminated (may be ""); owned */
    size_t body_len;
    long retry_after_ms;    /* Retry-After of the answer, in ms; -1: absent */
    struct curl_slist *kept; /* the keep_headers lines, "name:value"; owned */
} ph_response;

/* Performs one request.  Returns SBX_OK whenever an HTTP answer arrived,
 * whatever its status (look at resp->status, or use ph_status_code);
 * otherwise SBX_E_NETWORK (could not connect, connection dropped, an answer
 * without a valid status line: retryable),
 * SBX_E_TIMEOUT (the request's time limit passed), SBX_E_LIMIT (collected
 * body over max_body), on_data's status when it aborted, or SBX_E_NOMEM, with
 * a message naming the method and path in err.  resp is always left
 * clearable with ph_response_clear(). */
int ph_do(ph_client *c, const ph_request *rq, ph_response *resp, char err[PH_ERR_MAX]);

/* Frees what a response holds and resets it (NULL-safe). */
void ph_response_clear(ph_response *r);

/* The value of response header @name (any case), trimmed of surrounding
 * white space, when the request named it in keep_headers and the answer
 * carried it (the last one, when it came more than once); else NULL.  The
 * string belongs to the response: valid until ph_response_clear(). */
const char *ph_response_header(const ph_response *r, const char *name);

/* @s percent-encoded for a URL's path or query (all but unreserved
 * characters escaped).  Returns a string the caller frees with free(), or
 * NULL when out of memory. */
char *ph_escape(const char *s);

/* The sbx_status for an HTTP status: 2xx SBX_OK; 400, 422 SBX_E_INVAL;
 * 401, 403 SBX_E_AUTH; 404 SBX_E_NOT_FOUND; 409 SBX_E_EXISTS; 413
 * SBX_E_LIMIT; 429 SBX_E_RATE_LIMITED; 408 SBX_E_TIMEOUT; 5xx SBX_E_SERVER
 * (retryable, like SBX_E_NETWORK and SBX_E_RATE_LIMITED); anything else
 * SBX_E_BACKEND. */
int ph_status_code(long http_status);

/* JSON round trip: sends body (may be NULL; not stolen) as application/json,
 * parses the answer into *out (NULL when the body is empty or the call
 * failed).  Returns SBX_OK only for a 2xx answer whose body (if any) is
 * JSON; for another status, ph_status_code(status) with err holding the
 * method, path, status and the answer's "message" (or its first 200 bytes);
 * a transport failure as ph_do.  *status gets the HTTP status (0: none) when
 * status is not NULL; *retry_after_ms likewise (-1: absent). */
int ph_json(ph_client *c, const char *method, const char *path, json_t *body,
            long timeout_ms, long *status, long *retry_after_ms, json_t **out,
            char err[PH_ERR_MAX]);

/* Sets a caller's own easy handle up the way the client's are (URL built
 * from path, unix socket, TLS files, connect timeout, headers are NOT
 * added): for what the request model above cannot do, such as Docker's
 * hijacked attach connection (CURLOPT_CONNECT_ONLY).  Returns SBX_OK,
 * SBX_E_NOMEM. */
int ph_client_setup_handle(ph_client *c, CURL *h, const char *path, char err[PH_ERR_MAX]);

#endif
