#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The two ends of test-suricata.sh's live scenarios (a client and a server
in network namespaces either side of a router that queues what it forwards
to Suricata):

  live-peer.py serve CERT KEY    HTTP on 8080 and HTTPS (CERT, KEY) on 8443,
                                 each GET answered with BODY_LEN bytes; runs
                                 until killed
  live-peer.py get URL [SNI]     one GET (HTTPS: no certificate check, SNI
                                 as given), prints "bytes N" and "status S"
  live-peer.py ping ADDR N       N ICMP echo requests, 0.3 s apart, prints
                                 "replies R"

Every wait is bounded; exit status 0 unless the arguments are wrong.
"""
import http.server
import os
import socket
import socketserver
import ssl
import struct
import sys
import threading
import time

BODY_LEN = 65536


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"

    def do_GET(self):
        body = (b"0123456789abcdef" * (BODY_LEN // 16))[:BODY_LEN]
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, fmt, *args):
        pass


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def serve(cert, key):
    plain = Server(("0.0.0.0", 8080), Handler)
    tls = Server(("0.0.0.0", 8443), Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    tls.socket = ctx.wrap_socket(tls.socket, server_side=True)
    threading.Thread(target=plain.serve_forever, daemon=True).start()
    print("serving", flush=True)
    tls.serve_forever()


def get(url, sni=None):
    scheme, rest = url.split("://", 1)
    hostport, _, path = rest.partition("/")
    host, _, port = hostport.partition(":")
    port = int(port or (443 if scheme == "https" else 80))
    data = b""
    try:
        s = socket.create_connection((host, port), timeout=10)
        if scheme == "https":
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
            s = ctx.wrap_socket(s, server_hostname=sni or host)
        s.sendall(("GET /%s HTTP/1.0\r\nHost: %s\r\n"
                   "User-Agent: nfqb-live-peer\r\n\r\n" % (path, sni or host)).encode())
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        s.close()
    except (OSError, ssl.SSLError) as e:
        print("error %s" % e)
    head, _, body = data.partition(b"\r\n\r\n")
    status = head.split(b" ", 2)[1].decode() if head.startswith(b"HTTP/") else "none"
    print("bytes %d" % len(body))
    print("status %s" % status)


def csum(b):
    if len(b) % 2:
        b += b"\0"
    s = sum(struct.unpack("!%dH" % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xFFFF)
    s += s >> 16
    return ~s & 0xFFFF


def ping(addr, n):
    s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    ident = os.getpid() & 0xFFFF
    replies = 0
    for seq in range(1, n + 1):
        payload = b"nfqb-live-peer %d" % seq
        hdr = struct.pack("!BBHHH", 8, 0, 0, ident, seq)
        hdr = struct.pack("!BBHHH", 8, 0, csum(hdr + payload), ident, seq)
        s.sendto(hdr + payload, (addr, 0))
        deadline = time.monotonic() + 0.3
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            s.settimeout(left)
            try:
                pkt = s.recv(2048)
            except socket.timeout:
                break
            ihl = (pkt[0] & 0x0F) * 4
            t, _, _, i, q = struct.unpack("!BBHHH", pkt[ihl:ihl + 8])
            if t == 0 and i == ident and q == seq:
                replies += 1
        time.sleep(max(0.0, deadline - time.monotonic()))
    print("replies %d" % replies)


def main():
    a = sys.argv[1:]
    if len(a) == 3 and a[0] == "serve":
        serve(a[1], a[2])
    elif len(a) in (2, 3) and a[0] == "get":
        get(a[1], a[2] if len(a) == 3 else None)
    elif len(a) == 3 and a[0] == "ping":
        ping(a[1], int(a[2]))
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
