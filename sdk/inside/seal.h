/* sdk/inside/seal.h - a pass line an init keeps for the program it runs
 *
 * In-tree only, not installed.  polysandbox eval (core/eval/eval-program.c)
 * writes the line a sample prints when every test returned ("\n" PREFIX
 * MARKER "\n", the run's random marker) to SBX_SEAL_FILE in the work
 * directory.  An init that can keep it out of the program's reach (the
 * local provider's zygote init, plugins/local/zygote/helper.c) reads and
 * removes the file before the payload may start and gives the payload
 * the write end of a pipe on SBX_SEAL_FD; once the payload's processes
 * are gone, it writes the line to stdout if "1" came on that pipe.  The
 * runner then needs no process of its own to keep the marker.  Where the
 * file is still there when the runner starts, nothing took it and the
 * runner keeps the line itself, in a forked keeper.
 */
#ifndef SBX_INSIDE_SEAL_H
#define SBX_INSIDE_SEAL_H

#define SBX_SEAL_FILE ".polysandbox-seal" /* in the work directory */
#define SBX_SEAL_FD 3                     /* the payload's "passed" pipe */
#define SBX_SEAL_FD_STR "3"               /* the same, for a program's text */
#define SBX_SEAL_MAX 128                  /* the longest line kept */

#endif
