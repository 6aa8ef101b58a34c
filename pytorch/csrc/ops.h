// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * ops.h - what the operator files share: the counted CPU fallback, the
 * eager views of trn tensors, and new outputs straight from the allocator.
 * ops.cpp holds factories, views and copies; math.cpp the device kernels.
 */
#pragma once

#include <optional>

#include <ATen/native/CPUFallback.h>
#include <torch/library.h>

#include "trn_torch.h"

namespace trn_torch {

/* The boxed fallback: counts @op, runs it on the CPU (or refuses). */
void cpu_fallback(const c10::OperatorHandle &op, torch::jit::Stack *stack);

/* An unboxed call of aten operator @Op through cpu_fallback(). */
template <class Op, class... Args>
static inline decltype(auto) fall_back(Args &&...args)
{
	return at::native::call_fallback_fn<&cpu_fallback, Op>::call(
		std::forward<Args>(args)...);
}

/*
 * Names the device work recorded while it lives (eager_set_op_name), so
 * that a device error can name the operator; restores the outer name.
 */
class OpName {
public:
	explicit OpName(const char *name);
	~OpName();
	OpName(const OpName &) = delete;
	OpName &operator=(const OpName &) = delete;

	/* The innermost live name ("trn" outside any kernel). */
	static const char *current();

private:
	const char *outer_;
};

/* What every kernel entry holds: the runtime lock, and its op's name. */
struct KernelScope {
	explicit KernelScope(const char *name)
		: lock(runtime_lock()), op(name)
	{
	}

	std::lock_guard<std::recursive_mutex> lock;
	OpName op;
};

/*
 * A header over a contiguous trn tensor's bytes, as rows x cols (default:
 * the last dimension; 1-D: one row). False if @t is not on trn, not
 * contiguous, empty, or of another dtype than f32/bf16.
 */
bool as_eager(const at::Tensor &t, eager_tensor_t *out, int64_t rows = -1,
	      int64_t cols = -1);

/*
 * A new contiguous tensor on @like's device (the caller holds a guard for
 * it), of @like's dtype unless given: kernels' outputs skip a second trip
 * through the dispatcher.
 */
at::Tensor new_tensor(at::IntArrayRef size, const at::Tensor &like,
		      std::optional<at::ScalarType> dtype = std::nullopt);

/* Whether trn tensor @x's device has every TRN_CAP_* bit of @cap. */
bool has_cap(const at::Tensor &x, uint64_t cap);

} // namespace trn_torch
