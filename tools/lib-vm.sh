# shellcheck shell=bash
# Kernel lanes and QEMU guests for trn.  Sourced by tools/trn-vm and tests/run.
#
# A "lane" is a kernel we build the modules against and boot in QEMU:
#   6.12    bookworm-backports' kernel, built with the host's own toolchain
#   newest  the newest linux-image-amd64 in trixie-backports (or trixie),
#           built inside a cached, debootstrapped trixie chroot
#   debug   6.12 from Debian's linux-source-6.12, built here with KASAN,
#           lockdep, kmemleak, UBSAN, fault injection and KUnit
#           (tests/debug-lane/), everything built in
#   dmem    7.3 from Debian's linux-source-7.3 (trixie-backports), built
#           here lean, with the dmem cgroup controller (tests/dmem-lane/,
#           tests/debug-lane/build-kernel), everything built in; not a
#           default lane (its kernel build does not fit CI's budget)
#
# and two variants of the 6.12 lane, which boot its kernel, initramfs and
# module build differently so that the DMA API really does something:
#   6.12-swiotlb  every streaming DMA mapping bounced (swiotlb=N,force)
#   6.12-iommu    QEMU's emulated Intel IOMMU (q35), strict invalidation
#   pci           q35 with three modelled Trainium parts in a QEMU built
#                 here with the model (tests/pci-lane/)
#
# Everything is cached under <repo>/build/ (see Documentation/testing.md):
#   build/cache/lanes/<lane>/   kernel: vmlinuz, lib/modules/<kver>, initramfs
#                               (debug, dmem: also src/ and obj/ build trees)
#   build/cache/sources/        linux-source-7.3's tarball (dmem lane)
#   build/cache/qemu/           the pci lane's QEMU (and its source and build
#                               trees)
#   build/cache/trixie-chroot/  build chroot for the newest lane and the
#                               packages step; apt for the dmem lane's
#                               sources
#   build/cache/bookworm-chroot/ the packages step's chroot for the 6.12
#                               lanes (their distribution)
#   build/lanes/<lane>/kernel/  fresh copy of kernel/ built for that lane
#                               (the 6.12 variants use 6.12's)
#   build/vm/<run>/             per-guest scratch (writable 9p share)
#
# Nothing here names a mirror: apt sources come from tools/lib-apt.sh, which
# derives them from the host's apt configuration.

TRN_ROOT=${TRN_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
TRN_BUILD=${TRN_BUILD:-$TRN_ROOT/build}
TRN_CACHE=${TRN_CACHE:-$TRN_BUILD/cache}
# Per-lane module builds and guest scratch dirs.  Must not be under /tmp or
# /run: the guest sees the host's tree except those (tmpfs there).
TRN_WORK=${TRN_WORK:-$TRN_BUILD}
# The default lanes (tests/run).  dmem is left out: a second kernel build
# and its suite do not fit CI's 90 minutes on CI's machine (about three
# times slower than ours) beside the rest (testing.md, "The dmem lane").
TRN_LANES="6.12 6.12-swiotlb 6.12-iommu pci newest debug pci-debug"
# Used when apt cannot tell us which 6.12 kernel bookworm-backports has.
TRN_612_DEFAULT_KVER=6.12.95+deb12-amd64
# (Whether TRN_VM_MEM was set: the swiotlb lane has its own default.)
TRN_VM_MEM_SET=${TRN_VM_MEM:-}
TRN_VM_MEM=${TRN_VM_MEM:-2048}
TRN_VM_SMP=${TRN_VM_SMP:-2}
TRN_VM_TIMEOUT=${TRN_VM_TIMEOUT:-900}
# tcg (default: works everywhere), or kvm where KVM really works (on the
# project's machines /dev/kvm exists but QEMU aborts setting MSRs).
TRN_VM_ACCEL=${TRN_VM_ACCEL:-tcg}

# shellcheck source=tools/lib-apt.sh
. "$TRN_ROOT/tools/lib-apt.sh"

trn_log() { printf 'trn: %s\n' "$*" >&2; }
trn_die() { printf 'trn: error: %s\n' "$*" >&2; exit 1; }

# Packages the lanes and guests need on the host.
TRN_VM_PACKAGES="qemu-system-x86 busybox-static cpio kmod xz-utils zstd debootstrap
	gcc make rsync"

# trn_apt_install, with apt's chatter in a log shown only on failure.
trn_install() {
	local log
	log=$(mktemp)
	if ! trn_apt_install "$@" >"$log" 2>&1; then
		cat "$log" >&2
		rm -f "$log"
		return 1
	fi
	rm -f "$log"
}

trn_vm_prereqs() {
	# shellcheck disable=SC2086
	trn_install $TRN_VM_PACKAGES ||
		trn_die "cannot install the packages the guests need"
}

# Serialise cache creation between concurrent runs (tests/run's tracks,
# trn-vm): trn_lock [NAME] ... trn_unlock [NAME], one flock per NAME
# (default "cache") on build/cache/.lock-NAME.  Re-entrant per NAME within
# a process and the subshells it waits for; released when the process
# exits.  The names:
#   lane-<base lane>  a lane's kernel, modules tree and initramfs (taken by
#                     trn_lane_prepare; a built kernel's build runs under it)
#   qemu              the pci lanes' QEMU (trn_qemu_pci)
#   cache             the build chroots and what is fetched through them
# Taken in that order (lane, then qemu or cache), never the other way, so
# two tracks building different lanes' kernels do not wait for each other.
declare -gA TRN_LOCK_DEPTH=() TRN_LOCK_FD=()
trn_lock() {
	local name=${1:-cache} fd
	if [ "${TRN_LOCK_DEPTH[$name]:-0}" = 0 ]; then
		mkdir -p "$TRN_CACHE"
		exec {fd}>"$TRN_CACHE/.lock-$name"
		flock "$fd" || trn_die "cannot lock $TRN_CACHE/.lock-$name"
		TRN_LOCK_FD[$name]=$fd
	fi
	TRN_LOCK_DEPTH[$name]=$((${TRN_LOCK_DEPTH[$name]:-0} + 1))
}
trn_unlock() {
	local name=${1:-cache} fd
	TRN_LOCK_DEPTH[$name]=$((${TRN_LOCK_DEPTH[$name]:-1} - 1))
	if [ "${TRN_LOCK_DEPTH[$name]}" = 0 ]; then
		fd=${TRN_LOCK_FD[$name]}
		exec {fd}>&-
	fi
}

trn_lane_valid() {
	case "$1" in 6.12 | 6.12-swiotlb | 6.12-iommu | pci | newest | debug | pci-debug | dmem) return 0 ;; esac
	trn_die "unknown lane '$1' (lanes: $TRN_LANES)"
}

# The lane whose kernel, initramfs and module build LANE uses: 6.12 for its
# variants and debug for pci-debug, which differ only in how the guest
# boots; else LANE itself.
trn_lane_base() {
	case "$1" in
	6.12-swiotlb | 6.12-iommu | pci) echo 6.12 ;;
	pci-debug) echo debug ;;
	*) echo "$1" ;;
	esac
}

trn_lane_cache() { echo "$TRN_CACHE/lanes/$(trn_lane_base "$1")"; }

# Highest version among `apt-cache madison` lines for PKG in SUITE ($1 the
# apt-cache command prefix, may be a chroot wrapper).
_trn_newest_in_suite() {
	local pkg=$1 suite=$2
	shift 2
	"$@" apt-cache madison "$pkg" 2>/dev/null |
		awk -F'|' -v s="$suite" '{ gsub(/ /, "", $2); if ($3 ~ s"/main") print $2 }' |
		sort -V | tail -n 1
}

# Kernel release (e.g. 6.12.95+deb12-amd64) that linux-image-amd64 VERSION depends on.
_trn_meta_kver() {
	local ver=$1
	shift
	"$@" apt-cache depends "linux-image-amd64=$ver" 2>/dev/null |
		awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { sub(/^linux-image-/, "", $2); print $2; exit }'
}

# ---------------------------------------------------------------- 6.12 lane

# Kernel release of the 6.12 lane (cached in the lane dir).
trn_612_kver() {
	local c f v k
	c=$(trn_lane_cache 6.12)
	f=$c/kver
	if [ -s "$f" ]; then cat "$f"; return; fi
	trn_enable_backports
	v=$(_trn_newest_in_suite linux-image-amd64 bookworm-backports)
	if [ -z "$v" ]; then
		trn_apt_update >/dev/null 2>&1 || true
		v=$(_trn_newest_in_suite linux-image-amd64 bookworm-backports)
	fi
	k=""
	[ -n "$v" ] && k=$(_trn_meta_kver "$v")
	case "$k" in
	6.12.*) ;;
	*)
		trn_log "cannot resolve bookworm-backports' 6.12 kernel; using $TRN_612_DEFAULT_KVER"
		k=$TRN_612_DEFAULT_KVER
		;;
	esac
	mkdir -p "$c"
	echo "$k" >"$f"
	echo "$k"
}

# Headers (build dir) for the 6.12 lane: the host's linux-headers package.
trn_612_kdir() {
	local k
	k=$(trn_612_kver)
	if [ ! -e "/lib/modules/$k/build/Makefile" ]; then
		trn_enable_backports
		trn_install "linux-headers-$k" || trn_die "cannot install linux-headers-$k"
	fi
	echo "/lib/modules/$k/build"
}

# ------------------------------------------------------------ build chroots

# A debootstrapped Debian tree per suite: trixie (the newest lane's builds,
# the packages step, the dmem lane's apt) and bookworm (the packages step
# for the 6.12 lane, whose distribution it is).  trn_chroot and
# trn_chroot_ensure work on TRN_CHROOT, of suite TRN_CHROOT_SUITE;
# trn_use_chroot SUITE switches both.
TRN_CHROOT_SUITE=${TRN_CHROOT_SUITE:-trixie}
TRN_CHROOT=${TRN_CHROOT:-$TRN_CACHE/$TRN_CHROOT_SUITE-chroot}

trn_use_chroot() {
	case "$1" in
	trixie | bookworm) ;;
	*) trn_die "no build chroot for suite $1 (trixie or bookworm)" ;;
	esac
	TRN_CHROOT_SUITE=$1
	TRN_CHROOT=$TRN_CACHE/$1-chroot
}

# Run a command inside the chroot, in a private mount namespace (so nothing
# stays mounted if we die).  TRN_CHROOT_BIND="src:dst ..." adds bind mounts.
trn_chroot() {
	local binds=${TRN_CHROOT_BIND:-}
	# shellcheck disable=SC2016 # the inner script expands its own arguments
	unshare --mount --propagation private -- /bin/sh -eu -c '
		r=$1; shift
		binds=$1; shift
		mount -t proc proc "$r/proc"
		mount --rbind /dev "$r/dev"
		mount -t tmpfs tmpfs "$r/tmp"
		for b in $binds; do
			mkdir -p "$r${b#*:}"
			mount --bind "${b%%:*}" "$r${b#*:}"
		done
		exec chroot "$r" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
	' trn-chroot "$TRN_CHROOT" "$binds" "$@"
}

# rm -rf a chroot-like tree, unmounting anything mounted under it first.
_trn_rm_tree() {
	local d=$1 m
	[ -e "$d" ] || return 0
	while IFS= read -r m; do
		umount -l "$m" || trn_die "cannot unmount $m"
	done < <(awk -v d="$d/" 'index($2, d) == 1 { print $2 }' /proc/mounts | sort -r)
	rm -rf "$d"
}

_trn_chroot_ok() {
	[ -f "$TRN_CHROOT/.trn-ok" ] &&
		trn_chroot sh -c 'gcc --version && make --version && apt-get --version' >/dev/null 2>&1
}

# Create (or repair) the build chroot of TRN_CHROOT_SUITE at TRN_CHROOT.
trn_chroot_ensure() {
	local uri kr suite=$TRN_CHROOT_SUITE
	if _trn_chroot_ok; then return 0; fi
	trn_install debootstrap || trn_die "cannot install debootstrap"
	uri=$(trn_debian_uri) || trn_die "no Debian archive in the host's apt configuration"
	kr=$(trn_debian_keyring)
	if [ -e "$TRN_CHROOT" ]; then
		trn_log "$suite chroot at $TRN_CHROOT is incomplete or broken: recreating it"
		_trn_rm_tree "$TRN_CHROOT"
	fi
	# Left over by an interrupted debootstrap (which may have mounted proc there).
	_trn_rm_tree "$TRN_CHROOT.tmp"
	mkdir -p "$TRN_CACHE"
	trn_log "debootstrapping $suite into $TRN_CHROOT (first run only; a few minutes)"
	debootstrap --variant=minbase --keyring="$kr" \
		--include=gcc,make,kmod,libc6-dev,ca-certificates \
		"$suite" "$TRN_CHROOT.tmp" "$uri" >"$TRN_CACHE/debootstrap-$suite.log" 2>&1 || {
		tail -n 30 "$TRN_CACHE/debootstrap-$suite.log" >&2
		rm -rf "$TRN_CHROOT.tmp"
		trn_die "debootstrap of $suite failed (log: $TRN_CACHE/debootstrap-$suite.log)"
	}
	mv "$TRN_CHROOT.tmp" "$TRN_CHROOT"
	rm -f "$TRN_CHROOT/etc/apt/sources.list"
	cat >"$TRN_CHROOT/etc/apt/sources.list.d/debian.sources" <<SRC
Types: deb
URIs: $uri
Suites: $suite $suite-updates $suite-backports
Components: main
SRC
	# Recommends would pull in a lot we never use.
	echo 'APT::Install-Recommends "false";' >"$TRN_CHROOT/etc/apt/apt.conf.d/90trn"
	trn_chroot apt-get update -qq || trn_die "apt-get update in the $suite chroot failed"
	date +%s >"$TRN_CHROOT/.trn-apt-updated"
	touch "$TRN_CHROOT/.trn-ok"
}

# apt-get update in the chroot when asked (TRN_REFRESH=1) or older than a week.
_trn_chroot_refresh() {
	local now last
	now=$(date +%s)
	last=$(cat "$TRN_CHROOT/.trn-apt-updated" 2>/dev/null || echo 0)
	if [ -n "${TRN_REFRESH:-}" ] || [ $((now - last)) -gt 604800 ]; then
		trn_chroot apt-get update -qq ||
			trn_die "apt-get update in the $TRN_CHROOT_SUITE chroot failed"
		echo "$now" >"$TRN_CHROOT/.trn-apt-updated"
	fi
}

# --------------------------------------------------------------- newest lane

trn_newest_kver() {
	local c f v k
	c=$(trn_lane_cache newest)
	f=$c/kver
	if [ -s "$f" ] && [ -z "${TRN_REFRESH:-}" ]; then cat "$f"; return; fi
	trn_lock
	trn_chroot_ensure
	_trn_chroot_refresh
	# The newest linux-image-amd64 of trixie, trixie-updates and
	# trixie-backports (backports normally wins).
	v=$(trn_chroot apt-cache madison linux-image-amd64 | awk -F'|' '{ gsub(/ /, "", $2); print $2 }' |
		sort -V | tail -n 1)
	[ -n "$v" ] || trn_die "no linux-image-amd64 in the trixie chroot's apt lists"
	k=$(_trn_meta_kver "$v" trn_chroot)
	[ -n "$k" ] || trn_die "cannot tell which kernel linux-image-amd64=$v depends on"
	mkdir -p "$c"
	echo "$k" >"$f"
	trn_unlock
	echo "$k"
}

# Headers of kernel release K installed in the current build chroot
# (TRN_CHROOT).  Prints their path inside the chroot.
trn_chroot_kdir() {
	local k=$1
	trn_lock
	trn_chroot_ensure
	if [ ! -e "$TRN_CHROOT/usr/src/linux-headers-$k/Makefile" ]; then
		trn_log "installing linux-headers-$k in the $TRN_CHROOT_SUITE chroot"
		_trn_chroot_refresh
		trn_chroot apt-get install -y -qq "linux-headers-$k" >/dev/null ||
			trn_die "cannot install linux-headers-$k in the $TRN_CHROOT_SUITE chroot"
	fi
	trn_unlock
	echo "/usr/src/linux-headers-$k"
}

# Headers for the newest lane, installed in the trixie chroot.  Prints the
# path inside the chroot.
trn_newest_kdir() { trn_chroot_kdir "$(trn_newest_kver)"; }

# ---------------------------------------------------------------- torch lane

# The PyTorch backend (pytorch/, Documentation/pytorch.md) is built against
# trixie's PyTorch in its own chroot, build/cache/trixie-torch/: a copy of
# the trixie build chroot with these packages added (about 1.4 GiB more),
# so that the kernel builds and the packages step keep their small tree.
# The newest lane's guest runs the backend's tests inside this tree.
TRN_TORCH_CHROOT=$TRN_CACHE/trixie-torch
TRN_TORCH_PACKAGES="python3-torch libtorch-dev pybind11-dev python3-dev g++ meson
	ninja-build pkg-config libdrm-dev"

# Create the torch chroot if it is missing or was made for other packages.
trn_torch_chroot() {
	local key
	# The list with its whitespace squeezed: what .trn-ok records.
	key=$(printf '%s' "$TRN_TORCH_PACKAGES" | tr -s ' \t\n' ' ')
	if [ "$(cat "$TRN_TORCH_CHROOT/.trn-ok" 2>/dev/null)" = "$key" ]; then
		return 0
	fi
	trn_lock
	if [ "$(cat "$TRN_TORCH_CHROOT/.trn-ok" 2>/dev/null)" != "$key" ]; then
		trn_use_chroot trixie
		trn_chroot_ensure
		_trn_chroot_refresh
		_trn_rm_tree "$TRN_TORCH_CHROOT"
		_trn_rm_tree "$TRN_TORCH_CHROOT.tmp"
		trn_log "creating the torch chroot $TRN_TORCH_CHROOT (first run only; about 2 minutes)"
		cp -a "$TRN_CHROOT" "$TRN_TORCH_CHROOT.tmp"
		rm -f "$TRN_TORCH_CHROOT.tmp/.trn-ok"
		# shellcheck disable=SC2086 # a list of packages
		TRN_CHROOT=$TRN_TORCH_CHROOT.tmp trn_chroot apt-get install -y -qq \
			$TRN_TORCH_PACKAGES >"$TRN_CACHE/torch-chroot.log" 2>&1 || {
			tail -n 30 "$TRN_CACHE/torch-chroot.log" >&2
			trn_die "cannot install PyTorch in the torch chroot (log: $TRN_CACHE/torch-chroot.log)"
		}
		TRN_CHROOT=$TRN_TORCH_CHROOT.tmp trn_chroot apt-get clean
		mv "$TRN_TORCH_CHROOT.tmp" "$TRN_TORCH_CHROOT"
		echo "$key" >"$TRN_TORCH_CHROOT/.trn-ok"
	fi
	trn_unlock
}

# Build torch_trn's extension in the torch chroot, into build/torch/ (the
# repository is bound at its own path).  Logs to build/torch-build.log.
trn_torch_build() {
	local log=$TRN_BUILD/torch-build.log
	trn_torch_chroot
	mkdir -p "$TRN_BUILD"
	# shellcheck disable=SC2016 # expands inside the chroot
	TRN_CHROOT=$TRN_TORCH_CHROOT TRN_CHROOT_BIND="$TRN_ROOT:$TRN_ROOT" trn_chroot \
		sh -ec 'cd "$1"
			[ -f build/torch/build.ninja ] ||
				meson setup build/torch -Dtorch=enabled -Dwerror=true
			meson compile -C build/torch' trn-torch "$TRN_ROOT" >"$log" 2>&1 || {
		tail -n 40 "$log" >&2
		return 1
	}
}

# ------------------------------------------------------ debug and dmem lanes

# Two lanes boot kernels built here from Debian's kernel sources, by
# tests/debug-lane/build-kernel: `make allnoconfig` plus a configuration
# fragment, everything built in.  Each is cached in build/cache/lanes/<lane>/
# under a key over the source package's version, the fragment, the build
# script and the compiler.
#   debug  linux-source-6.12 (the host's package, /usr/src) with
#          tests/debug-lane/debug.config: KASAN, lockdep, kmemleak, UBSAN,
#          fault injection, KUnit
#   dmem   linux-source-7.3 from trixie-backports (fetched through the
#          trixie chroot, unpacked into build/cache/sources/) with
#          tests/dmem-lane/dmem.config: lean, no detectors, but with the
#          memory and dmem cgroup controllers (CONFIG_CGROUP_DMEM, which
#          Debian's own 7.x kernels leave out); not a default lane
# Both are compiled, and trn's modules built against them, with the host's
# gcc.  (A debug kernel from 7.3 with the controllers, to serve both, was
# tried: its suite ran about twice as long as 6.12's, testing.md.)
TRN_KBUILDER=$TRN_ROOT/tests/debug-lane/build-kernel
TRN_DEBUG_FRAGMENT=$TRN_ROOT/tests/debug-lane/debug.config
TRN_DEBUG_PACKAGES="linux-source-6.12 xz-utils gcc make bc flex bison libelf-dev libssl-dev kmod"
# Extra kernel parameters of the debug lane: with every check on and no
# KVM, the ACPI interpreter needs more than its 30 s loop limit to run the
# PCI interrupt routing method (_PRT) of QEMU's firmware, three times
# over; the firmware's PIRQ table does the same job at once.
TRN_DEBUG_CMDLINE="acpi=noirq"
TRN_DMEM_SOURCE=${TRN_DMEM_SOURCE:-linux-source-7.3}
TRN_DMEM_FRAGMENT=$TRN_ROOT/tests/dmem-lane/dmem.config
TRN_DMEM_PACKAGES="xz-utils gcc make bc flex bison libelf-dev libssl-dev kmod"

# Whether LANE's kernel is built here (debug, dmem).
trn_lane_built() { case "$1" in debug | dmem) return 0 ;; esac; return 1; }

# Path of the linux-source-6.12 tarball (installs the package if needed).
trn_debug_tarball() {
	local f t=""
	for f in /usr/src/linux-source-6.12.tar.*; do [ -f "$f" ] && t=$f; done
	if [ -z "$t" ]; then
		trn_install linux-source-6.12 || trn_die "cannot install linux-source-6.12"
		for f in /usr/src/linux-source-6.12.tar.*; do [ -f "$f" ] && t=$f; done
	fi
	[ -n "$t" ] || trn_die "no /usr/src/linux-source-6.12.tar.* (package linux-source-6.12)"
	echo "$t"
}

# The highest version of $TRN_DMEM_SOURCE in the trixie chroot's apt lists.
_trn_dmem_candidate() {
	trn_chroot apt-cache madison "$TRN_DMEM_SOURCE" 2>/dev/null |
		awk -F'|' '{ gsub(/ /, "", $2); print $2 }' | sort -V | tail -n 1
}

# Version of $TRN_DMEM_SOURCE to build: the highest the trixie chroot's apt
# lists offer (trixie-backports), or, if they offer none even after an
# update, the one already unpacked in build/cache/sources/.
trn_dmem_version() {
	local v="" d
	_trn_chroot_ok || { trn_lock; trn_chroot_ensure; trn_unlock; }
	v=$(_trn_dmem_candidate)
	if [ -z "$v" ]; then
		trn_lock
		TRN_REFRESH=1 _trn_chroot_refresh
		trn_unlock
		v=$(_trn_dmem_candidate)
	fi
	if [ -z "$v" ]; then
		for d in "$TRN_CACHE/sources/${TRN_DMEM_SOURCE}_"*/.ok; do
			[ -f "$d" ] || continue
			d=${d%/.ok}
			v=${d##*/"${TRN_DMEM_SOURCE}"_}
		done
	fi
	[ -n "$v" ] || trn_die "[dmem] the trixie chroot's apt lists have no $TRN_DMEM_SOURCE, and none is cached"
	echo "$v"
}

# Path of the $TRN_DMEM_SOURCE tarball: apt-get download in the trixie
# chroot and dpkg -x, once per version, into build/cache/sources/
# (older versions are removed).
trn_dmem_tarball() {
	local v d tmp f t=""
	v=$(trn_dmem_version)
	d=$TRN_CACHE/sources/${TRN_DMEM_SOURCE}_$v
	if [ ! -f "$d/.ok" ]; then
		trn_lock
		if [ ! -f "$d/.ok" ]; then
			trn_log "[dmem] fetching $TRN_DMEM_SOURCE $v (about 170 MB) through the trixie chroot"
			rm -rf "$d" "$d.tmp"
			mkdir -p "$d.tmp/dl"
			tmp=$d.tmp
			# shellcheck disable=SC2016 # the inner shell expands $1
			TRN_CHROOT_BIND="$tmp/dl:/trn-dl" trn_chroot sh -c \
				'cd /trn-dl && apt-get -o APT::Sandbox::User=root download -qq "$1"' sh \
				"$TRN_DMEM_SOURCE=$v" ||
				trn_die "[dmem] apt-get download $TRN_DMEM_SOURCE=$v failed in the trixie chroot"
			for f in "$tmp"/dl/*.deb; do
				dpkg -x "$f" "$tmp/x" || trn_die "[dmem] dpkg -x $f failed"
			done
			for f in "$tmp"/x/usr/src/"$TRN_DMEM_SOURCE".tar.*; do [ -f "$f" ] && t=$f; done
			[ -n "$t" ] || trn_die "[dmem] no /usr/src/$TRN_DMEM_SOURCE.tar.* in $TRN_DMEM_SOURCE $v"
			mkdir -p "$d"
			mv "$t" "$d/"
			rm -rf "$tmp"
			echo "$v" >"$d/.ok"
			for f in "$TRN_CACHE/sources/${TRN_DMEM_SOURCE}_"*; do
				[ "$f" = "$d" ] || rm -rf "$f"
			done
		fi
		trn_unlock
	fi
	for f in "$d/$TRN_DMEM_SOURCE".tar.*; do [ -f "$f" ] && t=$f; done
	[ -n "$t" ] || trn_die "[dmem] no $d/$TRN_DMEM_SOURCE.tar.* (rm -rf $d to fetch it again)"
	echo "$t"
}

# LANE's cache key (16 hex digits).
trn_built_key() {
	local lane=$1 t v frag
	case "$lane" in
	debug)
		t=$(trn_debug_tarball)
		v=$(dpkg-query -W -f '${Version}' linux-source-6.12 2>/dev/null || true)
		# A tarball dpkg does not know (put there by hand): hash its contents.
		[ -n "$v" ] || v=$(sha256sum <"$t")
		frag=$TRN_DEBUG_FRAGMENT
		;;
	dmem)
		t=$(trn_dmem_tarball)
		v=$(cat "${t%/*}/.ok")
		frag=$TRN_DMEM_FRAGMENT
		;;
	esac
	{
		echo "source $(basename "$t") $v"
		echo "gcc $(gcc -dumpfullversion 2>/dev/null || gcc -dumpversion)"
		sha256sum <"$frag"
		sha256sum <"$TRN_KBUILDER"
	} | sha256sum | cut -c1-16
}

_trn_built_ready() {
	local c=$1 key=$2
	[ "$(cat "$c/key" 2>/dev/null)" = "$key" ] && [ -f "$c/vmlinuz" ] && [ -s "$c/kver" ] &&
		[ -f "$c/obj/Module.symvers" ]
}

# Build LANE's kernel unless the cache already has it for the current key.
trn_built_kernel() {
	local lane=$1 c key t pkgs frag what
	c=$(trn_lane_cache "$lane")
	key=$(trn_built_key "$lane")
	_trn_built_ready "$c" "$key" && return 0
	trn_lock "lane-$lane"
	if ! _trn_built_ready "$c" "$key"; then
		case "$lane" in
		debug)
			pkgs=$TRN_DEBUG_PACKAGES frag=$TRN_DEBUG_FRAGMENT
			t=$(trn_debug_tarball)
			what="the debug kernel from $(basename "$t") (cache key $key; about 6 minutes on 2 cores"
			;;
		dmem)
			pkgs=$TRN_DMEM_PACKAGES frag=$TRN_DMEM_FRAGMENT
			t=$(trn_dmem_tarball)
			what="the dmem kernel from $(basename "$t") $(cat "${t%/*}/.ok") (cache key $key; about 5 minutes on 2 cores"
			;;
		esac
		# shellcheck disable=SC2086
		trn_install $pkgs || trn_die "cannot install what building the $lane kernel needs"
		trn_log "[$lane] building $what; log: $c/build.log)"
		"$TRN_KBUILDER" "$t" "$frag" "$c" "$key" ||
			trn_die "[$lane] building the $lane kernel failed (log: $c/build.log)"
	fi
	trn_unlock "lane-$lane"
}

# Kernel release of a built lane (builds the kernel if needed).
trn_built_kver() {
	trn_built_kernel "$1"
	cat "$(trn_lane_cache "$1")/kver"
}

# A built lane's O= build tree, what external modules build against.
trn_built_kdir() {
	trn_built_kernel "$1"
	echo "$(trn_lane_cache "$1")/obj"
}

# ------------------------------------------------------------ lane kernels

trn_lane_kver() {
	case "$(trn_lane_base "$1")" in
	6.12) trn_612_kver ;;
	newest) trn_newest_kver ;;
	debug | dmem) trn_built_kver "$(trn_lane_base "$1")" ;;
	esac
}

# Download the kernel image package(s) of release KVER into the lane cache
# and unpack them: <cache>/vmlinuz, <cache>/lib/modules/<kver>/ (depmod'ed).
trn_lane_kernel() {
	local lane k c dl x deps p mdir
	lane=$(trn_lane_base "$1")
	if trn_lane_built "$lane"; then
		trn_built_kernel "$lane"
		return
	fi
	k=$(trn_lane_kver "$lane")
	c=$(trn_lane_cache "$lane")
	if [ -f "$c/kernel-$k.ok" ] && [ -f "$c/vmlinuz" ] && [ -d "$c/lib/modules/$k" ]; then
		return 0
	fi
	trn_log "[$lane] fetching kernel $k"
	rm -rf "${c:?}/dl" "${c:?}/x" "${c:?}/lib" "${c:?}/vmlinuz" "$c"/kernel-*.ok "$c"/initramfs*
	mkdir -p "$c/dl" "$c/x"
	dl=$c/dl
	x=$c/x
	if [ "$lane" = 6.12 ]; then
		trn_enable_backports
		trn_install kmod xz-utils zstd || true
		(cd "$dl" && apt-get download -qq "linux-image-$k") 2>/dev/null || {
			trn_apt_update
			(cd "$dl" && apt-get download -qq "linux-image-$k")
		} || trn_die "apt-get download linux-image-$k failed"
		# 6.12 is one package; still take any linux-binary/modules it depends on.
		deps=$(apt-cache depends "linux-image-$k" 2>/dev/null |
			awk '$1 == "Depends:" && $2 ~ /^linux-(binary|modules|image)-/ { print $2 }')
		for p in $deps; do (cd "$dl" && apt-get download -qq "$p") || trn_die "apt-get download $p failed"; done
	else
		trn_newest_kdir >/dev/null # headers: their .config documents the kernel
		deps=$(trn_chroot apt-cache depends "linux-image-$k" |
			awk '$1 == "Depends:" && $2 ~ /^linux-(binary|modules|image)-/ { print $2 }')
		# shellcheck disable=SC2086
		TRN_CHROOT_BIND="$dl:/trn-dl" trn_chroot sh -c 'cd /trn-dl && apt-get -o APT::Sandbox::User=root download -qq "$@"' sh \
			"linux-image-$k" $deps ||
			trn_die "apt-get download of linux-image-$k failed in the trixie chroot"
	fi
	for p in "$dl"/*.deb; do
		dpkg -x "$p" "$x" || trn_die "dpkg -x $p failed"
	done
	mdir=""
	for p in "$x/lib/modules/$k" "$x/usr/lib/modules/$k"; do
		[ -d "$p" ] && mdir=$p
	done
	[ -n "$mdir" ] || trn_die "[$lane] no modules tree for $k in $(ls "$dl")"
	mkdir -p "$c/lib/modules"
	mv "$mdir" "$c/lib/modules/$k"
	mdir=$c/lib/modules/$k
	# 6.12 ships boot/vmlinuz-<kver>; 7.x's linux-binary ships modules/<kver>/vmlinuz.
	for p in "$x/boot/vmlinuz-$k" "$mdir/vmlinuz"; do
		[ -f "$p" ] && mv "$p" "$c/vmlinuz"
	done
	[ -f "$c/vmlinuz" ] || trn_die "[$lane] no vmlinuz for $k in $(ls "$dl")"
	for p in "$x/boot/config-$k" "$mdir/config"; do
		[ -f "$p" ] && mv "$p" "$c/config"
	done
	if [ ! -f "$c/config" ] && [ "$lane" = newest ] && [ -f "$TRN_CHROOT/usr/src/linux-headers-$k/.config" ]; then
		cp "$TRN_CHROOT/usr/src/linux-headers-$k/.config" "$c/config"
	fi
	for p in "$x/boot/System.map-$k" "$mdir/System.map"; do
		[ -f "$p" ] && mv "$p" "$c/System.map"
	done
	# 7.x packages have no modules.builtin*: depmod warns, harmlessly.
	depmod -b "$c" "$k" 2>"$c/depmod.log" || { cat "$c/depmod.log" >&2; trn_die "[$lane] depmod failed"; }
	rm -rf "$dl" "$x"
	touch "$c/kernel-$k.ok"
}

# ----------------------------------------------------------------- modules

# The lane's copy of kernel/: build/lanes/<lane>/kernel (the 6.12
# variants share 6.12's: same kernel, same modules).
trn_lane_moddir() { echo "$TRN_WORK/lanes/$(trn_lane_base "$1")/kernel"; }

# Build the kernel modules for a lane.  Extra make arguments (W=1, C=2) follow.
# TRN_KERNEL_SRC overrides the source directory (default: <repo>/kernel).
# A 6.12 variant builds in 6.12's tree (incrementally unless TRN_FRESH is
# set, so right after the 6.12 lane there is nothing to do), with the log
# in its own build/lanes/<variant>/make.log.
trn_lane_build() {
	local lane=$1 src d k kdir log
	shift
	src=${TRN_KERNEL_SRC:-$TRN_ROOT/kernel}
	[ -f "$src/Makefile" ] || [ -f "$src/Kbuild" ] ||
		trn_die "no $src/Makefile or Kbuild: nothing to build"
	d=$(trn_lane_moddir "$lane")
	k=$(trn_lane_kver "$lane")
	# A lane and its variants share one build: one run (a track of
	# tests/run, trn-vm) builds it at a time; the lock goes with this
	# (sub)shell.
	trn_lock "lane-$(trn_lane_base "$lane")"
	# Fresh copy (TRN_FRESH=1) or an incremental one: build products, ours
	# or stray ones in kernel/, are never copied, and ours survive --delete.
	[ -n "${TRN_FRESH:-}" ] && rm -rf "$d"
	mkdir -p "$d"
	rsync -a --delete \
		--exclude='*.o' --exclude='*.ko' --exclude='*.mod' --exclude='*.mod.c' \
		--exclude='.*.cmd' --exclude='.*.d' --exclude='*.a' --exclude='*.dwo' \
		--exclude='Module.symvers' --exclude='modules.order' --exclude='.tmp_versions' \
		--exclude='/compat/generated/' \
		"$src/" "$d/" || trn_die "cannot copy $src to $d"
	log=$TRN_WORK/lanes/$lane/make.log
	mkdir -p "${log%/*}"
	case "$(trn_lane_base "$lane")" in
	6.12)
		kdir=$(trn_612_kdir)
		make -C "$d" KDIR="$kdir" "$@" >"$log" 2>&1
		;;
	newest)
		kdir=$(trn_newest_kdir)
		TRN_CHROOT_BIND="$d:/trn-build" trn_chroot \
			make -C /trn-build KDIR="$kdir" "$@" >"$log" 2>&1
		;;
	debug | dmem)
		kdir=$(trn_built_kdir "$(trn_lane_base "$lane")")
		make -C "$d" KDIR="$kdir" "$@" >"$log" 2>&1
		;;
	esac || {
		cat "$log" >&2
		trn_log "[$lane] module build failed for $k (log: $log)"
		trn_unlock "lane-$(trn_lane_base "$lane")"
		return 1
	}
	trn_unlock "lane-$(trn_lane_base "$lane")"
	[ -n "${TRN_VERBOSE:-}" ] && cat "$log" >&2
	return 0
}

# ---------------------------------------------------------------- initramfs

# The 9p modules the initramfs loads, with their dependencies, in load order
# (paths relative to lib/modules/<kver>).
_trn_9p_modules() {
	local c=$1 k=$2 want=$3
	awk -v want="$want" '
		function base(p) { sub(/.*\//, "", p); sub(/\.ko(\.(xz|zst|gz))?$/, "", p); gsub(/-/, "_", p); return p }
		{
			m = $1; sub(/:$/, "", m)
			b = base(m); path[b] = m
			deps[b] = ""
			for (i = NF; i >= 2; i--) deps[b] = deps[b] " " base($i)
		}
		function add(b,    n, a, i) {
			if (b in seen) return
			seen[b] = 1
			n = split(deps[b], a, " ")
			for (i = 1; i <= n; i++) add(a[i])
			if (b in path) print path[b]
		}
		END { n = split(want, w, " "); for (i = 1; i <= n; i++) add(w[i]) }
	' "$c/lib/modules/$k/modules.dep"
}

_trn_init_script() {
	cat <<'INIT'
#!/bin/sh
# trn guest init: mount the host's root (9p, read-only) and run the command.
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
fail() { echo "trn-init: $*" >/dev/console; poweroff -f; sleep 5; }
for m in $(cat /modules.list); do
	insmod "/lib/mod/$m" || fail "insmod $m failed"
done
mkdir -p /newroot
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=512000 hostroot /newroot ||
	fail "cannot mount the host root over 9p"
mount -t tmpfs -o mode=1777 tmpfs /newroot/tmp
mount -t tmpfs -o mode=755 tmpfs /newroot/run
mount -t devtmpfs devtmpfs /newroot/dev
mkdir -p /newroot/dev/pts /newroot/dev/shm
mount -t devpts devpts /newroot/dev/pts
mount -t tmpfs -o mode=1777 tmpfs /newroot/dev/shm
mount -t proc proc /newroot/proc
mount -t sysfs sysfs /newroot/sys
mount -t debugfs debugfs /newroot/sys/kernel/debug 2>/dev/null
mount -t configfs configfs /newroot/sys/kernel/config 2>/dev/null
mkdir -p /newroot/run/trn
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 trnout /newroot/run/trn ||
	fail "cannot mount the results share"
# The repository again, at its own path: the tmpfs above hide it when it
# lives under /tmp or /run (a CI checkout may).
repo=$(cat /newroot/run/trn/reporoot)
mkdir -p "/newroot$repo"
mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=512000 trnroot "/newroot$repo" ||
	fail "cannot mount the repository share"
# The lane's modules tree stands in for /lib/modules, so modprobe just works.
mods=$(cat /newroot/run/trn/modroot)
mount --bind "/newroot$mods/lib/modules" /newroot/lib/modules ||
	fail "cannot bind the lane's modules over /lib/modules"
busybox stty -onlcr </dev/console 2>/dev/null
: >/newroot/run/trn/started
chroot /newroot /bin/sh /run/trn/cmd.sh </dev/null >/dev/console 2>&1
echo $? >/newroot/run/trn/status
sync
umount /newroot/run/trn
echo 0 >/proc/sys/kernel/printk
poweroff -f
INIT
}

# Build (if inputs changed) the lane's initramfs; prints its path.
trn_lane_initramfs() {
	local lane c k bb sum out tmp m f
	lane=$(trn_lane_base "$1")
	k=$(trn_lane_kver "$lane")
	c=$(trn_lane_cache "$lane")
	bb=/bin/busybox
	trn_install busybox-static || trn_die "cannot install busybox-static"
	out=$c/initramfs.cpio.gz
	sum=$( { _trn_init_script; echo "$k"; sha256sum "$bb"; cat "$c/kernel-$k.ok" 2>/dev/null; } | sha256sum | cut -c1-16)
	if [ -f "$out" ] && [ "$(cat "$c/initramfs.sum" 2>/dev/null)" = "$sum" ]; then
		echo "$out"
		return 0
	fi
	tmp=$c/initramfs.d
	rm -rf "$tmp"
	mkdir -p "$tmp"/{bin,dev,proc,sys,newroot,lib/mod}
	cp "$bb" "$tmp/bin/busybox"
	for m in sh mount umount insmod mkdir cat chroot poweroff sleep echo; do
		ln -s busybox "$tmp/bin/$m"
	done
	_trn_init_script >"$tmp/init"
	chmod 755 "$tmp/init"
	: >"$tmp/modules.list"
	for m in $(_trn_9p_modules "$c" "$k" "virtio_pci netfs 9pnet 9pnet_virtio 9p"); do
		f=$(basename "$m")
		case "$f" in
		*.xz) xz -dc "$c/lib/modules/$k/$m" >"$tmp/lib/mod/${f%.xz}"; f=${f%.xz} ;;
		*.zst) zstd -qdc "$c/lib/modules/$k/$m" >"$tmp/lib/mod/${f%.zst}"; f=${f%.zst} ;;
		*.gz) gzip -dc "$c/lib/modules/$k/$m" >"$tmp/lib/mod/${f%.gz}"; f=${f%.gz} ;;
		*) cp "$c/lib/modules/$k/$m" "$tmp/lib/mod/$f" ;;
		esac
		echo "$f" >>"$tmp/modules.list"
	done
	grep -q '^9p\.ko$' "$tmp/modules.list" || grep -q 'CONFIG_9P_FS=y' "$c/config" 2>/dev/null ||
		trn_die "[$lane] kernel $k has no 9p module"
	(cd "$tmp" && find . | cpio -o -H newc --quiet | gzip -1) >"$out.tmp" ||
		trn_die "cannot build the initramfs"
	mv "$out.tmp" "$out"
	echo "$sum" >"$c/initramfs.sum"
	rm -rf "$tmp"
	echo "$out"
}

# Everything a lane needs to boot: kernel, modules tree, initramfs.
trn_lane_prepare() {
	trn_lane_valid "$1"
	trn_vm_prereqs
	trn_lock "lane-$(trn_lane_base "$1")"
	trn_lane_kernel "$1"
	trn_lane_initramfs "$1" >/dev/null
	! trn_lane_pci "$1" || trn_qemu_pci >/dev/null
	trn_unlock "lane-$(trn_lane_base "$1")"
}

# ------------------------------------------------------------ 6.12 variants

# 6.12-swiotlb: swiotlb=<slabs>,force makes dma-direct bounce every
# streaming mapping (dma_map_sg/page; trn_sim's device is on dma-direct)
# through the software IO TLB, as on a machine whose devices cannot reach
# all of memory or whose memory is encrypted: the device sees a copy that
# only dma_sync_*() (or map/unmap without DMA_ATTR_SKIP_CPU_SYNC) brings up
# to date.  A slab is 2 KiB; the default pool (32768 slabs, 64 MiB) is too
# small for the suite, whose host buffers add up to a few hundred MiB at a
# time, and a full pool fails mappings (ENOMEM), not tests of contents.
TRN_SWIOTLB_SLABS=${TRN_SWIOTLB_SLABS:-262144} # 512 MiB
# The pool is taken out of the guest's memory below 4 GiB at boot, so
# that guest gets 1 GiB more than the others (unless TRN_VM_MEM says).
TRN_SWIOTLB_MEM=3072
# 6.12-iommu: QEMU's Intel IOMMU (VT-d; needs the q35 machine), enabled in
# the kernel, with strict invalidation: an unmapped IOVA is gone from the
# IOTLB before dma_unmap_*() returns (Debian's default is lazy: a flush
# queue, invalidating in batches), so a use after unmap faults at once.
# Interrupt remapping is QEMU's choice (intremap=auto): on under TCG,
# which emulates the interrupt controllers itself (the guest enables it in
# xAPIC mode), off under KVM with its in-kernel irqchip, with which QEMU
# could not remap (it would need kernel-irqchip=split).
TRN_IOMMU_CMDLINE="intel_iommu=on iommu.strict=1"
TRN_IOMMU_QEMU="-machine q35 -device intel-iommu"
# The virtio devices (the 9p shares, rng) behind the IOMMU: modern virtio
# (disable-legacy=on) with VIRTIO_F_ACCESS_PLATFORM (iommu_platform=on), so
# their drivers use the DMA API and the IOMMU translates every request.
TRN_IOMMU_VIRTIO=",disable-legacy=on,iommu_platform=on"

# ------------------------------------------------------------- pci lane

# Whether LANE boots on the modelled parts: pci (6.12's kernel) and
# pci-debug (the debug kernel: lockdep, KASAN, kmemleak on trn_pci).
trn_lane_pci() { case "$1" in pci | pci-debug) return 0 ;; esac; return 1; }

# pci: the 6.12 kernel on q35 with a model of a Trainium2 part
# (tests/pci-lane/trn_part.c) behind a PCIe root port, in a QEMU built here
# from the source of Debian's own (tests/pci-lane/build-qemu), cached in
# build/cache/qemu/.  TRN_PCI_DEVICES lists the parts, one set of the
# model's properties each, each on a root port of its own (default: a Trn2
# and a Trn3 in QEMU mode, and a Trn3 that looks like a real part).
TRN_QEMU_BUILDER=$TRN_ROOT/tests/pci-lane/build-qemu
TRN_QEMU_MODEL=$TRN_ROOT/tests/pci-lane/trn_part.c
TRN_QEMU_PACKAGES="dpkg-dev xz-utils gcc meson ninja-build python3 pkg-config libglib2.0-dev libpixman-1-dev libcap-ng-dev libfdt-dev zlib1g-dev"
TRN_PCI_DEVICES=${TRN_PCI_DEVICES:-"device-id=0x7364,routing-id=0,serial=0x7e57000000000001 device-id=0x7564,routing-id=1,serial=0x7e57000000000002 device-id=0x7565,routing-id=2,serial=0x7e57000000000003,revision=1"}

# The source version of the installed QEMU, whose source the model joins.
_trn_qemu_version() {
	dpkg-query -W -f '${source:Version}' qemu-system-x86 2>/dev/null
}

_trn_qemu_key() {
	{
		_trn_qemu_version
		sha256sum <"$TRN_QEMU_MODEL"
		sha256sum <"$TRN_QEMU_BUILDER"
	} | sha256sum | cut -c1-16
}

# Build the pci lane's QEMU if its inputs changed; prints the binary.
trn_qemu_pci() {
	local c=$TRN_CACHE/qemu key v
	v=$(_trn_qemu_version)
	[ -n "$v" ] || trn_die "[pci] qemu-system-x86 is not installed"
	key=$(_trn_qemu_key)
	trn_lock qemu
	if [ "$(cat "$c/key" 2>/dev/null)" != "$key" ] || [ ! -x "$c/qemu-system-x86_64" ]; then
		# shellcheck disable=SC2086 # a list of packages
		trn_install $TRN_QEMU_PACKAGES || trn_die "cannot install what building QEMU needs"
		trn_log "[pci] building QEMU $v with the Trainium2 model (cache key $key;" \
			"about 5 minutes on 2 cores the first time; log: $c/build.log)"
		"$TRN_QEMU_BUILDER" "$v" "$c" "$key" >&2 ||
			trn_die "[pci] building QEMU failed (log: $c/build.log)"
	fi
	trn_unlock qemu
	echo "$c/qemu-system-x86_64"
}

# How LANE boots: sets _trn_boot_cmdline (kernel parameters after the
# common ones), _trn_boot_mem (MiB), _trn_boot_qemu (extra QEMU arguments,
# before the devices), _trn_boot_virtio (options of every virtio device)
# and _trn_boot_bin (the QEMU binary).
_trn_lane_boot() {
	local i p
	_trn_boot_cmdline=mitigations=off
	_trn_boot_mem=$TRN_VM_MEM
	_trn_boot_qemu=""
	_trn_boot_virtio=""
	_trn_boot_bin=qemu-system-x86_64
	case "$1" in
	pci | pci-debug)
		[ "$1" = pci ] || _trn_boot_cmdline=$TRN_DEBUG_CMDLINE
		_trn_boot_bin=$TRN_CACHE/qemu/qemu-system-x86_64
		[ -x "$_trn_boot_bin" ] || trn_die "[pci] no $_trn_boot_bin (trn_lane_prepare pci builds it)"
		# Native PCIe hot plug (pciehp), as on a host's PCIe slots, not
		# QEMU's ACPI hot plug of root ports (its default since 6.1).
		_trn_boot_qemu="-machine q35 -global ICH9-LPC.acpi-pci-hotplug-with-bridge-support=off"
		i=0
		for p in $TRN_PCI_DEVICES; do
			# pci-debug: no part that looks real. KASAN shadows
			# every kernel mapping, an eighth of its size, and
			# trn_pci maps a real part's 144 GiB of HBM.
			case "$1,$p" in pci-debug,*revision=*) case "$p" in
				*revision=255* | *revision=0xff*) ;;
				*) continue ;;
			esac ;; esac
			_trn_boot_qemu="$_trn_boot_qemu -device pcie-root-port,id=trnrp$i,chassis=$((i + 1)),slot=$((i + 1))"
			_trn_boot_qemu="$_trn_boot_qemu -device trn-part,bus=trnrp$i,id=trn$i,$p"
			i=$((i + 1))
		done
		;;
	# (The kernels built here have no mitigations: nothing to turn off.)
	debug) _trn_boot_cmdline=$TRN_DEBUG_CMDLINE ;;
	dmem) _trn_boot_cmdline="" ;;
	6.12-swiotlb)
		_trn_boot_cmdline="$_trn_boot_cmdline swiotlb=$TRN_SWIOTLB_SLABS,force"
		_trn_boot_mem=${TRN_VM_MEM_SET:-$TRN_SWIOTLB_MEM}
		;;
	6.12-iommu)
		_trn_boot_cmdline="$_trn_boot_cmdline $TRN_IOMMU_CMDLINE"
		_trn_boot_qemu=$TRN_IOMMU_QEMU
		_trn_boot_virtio=$TRN_IOMMU_VIRTIO
		;;
	esac
}

# Whether LANE is a 6.12 variant whose boot parameters trn_lane_probe_*
# check.
trn_lane_probed() { case "$1" in 6.12-swiotlb | 6.12-iommu) return 0 ;; esac; return 1; }

# trn_lane_probe_cmds LANE WHEN
# Shell commands (for the guest's /bin/sh) that record what LANE's boot
# parameters did in $TRN_VM_OUT/dma-probe.WHEN, WHEN being "boot" (first
# thing: run-suite clears the kernel log) or "end".  Nothing for the lanes
# that are not 6.12 variants.
trn_lane_probe_cmds() {
	local lane=$1 when=$2
	case "$lane" in 6.12-swiotlb | 6.12-iommu) ;; *) return 0 ;; esac
	# shellcheck disable=SC2016 # expands in the guest
	printf '{\n\techo "cmdline $(cat /proc/cmdline)"\n'
	case "$lane" in
	6.12-swiotlb)
		cat <<'PROBE'
	dmesg | sed -n -E 's/^\[ *[0-9.]+\] //; /software IO TLB/s/^/dmesg /p; /swiotlb buffer is full/s/^/fault /p'
	for f in io_tlb_nslabs io_tlb_used io_tlb_used_hiwater; do
		[ -r "/sys/kernel/debug/swiotlb/$f" ] && echo "debugfs $f $(cat "/sys/kernel/debug/swiotlb/$f")"
	done
PROBE
		;;
	6.12-iommu)
		cat <<'PROBE'
	dmesg | sed -n -E 's/^\[ *[0-9.]+\] //
		/DMAR: IOMMU enabled|DMAR-IR: Enabled IRQ remapping|iommu: Default domain type|iommu: DMA domain TLB invalidation policy/s/^/dmesg /p
		/DMAR: \[(DMA|INTR)|DMAR: DRHD: handling fault/s/^/fault /p'
	for d in /sys/class/iommu/*; do [ -e "$d" ] && echo "iommu ${d##*/}"; done
	for g in /sys/kernel/iommu_groups/*; do
		[ -d "$g/devices" ] && echo "group ${g##*/} $(cat "$g/type" 2>/dev/null) $(ls "$g/devices" | tr '\n' ' ')"
	done
	for v in /sys/bus/virtio/devices/*; do
		[ -e "$v" ] || continue
		p=$(readlink -f "$v/..")
		g=$(readlink "$p/iommu_group" 2>/dev/null)
		d=$(readlink "$v/driver" 2>/dev/null)
		echo "virtio ${v##*/} pci=${p##*/} group=${g##*/} access_platform=$(cut -c34 "$v/features") driver=${d##*/}"
	done
	# (trn's simulated devices, if loaded: on their own bus, no IOMMU.)
	for t in /sys/bus/trn_sim/devices/*; do
		[ -e "$t" ] || continue
		g=$(readlink "$t/iommu_group" 2>/dev/null)
		echo "trn ${t##*/} group=${g##*/}"
	done
PROBE
		;;
	esac
	# shellcheck disable=SC2016
	printf '} >"$TRN_VM_OUT/dma-probe.%s" 2>&1\n' "$when"
}

# trn_lane_probe_check LANE DIR [used]
# Reads DIR/dma-probe.{boot,end} (trn_lane_probe_cmds) and prints one line
# saying whether LANE's boot parameters took effect; returns 1 if not.
# With "used" (after the suite, trn unloaded), the swiotlb pool must also
# have bounced something, and have every slot back.
trn_lane_probe_check() {
	local lane=$1 used=${3:-} boot=$2/dma-probe.boot end=$2/dma-probe.end
	local bad="" v n hi left mapped faults groups types dmar virtio
	[ -f "$boot" ] || { echo "no $boot: the guest did not record its boot"; return 1; }
	[ -f "$end" ] || end=/dev/null
	faults=$(grep -ch '^fault ' "$boot" "$end" | awk '{ n += $1 } END { print n + 0 }')
	case "$lane" in
	6.12-swiotlb)
		v="swiotlb=$TRN_SWIOTLB_SLABS,force"
		grep -q "^cmdline .*[[:space:]]$v\([[:space:]]\|$\)" "$boot" || bad="$bad, $v not on the command line"
		n=$(awk '$1 == "debugfs" && $2 == "io_tlb_nslabs" { print $3 }' "$boot")
		# x86 prints where the pool is ("mapped [mem ...]") only when it
		# wanted one by itself (memory above 4 GiB): the kernel's own
		# word on the pool is debugfs, and "area num N" is all there is.
		mapped=$(sed -n 's/^dmesg software IO TLB: //p' "$boot" | sed 's/\.$//' | paste -sd ';' | sed 's/;/; /g')
		[ -n "$mapped" ] || bad="$bad, no 'software IO TLB' line in the kernel log"
		if [ -z "$n" ]; then
			bad="$bad, no /sys/kernel/debug/swiotlb/io_tlb_nslabs"
		elif [ "$n" != "$TRN_SWIOTLB_SLABS" ]; then
			bad="$bad, $n slabs instead of $TRN_SWIOTLB_SLABS"
		fi
		hi=$(awk '$1 == "debugfs" && $2 == "io_tlb_used_hiwater" { print $3 }' "$end")
		left=$(awk '$1 == "debugfs" && $2 == "io_tlb_used" { print $3 }' "$end")
		if [ -n "$used" ] && [ "${hi:-0}" = 0 ]; then
			bad="$bad, nothing was bounced (io_tlb_used_hiwater ${hi:-missing})"
		fi
		if [ -n "$used" ] && [ "${left:-0}" != 0 ]; then
			bad="$bad, $left slabs still mapped with trn unloaded"
		fi
		[ "$faults" = 0 ] || bad="$bad, the pool was full $faults times"
		printf 'swiotlb: %s, pool %s slabs = %s MiB (debugfs; kernel log: %s); high water %s slabs = %s MiB, %s in use at the end%s' \
			"$(if grep -q "^cmdline .*$v" "$boot"; then echo "forced ($v)"; else echo "NOT forced"; fi)" \
			"${n:-?}" "$(( ${n:-0} * 2 / 1024 ))" "${mapped:-nothing}" "${hi:-?}" \
			"$(awk -v n="${hi:-0}" 'BEGIN { printf "%.1f", n * 2 / 1024 }')" "${left:-?}" \
			"$(if [ "$faults" = 0 ]; then echo ", never full"; fi)"
		;;
	6.12-iommu)
		for v in $TRN_IOMMU_CMDLINE; do
			grep -q "^cmdline .*[[:space:]]$v\([[:space:]]\|$\)" "$boot" || bad="$bad, $v not on the command line"
		done
		grep -q '^dmesg DMAR: IOMMU enabled' "$boot" || bad="$bad, no 'DMAR: IOMMU enabled' in the kernel log"
		grep -q '^dmesg iommu: DMA domain TLB invalidation policy: strict' "$boot" ||
			bad="$bad, invalidation is not strict"
		dmar=$(awk '$1 == "iommu" { printf "%s%s", s, $2; s = " " }' "$boot")
		[ -n "$dmar" ] || bad="$bad, /sys/class/iommu is empty"
		groups=$(grep -c '^group ' "$boot")
		types=$(awk '$1 == "group" { print $3 }' "$boot" | sort | uniq -c | awk '{ printf "%s%s %s", s, $1, $2; s = ", " }')
		[ "$groups" -gt 0 ] || bad="$bad, no IOMMU groups"
		awk '$1 == "group" && $3 != "DMA" { f = 1 } END { exit !f }' "$boot" &&
			bad="$bad, groups not of type DMA (translated, strict): $types"
		# Virtio devices with a driver (virtio-rng has none in the guest),
		# and those of them that are not translated (no VIRTIO_F_ACCESS_PLATFORM
		# negotiated, or no IOMMU group).
		virtio=$(awk '$1 == "virtio" && $6 != "driver=" && $5 == "access_platform=1" && $4 != "group=" {
			printf "%s%s", s, $2; s = " " }' "$boot")
		v=$(awk '$1 == "virtio" && $6 != "driver=" && ($5 != "access_platform=1" || $4 == "group=") {
			printf "%s%s", s, $2; s = " " }' "$boot")
		[ -z "$TRN_IOMMU_VIRTIO" ] || [ -z "$v" ] || bad="$bad, virtio devices not behind the IOMMU: $v"
		[ "$faults" = 0 ] || bad="$bad, $faults DMAR faults"
		printf 'iommu: %s (%s), %s, %s, %s; %s groups (%s); virtio %s%s' \
			"$(if grep -q '^dmesg DMAR: IOMMU enabled' "$boot"; then echo "DMAR enabled"; else echo "DMAR NOT enabled"; fi)" \
			"${dmar:-no /sys/class/iommu entries}" \
			"$(sed -n 's/^dmesg iommu: Default domain type: \([^ ]*\).*/default domain \1/p' "$boot" | head -n 1)" \
			"$(sed -n 's/^dmesg iommu: DMA domain TLB invalidation policy: \([a-z]*\) mode.*/\1 invalidation/p' "$boot" | head -n 1)" \
			"$(if grep -q '^dmesg DMAR-IR: Enabled IRQ remapping' "$boot"; then echo "interrupt remapping on"; else echo "interrupt remapping off"; fi)" \
			"$groups" "$types" \
			"9p devices translated (ACCESS_PLATFORM): ${virtio:-none}${v:+, not translated: $v}" \
			"$(if [ "$faults" = 0 ]; then echo "; no DMAR faults"; fi)"
		awk '$1 == "trn" { printf "; %s %s", $2, $3 == "group=" ? "not behind the IOMMU (dma-direct)" : "in IOMMU " $3 }' \
			"$boot" "$end"
		;;
	*) return 0 ;;
	esac
	if [ -n "$bad" ]; then
		echo "; NOT AS ASKED: ${bad#, }"
		return 1
	fi
	echo
}

# ------------------------------------------------------------------- guest

_trn_accel() {
	case "$TRN_VM_ACCEL" in
	kvm) echo "-accel kvm" ;;
	*) echo "-accel tcg" ;;
	esac
}

# trn_vm_run LANE SCRIPT [OUTDIR]
# Boot LANE's kernel and run the shell script file SCRIPT (run by /bin/sh in
# the guest, whose root is the host's, read-only, with tmpfs /tmp and /run).
# The script's stdout/stderr go to our stdout (serial console).  Files it
# writes to $TRN_VM_OUT (= /run/trn in the guest) land in OUTDIR.  Returns
# the script's exit status, or 124 on timeout, 125 if the guest died.
trn_vm_run() {
	local lane=$1 script=$2 out=${3:-} c k initrd rc=0 own=""
	c=$(trn_lane_cache "$lane")
	k=$(trn_lane_kver "$lane")
	initrd=$(trn_lane_initramfs "$lane")
	if [ -z "$out" ]; then
		mkdir -p "$TRN_WORK/vm"
		out=$(mktemp -d "$TRN_WORK/vm/run.XXXXXX")
		own=1
	fi
	mkdir -p "$out"
	rm -f "$out/status"
	cp "$script" "$out/cmd.sh"
	echo "$c" >"$out/modroot"
	echo "$TRN_ROOT" >"$out/reporoot"
	_trn_vm_boot "$lane" "$c" "$initrd" "$out" || rc=$?
	if [ "$rc" = 125 ] && [ ! -e "$out/started" ]; then
		# Died while booting, before anything of ours ran (seen rarely
		# under software emulation): that says nothing about trn, so
		# boot once more.
		trn_log "[$lane] guest died before the command started; booting again"
		rc=0
		_trn_vm_boot "$lane" "$c" "$initrd" "$out" || rc=$?
	fi
	[ -n "$own" ] && rm -rf "$out"
	return "$rc"
}

# One boot of a lane's kernel running $out/cmd.sh; returns its exit status
# (124: timed out, 125: no status came back).
_trn_vm_boot() {
	local lane=$1 c=$2 initrd=$3 out=$4 rc=0 v qmp="" fwd=""
	rm -f "$out/status" "$out/started"
	_trn_lane_boot "$lane"
	v=$_trn_boot_virtio
	# The pci lane's tests reach QEMU's monitor (the model's fault knobs,
	# hot unplug) through files in their share: tests/pci-lane/qmp.
	if trn_lane_pci "$lane"; then
		qmp=$(mktemp -d /tmp/trn-qmp.XXXXXX)
		rm -rf "$out/qmp"
		mkdir -p "$out/qmp"
		"$TRN_ROOT/tests/pci-lane/qmp-forward" "$qmp/sock" "$out/qmp" &
		fwd=$!
		_trn_boot_qemu="$_trn_boot_qemu -qmp unix:$qmp/sock,server=on,wait=off"
	fi
	# shellcheck disable=SC2046,SC2086 # word splitting wanted
	timeout --foreground -k 10 "$TRN_VM_TIMEOUT" \
		"$_trn_boot_bin" $(_trn_accel) -cpu max -m "$_trn_boot_mem" -smp "$TRN_VM_SMP" \
		-nodefaults -no-user-config -display none -no-reboot $_trn_boot_qemu \
		-chardev stdio,id=con,signal=off -serial chardev:con \
		-kernel "$c/vmlinuz" -initrd "$initrd" \
		-append "console=ttyS0 panic=-1 quiet loglevel=4 rdinit=/init $_trn_boot_cmdline ${TRN_VM_CMDLINE:-}" \
		-fsdev local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap \
		-device "virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot$v" \
		-fsdev local,id=trnout,path="$out",security_model=none,multidevs=remap \
		-device "virtio-9p-pci,fsdev=trnout,mount_tag=trnout$v" \
		-fsdev local,id=trnroot,path="$TRN_ROOT",security_model=none,readonly=on,multidevs=remap \
		-device "virtio-9p-pci,fsdev=trnroot,mount_tag=trnroot$v" \
		-device "virtio-rng-pci$v" \
		</dev/null || rc=$?
	if [ -n "$fwd" ]; then
		kill "$fwd" 2>/dev/null
		wait "$fwd" 2>/dev/null || true
		rm -rf "$qmp"
	fi
	if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
		trn_log "[$lane] guest timed out after ${TRN_VM_TIMEOUT}s"
		rc=124
	elif [ -s "$out/status" ]; then
		rc=$(cat "$out/status")
	else
		trn_log "[$lane] guest ended without an exit status (kernel panic or qemu error, rc=$rc)"
		rc=125
	fi
	return "$rc"
}

# --------------------------------------------------------------- userspace

# kselftest.h and kselftest_harness.h from Debian's linux-source-6.12,
# extracted once into build/kselftest/.  Prints the directory.
trn_kselftest_dir() {
	local d=$TRN_BUILD/kselftest tarball="" top f
	if [ -f "$d/kselftest.h" ] && [ -f "$d/kselftest_harness.h" ]; then
		echo "$d"
		return 0
	fi
	trn_install linux-source-6.12 xz-utils || trn_die "cannot install linux-source-6.12"
	tarball=""
	for f in /usr/src/linux-source-6.12.tar.*; do [ -f "$f" ] && tarball=$f; done
	[ -n "$tarball" ] || trn_die "no /usr/src/linux-source-6.12.tar.* (package linux-source-6.12)"
	top=$(basename "${tarball%.tar.*}")
	trn_log "extracting the kselftest headers from $tarball"
	rm -rf "$d.tmp"
	mkdir -p "$d.tmp"
	tar -xf "$tarball" -C "$d.tmp" --strip-components=4 \
		"$top/tools/testing/selftests/kselftest.h" \
		"$top/tools/testing/selftests/kselftest_harness.h" ||
		trn_die "cannot extract the kselftest headers from $tarball"
	rm -rf "$d"
	mv "$d.tmp" "$d"
	echo "$d"
}

# Print the path of checkpatch.pl, extracted (once, into the cache) from
# Debian's linux-source-6.12 with the data files it reads.
trn_checkpatch() {
	local d=$TRN_CACHE/checkpatch tarball="" top f
	if [ -x "$d/scripts/checkpatch.pl" ]; then
		echo "$d/scripts/checkpatch.pl"
		return 0
	fi
	trn_install linux-source-6.12 xz-utils perl || trn_die "cannot install linux-source-6.12"
	for f in /usr/src/linux-source-6.12.tar.*; do [ -f "$f" ] && tarball=$f; done
	[ -n "$tarball" ] || trn_die "no /usr/src/linux-source-6.12.tar.* (package linux-source-6.12)"
	top=$(basename "${tarball%.tar.*}")
	rm -rf "$d.tmp"
	mkdir -p "$d.tmp"
	tar -xf "$tarball" -C "$d.tmp" --strip-components=1 \
		"$top/scripts/checkpatch.pl" "$top/scripts/spelling.txt" \
		"$top/scripts/const_structs.checkpatch" ||
		trn_die "cannot extract checkpatch from $tarball"
	rm -rf "$d"
	mv "$d.tmp" "$d"
	echo "$d/scripts/checkpatch.pl"
}

# Configure (first time) and build the userspace with meson into build/.
trn_userspace_build() {
	local ks="" cur opts=()
	[ -f "$TRN_ROOT/meson.build" ] || { trn_log "no meson.build: no userspace to build"; return 0; }
	trn_install meson ninja-build pkg-config libdrm-dev libncurses-dev gcc python3 ||
		trn_die "cannot install the userspace build dependencies"
	mkdir -p "$TRN_CACHE"
	if grep -qs kselftest_dir "$TRN_ROOT"/meson_options.txt "$TRN_ROOT"/meson.options; then
		ks=$(trn_kselftest_dir)
		opts+=("-Dkselftest_dir=$ks")
	fi
	if [ ! -f "$TRN_BUILD/build.ninja" ]; then
		(cd "$TRN_ROOT" && meson setup ${opts[@]+"${opts[@]}"} "$TRN_BUILD") >"$TRN_CACHE/meson-setup.log" 2>&1 || {
			cat "$TRN_CACHE/meson-setup.log" >&2
			trn_die "meson setup failed"
		}
	elif [ -n "$ks" ]; then
		# build/ may have been configured by hand without the guest tests.
		cur=$(python3 -c '
import json, sys
for o in json.load(open(sys.argv[1])):
    if o.get("name") == "kselftest_dir":
        print(o.get("value", ""))
' "$TRN_BUILD/meson-info/intro-buildoptions.json" 2>/dev/null || true)
		if [ "$cur" != "$ks" ]; then
			meson configure "$TRN_BUILD" "-Dkselftest_dir=$ks" >"$TRN_CACHE/meson-setup.log" 2>&1 || {
				cat "$TRN_CACHE/meson-setup.log" >&2
				trn_die "meson configure -Dkselftest_dir=$ks failed"
			}
		fi
	fi
	ninja -C "$TRN_BUILD" >"$TRN_CACHE/ninja.log" 2>&1 || {
		cat "$TRN_CACHE/ninja.log" >&2
		trn_die "building the userspace failed (ninja -C build)"
	}
}

# ---------------------------------------------------------------------- dkms

# `dkms build` of kernel/ for the 6.12 lane, isolated from the system's dkms
# tree: source, dkms tree and signing key all live in build/lanes/6.12/dkms.
# Output goes to build/lanes/6.12/dkms.log.
trn_lane_dkms() {
	local lane=$1 src d k ver log
	src=${TRN_KERNEL_SRC:-$TRN_ROOT/kernel}
	[ -f "$src/dkms.conf" ] || trn_die "no $src/dkms.conf"
	trn_install dkms || trn_die "cannot install dkms"
	ver=$(sed -n 's/^PACKAGE_VERSION="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$src/dkms.conf" | head -n 1)
	[ -n "$ver" ] || trn_die "no PACKAGE_VERSION in $src/dkms.conf"
	k=$(trn_lane_kver "$lane")
	[ "$lane" = 6.12 ] && trn_612_kdir >/dev/null
	d=$TRN_WORK/lanes/$lane/dkms
	log=$TRN_WORK/lanes/$lane/dkms.log
	rm -rf "$d"
	mkdir -p "$d/src/trn-$ver" "$d/tree"
	rsync -a --exclude='*.o' --exclude='*.ko' --exclude='*.mod' --exclude='*.mod.c' \
		--exclude='.*.cmd' --exclude='Module.symvers' --exclude='modules.order' \
		--exclude='/compat/generated/' "$src/" "$d/src/trn-$ver/"
	(
		export mok_signing_key=$d/mok.key mok_certificate=$d/mok.pub
		dkms add -m trn -v "$ver" --sourcetree "$d/src" --dkmstree "$d/tree" &&
			dkms build -m trn -v "$ver" -k "$k" --sourcetree "$d/src" --dkmstree "$d/tree"
	) >"$log" 2>&1 || return 1
	ls "$d/tree/trn/$ver/$k"/*/module/trn.ko* "$d/tree/trn/$ver/$k"/*/module/trn_sim.ko* \
		"$d/tree/trn/$ver/$k"/*/module/trn_pci.ko* >>"$log" 2>&1
}
