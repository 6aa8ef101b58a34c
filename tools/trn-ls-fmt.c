// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 */
#include <inttypes.h>

#include "trn-ls-fmt.h"

void json_put_string(FILE *f, const char *s)
{
	const unsigned char *p;

	fputc('"', f);
	for (p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\b':
			fputs("\\b", f);
			break;
		case '\f':
			fputs("\\f", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
		default:
			/*
			 * Other control characters must be escaped; bytes of
			 * 0x80 and above pass through (UTF-8 is valid JSON).
			 */
			if (*p < 0x20 || *p == 0x7f)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

char *format_size(uint64_t bytes, char *buf, size_t size)
{
	static const char *const units[] = {
		"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB",
	};
	unsigned int u = 0;
	uint64_t scale = 1;

	while (u + 1 < sizeof(units) / sizeof(units[0]) &&
	       bytes / scale >= 1024) {
		scale *= 1024;
		u++;
	}
	if (bytes % scale == 0) {
		snprintf(buf, size, "%" PRIu64 " %s", bytes / scale, units[u]);
	} else {
		/* One decimal, rounded; exact values above print as integers. */
		uint64_t tenths = (bytes / scale) * 10 +
				  ((bytes % scale) * 10 + scale / 2) / scale;

		snprintf(buf, size, "%" PRIu64 ".%" PRIu64 " %s",
			 tenths / 10, tenths % 10, units[u]);
	}
	return buf;
}
