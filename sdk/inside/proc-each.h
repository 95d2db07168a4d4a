/* sdk/inside/proc-each.h - every process /proc shows, with its parent
 *
 * In-tree only, not installed: for the static programs that run inside a
 * sandbox (plugins/docker/init, core/eval's judged runner), which must
 * find what a command left behind, whatever it did to its process group.
 */
#ifndef SBX_INSIDE_PROC_EACH_H
#define SBX_INSIDE_PROC_EACH_H

#include <sys/types.h>

/* Calls @fn(pid, ppid, @arg) for each process in /proc (zombies
 * included) until it returns non-zero.  A process whose stat cannot be
 * read (gone meanwhile) is skipped.  Returns how many processes @fn saw,
 * or -1 when /proc cannot be listed. */
long inside_proc_each(int (*fn)(pid_t pid, pid_t ppid, void *arg), void *arg);

#endif
