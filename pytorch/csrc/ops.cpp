// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * ops.cpp - the aten operators trn runs: factories and views, copies, and
 * device kernels for what the ISA executes (through the eager runtime's
 * operations). Every other operator, and every case a kernel here does
 * not take (a dtype, a layout, a broadcast the ISA has no form for), runs
 * through the counted CPU fallback; TRN_FALLBACK=error makes that an
 * error instead.
 */
#include <cstdlib>
#include <cstring>
#include <unordered_map>
#include <vector>

#include <ATen/Operators.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/view_native.h>
#include <ATen/native/Resize.h>
#include <ATen/EmptyTensor.h>
#include <ATen/core/Reduction.h>
#include <torch/library.h>

#include "trn_torch.h"

namespace trn_torch {

/*
 * Device kernels are counted by the address of their name (a literal), so
 * that counting costs no string per operator; fallbacks by name.
 */
static std::unordered_map<const char *, uint64_t> device_ops;
static std::map<std::string, uint64_t> fallbacks;

void count_device_op(const char *name)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());

	device_ops[name]++;
}

std::map<std::string, uint64_t> device_op_counts()
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());
	std::map<std::string, uint64_t> named;

	for (const auto &e : device_ops)
		named[e.first] += e.second;
	return named;
}

std::map<std::string, uint64_t> fallback_counts()
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());

	return fallbacks;
}

void reset_counts()
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());

	device_ops.clear();
	fallbacks.clear();
}

static bool fallback_is_error()
{
	const char *v = getenv("TRN_FALLBACK");

	return v && !strcmp(v, "error");
}

static void cpu_fallback(const c10::OperatorHandle &op,
			 torch::jit::Stack *stack)
{
	const std::string name = c10::toString(op.schema().operator_name());

	TORCH_CHECK(!fallback_is_error(), "trn: ", name,
		    " has no trn kernel for these arguments (TRN_FALLBACK=error)");
	{
		std::lock_guard<std::recursive_mutex> g(runtime_lock());

		fallbacks[name]++;
	}
	at::native::cpu_fallback(op, stack);
}

template <class Op, class... Args>
static decltype(auto) fall_back(Args &&...args)
{
	return at::native::call_fallback_fn<&cpu_fallback, Op>::call(
		std::forward<Args>(args)...);
}

static c10::DispatchKeySet trn_keys()
{
	return c10::DispatchKeySet(c10::DispatchKey::PrivateUse1);
}

static bool eager_dtype_of(at::ScalarType t, enum eager_dtype *out)
{
	if (t == at::kFloat)
		*out = EAGER_F32;
	else if (t == at::kBFloat16)
		*out = EAGER_BF16;
	else
		return false;
	return true;
}

/*
 * A header over a contiguous trn tensor's bytes, as rows x cols (the last
 * dimension; 1-D: one row). False if the tensor is not contiguous, empty,
 * of another dtype than f32/bf16, or more than 4-D.
 */
static bool as_eager(const at::Tensor &t, eager_tensor_t *out,
		     int64_t rows = -1, int64_t cols = -1)
{
	enum eager_dtype dt;
	int64_t shape[2];

	if (!t.is_privateuseone() || !t.is_contiguous() || !t.numel() ||
	    !eager_dtype_of(t.scalar_type(), &dt))
		return false;
	if (rows < 0) {
		cols = t.dim() ? t.size(-1) : 1;
		rows = t.numel() / cols;
	}
	shape[0] = rows;
	shape[1] = cols;
	return !eager_view(block_of(t), byte_offset(t), dt, 2, shape, out);
}

/* ---- factories and views ---- */

/*
 * A new contiguous tensor on @like's device (the caller holds a guard for
 * it), straight from the allocator: the kernels' outputs skip a second
 * trip through the dispatcher.
 */
static at::Tensor new_tensor(at::IntArrayRef size, const at::Tensor &like,
			     std::optional<at::ScalarType> dtype = std::nullopt)
{
	return at::detail::empty_generic(size, allocator(), trn_keys(),
					 dtype.value_or(like.scalar_type()),
					 std::nullopt);
}

static at::Tensor trn_empty(at::IntArrayRef size,
			    std::optional<at::ScalarType> dtype,
			    std::optional<at::Layout> layout,
			    std::optional<at::Device> device,
			    std::optional<bool> pin_memory,
			    std::optional<at::MemoryFormat> memory_format)
{
	const c10::DeviceGuard guard(device.value_or(
		c10::Device(c10::DeviceType::PrivateUse1, current_device())));

	return at::detail::empty_generic(size, allocator(), trn_keys(),
					 c10::dtype_or_default(dtype),
					 memory_format);
}

static at::Tensor trn_empty_strided(at::IntArrayRef size,
				    at::IntArrayRef stride,
				    std::optional<at::ScalarType> dtype,
				    std::optional<at::Layout> layout,
				    std::optional<at::Device> device,
				    std::optional<bool> pin_memory)
{
	const c10::DeviceGuard guard(device.value_or(
		c10::Device(c10::DeviceType::PrivateUse1, current_device())));

	return at::detail::empty_strided_generic(size, stride, allocator(),
						 trn_keys(),
						 c10::dtype_or_default(dtype));
}

/* Contents of the whole storage of trn tensor @t, as a CPU byte tensor. */
static at::Tensor download_storage(const at::Tensor &t)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());
	const c10::DeviceGuard guard(t.device());
	size_t n = t.storage().nbytes();
	at::Tensor host = at::empty({ static_cast<int64_t>(n) },
				    at::TensorOptions().dtype(at::kByte));

	if (n)
		check(eager_raw_read(block_of(t), 0, host.data_ptr(), n),
		      "copy to the host");
	return host;
}

static void upload_storage(const at::Tensor &t, const at::Tensor &host)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());
	const c10::DeviceGuard guard(t.device());
	size_t n = t.storage().nbytes();

	if (n)
		check(eager_raw_write(block_of(t), 0, host.data_ptr(), n),
		      "copy to the device");
}

/* A CPU view, with @t's sizes, strides and offset, over a storage image. */
static at::Tensor host_view(const at::Tensor &t, const at::Tensor &image)
{
	return image.view(t.scalar_type())
		.as_strided(t.sizes(), t.strides(), t.storage_offset());
}

/* @dst (trn) = @src (cpu), any layout and dtype. */
static void copy_to_device(const at::Tensor &dst, const at::Tensor &src)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());
	const c10::DeviceGuard guard(dst.device());

	if (dst.is_contiguous()) {
		at::Tensor s = src.to(dst.scalar_type()).contiguous();

		check(eager_raw_write(block_of(dst), byte_offset(dst),
				      s.data_ptr(), dst.nbytes()),
		      "copy to the device");
		count_device_op("copy_h2d");
		return;
	}
	/* Strided: through an image of the whole storage. */
	at::Tensor image = download_storage(dst);

	host_view(dst, image).copy_(src);
	upload_storage(dst, image);
	count_device_op("copy_h2d_strided");
}

/* @dst (cpu) = @src (trn); synchronous. */
static void copy_to_host(const at::Tensor &dst, const at::Tensor &src)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());
	const c10::DeviceGuard guard(src.device());

	if (src.is_contiguous()) {
		at::Tensor h = at::empty(src.sizes(),
					 src.options().device(at::kCPU));

		check(eager_raw_read(block_of(src), byte_offset(src),
				     h.data_ptr(), src.nbytes()),
		      "copy to the host");
		dst.copy_(h);
		count_device_op("copy_d2h");
		return;
	}
	dst.copy_(host_view(src, download_storage(src)));
	count_device_op("copy_d2h_strided");
}

static at::Tensor trn_copy_from(const at::Tensor &self, const at::Tensor &dst,
				bool non_blocking)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());

	TORCH_CHECK(self.sizes() == dst.sizes(), "trn: copy_ between sizes ",
		    self.sizes(), " and ", dst.sizes());
	if (!self.numel())
		return dst;
	if (self.is_cpu()) {
		copy_to_device(dst, self);
	} else if (dst.is_cpu()) {
		copy_to_host(dst, self);
	} else if (self.device() == dst.device() &&
		   self.scalar_type() == dst.scalar_type() &&
		   self.is_contiguous() && dst.is_contiguous()) {
		const c10::DeviceGuard guard(dst.device());

		check(eager_raw_copy(block_of(dst), byte_offset(dst),
				     block_of(self), byte_offset(self),
				     dst.nbytes()),
		      "copy");
		count_device_op("copy_d2d");
	} else {
		/* Another device, dtype or layout: through the host. */
		at::Tensor h = at::empty(self.sizes(),
					 self.options().device(at::kCPU));

		copy_to_host(h, self);
		copy_to_device(dst, h);
	}
	return dst;
}

static at::Tensor trn_copy_from_and_resize(const at::Tensor &self,
					   const at::Tensor &dst)
{
	dst.resize_(self.sizes());
	return trn_copy_from(self, dst, false);
}

static const at::Tensor &trn_resize(const at::Tensor &self,
				    at::IntArrayRef size,
				    std::optional<at::MemoryFormat> format)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());
	const c10::DeviceGuard guard(self.device());
	auto *impl = self.unsafeGetTensorImpl();
	uint64_t need;

	TORCH_CHECK(!format || *format == at::MemoryFormat::Contiguous,
		    "trn: resize_ supports only the contiguous memory format");
	/* Same sizes: nothing changes, not even a view's strides. */
	if (self.sizes() == size)
		return self;
	impl->set_sizes_contiguous(size);
	need = (static_cast<uint64_t>(impl->storage_offset()) +
		static_cast<uint64_t>(impl->numel())) * self.element_size();
	if (need > self.storage().nbytes()) {
		c10::Storage st = self.storage();
		c10::DataPtr p = allocator()->allocate(need);
		size_t old = st.nbytes();

		if (old)
			check(eager_raw_copy(static_cast<struct eager_block *>(
						     p.get_context()), 0,
					     block_of(self), 0, old),
			      "resize_");
		st.set_data_ptr_noswap(std::move(p));
		st.set_nbytes(need);
	}
	return self;
}

/* `.item()`: one element to the host, waiting for the stream. */
static at::Scalar trn_item(const at::Tensor &self)
{
	at::Tensor h = at::empty(self.sizes(), self.options().device(at::kCPU));

	TORCH_CHECK(self.numel() == 1, "trn: item() of a tensor with ",
		    self.numel(), " elements");
	copy_to_host(h, self);
	return h.item();
}

/* ---- device kernels ---- */

static void fill_on_device(const at::Tensor &self, float v)
{
	eager_tensor_t t;

	check(eager_view(block_of(self), byte_offset(self),
			 self.scalar_type() == at::kFloat ? EAGER_F32 :
							    EAGER_BF16,
			 1, std::array<int64_t, 1>{ self.numel() }.data(), &t),
	      "fill_");
	check(eager_fill(&t, v), "fill_");
}

/*
 * FILL writes whole words: a bf16 tensor of odd length would touch the
 * element after it, which may belong to another view of the storage.
 */
static bool fill_fits(const at::Tensor &self)
{
	eager_tensor_t t;

	return as_eager(self, &t) &&
	       (self.scalar_type() == at::kFloat || !(self.numel() & 1));
}

static at::Tensor &trn_fill(at::Tensor &self, const at::Scalar &value)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());

	if (!self.numel())
		return self;
	if (!fill_fits(self))
		return fall_back<ATEN_OP2(fill_, Scalar)>(self, value);
	const c10::DeviceGuard guard(self.device());

	fill_on_device(self, value.toFloat());
	count_device_op("fill_");
	return self;
}

static at::Tensor &trn_zero(at::Tensor &self)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());

	if (!self.numel())
		return self;
	if (!fill_fits(self))
		return fall_back<ATEN_OP(zero_)>(self);
	const c10::DeviceGuard guard(self.device());

	fill_on_device(self, 0.0f);
	count_device_op("zero_");
	return self;
}

typedef int (*binary_fn)(eager_tensor_t *, const eager_tensor_t *,
			 const eager_tensor_t *);

/*
 * a op b with f32 operands where the ISA has the broadcast: b of a's
 * shape, b a row broadcast over a's rows ([cols]), one value per row
 * ([..., rows, 1]) or a single element. Empty optional: not ours.
 */
static std::optional<at::Tensor> binary_on_device(const at::Tensor &a,
						  const at::Tensor &b,
						  binary_fn fn, const char *name,
						  double alpha = 1.0,
						  bool in_place = false)
{
	eager_tensor_t ta, tb, to, ts;
	int64_t rows, cols;
	at::Tensor scaled;

	if (!a.is_privateuseone() || !b.is_privateuseone() ||
	    a.device() != b.device() || a.scalar_type() != at::kFloat ||
	    b.scalar_type() != at::kFloat || !a.is_contiguous() ||
	    !b.is_contiguous() || !a.numel() || a.dim() < 1 ||
	    a.dim() < b.dim())
		return std::nullopt;
	cols = a.size(-1);
	rows = a.numel() / cols;
	if (b.sizes() == a.sizes()) {
		if (!as_eager(b, &tb, rows, cols))
			return std::nullopt;
	} else if (b.numel() == 1) {
		if (!as_eager(b, &tb, 1, 1))
			return std::nullopt;
	} else if (b.dim() == 1 && b.size(0) == cols) {
		if (!as_eager(b, &tb, 1, cols))
			return std::nullopt;
	} else if (a.dim() == 2 && b.dim() == 2 && b.size(0) == rows &&
		   b.size(1) == 1) {
		if (!as_eager(b, &tb, rows, 1))
			return std::nullopt;
	} else {
		return std::nullopt;
	}
	const c10::DeviceGuard guard(a.device());
	at::Tensor out = in_place ? a : new_tensor(a.sizes(), a);

	if (!as_eager(a, &ta, rows, cols) || !as_eager(out, &to, rows, cols))
		return std::nullopt;
	if (alpha != 1.0) {
		/* a + alpha * b: scale b first (SCALE is a BINARY MUL). */
		scaled = new_tensor(b.sizes(), b);
		as_eager(scaled, &ts, tb.shape[0], tb.shape[1]);
		check(eager_scale(&ts, &tb, static_cast<float>(alpha)), name);
		tb = ts;
	}
	check(fn(&to, &ta, &tb), name);
	count_device_op(name);
	return out;
}

static at::Tensor trn_add(const at::Tensor &a, const at::Tensor &b,
			  const at::Scalar &alpha)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());

	if (auto r = binary_on_device(a, b, eager_add, "add", alpha.toDouble()))
		return *r;
	return fall_back<ATEN_OP2(add, Tensor)>(a, b, alpha);
}

/* In place (SGD's p.add_(g, alpha=-lr)); b may not overlap a. */
static at::Tensor &trn_add_(at::Tensor &a, const at::Tensor &b,
			    const at::Scalar &alpha)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());

	if (!b.is_privateuseone() || !a.is_privateuseone() ||
	    block_of(a) != block_of(b) || a.is_same(b))
		if (binary_on_device(a, b, eager_add, "add_", alpha.toDouble(),
				     true))
			return a;
	return fall_back<ATEN_OP2(add_, Tensor)>(a, b, alpha);
}

static at::Tensor trn_sub(const at::Tensor &a, const at::Tensor &b,
			  const at::Scalar &alpha)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());

	if (auto r = binary_on_device(a, b, eager_sub, "sub", alpha.toDouble()))
		return *r;
	return fall_back<ATEN_OP2(sub, Tensor)>(a, b, alpha);
}

static at::Tensor trn_mul(const at::Tensor &a, const at::Tensor &b)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());

	if (auto r = binary_on_device(a, b, eager_mul, "mul"))
		return *r;
	return fall_back<ATEN_OP2(mul, Tensor)>(a, b);
}

static at::Tensor trn_div(const at::Tensor &a, const at::Tensor &b)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());

	if (auto r = binary_on_device(a, b, eager_div, "div"))
		return *r;
	return fall_back<ATEN_OP2(div, Tensor)>(a, b);
}

/* A 2-D operand as stored: itself, or the transpose of a contiguous one. */
static bool matmul_operand(const at::Tensor &t, eager_tensor_t *out,
			   bool *trans)
{
	if (t.dim() != 2 || !t.is_privateuseone() || !t.numel())
		return false;
	if (t.is_contiguous()) {
		*trans = false;
		return as_eager(t, out);
	}
	if (t.stride(0) == 1 && t.stride(1) == t.size(0)) {
		*trans = true;
		return as_eager(t.t(), out);
	}
	return false;
}

/* a @ b in f32 (bf16 inputs: the f32 result rounded), or not ours. */
static std::optional<at::Tensor> mm_on_device(const at::Tensor &a,
					      const at::Tensor &b)
{
	eager_tensor_t ta, tb, to;
	bool trans_a, trans_b;
	uint32_t flags;

	if (a.scalar_type() != b.scalar_type() || a.device() != b.device() ||
	    !matmul_operand(a, &ta, &trans_a) ||
	    !matmul_operand(b, &tb, &trans_b) || a.size(1) != b.size(0))
		return std::nullopt;
	const c10::DeviceGuard guard(a.device());
	at::Tensor out = new_tensor({ a.size(0), b.size(1) }, a, at::kFloat);

	as_eager(out, &to);
	flags = (trans_a ? EAGER_TRANS_A : 0) | (trans_b ? EAGER_TRANS_B : 0);
	check(eager_matmul(&to, &ta, &tb, flags), "mm");
	count_device_op("mm");
	if (a.scalar_type() == at::kFloat)
		return out;
	at::Tensor o16 = new_tensor(out.sizes(), a);
	eager_tensor_t t16;

	as_eager(o16, &t16);
	check(eager_cast(&t16, &to), "mm");
	return o16;
}

static at::Tensor trn_mm(const at::Tensor &a, const at::Tensor &b)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());

	if (auto r = mm_on_device(a, b))
		return *r;
	return fall_back<ATEN_OP(mm)>(a, b);
}

static at::Tensor trn_addmm(const at::Tensor &bias, const at::Tensor &a,
			    const at::Tensor &b, const at::Scalar &beta,
			    const at::Scalar &alpha)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());

	if (beta.toDouble() == 1.0 && alpha.toDouble() == 1.0 &&
	    a.scalar_type() == at::kFloat) {
		if (auto r = mm_on_device(a, b)) {
			at::Tensor out = *r;

			if (auto s = binary_on_device(out, bias, eager_add,
						      "addmm"))
				return *s;
		}
	}
	return fall_back<ATEN_OP(addmm)>(bias, a, b, beta, alpha);
}

typedef int (*unary_fn)(eager_tensor_t *, const eager_tensor_t *);

static std::optional<at::Tensor> unary_on_device(const at::Tensor &x,
						 unary_fn fn, const char *name)
{
	eager_tensor_t tx, to;

	if (x.scalar_type() != at::kFloat || !as_eager(x, &tx))
		return std::nullopt;
	const c10::DeviceGuard guard(x.device());
	at::Tensor out = new_tensor(x.sizes(), x);

	as_eager(out, &to);
	check(fn(&to, &tx), name);
	count_device_op(name);
	return out;
}

static at::Tensor trn_relu(const at::Tensor &x)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());

	if (auto r = unary_on_device(x, eager_relu, "relu"))
		return *r;
	return fall_back<ATEN_OP(relu)>(x);
}

static at::Tensor trn_exp(const at::Tensor &x)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());

	if (auto r = unary_on_device(x, eager_exp, "exp"))
		return *r;
	return fall_back<ATEN_OP(exp)>(x);
}

static at::Tensor trn_threshold_backward(const at::Tensor &grad,
					 const at::Tensor &self,
					 const at::Scalar &threshold)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());
	eager_tensor_t tg, ts, to;

	if (threshold.toDouble() == 0.0 && grad.scalar_type() == at::kFloat &&
	    self.scalar_type() == at::kFloat && grad.sizes() == self.sizes() &&
	    grad.device() == self.device() && as_eager(grad, &tg) &&
	    as_eager(self, &ts)) {
		const c10::DeviceGuard guard(grad.device());
		at::Tensor out = new_tensor(grad.sizes(), grad);

		as_eager(out, &to);
		check(eager_relu_backward(&to, &tg, &ts), "threshold_backward");
		count_device_op("threshold_backward");
		return out;
	}
	return fall_back<ATEN_OP(threshold_backward)>(grad, self, threshold);
}

/* Sum over the rows of a contiguous f32 [rows][cols] view: out[rows]. */
static at::Tensor row_sums(const at::Tensor &x, int64_t rows, int64_t cols)
{
	eager_tensor_t tx, to;
	at::Tensor out = new_tensor({ rows }, x);

	as_eager(x, &tx, rows, cols);
	as_eager(out, &to, 1, rows);
	check(eager_sum(&to, &tx, -1), "sum");
	return out;
}

/* Every element of contiguous f32 @x summed, as a 1-element tensor. */
static at::Tensor sum_all(const at::Tensor &x)
{
	int64_t cols = x.dim() ? x.size(-1) : 1;
	at::Tensor r = row_sums(x, x.numel() / cols, cols);

	return r.numel() == 1 ? r : row_sums(r, 1, r.numel());
}

static bool f32_on_trn(const at::Tensor &x)
{
	eager_tensor_t t;

	return x.scalar_type() == at::kFloat && as_eager(x, &t);
}

static at::Tensor trn_sum_dim(const at::Tensor &x, at::OptionalIntArrayRef dim,
			      bool keepdim, std::optional<at::ScalarType> dtype)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());
	eager_tensor_t tx, to;

	if (!f32_on_trn(x) || (dtype && *dtype != at::kFloat))
		return fall_back<ATEN_OP2(sum, dim_IntList)>(x, dim, keepdim,
							     dtype);
	const c10::DeviceGuard guard(x.device());

	/* No dims (or all of them): everything. */
	if (!dim || dim->empty() ||
	    (x.dim() == 1 && dim->size() == 1 &&
	     ((*dim)[0] == 0 || (*dim)[0] == -1))) {
		at::Tensor r = sum_all(x);
		std::vector<int64_t> shape(keepdim ? x.dim() : 0, 1);

		count_device_op("sum");
		return r.view(shape);
	}
	if (x.dim() == 2 && dim->size() == 1) {
		int64_t d = (*dim)[0] < 0 ? (*dim)[0] + 2 : (*dim)[0];

		if (d == 0 || d == 1) {
			int64_t n = x.size(1 - d);
			at::Tensor out = new_tensor({ n }, x);

			as_eager(x, &tx);
			as_eager(out, &to, 1, n);
			check(eager_sum(&to, &tx, d ? -1 : 0), "sum");
			count_device_op("sum");
			if (keepdim)
				return d ? out.view({ n, 1 }) : out.view({ 1, n });
			return out;
		}
	}
	return fall_back<ATEN_OP2(sum, dim_IntList)>(x, dim, keepdim, dtype);
}

/* out = x * alpha, f32 contiguous. */
static at::Tensor scaled(const at::Tensor &x, double alpha)
{
	eager_tensor_t tx, to;
	at::Tensor out = new_tensor(x.sizes(), x);

	as_eager(x, &tx);
	as_eager(out, &to);
	check(eager_scale(&to, &tx, static_cast<float>(alpha)), "scale");
	return out;
}

static bool mse_fits(const at::Tensor &self, const at::Tensor &target,
		     int64_t reduction)
{
	return reduction == at::Reduction::Mean && self.dim() >= 1 &&
	       self.numel() &&
	       self.sizes() == target.sizes() &&
	       self.device() == target.device() && f32_on_trn(self) &&
	       f32_on_trn(target);
}

/* mean((self - target)^2) with sub, mul, two row sums and a scale. */
static at::Tensor trn_mse_loss(const at::Tensor &self, const at::Tensor &target,
			       int64_t reduction)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());

	if (!mse_fits(self, target, reduction))
		return fall_back<ATEN_OP(mse_loss)>(self, target, reduction);
	const c10::DeviceGuard guard(self.device());
	at::Tensor d = *binary_on_device(self, target, eager_sub, "sub");
	at::Tensor sq = *binary_on_device(d, d, eager_mul, "mul");
	at::Tensor loss = scaled(sum_all(sq), 1.0 / self.numel());

	count_device_op("mse_loss");
	return loss.view(at::IntArrayRef());
}

/* d loss / d self = grad * 2 (self - target) / numel. */
static at::Tensor trn_mse_loss_backward(const at::Tensor &grad,
					const at::Tensor &self,
					const at::Tensor &target,
					int64_t reduction)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());

	if (!mse_fits(self, target, reduction) || grad.numel() != 1 ||
	    !f32_on_trn(grad) || grad.device() != self.device())
		return fall_back<ATEN_OP(mse_loss_backward)>(grad, self, target,
							     reduction);
	const c10::DeviceGuard guard(self.device());
	at::Tensor d = *binary_on_device(self, target, eager_sub, "sub");
	at::Tensor gd = *binary_on_device(d, grad.reshape({ 1 }), eager_mul,
					  "mul");

	count_device_op("mse_loss_backward");
	return scaled(gd, 2.0 / self.numel());
}

static at::Tensor trn_gelu(const at::Tensor &x, c10::string_view approximate)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());

	/* The ISA's GELU is the tanh form; PyTorch's default is erf's. */
	if (approximate == "tanh")
		if (auto r = unary_on_device(x, eager_gelu, "gelu"))
			return *r;
	return fall_back<ATEN_OP(gelu)>(x, approximate);
}

static at::Tensor trn_softmax(const at::Tensor &x, int64_t dim,
			      bool half_to_float)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());

	if (!half_to_float && x.dim() >= 1 &&
	    (dim == -1 || dim == x.dim() - 1))
		if (auto r = unary_on_device(x, eager_softmax, "softmax"))
			return *r;
	return fall_back<ATEN_OP(_softmax)>(x, dim, half_to_float);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m)
{
	m.impl("empty.memory_format", trn_empty);
	m.impl("empty_strided", trn_empty_strided);
	m.impl("as_strided", at::native::as_strided_tensorimpl);
	m.impl("view", at::native::view);
	m.impl("_reshape_alias", at::native::_reshape_alias);
	m.impl("resize_", trn_resize);
	m.impl("_copy_from", trn_copy_from);
	m.impl("_copy_from_and_resize", trn_copy_from_and_resize);
	m.impl("fill_.Scalar", trn_fill);
	m.impl("zero_", trn_zero);
	m.impl("add.Tensor", trn_add);
	m.impl("add_.Tensor", trn_add_);
	m.impl("sub.Tensor", trn_sub);
	m.impl("_local_scalar_dense", trn_item);
	m.impl("mul.Tensor", trn_mul);
	m.impl("div.Tensor", trn_div);
	m.impl("mm", trn_mm);
	m.impl("addmm", trn_addmm);
	m.impl("relu", trn_relu);
	m.impl("exp", trn_exp);
	m.impl("threshold_backward", trn_threshold_backward);
	m.impl("sum.dim_IntList", trn_sum_dim);
	m.impl("mse_loss", trn_mse_loss);
	m.impl("mse_loss_backward", trn_mse_loss_backward);
	m.impl("gelu", trn_gelu);
	m.impl("_softmax", trn_softmax);
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m)
{
	m.fallback(torch::CppFunction::makeFromBoxedFunction<&cpu_fallback>());
}

} // namespace trn_torch
