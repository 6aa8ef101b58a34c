// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * random.cpp - random fills of trn tensors without a host round trip.
 *
 * The ISA draws no random numbers, so the numbers come from PyTorch's CPU
 * kernels and the trn generator's CPU engine (generator.cpp), exactly as
 * the counted fallback would draw them; what this file saves is the
 * fallback's read of the tensor to the host (a synchronisation) before it
 * is overwritten. The values are drawn into a new CPU tensor and uploaded
 * by a staged copy, which returns once staged: nothing waits.
 */
#include <ATen/Operators.h>

#include "ops.h"

namespace trn_torch {

/* What a fill draws from: @gen's CPU engine, or its device default's. */
static at::Generator engine(const std::optional<at::Generator> &gen,
			    const at::Tensor &self)
{
	if (gen && gen->defined())
		return cpu_generator_of(*gen);
	return cpu_generator_of(default_generator(self.device().index()));
}

/*
 * Contiguous f32 or bf16 on trn: drawn in the order the CPU kernel draws
 * a contiguous tensor, so a CPU tensor and a trn tensor filled from the
 * same generator state hold the same numbers.
 */
static bool fillable(const at::Tensor &self)
{
	return self.is_privateuseone() && self.is_contiguous() &&
	       self.numel() && (self.scalar_type() == at::kFloat ||
				self.scalar_type() == at::kBFloat16);
}

/*
 * A fill named @name: @draw(host, engine) fills a CPU tensor of @self's
 * shape and dtype, which is uploaded into @self by a staged copy (no
 * wait); what fillable() does not take goes to @fallback().
 */
template <class Draw, class Fallback>
static at::Tensor &fill(at::Tensor &self,
			const std::optional<at::Generator> &gen,
			const char *name, Draw draw, Fallback fallback)
{
	KernelScope k(name);

	if (!fillable(self))
		return fallback();
	const c10::DeviceGuard guard(self.device());
	at::Tensor h = at::empty(self.sizes(), self.options().device(at::kCPU));

	draw(h, engine(gen, self));
	self.copy_(h);
	count_device_op(name);
	return self;
}

static at::Tensor &trn_normal_(at::Tensor &self, double mean, double std,
			       std::optional<at::Generator> gen)
{
	return fill(
		self, gen, "normal_",
		[&](at::Tensor &h, const at::Generator &g) {
			h.normal_(mean, std, g);
		},
		[&]() -> at::Tensor & {
			return fall_back<ATEN_OP(normal_)>(self, mean, std, gen);
		});
}

static at::Tensor &trn_uniform_(at::Tensor &self, double from, double to,
				std::optional<at::Generator> gen)
{
	return fill(
		self, gen, "uniform_",
		[&](at::Tensor &h, const at::Generator &g) {
			h.uniform_(from, to, g);
		},
		[&]() -> at::Tensor & {
			return fall_back<ATEN_OP(uniform_)>(self, from, to, gen);
		});
}

static at::Tensor &trn_bernoulli_(at::Tensor &self, double p,
				  std::optional<at::Generator> gen)
{
	return fill(
		self, gen, "bernoulli_",
		[&](at::Tensor &h, const at::Generator &g) {
			h.bernoulli_(p, g);
		},
		[&]() -> at::Tensor & {
			return fall_back<ATEN_OP(bernoulli__float)>(self, p, gen);
		});
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m)
{
	m.impl("normal_", trn_normal_);
	m.impl("uniform_", trn_uniform_);
	m.impl("bernoulli_.float", trn_bernoulli_);
}

} // namespace trn_torch
