#!/usr/bin/env python3
"""no_seccomp.py PROGRAM ARGS...: run PROGRAM where seccomp filters
cannot be installed, as in a container that refuses them: a seccomp
filter of our own makes prctl(PR_SET_SECCOMP) and seccomp(2) fail with
EPERM (x86-64 only; exit 77 elsewhere, or where seccomp is missing
already). For tests/e2e/test_watch_children.sh: watch must then not run
its probe at all."""
import ctypes
import os
import platform
import struct
import sys

if platform.machine() != 'x86_64':
    sys.exit(77)
libc = ctypes.CDLL(None, use_errno=True)
PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
NR_PRCTL, NR_SECCOMP = 157, 317
AUDIT_ARCH_X86_64 = 0xC000003E
RET_ALLOW, RET_EPERM = 0x7FFF0000, 0x00050000 | 1
LD, JEQ, RET = 0x20, 0x15, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ|K, BPF_RET|K


def ins(code, jt, jf, k):
    return struct.pack('HBBI', code, jt, jf, k)


prog = b''.join([
    ins(LD, 0, 0, 4), ins(JEQ, 1, 0, AUDIT_ARCH_X86_64), ins(RET, 0, 0, RET_ALLOW),
    ins(LD, 0, 0, 0),
    ins(JEQ, 0, 1, NR_SECCOMP), ins(RET, 0, 0, RET_EPERM),
    ins(JEQ, 0, 3, NR_PRCTL),
    ins(LD, 0, 0, 16), ins(JEQ, 0, 1, PR_SET_SECCOMP), ins(RET, 0, 0, RET_EPERM),
    ins(RET, 0, 0, RET_ALLOW)])
n = len(prog) // 8
buf = ctypes.create_string_buffer(prog)
fprog = struct.pack('HxxxxxxQ', n, ctypes.addressof(buf))
fbuf = ctypes.create_string_buffer(fprog)
if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or \
        libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, fbuf, 0, 0) != 0:
    sys.exit(77)  # no seccomp here at all: nothing to simulate
os.execvp(sys.argv[1], sys.argv[1:])
