#!/usr/bin/env python3
"""RSS per idle WebSocket connection, measured like `compare --scenario idle`: the server's
RSS (VmRSS) with one warm-up socket open, then with N more sockets that each did one
handshake and one echoed message and stay idle; the figure is (after - before) / N.

  bench/scripts/ws_idle.py --pid PID --addr 127.0.0.1:9001 [--tls] [--deflate] [-n 10000]
                           [--quiet 2.0] [--stacks]

RSS is measured once `--quiet` seconds have passed after the last socket opened (then when it
stops moving): a socket gives its buffers and stack pages back only after the server's
`quiet_after` (1 s), and RSS holds still during that wait.

The server is Moria's `echo --ws` (release build). Plain sockets, no WebSocket library, so
10,000 connections open in seconds.
"""
import argparse, base64, os, socket, ssl, struct, subprocess, sys, time


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise SystemExit("no VmRSS")


def settle(pid):
    last = rss_kib(pid)
    for _ in range(15):
        time.sleep(0.2)
        now = rss_kib(pid)
        if now == last:
            return now
        last = now
    return last


def client_tls():
    """One TLS context for every socket (making one per socket loads the CA store each time:
    10,000 sockets then take minutes and gigabytes)."""
    global _TLS
    if _TLS is None:
        _TLS = ssl.create_default_context()
        _TLS.check_hostname = False
        _TLS.verify_mode = ssl.CERT_NONE
    return _TLS


_TLS = None


def open_ws(host, port, tls, deflate):
    s = socket.create_connection((host, port))
    if tls:
        s = client_tls().wrap_socket(s)
    key = base64.b64encode(os.urandom(16)).decode()
    ext = "Sec-WebSocket-Extensions: permessage-deflate\r\n" if deflate else ""
    s.sendall(
        (f"GET / HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
         f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n{ext}\r\n").encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = s.recv(4096)
        if not chunk:
            raise SystemExit("closed during the handshake")
        head += chunk
    if not head.startswith(b"HTTP/1.1 101"):
        raise SystemExit(head.decode(errors="replace"))
    if deflate and b"permessage-deflate" not in head:
        raise SystemExit("deflate not agreed")
    payload = b"hello"
    mask = os.urandom(4)
    s.sendall(bytes([0x81, 0x80 | len(payload)]) + mask +
              bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))
    got = s.recv(64)
    if not got:
        raise SystemExit("no echo")
    return s


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pid", type=int, required=True)
    ap.add_argument("--addr", default="127.0.0.1:9001")
    ap.add_argument("--tls", action="store_true")
    ap.add_argument("--deflate", action="store_true")
    ap.add_argument("-n", type=int, default=10000)
    ap.add_argument("--stacks", action="store_true",
                    help="also print which fiber-stack pages stay resident (stack_pages.py)")
    ap.add_argument("--quiet", type=float, default=2.0,
                    help="seconds to let pass before measuring, past the server's quiet_after "
                         "(1 s by default), so idle sockets have given their memory back")
    a = ap.parse_args()
    host, port = a.addr.rsplit(":", 1)
    port = int(port)
    warm = open_ws(host, port, a.tls, a.deflate)
    before = settle(a.pid)
    t = time.time()
    socks = [open_ws(host, port, a.tls, a.deflate) for _ in range(a.n)]
    opened = time.time() - t
    time.sleep(a.quiet)
    after = settle(a.pid)
    per = (after - before) * 1024 / a.n
    print(f"{a.n} idle websockets ({'wss' if a.tls else 'ws'}, deflate {'on' if a.deflate else 'off'}): "
          f"RSS {before} -> {after} KiB, {per:.0f} bytes each (opened in {opened:.1f} s)")
    if a.stacks:
        here = os.path.dirname(os.path.abspath(__file__))
        subprocess.run([sys.executable, os.path.join(here, "stack_pages.py"), str(a.pid)],
                       check=True)
    for s in socks:
        s.close()
    warm.close()


if __name__ == "__main__":
    main()
