# SPDX-License-Identifier: MIT
"""trn for PyTorch: ``import torch_trn`` then ``model.to("trn")``.

PyTorch's PrivateUse1 device, renamed ``trn``, over the eager runtime and
libtrnhal (Documentation/pytorch.md).  Operators with a trn kernel run on
the device, asynchronously; every other operator runs through a CPU
fallback that is counted (``torch.trn.fallback_counts()``), or refused when
``TRN_FALLBACK=error`` is set.
"""
import glob
import importlib.util
import os
import sys
import types

import torch

torch.utils.rename_privateuse1_backend("trn")


def _load_extension():
    here = os.path.dirname(os.path.abspath(__file__))
    dirs = [here]
    if os.environ.get("TORCH_TRN_BUILD"):
        dirs.append(os.path.join(os.environ["TORCH_TRN_BUILD"], "pytorch"))
    # In the source tree: the meson build directory of the torch chroot.
    dirs.append(os.path.join(here, "..", "..", "build", "torch", "pytorch"))
    for d in dirs:
        found = sorted(glob.glob(os.path.join(d, "_C.*.so")))
        if found:
            spec = importlib.util.spec_from_file_location("torch_trn._C", found[0])
            mod = importlib.util.module_from_spec(spec)
            sys.modules["torch_trn._C"] = mod
            spec.loader.exec_module(mod)
            return mod
    raise ImportError("torch_trn: extension _C not found in " + ", ".join(dirs) +
                      " (build it with tools/trn-torch-build; Documentation/pytorch.md)")


_C = _load_extension()


def _index(device):
    if device is None:
        return -1
    if isinstance(device, int):
        return device
    d = torch.device(device)
    if d.type != "trn":
        raise ValueError(f"torch.trn: {d} is not a trn device")
    return -1 if d.index is None else d.index


def is_available():
    return _C.device_count() > 0


def device_count():
    return _C.device_count()


def current_device():
    return _C.current_device()


def set_device(device):
    _C.set_device(_index(device))


def synchronize(device=None):
    """Wait for everything issued on the device; raises if a job failed."""
    _C.synchronize(_index(device))


def _device(device):
    i = _index(device)
    return torch.device("trn", current_device() if i < 0 else i)


def _stream(packed):
    stream_id, index, dtype = packed
    return torch.Stream(stream_id=stream_id, device_index=index,
                        device_type=dtype)


def Stream(device=None, priority=0):
    """A new stream of the device (a libtrnhal queue; pooled, see
    Documentation/pytorch.md): a ``torch.Stream``."""
    return torch.Stream(device=_device(device), priority=priority)


def Event(enable_timing=False):
    """A ``torch.Event`` of the current trn device (timing: device
    TIMESTAMPs, ``elapsed_time()`` in ms)."""
    return torch.Event(device=_device(None), enable_timing=enable_timing)


def current_stream(device=None):
    """The stream operators of the device are issued to now."""
    return _stream(_C.current_stream(_index(device)))


def default_stream(device=None):
    """The device's default stream (id 0), current until set_stream()."""
    _, index, dtype = _C.current_stream(_index(device))
    return _stream((0, index, dtype))


def set_stream(stream):
    """Issue the operators of ``stream``'s device to ``stream`` from now."""
    if stream.device.type != "trn":
        raise ValueError(f"torch.trn: {stream} is not a trn stream")
    _C.set_stream(stream.stream_id, stream.device_index)


class stream:
    """``with torch.trn.stream(s):`` issues to ``s``, then restores the
    stream that was current (``None``: does nothing)."""

    def __init__(self, s):
        self.s = s
        self.prev = None

    def __enter__(self):
        if self.s is not None:
            self.prev = current_stream(self.s.device)
            set_stream(self.s)
        return self.s

    def __exit__(self, *exc):
        if self.prev is not None:
            set_stream(self.prev)
        return False


def memory_allocated(device=None):
    return _C.memory_allocated(_index(device))


def memory_reserved(device=None):
    return _C.memory_reserved(_index(device))


def max_memory_allocated(device=None):
    return _C.max_memory_allocated(_index(device))


def empty_cache(device=None):
    """Give cached device memory back (blocks held by tensors stay)."""
    if device is None:
        for i in range(device_count()):
            _C.empty_cache(i)
    else:
        _C.empty_cache(_index(device))


def device_op_counts():
    """Operators run by trn kernels since the last reset_counts(), by name."""
    return dict(_C.device_op_counts())


def fallback_counts():
    """Operators run through the CPU fallback, by aten name."""
    return dict(_C.fallback_counts())


def reset_counts():
    _C.reset_counts()


def is_initialized():
    return True


def _is_in_bad_fork():
    return False


def _seed64(seed):
    # As torch.Generator.manual_seed() takes it: negative seeds wrap.
    seed = int(seed)
    if seed < 0:
        seed = 0xFFFF_FFFF_FFFF_FFFF + seed
    if not 0 <= seed <= 0xFFFF_FFFF_FFFF_FFFF:
        raise RuntimeError(f"torch.trn: seed {seed} is out of range")
    return seed


def manual_seed(seed):
    """Seed the current device's default generator."""
    _C.manual_seed(-1, _seed64(seed))


def manual_seed_all(seed):
    """Seed every trn device's default generator (torch.manual_seed()
    calls this)."""
    seed = _seed64(seed)
    for i in range(device_count()):
        _C.manual_seed(i, seed)


def seed():
    """Seed the current device's default generator at random."""
    _C.seed(-1)


def seed_all():
    """Seed every device's default generator with one random seed."""
    s = _C.seed(0)
    for i in range(1, device_count()):
        _C.manual_seed(i, s)


def initial_seed():
    return _C.initial_seed(-1)


def get_rng_state(device="trn"):
    """The state of the device's default generator (a CPU byte tensor, the
    same format as the CPU generator's)."""
    return _C.get_rng_state(_index(device))


def set_rng_state(new_state, device="trn"):
    _C.set_rng_state(new_state, _index(device))


def get_rng_state_all():
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state_all(new_states):
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


_module = types.ModuleType("torch.trn")
for _name in ("is_available", "device_count", "current_device", "set_device",
              "synchronize", "memory_allocated", "memory_reserved",
              "max_memory_allocated", "empty_cache", "device_op_counts",
              "fallback_counts", "reset_counts", "is_initialized",
              "_is_in_bad_fork", "manual_seed", "manual_seed_all", "seed",
              "seed_all", "initial_seed", "get_rng_state", "set_rng_state",
              "get_rng_state_all", "set_rng_state_all", "Stream", "Event",
              "current_stream", "default_stream", "set_stream", "stream"):
    setattr(_module, _name, globals()[_name])
torch._register_device_module("trn", _module)
torch.utils.generate_methods_for_privateuse1_backend(
    for_tensor=True, for_module=True, for_storage=True)
