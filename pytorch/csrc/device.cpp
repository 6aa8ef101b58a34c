// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * device.cpp - trn as a PyTorch device: the caching allocator, the device
 * guard (current device; streams and events through streams.cpp) and the
 * PrivateUse1 hooks.
 */
#include <cstring>
#include <map>
#include <unordered_map>

#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <c10/core/Allocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include "trn_torch.h"

namespace trn_torch {

std::recursive_mutex &runtime_lock()
{
	static std::recursive_mutex lock;
	return lock;
}

static thread_local int tls_device;

int current_device()
{
	return tls_device;
}

void set_current_device(int index)
{
	TORCH_CHECK(index >= 0 && index < device_count(),
		    "trn: no device trn:", index, " (", device_count(),
		    " present)");
	tls_device = index;
}

int device_count()
{
	static int count = -1;

	if (count < 0) {
		size_t n = 0;

		count = eager_device_count(&n) ? 0 : static_cast<int>(n);
	}
	return count;
}

void check(int ret, const char *what)
{
	TORCH_CHECK(ret >= 0, "trn: ", what, ": ", trn_strerror(ret));
}

/* The eager block is the DataPtr's context; its data the device address. */
static void free_block(void *ctx)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());

	eager_raw_free(static_cast<struct eager_block *>(ctx));
}

static void free_nothing(void *)
{
}

struct TrnAllocator final : c10::Allocator {
	c10::DataPtr allocate(size_t n) override
	{
		std::lock_guard<std::recursive_mutex> g(runtime_lock());
		int dev = current_device();
		c10::Device device(c10::DeviceType::PrivateUse1, dev);
		struct eager_block *b = nullptr;
		int ret;

		if (!n)
			return { nullptr, nullptr, &free_nothing, device };
		ret = eager_raw_alloc(eager_dev(dev), n, &b);
		if (ret == -ENOMEM || ret == -EDQUOT || ret == -E2BIG)
			TORCH_CHECK_WITH(OutOfMemoryError, false,
					 "trn:", dev, ": out of memory allocating ",
					 n, " bytes (", trn_strerror(ret), ")");
		check(ret, "allocate");
		return { reinterpret_cast<void *>(eager_block_va(b)), b,
			 &free_block, device };
	}

	c10::DeleterFnPtr raw_deleter() const override
	{
		return nullptr;	/* data is not the context */
	}

	/* Device to device, within this allocator's blocks (storage resize). */
	void copy_data(void *dest, const void *src, size_t count) const override
	{
		TORCH_CHECK(false, "trn: copy_data without storages is not supported");
	}
};

static TrnAllocator trn_allocator;

c10::Allocator *allocator()
{
	return &trn_allocator;
}

REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, &trn_allocator);

/* Live pinned allocations by CPU address (under runtime_lock()). */
struct PinnedRange {
	size_t size;
	struct eager_block *block;
};

static std::map<uintptr_t, PinnedRange> &pinned_ranges()
{
	static std::map<uintptr_t, PinnedRange> ranges;
	return ranges;
}

/* And their CPU addresses by block, for the deleter (which gets the block). */
static std::unordered_map<struct eager_block *, uintptr_t> &pinned_addrs()
{
	static std::unordered_map<struct eager_block *, uintptr_t> addrs;
	return addrs;
}

static void free_pinned(void *ctx)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());
	auto *b = static_cast<struct eager_block *>(ctx);
	auto it = pinned_addrs().find(b);

	if (it != pinned_addrs().end()) {
		pinned_ranges().erase(it->second);
		pinned_addrs().erase(it);
	}
	eager_raw_free(b);
}

struct TrnPinnedAllocator final : c10::Allocator {
	c10::DataPtr allocate(size_t n) override
	{
		std::lock_guard<std::recursive_mutex> g(runtime_lock());
		int dev = current_device();
		c10::Device cpu(c10::DeviceType::CPU);
		struct eager_block *b = nullptr;
		void *p = nullptr;
		int ret;

		if (!n)
			return { nullptr, nullptr, &free_nothing, cpu };
		ret = eager_pinned_alloc(eager_dev(dev), n, &b, &p);
		if (ret == -ENOMEM || ret == -EDQUOT || ret == -E2BIG)
			TORCH_CHECK_WITH(OutOfMemoryError, false,
					 "trn:", dev, ": out of pinned memory "
					 "allocating ", n, " bytes (",
					 trn_strerror(ret), ")");
		check(ret, "pin memory");
		pinned_ranges()[reinterpret_cast<uintptr_t>(p)] = { n, b };
		pinned_addrs()[b] = reinterpret_cast<uintptr_t>(p);
		return { p, b, &free_pinned, cpu };
	}

	c10::DeleterFnPtr raw_deleter() const override
	{
		return nullptr;
	}

	void copy_data(void *dest, const void *src, size_t count) const override
	{
		std::memcpy(dest, src, count);
	}
};

static TrnPinnedAllocator trn_pinned_allocator;

c10::Allocator *pinned_allocator()
{
	return &trn_pinned_allocator;
}

struct eager_block *pinned_block_of(const void *p, uint64_t *offset)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());
	auto &ranges = pinned_ranges();
	uintptr_t a = reinterpret_cast<uintptr_t>(p);
	auto it = ranges.upper_bound(a);

	if (!p || it == ranges.begin())
		return nullptr;
	--it;
	if (a - it->first >= it->second.size)
		return nullptr;
	*offset = a - it->first;
	return it->second.block;
}

struct eager_block *block_of(const at::Tensor &t)
{
	return static_cast<struct eager_block *>(
		t.storage().data_ptr().get_context());
}

uint64_t byte_offset(const at::Tensor &t)
{
	return static_cast<uint64_t>(t.storage_offset()) * t.element_size();
}

static const char *status_name(uint32_t status)
{
	static const char *const names[] = {
		"OK", "BAD_OPCODE", "BAD_SIZE", "BAD_ALIGN", "BAD_ARG",
		"CALL_DEPTH", "MMU_FAULT", "TIMEOUT", "ABORTED", "UNSUPPORTED",
		"DEVICE_ERROR",
	};

	return status < sizeof(names) / sizeof(names[0]) ? names[status] :
							   "unknown";
}

void synchronize(int index)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());
	struct trn_queue_status st = {};
	eager_stream_t *failed = nullptr;
	int ret = 0, r;

	/* Every stream, each to its end; the first failure is reported. */
	for (eager_stream_t *s : device_streams(index)) {
		r = eager_stream_synchronize(s);
		if (r < 0 && !failed) {
			failed = s;
			ret = r;
		}
	}
	run_checks(index, nullptr, failed != nullptr);
	if (!failed)
		return;
	trn_queue_status(eager_stream_queue(failed), &st);
	const char *op = eager_stream_error_op(failed);

	TORCH_CHECK(false, "trn:", index, ": ", op ? op : "a device operation",
		    " failed: ", trn_strerror(ret),
		    " (the queue's latest failure: status ",
		    status_name(st.status),
		    ", state", st.state & TRN_QUEUE_BANNED ? " banned" : "",
		    st.state & TRN_QUEUE_GUILTY ? " guilty" : "",
		    st.state & TRN_QUEUE_FAULTED ? " faulted" : "",
		    st.fault_va ? ", fault at 0x" : "",
		    st.fault_va ? c10::str(std::hex, st.fault_va) : "",
		    ", jobs failed ", st.jobs_failed, ")");
}

/* The device guard: one default stream per device (its eager stream). */
struct TrnGuardImpl final : c10::impl::DeviceGuardImplInterface {
	static constexpr c10::DeviceType static_type =
		c10::DeviceType::PrivateUse1;

	c10::DeviceType type() const override
	{
		return static_type;
	}

	c10::Device exchangeDevice(c10::Device d) const override
	{
		c10::Device old = getDevice();

		if (d.index() != old.index())
			set_current_device(d.index());
		return old;
	}

	c10::Device getDevice() const override
	{
		return c10::Device(static_type, current_device());
	}

	void setDevice(c10::Device d) const override
	{
		set_current_device(d.index());
	}

	void uncheckedSetDevice(c10::Device d) const noexcept override
	{
		tls_device = d.index();
	}

	/*
	 * Streams and events live in streams.cpp. The current stream is
	 * the device's, not the thread's: the eager runtime is
	 * single-threaded and records to one current stream per device.
	 */
	c10::Stream getStream(c10::Device d) const noexcept override
	{
		try {
			return current_stream(d.index());
		} catch (...) {
			return c10::Stream(c10::Stream::DEFAULT, d);
		}
	}

	c10::Stream getDefaultStream(c10::Device d) const override
	{
		return c10::Stream(c10::Stream::DEFAULT, d);
	}

	c10::Stream getStreamFromGlobalPool(c10::Device d,
					    bool high_priority) const override
	{
		return new_stream(d.index());
	}

	c10::Stream getNewStream(c10::Device d, int priority) const override
	{
		return new_stream(d.index());
	}

	c10::Stream exchangeStream(c10::Stream s) const noexcept override
	{
		try {
			return exchange_stream(s);
		} catch (...) {
			/* noexcept: c10 only hands back streams it got from us. */
			return c10::Stream(c10::Stream::DEFAULT, s.device());
		}
	}

	bool queryStream(const c10::Stream &s) const override
	{
		return query_stream(s);
	}

	void synchronizeStream(const c10::Stream &s) const override
	{
		synchronize_stream(s);
	}

	void record(void **event, const c10::Stream &s,
		    const c10::DeviceIndex index,
		    const c10::EventFlag flag) const override
	{
		event_record(event, s, index, flag);
	}

	void block(void *event, const c10::Stream &s) const override
	{
		event_block(event, s);
	}

	bool queryEvent(void *event) const override
	{
		return event_query(event);
	}

	void synchronizeEvent(void *event) const override
	{
		event_synchronize(event);
	}

	void destroyEvent(void *event, const c10::DeviceIndex) const noexcept override
	{
		event_destroy(event);
	}

	double elapsedTime(void *start, void *end,
			   const c10::DeviceIndex) const override
	{
		return event_elapsed_ms(start, end);
	}

	c10::DeviceIndex deviceCount() const noexcept override
	{
		return static_cast<c10::DeviceIndex>(device_count());
	}

	void synchronizeDevice(const c10::DeviceIndex index) const override
	{
		synchronize(index);
	}
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, TrnGuardImpl);

struct TrnHooks final : at::PrivateUse1HooksInterface {
	bool hasPrimaryContext(c10::DeviceIndex index) const override
	{
		return index >= 0 && index < device_count();
	}

	bool isPinnedPtr(const void *p) const override
	{
		uint64_t offset;

		return pinned_block_of(p, &offset) != nullptr;
	}

	c10::Allocator *getPinnedMemoryAllocator() const override
	{
		return pinned_allocator();
	}

	const at::Generator &getDefaultGenerator(c10::DeviceIndex index) const override
	{
		return default_generator(index);
	}

	at::Generator getNewGenerator(c10::DeviceIndex index) const override
	{
		return new_generator(index);
	}

	c10::Device getDeviceFromPtr(void *) const override
	{
		return c10::Device(c10::DeviceType::PrivateUse1, current_device());
	}

	void resizePrivateUse1Bytes(const c10::Storage &storage,
				    size_t newsize) const override
	{
		TORCH_CHECK(false, "trn: resizing a storage in place is not supported");
	}
};

static bool hooks_registered = [] {
	at::RegisterPrivateUse1HooksInterface(new TrnHooks());
	return true;
}();

} // namespace trn_torch
