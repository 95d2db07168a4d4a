/* plugins/local/wire/fdpass.h - bytes and descriptors over a stream socket
 *
 * The framing under the daemon's messages (locald-proto.h), also used by
 * a sandbox's init to take its go (jail/child.c): it knows no message.
 */
#ifndef LCL_FDPASS_H
#define LCL_FDPASS_H

#include <stddef.h>

/* All of @len bytes with @nfds descriptors on the first; 0 or -errno. */
int lcl_fds_send(int sock, const void *buf, size_t len, const int *fds, int nfds);
/* Exactly @len bytes; descriptors (close-on-exec) go to @fds (up to
 * @nfds; unused slots -1; any past @nfds are closed).  0, -errno, or
 * -EPIPE at EOF. */
int lcl_fds_recv(int sock, void *buf, size_t len, int *fds, int nfds);

#endif /* LCL_FDPASS_H */
