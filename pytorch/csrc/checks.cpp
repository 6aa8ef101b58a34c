// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * checks.cpp - device-side checks: what a kernel can tell only from data
 * on the device (nll_loss's targets outside [0, C)) without a host round
 * trip. The kernel leaves a count on the device; the next synchronisation
 * that covers the stream it ran on reads it and raises, as CUDA raises its
 * device-side assertions (Documentation/pytorch.md, "Device-side checks").
 */
#include <utility>
#include <vector>

#include "ops.h"

namespace trn_torch {

namespace {

struct Check {
	at::Tensor count;	/* f32, 1 element, on trn: 0 means passed */
	int device;
	eager_stream_t *stream;	/* the stream that computes it */
	std::string what;	/* the error, if count is not 0 */
};

/* Checks to run, oldest first; guarded by runtime_lock(). */
std::vector<Check> &pending()
{
	/* Never destroyed: its tensors must not be freed after shutdown. */
	static auto *checks = new std::vector<Check>;

	return *checks;
}

/* Checks one kernel may leave before they are run by a synchronisation. */
constexpr size_t kMaxPending = 64;

} // namespace

void defer_check(const at::Tensor &count, std::string what)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());
	const int index = count.device().index();

	TORCH_INTERNAL_ASSERT(count.is_privateuseone() && count.numel() == 1 &&
			      count.scalar_type() == at::kFloat);
	if (pending().size() >= kMaxPending)
		synchronize(index);	/* runs them; may raise an older one */
	pending().push_back({ count.contiguous(), index,
			      eager_current_stream(eager_dev(index)),
			      std::move(what) });
}

void run_checks(int index, eager_stream_t *stream, bool discard)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());
	std::vector<Check> due;
	auto &all = pending();

	if (all.empty())
		return;
	for (auto it = all.begin(); it != all.end();) {
		if (it->device == index && (!stream || it->stream == stream)) {
			due.push_back(std::move(*it));
			it = all.erase(it);
		} else {
			++it;
		}
	}
	if (discard)
		return;
	/* Their streams have run them: any stream may read the counts. */
	for (const Check &c : due) {
		float n = 0;

		check(eager_raw_read(block_of(c.count), byte_offset(c.count),
				     &n, sizeof(n)),
		      "device-side check");
		TORCH_CHECK(n == 0, "trn:", index, ": ", c.what, " (", n,
			    n == 1 ? " row" : " rows",
			    "; a device-side check, raised at the first "
			    "synchronisation after the operator)");
	}
}

} // namespace trn_torch
