/* tests/sanitize/dtls-mod.c - a module with one thread-local word
 *
 * Loaded with dlopen, its TLS block is allocated per thread by glibc with
 * malloc on first use: what dtls-exit.c places at a page + 16.
 */
long *dtls_word(void);

static _Thread_local long word;

long *dtls_word(void)
{
    return &word;
}
