/* SPDX-License-Identifier: MIT */
/*
 * Copyright (c) 2026 The trn authors
 *
 * Output helpers of trn-ls, kept apart so the host tests can check them.
 */
#ifndef TRN_LS_FMT_H
#define TRN_LS_FMT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Write @s as a JSON string literal, quotes included. */
void json_put_string(FILE *f, const char *s);

/*
 * Format @bytes in binary units ("256 MiB", "1.5 GiB", "512 B") into @buf.
 * Returns @buf.
 */
char *format_size(uint64_t bytes, char *buf, size_t size);

#endif /* TRN_LS_FMT_H */
