/* plugins/docker/init/helper.h - shared parts of the in-container helper
 *
 * The helper (docker-init) is one static program built from
 * init/init.c (the exec wrapper, the idle PID 1), init/tree.c (the
 * processes an exec started), init/serve.c (the exec server, PID 1 of
 * sandboxes in attach mode) and init/sep.c (the helper apart from the
 * commands).  It includes nothing of the provider: its one contract with
 * it is the wire format, init/proto.h.  Not part of the provider module.
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
/* See init/init.c.  @setup_err: the helper could not set itself apart
 * (helper_separate's errno): the command is not started, the report says
 * so (e=ERRNO). */
int exec_run(const struct opts *o, int rep_fd, int nonce_mode, int setup_err);
/* The process tree (init/tree.c).  tree_reserve allocates what
 * kill_descendants needs, ahead of a fork (-1 out of memory); it sends
 * SIGKILL to every descendant of this process except the @n_skip
 * processes of @skip and theirs, and returns how many it found.
 * kill_tree kills and reaps them all. */
int tree_reserve(void);
int kill_descendants(const pid_t *skip, size_t n_skip);
void kill_tree(void);
/* PID 1 of a sandbox in attach mode (init/serve.c). */
int serve_main(void);
/* The cgroup's count of OOM kills, or -1 (init/tree.c). */
long long oom_kills(void);
/* The cgroup's count of forks its pids limit refused, or -1. */
long long pids_refusals(void);

/* The helper apart from the commands (init/sep.c).  The uid of the
 * helper's processes: none of the command's (root), mapped by rootless
 * Podman and user-namespace remapping (below 65536), nobody's (65534). */
#define HELPER_UID 65533
/* Drops the bounding set and becomes HELPER_UID, keeping CAP_SETUID and
 * CAP_KILL when @keep (none otherwise); dumpable.  -1 with errno. */
int helper_separate(int keep);
/* Every signal but SIGCHLD ignored: the helper's processes. */
void helper_ignore_signals(void);
/* In the command's process, before its exec: its own session, default
 * signals, root without capabilities, no_new_privs, its seccomp filter.
 * -1 with errno. */
int command_confine(void);

#include "proto.h"

#endif /* DOCKER_HELPER_H */
