#!/bin/bash
# Another emulator for the test host: qemu-system-x86 from this Debian
# release's backports (QEMU 10.0 for Debian 12), unpacked under
# build/testhost/qemu, never installed.  Prints the path of its launcher:
#
#   TESTHOST_QEMU=$(tests/testhost/emulator.sh) bench/vmbench deaths ...
#
# The test host runs on the system's QEMU 7.2 by default; under both, its
# emulated AMD-V mixes the test host's state with its guests' now and then
# (bench/JOURNAL.md, issue 10).  The system's QEMU stays the one that guests
# inside the test host are compared with.  The libraries are those of
# Debian's qemu-system-x86, which tests/deps.sh installs.
set -eu
export LOG_TAG=testhost
. "$(dirname "$0")/../../guest/lib.sh"

TBUILD=$REPO/build/testhost
APTDIR=$TBUILD/apt
DEST=$TBUILD/qemu
LAUNCHER=$DEST/qemu-system-x86_64
PKGS="qemu-system-x86 qemu-system-data seabios"

# shellcheck source=/dev/null
codename=$(. /etc/os-release && printf '%s' "${VERSION_CODENAME:-}")
[ -n "$codename" ] || die "no VERSION_CODENAME in /etc/os-release"
BPO=$codename-backports

# Add $BPO to the private sources wherever $codename itself is listed.
add_backports() {
	local etc=$APTDIR/etc f=$APTDIR/etc/sources.list.d/debian.sources
	if [ -s "$f" ]; then
		awk -v c="$codename" '
			/^[Ss]uites:/ {
				n = split(substr($0, index($0, ":") + 1), s, /[ \t]+/)
				for (i = 1; i <= n; i++) if (s[i] == c) { $0 = $0 " " c "-backports"; break }
			}
			{ print }' "$f" >"$f.tmp"
		mv "$f.tmp" "$f"
	else
		awk -v c="$codename" '
			{ print }
			/^deb[ \t]/ && $3 == c { $3 = c "-backports"; print }' \
			"$etc/sources.list" >"$etc/sources.list.tmp"
		mv "$etc/sources.list.tmp" "$etc/sources.list"
	fi
}

bpo_ready() {
	local out
	if [ ! -f "$APTDIR/apt.conf" ] ||
		! ls "$APTDIR/lists/"*"_${BPO}_"*Packages* >/dev/null 2>&1; then
		apt_write_conf
		add_backports
		log "apt-get update (private config in ${APTDIR#"$REPO"/}, with $BPO)"
		out=$(apt_priv update 2>&1) ||
			die "apt-get update failed: $(apt_why "$out")"
		ls "$APTDIR/lists/"*"_${BPO}_"*Packages* >/dev/null 2>&1 ||
			die "no $BPO package index could be fetched: $(apt_why "$out")"
	fi
	APT_READY=1
}

newest=$(ls -t "$0" "$LAUNCHER" 2>/dev/null | head -n 1) || true
if [ "$newest" != "$LAUNCHER" ]; then
	bpo_ready
	mkdir -p "$TBUILD"
	t=$(tmp_near "$DEST")
	for p in $PKGS; do
		apt_download "$p/$BPO" "$t/debs" || { rm -rf "$t"; exit 1; }
	done
	for d in "$t"/debs/*.deb; do
		dpkg-deb -x "$d" "$t/root"
	done
	r=$DEST/root
	cat >"$t/qemu-system-x86_64" <<EOF
#!/bin/sh
# Launcher of the test host's emulator (tests/testhost/emulator.sh).
QEMU_MODULE_DIR=$r/usr/lib/x86_64-linux-gnu/qemu exec $r/usr/bin/qemu-system-x86_64 \\
	-L $r/usr/share/qemu -L $r/usr/share/seabios "\$@"
EOF
	chmod 755 "$t/qemu-system-x86_64"
	rm -rf "$t/debs" "$DEST"
	mv "$t" "$DEST"
	"$LAUNCHER" --version >/dev/null 2>&1 || {
		ldd "$r/usr/bin/qemu-system-x86_64" | grep 'not found' >&2 || true
		rm -rf "$DEST"
		die "the $BPO emulator does not run here (missing libraries above?)"
	}
	log "emulator: $("$LAUNCHER" --version | head -n 1)"
fi
printf '%s\n' "$LAUNCHER"
