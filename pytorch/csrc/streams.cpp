// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * streams.cpp - PyTorch streams and events on trn (Documentation/pytorch.md,
 * "Streams and events"): a c10::Stream is one of the eager runtime's
 * streams (one libtrnhal queue each), a c10 event an eager event (a
 * position in a stream; with timing, a device TIMESTAMP).
 *
 * Stream ids: 0 is the device's default stream; id k > 0 the k-th stream
 * getNewStream() made on that device. Like CUDA's stream pools, streams
 * are never destroyed: past kPoolSize per device, new streams are the
 * pool's again, round robin. The pool spreads over the device's
 * NeuronCores, starting on core 1 (the default stream is on core 0).
 */
#include <vector>

#include "trn_torch.h"

namespace trn_torch {

static constexpr size_t kPoolSize = 8;

/* A device's streams; under runtime_lock(). */
struct DeviceStreams {
	std::vector<eager_stream_t *> made;	/* id k is made[k - 1] */
	size_t next = 0;			/* round robin, once full */
	c10::StreamId current = 0;
	uint32_t cores = 0;
};

static DeviceStreams &streams_of(c10::DeviceIndex index)
{
	static std::vector<DeviceStreams> all(device_count());

	TORCH_CHECK(index >= 0 && index < static_cast<int>(all.size()),
		    "trn: no device trn:", static_cast<int>(index), " (",
		    all.size(), " present)");
	return all[index];
}

static uint32_t cores_of(c10::DeviceIndex index, DeviceStreams &ds)
{
	if (!ds.cores) {
		struct trn_device_info info = {};
		trn_device_t *dev;

		check(eager_device_handle(eager_dev(index), &dev), "device");
		check(trn_device_info(dev, &info), "device info");
		ds.cores = info.num_cores ? info.num_cores : 1;
	}
	return ds.cores;
}

eager_stream_t *eager_stream_of(const c10::Stream &s)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());
	TORCH_CHECK(s.device_type() == c10::DeviceType::PrivateUse1,
		    "trn: not a trn stream: ", s);
	DeviceStreams &ds = streams_of(s.device_index());
	c10::StreamId id = s.id();
	eager_stream_t *es;

	if (!id) {
		es = eager_default_stream(eager_dev(s.device_index()));
		TORCH_CHECK(es, "trn:", static_cast<int>(s.device_index()),
			    ": the default stream cannot be created");
		return es;
	}
	TORCH_CHECK(id > 0 && static_cast<size_t>(id) <= ds.made.size(),
		    "trn: trn:", static_cast<int>(s.device_index()),
		    " has no stream ", id);
	return ds.made[id - 1];
}

static c10::Stream stream_with_id(c10::DeviceIndex index, c10::StreamId id)
{
	return c10::Stream(c10::Stream::UNSAFE,
			   c10::Device(c10::DeviceType::PrivateUse1, index),
			   id);
}

c10::Stream current_stream(c10::DeviceIndex index)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());

	return stream_with_id(index, streams_of(index).current);
}

c10::Stream new_stream(c10::DeviceIndex index)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());
	DeviceStreams &ds = streams_of(index);
	eager_stream_t *es = nullptr;
	uint32_t core;

	if (ds.made.size() == kPoolSize) {
		c10::StreamId id = ds.next + 1;

		ds.next = (ds.next + 1) % kPoolSize;
		return stream_with_id(index, id);
	}
	core = (ds.made.size() + 1) % cores_of(index, ds);
	check(eager_stream_create(eager_dev(index), core, &es), "new stream");
	ds.made.push_back(es);
	return stream_with_id(index, ds.made.size());
}

c10::Stream exchange_stream(const c10::Stream &s)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());
	DeviceStreams &ds = streams_of(s.device_index());
	eager_stream_t *es = eager_stream_of(s);
	c10::Stream old = stream_with_id(s.device_index(), ds.current);

	check(eager_set_current_stream(eager_dev(s.device_index()),
				       s.id() ? es : nullptr),
	      "set stream");
	ds.current = s.id();
	return old;
}

/* Throw naming the stream's failed op, as synchronize() does. */
static void check_stream(int ret, eager_stream_t *es, c10::DeviceIndex index)
{
	if (ret >= 0)
		return;
	const char *op = eager_stream_error_op(es);

	TORCH_CHECK(false, "trn:", static_cast<int>(index), ": ",
		    op ? op : "a device operation", " failed: ",
		    trn_strerror(ret));
}

bool query_stream(const c10::Stream &s)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());
	eager_stream_t *es = eager_stream_of(s);
	int ret = eager_stream_query(es);

	check_stream(ret, es, s.device_index());
	return ret == 0;
}

void synchronize_stream(const c10::Stream &s)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());
	eager_stream_t *es = eager_stream_of(s);
	int ret = eager_stream_synchronize(es);

	run_checks(s.device_index(), es, ret < 0);
	check_stream(ret, es, s.device_index());
}

/* Every stream of trn:N: the default one, then the pool. */
std::vector<eager_stream_t *> device_streams(c10::DeviceIndex index)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());
	std::vector<eager_stream_t *> v;

	v.push_back(eager_default_stream(eager_dev(index)));
	for (eager_stream_t *es : streams_of(index).made)
		v.push_back(es);
	return v;
}

/*
 * Events. c10 hands us a void * slot: an eager_event_t, made at the first
 * record on the recording stream's device (a timing event when the flag
 * asks for timing, as torch.Event(enable_timing=True) does).
 */
void event_record(void **event, const c10::Stream &s, c10::DeviceIndex index,
		  c10::EventFlag flag)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());
	eager_stream_t *es = eager_stream_of(s);
	eager_event_t *e = static_cast<eager_event_t *>(*event);

	TORCH_CHECK(index < 0 || index == s.device_index(),
		    "trn: an event of trn:", static_cast<int>(index),
		    " cannot be recorded on a stream of trn:",
		    static_cast<int>(s.device_index()));
	if (!e) {
		uint32_t flags = flag == c10::EventFlag::BACKEND_DEFAULT ?
					 EAGER_EVENT_TIMING : 0;

		check(eager_event_create(eager_dev(s.device_index()), flags, &e),
		      "new event");
		*event = e;
	}
	check(eager_event_record(e, es), "record event");
}

void event_block(void *event, const c10::Stream &s)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());

	if (event)
		check(eager_stream_wait_event(eager_stream_of(s),
					      static_cast<eager_event_t *>(event)),
		      "wait event");
}

bool event_query(void *event)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());
	int ret;

	if (!event)
		return true;
	ret = eager_event_query(static_cast<eager_event_t *>(event));
	check(ret, "query event");
	return ret == 0;
}

void event_synchronize(void *event)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());

	if (event)
		check(eager_event_synchronize(static_cast<eager_event_t *>(event)),
		      "synchronize event");
}

void event_destroy(void *event) noexcept
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());

	eager_event_destroy(static_cast<eager_event_t *>(event));
}

double event_elapsed_ms(void *start, void *end)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());
	uint64_t ns = 0;
	int ret;

	TORCH_CHECK(start && end,
		    "trn: elapsed_time needs two recorded events");
	ret = eager_event_elapsed_ns(static_cast<eager_event_t *>(start),
				     static_cast<eager_event_t *>(end), &ns);
	TORCH_CHECK(ret != -EINVAL,
		    "trn: elapsed_time needs two recorded events made with enable_timing=True");
	check(ret, "elapsed_time");
	return static_cast<double>(ns) / 1e6;
}

} // namespace trn_torch
