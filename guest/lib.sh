# shellcheck shell=bash
# Shared helpers for guest/build.sh and tests/testhost/mkinitramfs.sh.
# Sourced, not executed. Needs: bash, apt-get, dpkg-deb, coreutils.
#
# Everything fetched is cached under build/guest/cache/; a step whose output
# exists is skipped.  What takes minutes to fetch or build (Debian's .debs,
# the kernel source, the kernels and fio built here) also goes to a cache
# outside the tree that every checkout on the machine shares (GUEST_CACHE,
# below), under names made of what went into it.  Every step builds into a temporary path and renames it
# at the end, so an interrupted or failed run never leaves a half-built
# output that a later run would take as complete.
#
# GUEST_REFRESH=1 re-reads the package indexes and re-resolves the kernel
# package (to pick up a newer Debian kernel); otherwise nothing is fetched
# once the cache is filled.
#
# Two architectures (guest_arch): x86_64, the default, in build/guest/,
# and arm64 in build/guest/arm64/ (its own cache: Debian's arm64 packages,
# `apt-get download PKG:arm64`, which needs `dpkg --add-architecture arm64`;
# programs cross-compiled with aarch64-linux-gnu-gcc).  The private apt
# configuration and its indexes (build/guest/apt/) serve both.

set -o pipefail

REPO=${REPO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
GBUILD=${GBUILD:-$REPO/build/guest}
GCACHE=$GBUILD/cache
APTDIR=$GBUILD/apt
# The architecture built for (guest_arch changes these): its name here,
# Debian's name for it, and the prefix of its compiler and binutils.
GARCH=x86_64
DEBARCH=amd64
CROSS=
GBUILD_X86=$GBUILD
# The cache outside the tree (default ~/.cache/vmm-guest): a fresh clone,
# a second checkout or `make clean` fetches and builds none of it again.
# GUEST_CACHE= (empty) keeps everything under build/.  Entries are
# written under a temporary name and renamed, so checkouts building at
# the same time never see half an entry.
GUEST_CACHE=${GUEST_CACHE-${XDG_CACHE_HOME:-${HOME:-/nonexistent}/.cache}/vmm-guest}
DEBDIR=${GUEST_CACHE:+$GUEST_CACHE/debs-$DEBARCH}
DEBDIR=${DEBDIR:-$GCACHE/debs}

log() { printf '%s: %s\n' "${LOG_TAG:-guest}" "$*" >&2; }
die() { printf '%s: error: %s\n' "${LOG_TAG:-guest}" "$*" >&2; exit 1; }

# guest_arch ARCH: build for ARCH from now on: x86_64 (or amd64; the
# default: build/guest/) or arm64 (or aarch64: build/guest/arm64/, with its
# own cache).  Sets GARCH, DEBARCH, CROSS, GBUILD, GCACHE and DEBDIR.
guest_arch() {
	case $1 in
	x86_64 | x86 | amd64) GARCH=x86_64 DEBARCH=amd64 GBUILD=$GBUILD_X86 ;;
	arm64 | aarch64) GARCH=arm64 DEBARCH=arm64 GBUILD=$GBUILD_X86/arm64 ;;
	*) die "unknown architecture '$1' (x86_64 or arm64)" ;;
	esac
	GCACHE=$GBUILD/cache
	DEBDIR=${GUEST_CACHE:+$GUEST_CACHE/debs-$DEBARCH}
	DEBDIR=${DEBDIR:-$GCACHE/debs}
	CROSS=
	if [ "$(dpkg --print-architecture)" != "$DEBARCH" ]; then
		CROSS=aarch64-linux-gnu-
		[ "$GARCH" = arm64 ] || die "cannot build for $GARCH on $(dpkg --print-architecture)"
		case " $(dpkg --print-foreign-architectures | xargs) " in
		*" $DEBARCH "*) ;;
		*)
			die "$DEBARCH is not a dpkg architecture here: dpkg --add-architecture $DEBARCH && apt-get update" ;;
		esac
	fi
}

# deb_name PKG: PKG as apt names it for the architecture built for
# (busybox-static:arm64 when that is a foreign one).
deb_name() {
	if [ -n "$CROSS" ]; then printf '%s:%s\n' "$1" "$DEBARCH"; else printf '%s\n' "$1"; fi
}

# mktemp next to a final path, so that the final rename stays on one fs.
tmp_near() { mktemp -d "$(dirname "$1")/.tmp.$(basename "$1").XXXXXX"; }

# Write the private apt configuration.  Its source list is derived from the
# machine's own Debian sources, with deb-src added, so no mirror host name
# lives in this repository.
apt_write_conf() {
	local etc=$APTDIR/etc src=/etc/apt/sources.list.d/debian.sources
	mkdir -p "$etc/sources.list.d" "$etc/preferences.d" \
		"$APTDIR/lists/partial" "$APTDIR/archives/partial"
	if [ -s "$src" ]; then
		# deb822: every enabled stanza whose Types has deb gets deb-src.
		awk '
			/^[Tt]ypes:/ {
				n = split(substr($0, index($0, ":") + 1), t, /[ \t]+/)
				has = 0
				for (i = 1; i <= n; i++) if (t[i] == "deb") has = 1
				if (has) { print "Types: deb deb-src"; next }
			}
			{ print }' "$src" >"$etc/sources.list.d/debian.sources.tmp"
		mv "$etc/sources.list.d/debian.sources.tmp" \
			"$etc/sources.list.d/debian.sources"
		: >"$etc/sources.list"
	elif [ -s /etc/apt/sources.list ]; then
		# one-line format: each "deb ..." line also as "deb-src ...".
		awk '
			/^[ \t]*deb[ \t]/ {
				sub(/^[ \t]*/, ""); rest = substr($0, 4)
				if (!seen["deb" rest]++) print "deb" rest
				if (!seen["deb-src" rest]++) print "deb-src" rest
			}' /etc/apt/sources.list >"$etc/sources.list.tmp"
		mv "$etc/sources.list.tmp" "$etc/sources.list"
		rm -f "$etc/sources.list.d/debian.sources"
	else
		die "no Debian apt sources found (/etc/apt/sources.list.d/debian.sources or /etc/apt/sources.list)"
	fi
	cat >"$APTDIR/apt.conf.tmp" <<EOF
Dir::Etc::SourceList "$etc/sources.list";
Dir::Etc::SourceParts "$etc/sources.list.d";
Dir::Etc::Preferences "$etc/preferences";
Dir::Etc::PreferencesParts "$etc/preferences.d";
Dir::State::Lists "$APTDIR/lists";
Dir::Cache "$APTDIR/cache";
Dir::Cache::Archives "$APTDIR/archives";
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
APT::Sandbox::User "root";
Acquire::Languages "none";
Acquire::IndexTargets::deb::Contents-deb::DefaultEnabled "false";
EOF
	mv "$APTDIR/apt.conf.tmp" "$APTDIR/apt.conf"
}

apt_priv() { APT_CONFIG=$APTDIR/apt.conf apt-get -q "$@"; }
apt_cache_priv() { APT_CONFIG=$APTDIR/apt.conf apt-cache "$@"; }

# Make sure the private indexes exist (fetch them once, or on GUEST_REFRESH).
APT_READY=
apt_ready() {
	[ -n "$APT_READY" ] && return 0
	# A foreign architecture's indexes are there only if it was a dpkg
	# architecture when they were fetched.
	if [ -n "${GUEST_REFRESH:-}" ] || [ ! -f "$APTDIR/apt.conf" ] ||
		! ls "$APTDIR/lists/"*Sources* >/dev/null 2>&1 ||
		{ [ -n "$CROSS" ] &&
			! ls "$APTDIR/lists/"*"binary-${DEBARCH}_Packages"* >/dev/null 2>&1; }; then
		apt_write_conf
		log "apt-get update (private config in ${APTDIR#"$REPO"/})"
		local out
		if ! out=$(apt_priv update 2>&1); then
			printf '%s\n' "$out" >&2
			die "apt-get update failed with the sources derived from this machine: $(apt_why "$out")"
		fi
		# apt only warns when an index cannot be fetched, and goes
		# on with the old one, or none: say so.
		if printf '%s\n' "$out" | grep -q '^[WE]:'; then
			printf '%s\n' "$out" | grep '^[WE]:' >&2
			log "warning: some package indexes could not be fetched (above)"
		fi
	fi
	APT_READY=1
}

# apt_why OUTPUT: the line of apt's OUTPUT that says why it failed.
apt_why() {
	printf '%s\n' "$1" | grep -E '^E:' | head -n 1 | grep . ||
		printf '%s\n' "$1" | grep -E '^(Err|W):' | head -n 1 | grep . ||
		printf '%s\n' "$1" | tail -n 1
}

# apt_download PKG DESTDIR: fetch one binary package into DESTDIR; on
# failure say which package and why, and return 1.
apt_download() {
	local pkg=$1 dest=$2 out
	apt_ready
	mkdir -p "$dest"
	if ! out=$(cd "$dest" && apt_priv download "$pkg" 2>&1); then
		printf '%s\n' "$out" | grep -E '^(E|W|Err):' >&2
		log "error: download of package '$pkg' failed: $(apt_why "$out")"
		return 1
	fi
}

# deb_cached PKG: path of the cached .deb of PKG (any version), or nothing.
# DEBDIR is the shared cache's debs-ARCH (the file names carry package
# and version: that is their key), or build/.../cache/debs without one.
# A checkout's own debs/ from before the shared cache still counts.  A
# miss is no failure (status 0, nothing printed): under set -e it must
# not end the build.
deb_cached() {
	{ ls "$DEBDIR/$1"_*.deb; ls "$GCACHE/debs/$1"_*.deb; } 2>/dev/null | head -n 1 || true
}

# fetch_deb PKG: print the path of the .deb of PKG (of the architecture
# built for), downloading it once.
fetch_deb() {
	local pkg=$1 deb
	deb=$(deb_cached "$pkg")
	if [ -z "$deb" ] || [ -n "${GUEST_REFRESH:-}" ]; then
		local t
		mkdir -p "$DEBDIR"
		t=$(tmp_near "$DEBDIR/$pkg")
		apt_download "$(deb_name "$pkg")" "$t" || { rm -rf "$t"; exit 1; }
		deb=$(ls "$t/$pkg"_*.deb 2>/dev/null | head -n 1)
		[ -n "$deb" ] || die "download of package '$pkg' produced no .deb"
		rm -f "$DEBDIR/$pkg"_*.deb
		mv "$deb" "$DEBDIR/"
		rm -rf "$t"
		deb=$DEBDIR/$(basename "$deb")
		log "fetched $(basename "$deb")"
	fi
	printf '%s\n' "$deb"
}

# kernel_pkg: the versioned kernel package Debian's linux-image-amd64
# currently depends on (e.g. linux-image-6.1.0-57-amd64), resolved once and
# remembered in cache/kernel.pkg.  For arm64 the same kernel's arm64
# flavour (linux-image-6.1.0-57-arm64): the x86 guest's kernel package
# (resolved now if it never was) with -amd64 turned into -arm64, so that
# both guests run one kernel version; where that cannot be had (an arm64
# machine without amd64 indexes), what linux-image-arm64 depends on.
kernel_pkg() {
	local f=$GCACHE/kernel.pkg pkg=
	if [ -s "$f" ] && [ -z "${GUEST_REFRESH:-}" ]; then
		cat "$f"
		return
	fi
	apt_ready
	if [ "$GARCH" != x86_64 ]; then
		pkg=$({ guest_arch x86_64 && kernel_pkg; } 2>/dev/null) &&
			pkg=${pkg%-amd64}-$DEBARCH &&
			apt_cache_priv show --no-all-versions "$(deb_name "$pkg")" >/dev/null 2>&1 ||
			pkg=
	fi
	[ -n "$pkg" ] ||
		pkg=$(apt_cache_priv show --no-all-versions "$(deb_name "linux-image-$DEBARCH")" 2>/dev/null |
			sed -n 's/^Depends: *//p' | tr ',' '\n' |
			sed -n "s/^ *\(linux-image-[0-9][^ ]*-$DEBARCH\).*/\1/p" | head -n 1)
	[ -n "$pkg" ] || die "cannot resolve the versioned kernel package from linux-image-$DEBARCH (apt-cache show linux-image-$DEBARCH gave no linux-image-*-$DEBARCH dependency)"
	mkdir -p "$GCACHE"
	printf '%s\n' "$pkg" >"$f.tmp" && mv "$f.tmp" "$f"
	printf '%s\n' "$pkg"
}

# kernel_tree: extract the kernel package once; print the tree's path.
# The tree holds boot/vmlinuz-<rel> and lib/modules/<rel>/.
kernel_tree() {
	local pkg deb dir t
	pkg=$(kernel_pkg) || exit 1
	dir=$GCACHE/$pkg
	if [ ! -d "$dir" ]; then
		deb=$(fetch_deb "$pkg") || exit 1
		t=$(tmp_near "$dir")
		dpkg-deb -x "$deb" "$t" || die "dpkg-deb -x $deb failed"
		rm -rf "$dir"
		mv "$t" "$dir"
	fi
	printf '%s\n' "$dir"
}

# kernel_release TREE: the kernel release string (lib/modules/<rel>).
kernel_release() {
	local d
	d=$(ls -d "$1"/lib/modules/*/ 2>/dev/null | head -n 1)
	[ -n "$d" ] || die "no lib/modules in $1"
	basename "$d"
}

# busybox_bin: path of a static busybox from Debian's busybox-static.
busybox_bin() {
	local deb out=$GCACHE/busybox t
	if [ ! -x "$out" ] || [ -n "${GUEST_REFRESH:-}" ]; then
		deb=$(fetch_deb busybox-static) || exit 1
		t=$(tmp_near "$out")
		dpkg-deb -x "$deb" "$t" || die "dpkg-deb -x $deb failed"
		[ -x "$t/bin/busybox" ] || die "busybox-static has no bin/busybox"
		mv "$t/bin/busybox" "$out.tmp" && mv "$out.tmp" "$out"
		rm -rf "$t"
	fi
	printf '%s\n' "$out"
}

# root_busybox BUSYBOX ROOT: busybox in ROOT/bin with a link per applet.
root_busybox() {
	local a list
	cp "$1" "$2/bin/busybox"
	list=$(busybox_applets "$1") || return 1
	for a in $list; do
		[ "$a" = busybox ] || ln -s busybox "$2/bin/$a"
	done
}

# busybox_applets BUSYBOX: its applets' names, from `BUSYBOX --list`; a
# busybox of another architecture cannot run here, so its names are read
# from the binary itself: busybox keeps them as one run of NUL-terminated
# strings in C order, "[", "[[", "acpid", ... (its applet_names table).
# For Debian's amd64 busybox-static both ways give the same 269 names.
busybox_applets() {
	local names
	if "$1" --list 2>/dev/null; then
		return 0
	fi
	names=$(tr '\0' '\n' <"$1" | LC_ALL=C awk '
		prev == "[" && $0 == "[[" { on = 1; print "["; last = "[" }
		on {
			if ($0 !~ /^[a-z0-9_.[-]+$/ || $0 <= last) exit
			print; last = $0; next
		}
		{ prev = $0 }')
	[ "$(printf '%s\n' "$names" | grep -c .)" -ge 50 ] ||
		{ log "no applet list found in $1"; return 1; }
	printf '%s\n' "$names"
}

# root_modules KTREE REL ROOT LIST MOD...: MODs and what they depend on
# from the kernel tree into ROOT/lib/modules/REL, their paths in insmod
# order in ROOT/etc/modules.load and (relative) in LIST; 1 if one is
# missing.
root_modules() {
	local ktree=$1 rel=$2 root=$3 list=$4 ko
	shift 4
	mod_closure "$ktree/lib/modules/$rel" "$@" >"$list" || return 1
	while read -r ko; do
		mkdir -p "$root/lib/modules/$rel/$(dirname "$ko")"
		cp "$ktree/lib/modules/$rel/$ko" "$root/lib/modules/$rel/$ko"
		printf '/lib/modules/%s/%s\n' "$rel" "$ko"
	done <"$list" >"$root/etc/modules.load"
}

# config_check FRAGMENT CONFIG: every line of FRAGMENT took effect in
# CONFIG (Kconfig drops a symbol whose dependencies are off, silently).
config_check() {
	local line sym bad=
	while read -r line; do
		case $line in CONFIG_*) ;; *) continue ;; esac
		sym=${line%%=*}
		if [ "${line#*=}" = n ]; then
			grep -q "^$sym=" "$2" && bad="$bad $line"
		else
			grep -qxF "$line" "$2" || bad="$bad $line"
		fi
	done <"$1"
	[ -z "$bad" ] || die "${1#"$REPO"/}: not in the resolved configuration:$bad"
}

# patched_source SRC PATCHES OUT: a copy of SRC (hard links: patch
# replaces each file it changes, so SRC stays as it is) with every
# PATCHES/*.patch applied in name order (-p1); stops at the first that
# does not apply, naming the file and the hunk that failed.
patched_source() {
	local src=$1 patches=$2 out=$3 t p n=0
	t=$(tmp_near "$out")
	cp -al "$src" "$t/src" || { rm -rf "$t"; die "cannot copy $src"; }
	for p in "$patches"/*.patch; do
		[ -f "$p" ] || continue
		n=$((n + 1))
		if ! patch -d "$t/src" -p1 --batch --forward --no-backup-if-mismatch \
			<"$p" >"$t/patch.log" 2>&1; then
			sed 's/^/  | /' "$t/patch.log" >&2
			p="patch ${p#"$REPO"/} does not apply to $(basename "$src"): $(grep -m1 -E 'FAILED|malformed|Only garbage|can.t find' "$t/patch.log" || echo 'see above')"
			rm -rf "$t"
			die "$p"
		fi
	done
	[ "$n" -gt 0 ] || { rm -rf "$t"; die "no *.patch in ${patches#"$REPO"/}"; }
	rm -rf "$out"
	mv "$t/src" "$out"
	rm -rf "$t"
}

# shared_name LABEL TEXT: the name, in the shared cache, of what TEXT
# (everything that went into it) made: LABEL-<its checksum>.
shared_name() { printf '%s-%s\n' "$1" "$(printf '%s' "$2" | sha256sum | cut -c1-16)"; }

# toolchain: the compiler and C libraries a build here links with, as
# text for shared_name.
toolchain() {
	"${CROSS}gcc" -dumpmachine
	"${CROSS}gcc" -dumpfullversion
	dpkg-query -W -f '${Package} ${Version}\n' 'libc6-dev*' 'libaio-dev*' 2>/dev/null | LC_ALL=C sort
}

# shared_get NAME DEST FILE...: copy FILEs of the shared cache's entry NAME
# into DEST; status 1 (nothing copied) without a shared cache or without
# that entry.
shared_get() {
	local name=$1 dest=$2 f
	shift 2
	[ -n "$GUEST_CACHE" ] || return 1
	for f in "$@"; do [ -f "$GUEST_CACHE/built/$name/$f" ] || return 1; done
	mkdir -p "$dest"
	for f in "$@"; do
		cp "$GUEST_CACHE/built/$name/$f" "$dest/$f.tmp" && mv "$dest/$f.tmp" "$dest/$f" ||
			die "could not copy $f from the shared cache ($GUEST_CACHE/built/$name)"
	done
	log "$name: from the shared cache ($GUEST_CACHE)"
}

# shared_put NAME SRC FILE...: FILEs of SRC as the shared cache's entry
# NAME (whole or not at all; one already there is kept).
shared_put() {
	local name=$1 src=$2 t f
	shift 2
	[ -n "$GUEST_CACHE" ] || return 0
	mkdir -p "$GUEST_CACHE/built" || return 0
	[ ! -d "$GUEST_CACHE/built/$name" ] || return 0
	t=$(tmp_near "$GUEST_CACHE/built/$name") || return 0
	for f in "$@"; do cp "$src/$f" "$t/$f" || { rm -rf "$t"; return 0; }; done
	mv -T "$t" "$GUEST_CACHE/built/$name" 2>/dev/null || rm -rf "$t"
}

# shared_tmp_clean: temporary entries of the shared cache left by runs
# that died (a day old: one of a build still running is younger).
shared_tmp_clean() {
	[ -n "$GUEST_CACHE" ] && [ -d "$GUEST_CACHE" ] || return 0
	find "$GUEST_CACHE" -maxdepth 2 -name '.tmp.*' -mmin +1440 -exec rm -rf {} + 2>/dev/null || true
}

# kernel_key VERSION CONFIG PATCHES LOCALVERSION: what a built kernel is
# made of, as one line: the source version, the checksum of the config
# fragment's content, then (when there are any) the checksum of the
# patches' content in the order they apply, and the LOCALVERSION.  The
# small kernel's (no patches, no LOCALVERSION) is "VERSION CFGSUM", as it
# has always been.
kernel_key() {
	local key
	key="$1 $(sha256sum <"$2" | cut -c1-16)"
	[ -z "$3" ] || key="$key $(cat "$3"/*.patch 2>/dev/null | sha256sum | cut -c1-16)"
	[ -z "$4" ] || key="$key $4"
	printf '%s\n' "$key"
}

# root_cpio ROOT OUT: ROOT as an uncompressed newc cpio, byte for byte the
# same for the same tree.
root_cpio() {
	(cd "$1" && find . -mindepth 1 | LC_ALL=C sort |
		cpio -o -H newc -R 0:0 --reproducible --quiet) >"$2"
}

# mod_closure MODDIR MOD...: print the .ko paths (relative to MODDIR, which
# is lib/modules/<rel>) of MODs and of everything they depend on,
# dependencies first, each once: the order to insmod them in.  Names may use
# - or _.  Debian's package carries no modules.dep (its postinst runs
# depmod), so this reads the depends= field of each module's .modinfo
# section itself, needing nothing but coreutils.  A MOD that the kernel
# has built in (MODDIR/modules.builtin; arm64's virtio and virtio_ring)
# needs nothing; a MOD written NAME? is left out, with a line, where the
# kernel has no such module at all (arm64 has no pvpanic).
mod_closure() {
	local mdir=$1 idx
	shift
	idx=$(cd "$mdir" && find kernel -name '*.ko*' | awk '{
		b = $0; sub(/.*\//, "", b); sub(/\.ko(\.[a-z]+)?$/, "", b)
		gsub(/-/, "_", b); print b, $0 }') || return 1
	local -A seen=()
	# _mod_path NAME: the .ko of NAME, or nothing.
	_mod_path() {
		printf '%s\n' "$idx" | awk -v m="${1//-/_}" '$1 == m { print $2; exit }'
	}
	_mod_visit() {
		local m=${1//-/_} p d
		[ -n "${seen[$m]:-}" ] && return 0
		seen[$m]=1
		p=$(_mod_path "$m")
		[ -n "$p" ] || { log "module $m not found in $mdir"; return 1; }
		case $p in
		*.ko) d=$(tr '\0' '\n' <"$mdir/$p" | sed -n 's/^depends=//p' | head -n 1) ;;
		*) die "compressed module $p: not supported" ;;
		esac
		local IFS=,
		for d in $d; do
			[ -n "$d" ] && { _mod_visit "$d" || return 1; }
		done
		printf '%s\n' "$p"
	}
	local m n
	for m in "$@"; do
		n=${m%\?}
		# Built in (modules.builtin lists kernel/.../NAME.ko): nothing to load.
		if [ -f "$mdir/modules.builtin" ] && awk -v m="${n//-/_}" '{
			sub(/.*\//, ""); sub(/\.ko$/, ""); gsub(/-/, "_")
			if ($0 == m) f = 1 } END { exit !f }' "$mdir/modules.builtin"; then
			continue
		fi
		if [ "$n" != "$m" ] && [ -z "$(_mod_path "$n")" ]; then
			log "module $n: not in this kernel (optional): left out"
			continue
		fi
		_mod_visit "$n" || return 1
	done
}
