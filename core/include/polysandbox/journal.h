/* polysandbox/journal.h - durable files of JSON lines
 *
 * The file sbx_eval_run keeps its results in (sbx_eval_opts_set_journal),
 * for applications that keep records of their own the same way
 * (polysandboxd keeps its batch jobs' results in one):
 *
 *     sbx_journal *j;
 *     sbx_journal_open("results.jsonl", true, on_line, state, &j);
 *     ...
 *     sbx_journal_append(j, line, strlen(line));    (from any thread)
 *     ...
 *     sbx_journal_sync(j);                          (all on disk)
 *     sbx_journal_close(j);
 *
 * Each line is appended with one write(2) on an O_APPEND descriptor, so a
 * process killed at any moment leaves every appended line whole and at
 * most one torn last line.  A thread of the journal puts the lines on
 * disk with fdatasync(2) soon after they are appended, one sync for all
 * the lines appended meanwhile, so that no appending thread waits for the
 * disk: a crash of the machine (not of the process) loses at most the
 * last few milliseconds' lines.  Opening with resume cuts a torn last
 * line off and hands every line back, in order.
 *
 * Errors are sbx_status values; the message (naming the file) is read
 * with sbx_ctx_last_error(NULL) on the calling thread.
 *
 * Since: 0.2
 */
#ifndef POLYSANDBOX_JOURNAL_H
#define POLYSANDBOX_JOURNAL_H

#include <polysandbox/sandbox.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sbx_journal sbx_journal;

/**
 * sbx_journal_line_cb:
 * @line: (transfer none) one line of the file without its newline, not
 *   NUL-terminated; valid during the call only
 * @len: its length in bytes (blank lines are passed too, @len 0)
 * @lineno: its 1-based line number
 * @offset: where it starts in the file, in bytes
 *
 * Called by sbx_journal_open with resume for every whole line, in order.
 * Return SBX_OK to go on; any other sbx_status stops the reading and
 * sbx_journal_open returns it.  Since: 0.2
 */
typedef int (*sbx_journal_line_cb)(void *ud, const char *line, size_t len, size_t lineno,
                                   uint64_t offset);

/**
 * sbx_journal_open:
 * @path: (transfer none) the file, created (mode 0644) when missing
 * @resume: keep what the file holds: cut off a torn last line (a line
 *   without its newline: the writer was killed while writing it) and
 *   call @cb for every line; false replaces it by an empty file (a new
 *   one renamed over it, never truncated in place: its other links keep
 *   what it held; a path that is not a regular file is written as it is)
 * @cb: (nullable) called per line when @resume
 * @out: (out) (transfer full): close with sbx_journal_close
 *
 * Errors: SBX_E_IO (cannot open, read, cut or start the syncing thread;
 * the message names @path), SBX_E_NOMEM, SBX_E_INVAL (NULL argument), or
 * what @cb returned.  Since: 0.2
 */
SBX_API int sbx_journal_open(const char *path, bool resume, sbx_journal_line_cb cb,
                             void *ud, sbx_journal **out);

/**
 * sbx_journal_append:
 * @line: (transfer none) one line without its newline (the journal adds
 *   it); it must not hold a newline (compact JSON never does)
 * @offset: (out) (optional): where the line starts in the file
 *
 * Appends @line in one write and asks for it to be synced; safe from
 * several threads at once (lines never interleave).  Errors: SBX_E_INVAL
 * (a newline in @line), SBX_E_IO (the write failed, or an earlier sync
 * did: the disk may have lost lines), SBX_E_NOMEM.  Since: 0.2
 */
SBX_API int sbx_journal_append(sbx_journal *j, const char *line, size_t len,
                               uint64_t *offset);

/**
 * sbx_journal_sync:
 * Returns once every line appended before the call is on disk: SBX_OK,
 * or SBX_E_IO when a sync failed.  Since: 0.2
 */
SBX_API int sbx_journal_sync(sbx_journal *j);

/** sbx_journal_path: the file's path (transfer none).  Since: 0.2 */
SBX_API const char *sbx_journal_path(const sbx_journal *j);

/**
 * sbx_journal_close:
 * Syncs what was appended (as sbx_journal_sync, its error lost: call
 * that first to see it), stops the journal's thread and closes the
 * file.  NULL is fine.  Since: 0.2
 */
SBX_API void sbx_journal_close(sbx_journal *j);

#ifdef __cplusplus
}
#endif
#endif /* POLYSANDBOX_JOURNAL_H */
