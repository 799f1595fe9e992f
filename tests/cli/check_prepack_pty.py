"""packwise prepack on a terminal (a pseudo-terminal here) shows one progress line per
weight and ends with its summary line; through a pipe it prints no progress (issue 17)."""
import os
import pty
import subprocess
import sys


def run_in_pty(argv):
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(argv[0], argv)
    chunks = []
    while True:
        try:
            data = os.read(fd, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), b"".join(chunks).decode(errors="replace")


def main():
    packwise, work = sys.argv[1:3]
    os.makedirs(work, exist_ok=True)
    model, cache = os.path.join(work, "m.gguf"), os.path.join(work, "m.pwc")
    s = subprocess.run([packwise, "synth", "-o", model, "--layers", "1", "--dim", "256", "--ffn", "512"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if s.returncode != 0:
        print("synth failed:", s.stderr)
        return 1
    rc, text = run_in_pty([packwise, "prepack", model, "-o", cache, "--policy", "fastest"])
    lines = text.replace("\r", "\n").splitlines()
    progress = [l for l in lines if l.startswith("[1/") or l.startswith("[2/")]
    summary = [l for l in lines if l.startswith("packed ") and "MiB of weights into" in l]
    ok_tty = rc == 0 and len(progress) >= 2 and len(summary) == 1
    print("terminal: exit %d, %d progress lines, summary %r" % (rc, len(progress), summary))
    os.unlink(cache)
    p = subprocess.run([packwise, "prepack", model, "-o", cache, "--policy", "fastest"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ok_pipe = p.returncode == 0 and "[1/" not in p.stdout + p.stderr
    print("pipe: exit %d, progress shown: %s" % (p.returncode, "[1/" in p.stdout + p.stderr))
    return 0 if ok_tty and ok_pipe else 1


if __name__ == "__main__":
    sys.exit(main())
