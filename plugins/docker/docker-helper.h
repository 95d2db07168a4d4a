/* plugins/docker/docker-helper.h - shared parts of the in-container helper
 *
 * The helper (docker-init) is one static program built from
 * docker-init.c (the exec wrapper, the idle PID 1) and docker-initsrv.c
 * (the exec server, PID 1 of sandboxes in attach mode).  Not part of the
 * provider module.
 */
#ifndef DOCKER_HELPER_H
#define DOCKER_HELPER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One exec's options (the wrapper's command line, or a server request). */
struct opts {
    long long timeout_ms, cpu_s, fsize, nofile;
    long long lease_ms;  /* server mode: kill unless 'P' frames come this often */
    const char *dir;
    int has_stdin;
    char **argv;
    char **env;      /* "-e K=V" entries, or NULL */
    size_t n_env;
};

uint64_t now_ms(void);
int write_all(int fd, const void *buf, size_t len);
/* argv[0] is skipped; -1 on a bad command line.  o->env is malloc'ed. */
int parse(int argc, char **argv, struct opts *o);
/* See docker-init.c. */
int exec_run(const struct opts *o, int rep_fd, int nonce_mode);
int kill_descendants(const pid_t *skip, size_t n_skip);
/* PID 1 of a sandbox in attach mode (docker-initsrv.c). */
int serve_main(void);

#include "docker-proto.h"

#endif /* DOCKER_HELPER_H */
