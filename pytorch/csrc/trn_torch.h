// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * The PyTorch backend's C++ glue (Documentation/pytorch.md): PrivateUse1,
 * renamed "trn", over the eager runtime (examples/eager) and libtrnhal.
 * Everything the device does goes through their C API; this code only
 * speaks PyTorch.
 */
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

extern "C" {
#include "eager.h"
}

namespace trn_torch {

/*
 * The eager runtime is single-threaded; PyTorch calls us from the Python
 * thread and from autograd's device thread. This lock serialises every
 * call into it (and guards the counters below).
 */
std::recursive_mutex &runtime_lock();

/* The current trn device of this thread (the device guard's state). */
int current_device();
void set_current_device(int index);
int device_count();

/* trn:N for the eager runtime. */
static inline struct eager_device eager_dev(int index)
{
	return EAGER_DEVICE_TRN(static_cast<unsigned int>(index));
}

/* Throw a RuntimeError naming @what if @ret is a negative errno. */
void check(int ret, const char *what);

/* Where operators ran: device kernels and CPU fallbacks, by name. */
void count_device_op(const char *name);
std::map<std::string, uint64_t> device_op_counts();
std::map<std::string, uint64_t> fallback_counts();
void reset_counts();

/* The caching allocator (c10::Allocator over eager_raw_alloc). */
c10::Allocator *allocator();

/*
 * Pinned host memory (pin_memory(), pin_memory=True): host buffers of the
 * device current at allocation. The block that holds CPU address @p and
 * @p's offset in it, or nullptr if @p is not in pinned memory of ours.
 */
c10::Allocator *pinned_allocator();
struct eager_block *pinned_block_of(const void *p, uint64_t *offset);

/* The eager block behind a trn tensor's storage, and its byte offset. */
struct eager_block *block_of(const at::Tensor &t);
uint64_t byte_offset(const at::Tensor &t);

/*
 * Random number generators (generator.cpp): trn:N's default generator
 * (index -1: the current device), a new one, and the CPU generator a trn
 * generator draws with (other generators: themselves).
 */
at::Generator &default_generator(int index);
at::Generator new_generator(int index);
at::Generator cpu_generator_of(const at::Generator &g);

/* Synchronise every stream of trn:N; throws on a device error. */
void synchronize(int index);

/*
 * Device-side checks (checks.cpp). defer_check(): @count, one f32 on trn
 * computed on the current stream, must be 0, else the next
 * synchronisation covering that stream raises @what. run_checks(): after
 * trn:@index's @stream (nullptr: every stream) has run to its end, reads
 * the counts of its checks and raises the first that failed; with
 * @discard (the stream failed: the counts may never have been written),
 * forgets them instead.
 */
void defer_check(const at::Tensor &count, std::string what);
void run_checks(int index, eager_stream_t *stream, bool discard = false);

/* Streams and events (streams.cpp); ids: 0 default, k the pool's k-th. */
eager_stream_t *eager_stream_of(const c10::Stream &s);
c10::Stream current_stream(c10::DeviceIndex index);
c10::Stream new_stream(c10::DeviceIndex index);
c10::Stream exchange_stream(const c10::Stream &s);
bool query_stream(const c10::Stream &s);
void synchronize_stream(const c10::Stream &s);
std::vector<eager_stream_t *> device_streams(c10::DeviceIndex index);
void event_record(void **event, const c10::Stream &s, c10::DeviceIndex index,
		  c10::EventFlag flag);
void event_block(void *event, const c10::Stream &s);
bool event_query(void *event);
void event_synchronize(void *event);
void event_destroy(void *event) noexcept;
double event_elapsed_ms(void *start, void *end);

} // namespace trn_torch
