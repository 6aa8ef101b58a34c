// SPDX-License-Identifier: MIT
/*
 * Copyright (c) 2026 The trn authors
 *
 * ops.cpp - where operators run: the counters, the CPU fallback (counted
 * per operator; TRN_FALLBACK=error refuses it), the names device work is
 * recorded under, and the operators that are not math: factories, views,
 * resize_, copies, fill_/zero_ and .item(). The device kernels are in
 * math.cpp. Every operator neither file registers, and every case a
 * kernel does not take (a dtype, a layout, a broadcast the ISA has no form
 * for), runs through the fallback.
 */
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <unordered_map>
#include <vector>

#include <ATen/Operators.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/as_strided_native.h>
#include <ATen/ops/set_native.h>
#include <ATen/ops/view_native.h>
#include <ATen/native/Resize.h>
#include <ATen/EmptyTensor.h>
#include <torch/library.h>

#include "ops.h"

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

/*
 * A random operator through the fallback draws from its trn generator's
 * CPU generator (generator.cpp), or from its device's default generator
 * when it was given none: the CPU kernel would take the CPU's otherwise,
 * and refuse a trn one.
 */
static void use_cpu_generators(const c10::OperatorHandle &op,
			       torch::jit::Stack *stack)
{
	const auto &args = op.schema().arguments();
	size_t n = args.size(), base, i;
	int device = -1;

	if (stack->size() < n)
		return;
	base = stack->size() - n;
	for (i = 0; i < n && device < 0; i++) {
		const c10::IValue &v = (*stack)[base + i];

		if (v.isTensor() && v.toTensor().defined() &&
		    v.toTensor().device().type() == c10::DeviceType::PrivateUse1)
			device = v.toTensor().device().index();
	}
	for (i = 0; i < n; i++) {
		c10::TypePtr t = args[i].type();
		c10::IValue &v = (*stack)[base + i];

		if (auto o = t->cast<c10::OptionalType>())
			t = o->getElementType();
		if (t->kind() != c10::TypeKind::GeneratorType)
			continue;
		if (v.isGenerator())
			v = c10::IValue(cpu_generator_of(v.toGenerator()));
		else if (v.isNone() && device >= 0)
			v = c10::IValue(cpu_generator_of(default_generator(device)));
	}
}

void cpu_fallback(const c10::OperatorHandle &op, torch::jit::Stack *stack)
{
	const std::string name = c10::toString(op.schema().operator_name());

	TORCH_CHECK(!fallback_is_error(), "trn: ", name,
		    " has no trn kernel for these arguments (TRN_FALLBACK=error)");
	{
		std::lock_guard<std::recursive_mutex> g(runtime_lock());

		fallbacks[name]++;
	}
	use_cpu_generators(op, stack);
	at::native::cpu_fallback(op, stack);
}

/* The name device work is recorded under (eager_set_op_name). */
static const char *current_op;

OpName::OpName(const char *name) : outer_(current_op)
{
	current_op = name;
	eager_set_op_name(name);
}

OpName::~OpName()
{
	current_op = outer_;
	eager_set_op_name(outer_);
}

const char *OpName::current()
{
	return current_op ? current_op : "trn";
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

bool has_cap(const at::Tensor &x, uint64_t cap)
{
	uint64_t caps = 0;

	return x.is_privateuseone() &&
	       !eager_device_capabilities(eager_dev(x.device().index()),
					  &caps) &&
	       (caps & cap) == cap;
}

bool as_eager(const at::Tensor &t, eager_tensor_t *out, int64_t rows,
	      int64_t cols)
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

at::Tensor new_tensor(at::IntArrayRef size, const at::Tensor &like,
		      std::optional<at::ScalarType> dtype)
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

/*
 * A read to the host of trn tensor @t has waited (@ret) for the current
 * stream: the device-side checks that stream computed are due.
 */
static void read_done(const at::Tensor &t, int ret)
{
	const int index = t.device().index();

	run_checks(index, eager_current_stream(eager_dev(index)), ret < 0);
	check(ret, "copy to the host");
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
		read_done(t, eager_raw_read(block_of(t), 0, host.data_ptr(), n));
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

/*
 * Between trn tensor @d and CPU tensor @h in pinned memory of @d's device,
 * both contiguous, one dtype: the device's COPY alone, no staging copy.
 * With @wait, until the stream has run it (errors raised); without, the
 * caller synchronises (non_blocking=True). False if they are no such pair.
 */
static bool pinned_copy(const at::Tensor &d, const at::Tensor &h,
			bool to_device, bool wait)
{
	uint64_t off;
	struct eager_block *b;

	if (!d.is_contiguous() || !h.is_contiguous() ||
	    d.scalar_type() != h.scalar_type())
		return false;
	b = pinned_block_of(h.data_ptr(), &off);
	if (!b || eager_block_device(b).index !=
			  static_cast<unsigned int>(d.device().index()))
		return false;
	if (to_device)
		check(eager_raw_copy(block_of(d), byte_offset(d), b, off,
				     d.nbytes()),
		      "copy to the device");
	else
		check(eager_raw_copy(b, off, block_of(d), byte_offset(d),
				     d.nbytes()),
		      "copy to the host");
	if (wait && !to_device)
		read_done(d, eager_stream_synchronize(eager_current_stream(
				     eager_dev(d.device().index()))));
	else if (wait)
		check(eager_stream_synchronize(eager_current_stream(
			      eager_dev(d.device().index()))),
		      "copy to the device");
	count_device_op(to_device ? "copy_h2d_pinned" : "copy_d2h_pinned");
	return true;
}

/* COPY commands one strided copy may take before it goes through the host. */
static constexpr uint64_t kMaxCopyCommands = 1024;

/*
 * @dst = @src, two trn tensors of one device and dtype in any layouts
 * (@src may be expanded), by the device's 2-D COPYs on the current stream:
 * no host round trip. False, with nothing recorded, if that takes more
 * than kMaxCopyCommands commands or the two share bytes of one storage
 * (the caller copies through the host).
 */
static bool strided_on_device(const at::Tensor &dst, const at::Tensor &src)
{
	const c10::DeviceGuard guard(dst.device());
	int ret;

	if (dst.dim() > EAGER_COPY_MAX_DIMS)
		return false;
	ret = eager_raw_copy_strided(block_of(dst), byte_offset(dst),
				     dst.strides().data(), block_of(src),
				     byte_offset(src), src.strides().data(),
				     static_cast<int>(dst.dim()),
				     dst.sizes().data(), dst.element_size(),
				     kMaxCopyCommands);
	if (ret == -E2BIG || ret == -EINVAL)
		return false;
	check(ret, "copy");
	return true;
}

/* @dst (trn) = @src (cpu), any layout and dtype. */
static void copy_to_device(const at::Tensor &dst, const at::Tensor &src,
			   bool non_blocking)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());
	const c10::DeviceGuard guard(dst.device());

	/*
	 * Blocking copies are staged even from pinned memory: the caller may
	 * rewrite @src at once, and staging does not wait for the stream.
	 */
	if (non_blocking && pinned_copy(dst, src, true, false))
		return;
	if (dst.is_contiguous()) {
		at::Tensor s = src.to(dst.scalar_type()).contiguous();

		check(eager_raw_write(block_of(dst), byte_offset(dst),
				      s.data_ptr(), dst.nbytes()),
		      "copy to the device");
		count_device_op("copy_h2d");
		return;
	}
	/* Strided: staged contiguous, then laid out by the device ... */
	at::Tensor staged = new_tensor(dst.sizes(), dst);

	copy_to_device(staged, src, false);
	if (strided_on_device(dst, staged)) {
		count_device_op("copy_h2d_strided");
		return;
	}
	/* ... or through an image of the whole storage. */
	at::Tensor image = download_storage(dst);

	host_view(dst, image).copy_(src);
	upload_storage(dst, image);
	count_device_op("copy_h2d_strided");
}

/* @dst (cpu) = @src (trn); waits, unless non_blocking into pinned memory. */
static void copy_to_host(const at::Tensor &dst, const at::Tensor &src,
			 bool non_blocking)
{
	std::lock_guard<std::recursive_mutex> g(runtime_lock());
	const c10::DeviceGuard guard(src.device());

	if (pinned_copy(src, dst, false, !non_blocking))
		return;
	if (src.is_contiguous()) {
		at::Tensor h = at::empty(src.sizes(),
					 src.options().device(at::kCPU));

		read_done(src, eager_raw_read(block_of(src), byte_offset(src),
					      h.data_ptr(), src.nbytes()));
		dst.copy_(h);
		count_device_op("copy_d2h");
		return;
	}
	/* Strided: laid out contiguous by the device, then read ... */
	at::Tensor dense = new_tensor(src.sizes(), src);

	if (strided_on_device(dense, src)) {
		copy_to_host(dst, dense, false);
		return;
	}
	/* ... or through an image of the whole storage. */
	dst.copy_(host_view(src, download_storage(src)));
	count_device_op("copy_d2h_strided");
}

/*
 * @dst = @src on one trn device, same dtype, any layouts: one strided copy,
 * or two through a dense scratch tensor where both are views of one
 * storage (COPY leaves overlapping bytes unspecified). False, with
 * nothing recorded into @dst, where the device cannot lay them out.
 */
static bool relaid_on_device(const at::Tensor &dst, const at::Tensor &src)
{
	if (strided_on_device(dst, src))
		return true;
	at::Tensor scratch = new_tensor(src.sizes(), src);

	return strided_on_device(scratch, src) &&
	       strided_on_device(dst, scratch);
}

/*
 * @dst = @src on one trn device, f32 <-> bf16, or bool/uint8 -> f32/bf16
 * (on a device with TRN_CAP_SRC_U8: one UNARY reads the bytes as numbers,
 * exact), in any layouts: @src made dense if it is not, converted by the
 * device, laid out into @dst if it is not dense. False, with nothing
 * written to @dst, for other dtypes or layouts the device cannot copy
 * (the caller copies through the host).
 */
static bool cast_on_device(const at::Tensor &dst, const at::Tensor &src)
{
	auto f = [](at::ScalarType t) {
		return t == at::kFloat || t == at::kBFloat16;
	};
	const bool bytes = src.scalar_type() == at::kBool ||
			   src.scalar_type() == at::kByte;
	const c10::DeviceGuard guard(dst.device());
	at::Tensor from = src, to = dst;
	eager_tensor_t tf, tt;
	int ret;

	if (!f(dst.scalar_type()) || src.scalar_type() == dst.scalar_type() ||
	    !(f(src.scalar_type()) || (bytes && has_cap(dst, TRN_CAP_SRC_U8))))
		return false;
	if (!from.is_contiguous()) {
		from = new_tensor(src.sizes(), src);
		if (!strided_on_device(from, src))
			return false;
	}
	if (!to.is_contiguous())
		to = new_tensor(dst.sizes(), dst);
	if (bytes) {
		at::Tensor wide = to.scalar_type() == at::kFloat ?
					  to :
					  new_tensor(dst.sizes(), dst,
						     at::kFloat);

		ret = eager_raw_bytes_to_f32(block_of(wide), byte_offset(wide),
					     block_of(from), byte_offset(from),
					     static_cast<uint64_t>(from.numel()));
		if (ret == -EINVAL)
			return false;	/* one storage under both: host */
		check(ret, "copy");
		from = wide;
	}
	if (!from.is_same(to)) {
		if (!as_eager(from, &tf) || !as_eager(to, &tt))
			return false;
		ret = eager_cast(&tt, &tf);
		if (ret == -EINVAL)
			return false;	/* one storage under both: host */
		check(ret, "copy");
	}
	if (!to.is_same(dst) && !strided_on_device(dst, to)) {
		/* Converted, but too scattered to lay out: finish on the host. */
		at::Tensor h = at::empty(to.sizes(),
					 to.options().device(at::kCPU));

		copy_to_host(h, to, false);
		copy_to_device(dst, h, false);
	}
	return true;
}

static at::Tensor trn_copy_from(const at::Tensor &src, const at::Tensor &dst,
				bool non_blocking)
{
	KernelScope k("copy_");

	/*
	 * copy_ hands a backend's copies over unexpanded: broadcast here (an
	 * expanded trn source is a strided view, copied through the host).
	 */
	const at::Tensor self = src.sizes() == dst.sizes() ?
					src : src.expand(dst.sizes());

	if (!self.numel())
		return dst;
	if (self.is_cpu()) {
		copy_to_device(dst, self, non_blocking);
	} else if (dst.is_cpu()) {
		copy_to_host(dst, self, non_blocking);
	} else if (self.device() == dst.device() &&
		   self.scalar_type() == dst.scalar_type() &&
		   self.is_contiguous() && dst.is_contiguous()) {
		const c10::DeviceGuard guard(dst.device());

		check(eager_raw_copy(block_of(dst), byte_offset(dst),
				     block_of(self), byte_offset(self),
				     dst.nbytes()),
		      "copy");
		count_device_op("copy_d2d");
	} else if (self.device() == dst.device() &&
		   self.scalar_type() == dst.scalar_type() &&
		   relaid_on_device(dst, self)) {
		count_device_op("copy_d2d_strided");
	} else if (self.device() == dst.device() && cast_on_device(dst, self)) {
		count_device_op("copy_d2d_cast");
	} else {
		/* Another device, or what the device cannot lay out: host. */
		at::Tensor h = at::empty(self.sizes(),
					 self.options().device(at::kCPU));

		copy_to_host(h, self, false);
		copy_to_device(dst, h, false);
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
	KernelScope k("resize_");
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

/*
 * `set_(storage, offset, size, stride)`: @self becomes a view of a trn
 * storage of the same device, with PyTorch's checks (devices match, the
 * view within the storage, no negative strides), all made before anything
 * changes; empty @stride is contiguous. Nothing is copied or allocated.
 */
static at::Tensor &trn_set_storage(at::Tensor &self, at::Storage source,
				   int64_t offset, at::IntArrayRef size,
				   at::IntArrayRef stride)
{
	KernelScope k("set_");
	std::vector<int64_t> strides(stride.begin(), stride.end());

	TORCH_CHECK(source.device().type() == c10::DeviceType::PrivateUse1,
		    "trn: set_ needs a trn storage, not one on ",
		    source.device());
	if (!stride.data()) {
		int64_t step = 1;

		strides.resize(size.size());
		for (size_t i = size.size(); i-- > 0;) {
			strides[i] = step;
			step *= std::max<int64_t>(size[i], 1);
		}
	}
	TORCH_CHECK(strides.size() == size.size(), "trn: set_: ", size.size(),
		    " sizes but ", strides.size(), " strides");
	for (int64_t st : strides)
		TORCH_CHECK(st >= 0, "trn: set_: Negative strides are not "
			    "supported, got ", at::IntArrayRef(strides));
	TORCH_CHECK(offset >= 0, "trn: set_: invalid storage offset ", offset);
	at::native::checkInBoundsForStorage(size, at::IntArrayRef(strides),
					    offset, self.dtype(), source);
	at::native::checkSetStorage(self, std::move(source), offset, size,
				    at::IntArrayRef(strides));
	at::native::setStrided(self, size, at::IntArrayRef(strides), offset);
	count_device_op("set_");
	return self;
}

/* `set_()`: @self becomes an empty tensor over a new, empty storage. */
static at::Tensor &trn_set_empty(at::Tensor &self)
{
	KernelScope k("set_");
	/* The allocator tags the storage with the current device: @self's. */
	const c10::DeviceGuard guard(self.device());
	c10::Storage empty(c10::Storage::use_byte_size_t(), 0,
			   allocator()->allocate(0), allocator(), true);
	const int64_t size[1] = { 0 };

	return trn_set_storage(self, std::move(empty), 0, size, {});
}

/* `.item()`: one element to the host, waiting for the stream. */
static at::Scalar trn_item(const at::Tensor &self)
{
	KernelScope k("item");
	at::Tensor h = at::empty(self.sizes(), self.options().device(at::kCPU));

	TORCH_CHECK(self.numel() == 1, "trn: item() of a tensor with ",
		    self.numel(), " elements");
	copy_to_host(h, self, false);
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

/* Contiguous f32 or bf16 (eager_fill() keeps a bf16 view's neighbours). */
static bool fill_fits(const at::Tensor &self)
{
	eager_tensor_t t;

	return as_eager(self, &t);
}

static at::Tensor &trn_fill(at::Tensor &self, const at::Scalar &value)
{
	KernelScope k("fill_");

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
	KernelScope k("zero_");

	if (!self.numel())
		return self;
	if (!fill_fits(self))
		return fall_back<ATEN_OP(zero_)>(self);
	const c10::DeviceGuard guard(self.device());

	fill_on_device(self, 0.0f);
	count_device_op("zero_");
	return self;
}

/*
 * cat (and stack, which PyTorch builds on it): each input copied into its
 * slice of a new contiguous tensor by the device's COPYs (copy_ above),
 * any dtype. Legacy empty 1-D inputs are skipped, as PyTorch does.
 * Inputs of several devices or dtypes (type promotion) or of shapes that
 * do not fit together: the fallback, which also raises PyTorch's errors.
 */
static at::Tensor trn_cat(const at::ITensorListRef &tensors, int64_t dim)
{
	KernelScope k("cat");
	std::vector<at::Tensor> in;
	const at::Tensor *ref = nullptr;
	std::vector<int64_t> size;
	int64_t n, d, off = 0;

	/* One device and dtype for all, the skipped ones too (promotion). */
	for (const at::Tensor &t : tensors) {
		if (!t.defined() || !t.is_privateuseone() ||
		    (!in.empty() && (t.device() != in.front().device() ||
				     t.scalar_type() !=
					     in.front().scalar_type())))
			return fall_back<ATEN_OP(cat)>(tensors, dim);
		in.push_back(t);
	}
	in.erase(std::remove_if(in.begin(), in.end(),
				[](const at::Tensor &t) {
					return t.dim() == 1 && !t.size(0);
				}),
		 in.end());
	if (!in.empty())
		ref = &in.front();
	n = ref ? ref->dim() : 0;
	if (!ref || !n || dim < -n || dim >= n)
		return fall_back<ATEN_OP(cat)>(tensors, dim);
	d = (dim + n) % n;
	size.assign(ref->sizes().begin(), ref->sizes().end());
	size[d] = 0;
	for (const at::Tensor &t : in) {
		bool fits = t.dim() == n;

		for (int64_t i = 0; fits && i < n; i++)
			fits = i == d || t.size(i) == ref->size(i);
		if (!fits)
			return fall_back<ATEN_OP(cat)>(tensors, dim);
		size[d] += t.size(d);
	}
	const c10::DeviceGuard guard(ref->device());
	at::Tensor out = new_tensor(size, *ref);

	for (const at::Tensor &t : in) {
		if (t.size(d))
			out.narrow(d, off, t.size(d)).copy_(t);
		off += t.size(d);
	}
	count_device_op("cat");
	return out;
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m)
{
	m.impl("empty.memory_format", trn_empty);
	m.impl("empty_strided", trn_empty_strided);
	m.impl("as_strided", at::native::as_strided_tensorimpl);
	m.impl("view", at::native::view);
	m.impl("_reshape_alias", at::native::_reshape_alias);
	m.impl("resize_", trn_resize);
	m.impl("set_.source_Storage_storage_offset", trn_set_storage);
	m.impl("set_.source_Storage", at::native::set_);
	m.impl("set_.source_Tensor", at::native::set_tensor_);
	m.impl("set_", trn_set_empty);
	m.impl("_copy_from", trn_copy_from);
	m.impl("_copy_from_and_resize", trn_copy_from_and_resize);
	m.impl("cat", trn_cat);
	m.impl("fill_.Scalar", trn_fill);
	m.impl("zero_", trn_zero);
	m.impl("_local_scalar_dense", trn_item);
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m)
{
	m.fallback(torch::CppFunction::makeFromBoxedFunction<&cpu_fallback>());
}

} // namespace trn_torch
