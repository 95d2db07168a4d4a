/* plugins/microvm/agent/mv-filter.h - the guest agent's system-call filter */
#ifndef POLYSANDBOX_MV_FILTER_H
#define POLYSANDBOX_MV_FILTER_H

/* Installs, for the calling process and what it executes, a seccomp
 * filter that kills (SIGSYS) the calls loading or replacing kernel code,
 * as the local and docker providers' filters do: the host then reports
 * status seccomp.  Sets no_new_privs first.  0, or -1 (errno). */
int mv_filter_install(void);

#endif
