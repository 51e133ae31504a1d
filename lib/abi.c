// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Structs that can grow: how a struct passed with the caller's sizeof() is
 * read or written (the rules are in the header's top comment).
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

int nfqb_struct_in(void *dst, size_t ours, size_t min, const void *src,
		   size_t size)
{
	const unsigned char *tail = (const unsigned char *)src + ours;
	size_t i;

	if (!src || size < min)
		return EINVAL;
	if (size > ours) {
		for (i = 0; i < size - ours; i++)
			if (tail[i])
				return E2BIG;
		size = ours;
	}
	memset(dst, 0, ours);
	memcpy(dst, src, size);
	return 0;
}

void nfqb_struct_out(void *dst, size_t size, const void *src, size_t ours)
{
	if (size > ours) {
		memset((unsigned char *)dst + ours, 0, size - ours);
		size = ours;
	}
	memcpy(dst, src, size);
}
