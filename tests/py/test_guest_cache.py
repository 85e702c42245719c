"""guest/lib.sh's cache outside the tree (GUEST_CACHE): entries named by
what went into them, written whole or not at all, read back only whole,
and nothing of it where GUEST_CACHE is empty."""
import os
import subprocess

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def lib(script, cache, cwd):
    """SCRIPT in bash after sourcing guest/lib.sh with GUEST_CACHE=CACHE:
    (status, stdout, stderr)."""
    env = dict(os.environ, GUEST_CACHE=str(cache))
    r = subprocess.run(["bash", "-c", '. "%s/guest/lib.sh"; %s' % (REPO, script)],
                       cwd=cwd, env=env, capture_output=True, text=True)
    return r.returncode, r.stdout, r.stderr


def test_names_follow_what_went_in(tmp_path):
    def name(label, text):
        rc, out, err = lib('shared_name "%s" "%s"' % (label, text), tmp_path / "c", tmp_path)
        assert rc == 0, err
        return out.strip()
    a = name("kernel-small", "6.1.192-3 abcd")
    assert a == name("kernel-small", "6.1.192-3 abcd") and a.startswith("kernel-small-")
    assert name("kernel-small", "6.1.192-3 abce") != a
    assert name("fio-x86_64", "6.1.192-3 abcd") != a


def test_an_entry_goes_in_whole_and_comes_back(tmp_path):
    cache, src, dest = tmp_path / "cache", tmp_path / "src", tmp_path / "dest"
    src.mkdir()
    (src / "bzImage").write_bytes(b"kernel")
    (src / "config").write_text("CONFIG_X=y\n")
    rc, _, err = lib('shared_get k1 "%s" bzImage config' % dest, cache, tmp_path)
    assert rc == 1 and not dest.exists(), err        # not there yet
    rc, _, err = lib('shared_put k1 "%s" bzImage config' % src, cache, tmp_path)
    assert rc == 0, err
    assert sorted(os.listdir(cache / "built" / "k1")) == ["bzImage", "config"]
    rc, _, err = lib('shared_get k1 "%s" bzImage config' % dest, cache, tmp_path)
    assert rc == 0 and "from the shared cache" in err, err
    assert (dest / "bzImage").read_bytes() == b"kernel"
    assert (dest / "config").read_text() == "CONFIG_X=y\n"
    assert not [f for f in os.listdir(dest) if f.endswith(".tmp")]
    # One already there is kept: the first writer's entry stays.
    (src / "bzImage").write_bytes(b"other")
    assert lib('shared_put k1 "%s" bzImage config' % src, cache, tmp_path)[0] == 0
    assert (cache / "built" / "k1" / "bzImage").read_bytes() == b"kernel"
    assert not [f for f in os.listdir(cache / "built") if f.startswith(".tmp.")]


def test_half_an_entry_is_never_taken(tmp_path):
    cache, src, dest = tmp_path / "cache", tmp_path / "src", tmp_path / "dest"
    src.mkdir()
    (src / "bzImage").write_bytes(b"kernel")
    # A file missing from the source: nothing is written.
    assert lib('shared_put k2 "%s" bzImage vmlinux' % src, cache, tmp_path)[0] == 0
    assert not (cache / "built" / "k2").exists()
    assert not [f for f in os.listdir(cache / "built") if f.startswith(".tmp.")]
    # An entry without one of the files asked for is not taken.
    (cache / "built" / "k3").mkdir(parents=True)
    (cache / "built" / "k3" / "bzImage").write_bytes(b"kernel")
    rc, _, _ = lib('shared_get k3 "%s" bzImage vmlinux' % dest, cache, tmp_path)
    assert rc == 1 and not dest.exists()


def test_no_shared_cache_when_guest_cache_is_empty(tmp_path):
    src, dest = tmp_path / "src", tmp_path / "dest"
    src.mkdir()
    (src / "f").write_text("x")
    rc, out, err = lib('shared_put k "%s" f; shared_get k "%s" f; echo "get=$?";'
                       ' echo "debs=$DEBDIR"' % (src, dest), "", tmp_path)
    assert rc == 0, err
    assert "get=1" in out and not dest.exists()
    # The .debs stay in the checkout's own cache, as before.
    assert "debs=%s/build/guest/cache/debs" % REPO in out
    rc, out, _ = lib('echo "$DEBDIR"; guest_arch arm64 2>/dev/null; echo "$DEBDIR"',
                     tmp_path / "c", tmp_path)
    assert out.split()[0] == str(tmp_path / "c" / "debs-amd64")
    if rc == 0 and len(out.split()) > 1:  # arm64 is a dpkg architecture here
        assert out.split()[1] == str(tmp_path / "c" / "debs-arm64")


def test_the_default_is_outside_the_tree(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in ("GUEST_CACHE", "XDG_CACHE_HOME")}
    env["HOME"] = str(tmp_path)
    r = subprocess.run(["bash", "-c", '. "%s/guest/lib.sh"; echo "$GUEST_CACHE"' % REPO],
                       env=env, capture_output=True, text=True)
    assert r.stdout.strip() == str(tmp_path / ".cache" / "vmm-guest")
    env["XDG_CACHE_HOME"] = str(tmp_path / "xdg")
    r = subprocess.run(["bash", "-c", '. "%s/guest/lib.sh"; echo "$GUEST_CACHE"' % REPO],
                       env=env, capture_output=True, text=True)
    assert r.stdout.strip() == str(tmp_path / "xdg" / "vmm-guest")


def test_a_cached_deb_is_found_in_either_cache_and_a_miss_is_no_failure(tmp_path):
    """Under build.sh's set -e a miss must not end the build (it did, with
    no word, in a checkout whose .debs were all in its own cache), and a
    checkout's own debs/ from before the shared cache still counts."""
    shared, gbuild = tmp_path / "shared", tmp_path / "gbuild"
    (gbuild / "cache" / "debs").mkdir(parents=True)
    (shared / "debs-amd64").mkdir(parents=True)
    own = gbuild / "cache" / "debs" / "busybox-static_1.35_amd64.deb"
    own.write_text("")
    env = dict(os.environ, GUEST_CACHE=str(shared), GBUILD=str(gbuild))
    script = ('set -e; . "%s/guest/lib.sh"; a=$(deb_cached nosuch); echo "miss=[$a]";'
              ' b=$(deb_cached busybox-static); echo "own=$b"' % REPO)
    r = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "miss=[]" in r.stdout and "own=%s" % own in r.stdout, r.stdout
    new = shared / "debs-amd64" / "busybox-static_1.36_amd64.deb"
    new.write_text("")
    r = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True)
    assert "own=%s" % new in r.stdout, r.stdout  # the shared one first
