"""guest/lib.sh's helpers for `make guest-kernel` (guest/build.sh kernel):
a patched copy of a source tree that leaves the tree itself alone, a patch
that does not apply named with its hunk, a configuration fragment whose
lines did not all take effect; and the patch series the repository keeps
(guest/patches/noplug) applies to the virtio_blk it was written for."""
import os
import subprocess

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def lib(script, cwd):
    """SCRIPT in bash after sourcing guest/lib.sh: (status, stderr)."""
    r = subprocess.run(["bash", "-c", '. "%s/guest/lib.sh"; %s' % (REPO, script)],
                       cwd=cwd, capture_output=True, text=True)
    return r.returncode, r.stderr


def tree(tmp_path):
    src = tmp_path / "linux-source"
    (src / "drivers" / "block").mkdir(parents=True)
    (src / "drivers" / "block" / "blk.c").write_text("one\ntwo\nthree\nfour\n")
    (src / "README").write_text("unchanged\n")
    return src


def patch(path, hunk):
    path.write_text("--- a/drivers/block/blk.c\n+++ b/drivers/block/blk.c\n"
                    "@@ -1,4 +1,4 @@\n" + hunk)


def test_patched_source_applies_in_order_and_leaves_the_source_alone(tmp_path):
    src = tree(tmp_path)
    p = tmp_path / "patches"
    p.mkdir()
    patch(p / "0001-a.patch", " one\n-two\n+TWO\n three\n four\n")
    patch(p / "0002-b.patch", " one\n TWO\n-three\n+THREE\n four\n")
    (p / "notes.txt").write_text("not a patch\n")
    rc, err = lib('patched_source "%s" "%s" "%s"' % (src, p, tmp_path / "out"), tmp_path)
    assert rc == 0, err
    assert (tmp_path / "out" / "drivers" / "block" / "blk.c").read_text() == \
        "one\nTWO\nTHREE\nfour\n"
    assert (src / "drivers" / "block" / "blk.c").read_text() == "one\ntwo\nthree\nfour\n"
    assert (tmp_path / "out" / "README").read_text() == "unchanged\n"
    assert not [f for f in os.listdir(tmp_path) if f.startswith(".tmp.")]


def test_a_patch_that_does_not_apply_is_named_with_its_hunk(tmp_path):
    src = tree(tmp_path)
    p = tmp_path / "patches"
    p.mkdir()
    patch(p / "0001-a.patch", " one\n-two\n+TWO\n three\n four\n")
    patch(p / "0002-stale.patch", " uno\n-dos\n+DOS\n tres\n cuatro\n")
    rc, err = lib('patched_source "%s" "%s" "%s"' % (src, p, tmp_path / "out"), tmp_path)
    assert rc == 1
    assert "0002-stale.patch does not apply" in err and "Hunk #1 FAILED" in err, err
    assert not (tmp_path / "out").exists()
    assert not [f for f in os.listdir(tmp_path) if f.startswith(".tmp.")]
    empty = tmp_path / "empty"
    empty.mkdir()
    rc, err = lib('patched_source "%s" "%s" "%s"' % (src, empty, tmp_path / "out"), tmp_path)
    assert rc == 1 and "no *.patch in" in err, err


def test_config_check_names_what_kconfig_dropped(tmp_path):
    frag = tmp_path / "frag.config"
    frag.write_text("# comment\nCONFIG_VIRTIO_BLK=y\nCONFIG_NOPE=y\nCONFIG_OFF=n\n")
    cfg = tmp_path / ".config"
    cfg.write_text("CONFIG_VIRTIO_BLK=y\nCONFIG_OFF=y\n")
    rc, err = lib('config_check "%s" "%s"' % (frag, cfg), tmp_path)
    assert rc == 1 and "CONFIG_NOPE=y" in err and "CONFIG_OFF=n" in err, err
    assert "CONFIG_VIRTIO_BLK" not in err
    cfg.write_text("CONFIG_VIRTIO_BLK=y\nCONFIG_NOPE=y\n")
    assert lib('config_check "%s" "%s"' % (frag, cfg), tmp_path)[0] == 0


def test_the_noplug_series_applies_to_linux_6_1(tmp_path):
    """guest/patches/noplug against the virtio_blk.c of the linux-source
    guest/build.sh fetched (skipped before `make guest` has fetched it)."""
    # In the shared cache (GUEST_CACHE), or in the checkout's own.
    shared = subprocess.run(["bash", "-c", '. "%s/guest/lib.sh"; echo "$GUEST_CACHE"' % REPO],
                            capture_output=True, text=True).stdout.strip()
    srcs = sorted(os.path.join(c, d) for c in (shared, os.path.join(REPO, "build", "guest", "cache"))
                  if c and os.path.isdir(c) for d in os.listdir(c)
                  if d.startswith("linux-source-"))
    if not srcs:
        pytest.skip("no linux-source in the guest caches (make guest)")
    src = tmp_path / "src"
    (src / "drivers" / "block").mkdir(parents=True)
    orig = os.path.join(srcs[-1], "drivers", "block", "virtio_blk.c")
    (src / "drivers" / "block" / "virtio_blk.c").write_bytes(open(orig, "rb").read())
    rc, err = lib('patched_source "%s" "%s/guest/patches/noplug" "%s"'
                  % (src, REPO, tmp_path / "out"), tmp_path)
    assert rc == 0, err
    out = (tmp_path / "out" / "drivers" / "block" / "virtio_blk.c").read_text()
    assert ".queue_rqs" not in out and "bd->last &&" not in out
    assert "if (virtqueue_kick_prepare(vblk->vqs[qid].vq))" in out


def test_the_kernel_builds_cache_key_follows_the_content(tmp_path):
    cfg = tmp_path / "frag.config"
    cfg.write_text("CONFIG_VIRTIO_BLK=y\n")
    p = tmp_path / "patches"
    p.mkdir()
    (p / "0001-a.patch").write_text("one\n")

    def key(config=cfg, patches=p, lv="-x", ver="6.1.192-3"):
        r = subprocess.run(["bash", "-c", '. "%s/guest/lib.sh"; kernel_key "$@"' % REPO, "k",
                            ver, str(config), str(patches) if patches else "", lv],
                           capture_output=True, text=True, check=True)
        return r.stdout.strip()
    k0 = key()
    assert k0 == key() and k0.startswith("6.1.192-3 ") and k0.endswith(" -x")
    # The small kernel's key, unchanged in form: version and the fragment's sum.
    small = key(patches=None, lv="")
    assert len(small.split()) == 2 and k0.startswith(small + " ")
    assert key(ver="6.1.193-1") != k0
    (p / "0001-a.patch").write_text("two\n")       # a patch's content
    k1 = key()
    assert k1 != k0
    (p / "0002-b.patch").write_text("three\n")     # one more patch
    k2 = key()
    assert k2 not in (k0, k1)
    (p / "notes.txt").write_text("not a patch\n")  # not part of the series
    assert key() == k2
    cfg.write_text("CONFIG_VIRTIO_BLK=m\n")        # the fragment's content
    assert key() != k2
    assert key(lv="-y") != key()
