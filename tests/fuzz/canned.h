/* tests/fuzz/canned.h - an HTTP server on 127.0.0.1 that answers each
 * request with the next of a list of raw answers
 *
 * The network targets put the fuzzer's bytes on the wire this way, so
 * that they reach the providers through libcurl and plugins/common/http.c
 * as a service's would.  The server reads each request whole, writes the
 * answer's bytes as they are (status line, headers and body: whatever the
 * input says) and closes the connection, so that no answer can hang the
 * client.  Past the last answer it says 404 {"message":"no more answers"}.
 */
#ifndef POLYSANDBOX_TESTS_FUZZ_CANNED_H
#define POLYSANDBOX_TESTS_FUZZ_CANNED_H

#include <stddef.h>

#include "fuzz.h"

/* "http://127.0.0.1:PORT" of the server, started on first use. */
const char *fz_canned_url(void);
/* The answers to the next requests, in order (copied).  Waits until the
 * server is done with the connection it may still be on. */
void fz_canned_set(const fz_part *answers, size_t n);
/* The next answer, taken as the server would take it, for a harness that
 * replaces a provider's transport instead (modal: HTTP/2, which this
 * server does not speak).  Returns 1 and sets *out (valid until the next
 * fz_canned_set), or 0 past the last answer. */
int fz_canned_next(fz_part *out);
/* Requests answered since the last fz_canned_set. */
size_t fz_canned_served(void);
/* Whether one of the answers holds @s: a secret the peer itself sends
 * back may well end up quoted in a message, and that is no leak of ours. */
int fz_canned_holds(const char *s);

#endif
