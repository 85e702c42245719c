"""QEMU's human monitor on a unix socket: how the deaths scenario reads
a stuck QEMU guest's registers before it stops it, as our VMM prints
its vCPUs' registers at a stop with -v (issue 10: whose CR3 holds the
bad page-table root)."""
import re
import socket
import time

PROMPT = b"(qemu) "
# The monitor's line editor echoes what it is sent, with cursor moves.
_ESCAPES = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def argv(sock_path):
    """QEMU's options for a monitor at SOCK_PATH that QEMU does not wait
    for."""
    return ["-monitor", "unix:%s,server=on,wait=off" % sock_path]


def _read_to_prompt(s, deadline):
    buf = b""
    while not buf.endswith(PROMPT):
        s.settimeout(max(0.01, deadline - time.monotonic()))
        chunk = s.recv(65536)
        if not chunk:
            raise OSError("the monitor closed its socket")
        buf += chunk
    return buf


def ask(sock_path, command, timeout=20.0):
    """COMMAND's answer, without the echo and the prompt.  OSError
    (socket.timeout included) if the monitor does not answer in time."""
    deadline = time.monotonic() + timeout
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(sock_path)
        _read_to_prompt(s, deadline)  # the greeting
        s.sendall(command.encode() + b"\n")
        raw = _read_to_prompt(s, deadline)[:-len(PROMPT)]
    text = _ESCAPES.sub("", raw.decode("utf-8", "replace")).replace("\r", "")
    lines = text.split("\n")
    if lines and lines[0].strip().endswith(command):
        lines = lines[1:]  # the echoed command
    return "\n".join(lines)


def save_registers(sock_path, path):
    """Every vCPU's registers (info registers -a) into PATH; a monitor
    that does not answer leaves its error there instead."""
    try:
        out = ask(sock_path, "info registers -a")
    except OSError as e:
        out = "no answer from QEMU's monitor: %s\n" % e
    with open(path, "w") as f:
        f.write(out)
