// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * trn-ls output helpers: JSON string escaping and human-readable sizes.
 */
#include <stdlib.h>

#include "trn-ls-fmt.h"
#include "check.h"

static char *json(const char *s)
{
	static char *buf;
	size_t len;
	FILE *f;

	free(buf);
	f = open_memstream(&buf, &len);
	if (!f)
		abort();
	json_put_string(f, s);
	fclose(f);
	return buf;
}

static const char *size(uint64_t bytes)
{
	static char buf[32];

	return format_size(bytes, buf, sizeof(buf));
}

int main(void)
{
	CHECK_STR(json(""), "\"\"");
	CHECK_STR(json("trn"), "\"trn\"");
	CHECK_STR(json("/dev/accel/accel0"), "\"/dev/accel/accel0\"");
	CHECK_STR(json("a\"b"), "\"a\\\"b\"");
	CHECK_STR(json("a\\b"), "\"a\\\\b\"");
	CHECK_STR(json("\n\r\t\b\f"), "\"\\n\\r\\t\\b\\f\"");
	CHECK_STR(json("\x01\x1f\x7f"), "\"\\u0001\\u001f\\u007f\"");
	/* UTF-8 passes through untouched. */
	CHECK_STR(json("caf\xc3\xa9"), "\"caf\xc3\xa9\"");
	CHECK_STR(json("</script>"), "\"</script>\"");

	CHECK_STR(size(0), "0 B");
	CHECK_STR(size(1023), "1023 B");
	CHECK_STR(size(1024), "1 KiB");
	CHECK_STR(size(1536), "1.5 KiB");
	CHECK_STR(size(256ULL << 20), "256 MiB");
	CHECK_STR(size(4096ULL << 20), "4 GiB");
	CHECK_STR(size(96ULL << 30), "96 GiB");
	CHECK_STR(size((1ULL << 30) + (1ULL << 29)), "1.5 GiB");
	CHECK_STR(size((1ULL << 30) + 1), "1.0 GiB");
	CHECK_STR(size(1ULL << 48), "256 TiB");
	CHECK_STR(size(~0ULL), "16.0 EiB");
	return check_exit("test_fmt");
}
