#!/usr/bin/env python3
"""free_port.py [HOST]: print a TCP port on HOST (default 127.0.0.1) that is
free now, for a test server that must be told its port before it listens.

The port is drawn from below the kernel's ephemeral range
(/proc/sys/net/ipv4/ip_local_port_range), so the local end of an outgoing
connection made by any concurrently running test cannot take it between this
check and the server's bind: asking the kernel for port 0 and closing the
socket returns an ephemeral port, which CI saw taken (EADDRINUSE) moments
later. Exits 1 when no port was found after 200 tries.
"""
import random
import socket
import sys


def ephemeral_low():
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def main():
    host = sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1"
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    hi = min(ephemeral_low(), 65536) - 1
    lo = 20000 if hi > 21000 else 1024
    for _ in range(200):
        port = random.randint(lo, hi)
        s = socket.socket(family, socket.SOCK_STREAM)
        try:
            s.bind((host, port))
        except OSError:
            continue
        finally:
            s.close()
        print(port)
        return 0
    print("free_port.py: no free port found", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
