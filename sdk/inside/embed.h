/* sdk/inside/embed.h - a program that runs inside a sandbox, carried in
 * the host-side object that installs it
 *
 * In-tree only, not installed.  The program is built static by the
 * folder's local.mk, which also writes a header defining the program's
 * path (and its checksum, so that dependency tracking rebuilds the object
 * when the program changes) with sdk/inside/embed-header.sh.  Then
 *
 *     SBX_EMBED(dk_init_blob, DK_INIT_BIN);
 *
 * at file scope defines `dk_init_blob` and `dk_init_blob_end`, the first
 * and one-past-the-last byte of the program, hidden in the object's
 * read-only data.  Declare them elsewhere with SBX_EMBED_DECLARE.
 */
#ifndef SBX_INSIDE_EMBED_H
#define SBX_INSIDE_EMBED_H

#define SBX_EMBED_DECLARE(sym) extern const unsigned char sym[], sym##_end[]

/* A NUL follows the bytes so that the end symbol is never at the end of
 * the section (some linkers then place it in the next one). */
#define SBX_EMBED(sym, path)                                             \
    __asm__(".section .rodata\n"                                         \
            ".balign 16\n"                                               \
            ".globl " #sym "\n.hidden " #sym "\n" #sym ":\n"             \
            ".incbin \"" path "\"\n"                                     \
            ".globl " #sym "_end\n.hidden " #sym "_end\n" #sym "_end:\n" \
            ".byte 0\n"                                                  \
            ".previous\n");                                              \
    SBX_EMBED_DECLARE(sym)

#endif
