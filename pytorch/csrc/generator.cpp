// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * generator.cpp - the random number generators of trn devices.
 *
 * The ISA has no random numbers, so trn tensors get theirs from PyTorch's
 * CPU kernels through the counted CPU fallback (ops.cpp). What makes them
 * trn's is the generator: every trn device has a default generator, and
 * torch.Generator(device="trn") makes more; they are seeded, saved and
 * restored as CUDA's are (torch.manual_seed seeds them too), and each holds
 * a CPU generator (the CPU's Mersenne Twister) that the fallback hands to
 * the CPU kernel in its place. A trn generator and a CPU generator given
 * the same seed therefore draw the same numbers, and state saved from one
 * restores into the other.
 */
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/Generator.h>
#include <ATen/core/GeneratorForPrivateuseone.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>

#include "trn_torch.h"

namespace trn_torch {

struct TrnGeneratorImpl final : c10::GeneratorImpl {
	explicit TrnGeneratorImpl(c10::DeviceIndex index)
		: c10::GeneratorImpl(c10::Device(c10::DeviceType::PrivateUse1,
						 index),
				     c10::DispatchKeySet(c10::DispatchKey::PrivateUse1)),
		  cpu_(at::detail::createCPUGenerator())
	{
	}

	/* The CPU generator's own lock: a CPU kernel may be drawing. */
	void set_current_seed(uint64_t seed) override
	{
		std::lock_guard<std::mutex> l(cpu_.mutex());

		cpu_.set_current_seed(seed);
	}

	void set_offset(uint64_t offset) override
	{
		cpu_.set_offset(offset);	/* the CPU's answer: none */
	}

	uint64_t get_offset() const override
	{
		return cpu_.get_offset();
	}

	uint64_t current_seed() const override
	{
		return cpu_.current_seed();
	}

	uint64_t seed() override
	{
		std::lock_guard<std::mutex> l(cpu_.mutex());

		return cpu_.seed();
	}

	void set_state(const c10::TensorImpl &state) override
	{
		std::lock_guard<std::mutex> l(cpu_.mutex());

		cpu_.unsafeGetGeneratorImpl()->set_state(state);
	}

	c10::intrusive_ptr<c10::TensorImpl> get_state() const override
	{
		std::lock_guard<std::mutex> l(cpu_.mutex());

		return cpu_.unsafeGetGeneratorImpl()->get_state();
	}

	/* The CPU generator the fallback uses in this one's place. */
	const at::Generator &cpu() const
	{
		return cpu_;
	}

private:
	TrnGeneratorImpl *clone_impl() const override
	{
		auto *g = new TrnGeneratorImpl(device().index());
		std::lock_guard<std::mutex> l(cpu_.mutex());

		g->cpu_ = cpu_.clone();
		return g;
	}

	/* Mutable: its lock is taken in const methods too. */
	mutable at::Generator cpu_;
};

static std::once_flag defaults_once;
static std::vector<at::Generator> defaults;

at::Generator &default_generator(int index)
{
	int i = index < 0 ? current_device() : index;

	std::call_once(defaults_once, [] {
		for (int d = 0; d < device_count(); d++)
			defaults.push_back(at::make_generator<TrnGeneratorImpl>(
				static_cast<c10::DeviceIndex>(d)));
	});
	TORCH_CHECK(i >= 0 && i < static_cast<int>(defaults.size()),
		    "trn: no device trn:", i, " (", defaults.size(),
		    " present)");
	return defaults[i];
}

at::Generator new_generator(int index)
{
	int i = index < 0 ? current_device() : index;

	TORCH_CHECK(i >= 0 && i < device_count(), "trn: no device trn:", i,
		    " (", device_count(), " present)");
	return at::make_generator<TrnGeneratorImpl>(
		static_cast<c10::DeviceIndex>(i));
}

/* torch.Generator(device="trn:N") asks here (not the hooks) in 2.6. */
static at::Generator make_generator_for_python(c10::DeviceIndex index)
{
	return new_generator(index);
}
REGISTER_GENERATOR_PRIVATEUSE1(make_generator_for_python)

/* Is @g one of ours? Its CPU generator then, else @g itself. */
at::Generator cpu_generator_of(const at::Generator &g)
{
	if (!g.defined() || g.device().type() != c10::DeviceType::PrivateUse1)
		return g;
	return static_cast<TrnGeneratorImpl *>(g.unsafeGetGeneratorImpl())
		->cpu();
}

} // namespace trn_torch
