#!/usr/bin/env python3
"""otlp_http_sink.py: an OTLP/HTTP endpoint that answers every POST at once
with 200 and an empty protobuf body (an Export<Signal>ServiceResponse with
nothing rejected) and decodes nothing: the far end of a benchmark that
measures the exporter, not a receiver (scripts/bench.d/logs.sh). For
checking what was sent use tests/receiver/server.js.

  otlp_http_sink.py --ready-file FILE   listens on a free 127.0.0.1 port,
                                        writes it to FILE, serves until
                                        killed
"""
import argparse
import socket
import threading

OK = (b"HTTP/1.1 200 OK\r\nContent-Type: application/x-protobuf\r\n"
      b"Content-Length: 0\r\n\r\n")


def serve(conn):
    """Answer each request of one keep-alive connection: read its headers
    and its Content-Length bytes, then reply OK."""
    f = conn.makefile("rb")
    with conn:
        while f.readline():
            n = 0
            while True:
                h = f.readline()
                if h in (b"\r\n", b"\n", b""):
                    break
                k, _, v = h.decode("latin-1").partition(":")
                if k.strip().lower() == "content-length":
                    n = int(v)
            f.read(n)
            conn.sendall(OK)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ready-file", required=True)
    a = ap.parse_args()
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    s.listen(16)
    with open(a.ready_file + ".tmp", "w") as out:
        out.write(str(s.getsockname()[1]))
    import os
    os.rename(a.ready_file + ".tmp", a.ready_file)
    while True:
        conn, _ = s.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


if __name__ == "__main__":
    main()
