#!/usr/bin/python3
"""tests/smoke/background.py VMM IMAGE OUTDIR: `vmm run ... &` from an
interactive shell, in miniature.

A session of its own has a pseudo-terminal as its controlling terminal
(the shell's); the VMM runs in another process group of that session
(the job '&' makes), its stdin the terminal, with the ECHO guest, which
waits for console input.  The VMM must leave the terminal alone: not
stop on SIGTTOU (raw mode set from the background) before its guest
greets, nor on SIGTTIN when a line is typed at the terminal (its console
reading a terminal it does not own); the terminal's settings unchanged;
SIGTERM still ends it with 143.  The session's leader stays alive
beside it, so the VMM's group is not orphaned (an orphaned group gets
EIO, not the stop, and would hide the bug).

Prints one line saying what went wrong and exits 1; exits 0 when all
held.  Python 3 standard library only.
"""
import fcntl
import os
import signal
import sys
import termios
import time

WAIT_S = 60


def state(pid):
    """'stopped by SIGn', 'exited N', 'killed by SIGn' or None (running)."""
    p, st = os.waitpid(pid, os.WNOHANG | os.WUNTRACED)
    if p == 0:
        return None
    if os.WIFSTOPPED(st):
        return "stopped by %s" % signal.Signals(os.WSTOPSIG(st)).name
    if os.WIFEXITED(st):
        return "exited %d" % os.WEXITSTATUS(st)
    return "killed by %s" % signal.Signals(os.WTERMSIG(st)).name


def session(vmm, image, out):
    """The shell's part, in the child: returns the line of a failure, or
    None."""
    master, slave = os.openpty()
    os.setsid()
    fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
    before = termios.tcgetattr(slave)
    log = os.path.join(out, "background.out")
    err = os.path.join(out, "background.err")
    log_fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    err_fd = os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    pid = os.fork()
    if pid == 0:
        os.setpgid(0, 0)  # the job: its own group, not the foreground
        os.dup2(slave, 0)
        os.dup2(log_fd, 1)
        os.dup2(err_fd, 2)
        os.execv(vmm, [vmm, "run", "-v", "-k", image, "-m", "32M"])
    if os.tcgetpgrp(slave) == pid:
        return "the VMM's group became the foreground: the test is wrong"

    def fail(why):
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        return why

    # Until the guest greets: a VMM that touched the terminal stops first.
    end = time.monotonic() + WAIT_S
    while True:
        s = state(pid)
        if s:
            return "%s before its guest greeted (%s)" % (s, open(err).read().strip()[-300:])
        with open(log, "rb") as f:
            if b"smoke guest up" in f.read():
                break
        if time.monotonic() > end:
            return fail("no greeting after %d s" % WAIT_S)
        time.sleep(0.1)
    # A line typed at the terminal: the shell's, not the VMM's.  Nothing
    # to wait for but the absence of a stop: a console that reads the
    # terminal stops at once (SIGTTIN), well within the second watched.
    os.write(master, b"typed at the shell\n")
    end = time.monotonic() + 1.0
    while time.monotonic() < end:
        s = state(pid)
        if s:
            return "%s after a line was typed at the terminal" % s
        time.sleep(0.05)
    after = termios.tcgetattr(slave)
    if after != before:
        return fail("the terminal's settings changed (raw mode from the background)")
    os.kill(pid, signal.SIGTERM)
    _, st = os.waitpid(pid, 0)
    if not os.WIFEXITED(st) or os.WEXITSTATUS(st) != 143:
        return "SIGTERM: status %r, want 143" % st
    fcntl.fcntl(slave, fcntl.F_SETFL, os.O_NONBLOCK)
    try:
        left = os.read(slave, 4096)
    except BlockingIOError:
        left = b""
    if b"typed at the shell" not in left:
        return "the typed line was not left for the shell (read: %r)" % left
    return None


def main():
    vmm, image, out = sys.argv[1:4]
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            why = session(vmm, image, out)
        except Exception as e:  # the test's own failure
            why = "test error: %r" % e
        os.write(w, (why or "").encode())
        os._exit(0)
    os.close(w)
    why = b""
    while True:
        b = os.read(r, 4096)
        if not b:
            break
        why += b
    os.waitpid(pid, 0)
    if why:
        print(why.decode())
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
