/* core/server/utf8.h - the length of one UTF-8 sequence (utf8.c) */
#ifndef POLYSANDBOX_SRV_UTF8_H
#define POLYSANDBOX_SRV_UTF8_H

#include <stddef.h>

/* The length of the valid UTF-8 sequence at @p (of @n bytes), or 0
 * (overlong forms, surrogates and code points above U+10FFFF are not
 * valid). */
size_t srv_utf8_seq(const unsigned char *p, size_t n);

#endif
