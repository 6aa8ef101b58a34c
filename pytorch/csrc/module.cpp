// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * module.cpp - torch_trn._C: what torch_trn's Python code calls (device
 * count and selection, synchronisation, the current stream, the
 * allocator's figures, where operators ran).
 */
#include <chrono>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <torch/csrc/utils/pybind.h>

#include "trn_torch.h"

namespace py = pybind11;
using namespace trn_torch;

static int checked_index(int index)
{
	int i = index < 0 ? current_device() : index;

	TORCH_CHECK(i >= 0 && i < device_count(), "trn: no device trn:", i,
		    " (", device_count(), " present)");
	return i;
}

static struct eager_memory_stats stats_of(int index)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());
	struct eager_memory_stats st = {};

	check(eager_memory_stats(eager_dev(checked_index(index)), &st),
	      "memory_stats");
	return st;
}

/*
 * The baseline of pytorch/bench.py: @n element-wise adds of two f32
 * [rows][cols] tensors through the eager runtime's C API, each into a new
 * output tensor as a framework does, then one synchronisation. ns per op
 * to issue them, and with the synchronisation.
 */
static std::pair<double, double> bench_eager_add(int device, int n, int64_t rows, int64_t cols)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());
	struct eager_device dev = eager_dev(checked_index(device));
	const int64_t shape[2] = { rows, cols };
	eager_tensor_t *a = nullptr, *b = nullptr, *o;
	std::chrono::steady_clock::time_point t0, t1;
	int ret, i;

	TORCH_CHECK(n > 0, "trn: bench_eager_add: n must be positive");
	ret = eager_zeros(dev, EAGER_F32, 2, shape, &a);
	if (!ret)
		ret = eager_zeros(dev, EAGER_F32, 2, shape, &b);
	if (!ret)
		ret = eager_synchronize(dev);
	t0 = std::chrono::steady_clock::now();
	for (i = 0; !ret && i < n; i++) {
		ret = eager_empty(dev, EAGER_F32, 2, shape, &o);
		if (!ret) {
			ret = eager_add(o, a, b);
			eager_free(o);
		}
	}
	t1 = std::chrono::steady_clock::now();
	if (!ret)
		ret = eager_synchronize(dev);
	std::chrono::duration<double, std::nano> issue = t1 - t0;
	std::chrono::duration<double, std::nano> all =
		std::chrono::steady_clock::now() - t0;
	eager_free(a);
	eager_free(b);
	check(ret, "bench_eager_add");
	return { issue.count() / n, all.count() / n };
}

/*
 * The same loop as pytorch/bench.py's torch_add, from C++: @n at::add() of
 * two f32 [rows][cols] tensors on @device ("trn:0", "cpu"), each into a new
 * tensor, then one synchronisation. What the dispatcher and the backend
 * cost without Python's interpreter and argument parsing: the torch path a
 * C++ framework (or a compiled graph's fallback) takes.
 */
static std::pair<double, double> bench_aten_add(const std::string &device,
						int n, int64_t rows,
						int64_t cols)
{
	c10::Device dev(device);
	at::Tensor a = at::zeros({ rows, cols }, at::TensorOptions(dev));
	at::Tensor b = at::zeros({ rows, cols }, at::TensorOptions(dev));
	std::chrono::steady_clock::time_point t0, t1;
	int i;

	TORCH_CHECK(n > 0, "trn: bench_aten_add: n must be positive");
	if (dev.type() == c10::DeviceType::PrivateUse1)
		synchronize(dev.index());
	t0 = std::chrono::steady_clock::now();
	for (i = 0; i < n; i++)
		at::add(a, b);
	t1 = std::chrono::steady_clock::now();
	if (dev.type() == c10::DeviceType::PrivateUse1)
		synchronize(dev.index());
	std::chrono::duration<double, std::nano> issue = t1 - t0;
	std::chrono::duration<double, std::nano> all =
		std::chrono::steady_clock::now() - t0;
	return { issue.count() / n, all.count() / n };
}

PYBIND11_MODULE(_C, m)
{
	m.doc() = "trn's PyTorch backend (Documentation/pytorch.md)";
	m.def("bench_aten_add", [](const std::string &device, int n,
				   int64_t rows, int64_t cols) {
		py::gil_scoped_release nogil;

		return bench_aten_add(device, n, rows, cols);
	});
	m.def("device_count", [] { return device_count(); });
	m.def("current_device", [] { return current_device(); });
	m.def("set_device", [](int i) { set_current_device(i); });
	m.def("synchronize", [](int i) {
		py::gil_scoped_release nogil;

		synchronize(checked_index(i));
	}, py::arg("device") = -1);
	m.def("memory_allocated", [](int i) { return stats_of(i).allocated; },
	      py::arg("device") = -1);
	m.def("memory_reserved", [](int i) { return stats_of(i).reserved; },
	      py::arg("device") = -1);
	m.def("max_memory_allocated",
	      [](int i) { return stats_of(i).peak_allocated; },
	      py::arg("device") = -1);
	m.def("empty_cache", [](int i) {
		std::lock_guard<std::recursive_mutex> g(runtime_lock());

		check(eager_empty_cache(eager_dev(checked_index(i))),
		      "empty_cache");
	}, py::arg("device") = -1);
	/* Streams travel as c10::Stream::pack3(): (stream_id, index, type). */
	m.def("current_stream", [](int i) {
		c10::StreamData3 d = current_stream(checked_index(i)).pack3();

		return py::make_tuple(d.stream_id, d.device_index,
				      static_cast<int>(d.device_type));
	}, py::arg("device") = -1);
	m.def("set_stream", [](int64_t id, int i) {
		c10::Device d(c10::DeviceType::PrivateUse1,
			      static_cast<c10::DeviceIndex>(checked_index(i)));

		exchange_stream(c10::Stream(c10::Stream::UNSAFE, d, id));
	}, py::arg("stream_id"), py::arg("device"));
	/* The default generators; torch.Generator("trn") makes others. */
	m.def("manual_seed", [](int i, uint64_t seed) {
		at::Generator &g = default_generator(checked_index(i));
		std::lock_guard<std::mutex> l(g.mutex());

		g.set_current_seed(seed);
	}, py::arg("device"), py::arg("seed"));
	m.def("seed", [](int i) {
		at::Generator &g = default_generator(checked_index(i));
		std::lock_guard<std::mutex> l(g.mutex());

		return g.seed();
	}, py::arg("device") = -1);
	m.def("initial_seed", [](int i) {
		at::Generator &g = default_generator(checked_index(i));
		std::lock_guard<std::mutex> l(g.mutex());

		return g.current_seed();
	}, py::arg("device") = -1);
	m.def("get_rng_state", [](int i) {
		at::Generator &g = default_generator(checked_index(i));
		std::lock_guard<std::mutex> l(g.mutex());

		return g.get_state();
	}, py::arg("device") = -1);
	m.def("set_rng_state", [](const at::Tensor &state, int i) {
		at::Generator &g = default_generator(checked_index(i));
		std::lock_guard<std::mutex> l(g.mutex());

		g.set_state(state);
	}, py::arg("state"), py::arg("device") = -1);
	m.def("device_op_counts", [] { return device_op_counts(); });
	m.def("fallback_counts", [] { return fallback_counts(); });
	m.def("reset_counts", [] { reset_counts(); });
	m.def("bench_eager_add", &bench_eager_add, py::arg("device"),
	      py::arg("n"), py::arg("rows"), py::arg("cols"));
}
