# shellcheck shell=bash
# Helpers shared by the scripts that install what trn needs.  Sourced, not run.
#
# Apt sources for extra suites (bookworm-backports, trixie, trixie-backports)
# are derived from the machine's own Debian configuration: we reuse whatever
# archive URI and keyring the host already trusts for its main suite, so no
# mirror host is ever written into this repository.

# Print the archive URI the host uses for Debian's main suites.
trn_debian_uri() {
	local f uri=""
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		uri=$(awk '
			/^URIs:/ { u = $2 }
			/^Suites:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) s = 1 }
			/^$/ { if (u != "" && s && !done) { print u; done = 1 } u = ""; s = 0 }
			END { if (u != "" && s && !done) print u }' "$f")
		[ -n "$uri" ] && break
	done
	if [ -z "$uri" ]; then
		for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
			[ -r "$f" ] || continue
			uri=$(awk '$1 == "deb" && $0 !~ /security/ {
				for (i = 2; i <= NF; i++) if ($i !~ /^\[/ && $i !~ /\]$/) { print $i; exit } }' "$f")
			[ -n "$uri" ] && break
		done
	fi
	[ -n "$uri" ] || { echo "trn: cannot find a Debian archive in the apt configuration" >&2; return 1; }
	echo "${uri%/}"
}

# Print the keyring the host's Debian sources are signed with.
trn_debian_keyring() {
	local k
	k=$(awk '/^Signed-By:/ { print $2; exit }' /etc/apt/sources.list.d/*.sources 2>/dev/null)
	echo "${k:-/usr/share/keyrings/debian-archive-keyring.gpg}"
}

# Add bookworm-backports to the host's apt sources (idempotent).
trn_enable_backports() {
	local f=/etc/apt/sources.list.d/trn-bookworm-backports.sources uri
	[ -f "$f" ] && return 0
	uri=$(trn_debian_uri) || return 1
	cat >"$f" <<SRC
Types: deb
URIs: $uri
Suites: bookworm-backports
Components: main
Signed-By: $(trn_debian_keyring)
SRC
	TRN_APT_UPDATED=
}

trn_apt_update() {
	[ -n "${TRN_APT_UPDATED:-}" ] && return 0
	apt-get update -qq -o DPkg::Lock::Timeout=600 && TRN_APT_UPDATED=1
}

# Install Debian packages that are not installed yet.
trn_apt_install() {
	local p missing=()
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
			missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	trn_apt_update || return 1
	# Another of our tracks may be installing: wait for dpkg's lock.
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		-o DPkg::Lock::Timeout=600 "${missing[@]}"
}
