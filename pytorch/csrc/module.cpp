// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * module.cpp - torch_trn._C: what torch_trn's Python code calls (device
 * count and selection, synchronisation, the allocator's figures, where
 * operators ran).
 */
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

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

PYBIND11_MODULE(_C, m)
{
	m.doc() = "trn's PyTorch backend (Documentation/pytorch.md)";
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
	m.def("device_op_counts", [] { return device_op_counts(); });
	m.def("fallback_counts", [] { return fallback_counts(); });
	m.def("reset_counts", [] { reset_counts(); });
}
