// SPDX-License-Identifier: GPL-2.0-only
/*
 * Copyright (c) 2026 The trn authors
 *
 * KUnit tests of the simulator's control-file parser: what new_device and
 * del_device accept and what they refuse.
 */

#include <kunit/test.h>
#include <linux/module.h>
#include <linux/string.h>

#include "../trn_compat.h"
#include "../sim/trn_sim.h"

struct parse_case {
	const char *name;
	const char *buf;
	int max;
	int expect;		/* numbers found, or -errno */
	u32 vals[4];
};

static const struct parse_case parse_cases[] = {
	{ "one", "7", 4, 1, { 7 } },
	{ "four", "1 2 3 4", 4, 4, { 1, 2, 3, 4 } },
	{ "blanks_and_newline", " \t5\t 6\n", 4, 2, { 5, 6 } },
	{ "empty", "", 4, 0 },
	{ "only_blanks", " \t", 4, 0 },
	{ "only_newline", "\n", 4, 0 },
	{ "u32_max", "4294967295", 4, 1, { 4294967295U } },
	{ "too_many", "1 2 3 4 5", 4, -EINVAL },
	{ "negative", "-1", 4, -EINVAL },
	{ "letters", "1 x", 4, -EINVAL },
	{ "trailing_junk", "12abc", 4, -EINVAL },
	{ "overflow", "4294967296", 4, -EINVAL },
	{ "hex_is_not_decimal", "0x10", 4, -EINVAL },
};

KUNIT_ARRAY_PARAM_DESC(parse, parse_cases, name);

static void parse_numbers(struct kunit *test)
{
	const struct parse_case *c = test->param_value;
	u32 vals[4] = {};
	int n;

	n = trn_sim_parse(c->buf, strlen(c->buf), vals, c->max);
	KUNIT_ASSERT_EQ(test, n, c->expect);
	if (n > 0)
		KUNIT_EXPECT_MEMEQ(test, vals, c->vals, n * sizeof(u32));
}

/* sysfs buffers are not terminated where the write ended. */
static void parse_honours_count(struct kunit *test)
{
	u32 vals[4] = {};

	KUNIT_EXPECT_EQ(test, trn_sim_parse("12 34", 2, vals, 4), 1);
	KUNIT_EXPECT_EQ(test, vals[0], 12);
}

struct shape_case {
	const char *name;
	const char *buf;
	int expect;
	struct trn_sim_shape shape;
};

static const struct shape_case shape_cases[] = {
	{ "defaults", "3", 0, { 3, 8, 4, 256 } },
	{ "cores_only", "4 2", 0, { 4, 2, 4, 256 } },
	{ "all", "5 2 64 1", 0, { 5, 2, 1, 64 } },
	{ "largest", "1023 64 4096 16", 0, { 1023, 64, 16, 4096 } },
	{ "smallest", "0 1 1 1", 0, { 0, 1, 1, 1 } },
	{ "empty", "", -EINVAL },
	{ "id_too_big", "1024", -EINVAL },
	{ "no_cores", "1 0", -EINVAL },
	{ "too_many_cores", "1 65", -EINVAL },
	{ "no_hbm", "1 8 0", -EINVAL },
	{ "too_much_hbm", "1 8 4097", -EINVAL },
	{ "no_queues", "1 8 256 0", -EINVAL },
	{ "too_many_queues", "1 8 256 17", -EINVAL },
	{ "extra_field", "1 8 256 4 9", -EINVAL },
	{ "garbage", "one", -EINVAL },
};

KUNIT_ARRAY_PARAM_DESC(shape, shape_cases, name);

static void parse_shape(struct kunit *test)
{
	const struct shape_case *c = test->param_value;
	struct trn_sim_shape untouched, shape;

	memset(&shape, 0x5a, sizeof(shape));
	untouched = shape;
	KUNIT_ASSERT_EQ(test, trn_sim_parse_shape(c->buf, strlen(c->buf),
						  &shape), c->expect);
	if (c->expect)
		KUNIT_EXPECT_MEMEQ(test, &shape, &untouched, sizeof(shape));
	else
		KUNIT_EXPECT_MEMEQ(test, &shape, &c->shape, sizeof(shape));
}

static struct kunit_case trn_sim_parse_cases[] = {
	KUNIT_CASE_PARAM(parse_numbers, parse_gen_params),
	KUNIT_CASE(parse_honours_count),
	KUNIT_CASE_PARAM(parse_shape, shape_gen_params),
	{}
};

static struct kunit_suite trn_sim_parse_suite = {
	.name = "trn_sim_parse",
	.test_cases = trn_sim_parse_cases,
};

kunit_test_suite(trn_sim_parse_suite);

MODULE_DESCRIPTION("KUnit tests of the trn driver and its simulator");
MODULE_AUTHOR("The trn authors");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS("EXPORTED_FOR_KUNIT_TESTING");
