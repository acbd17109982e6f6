#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""Checks that every caller in folded stacks calls its callee, against the program's code.

    check_callers.py BINARY FOLDED

BINARY is the profiled program (its functions are the ones checked), FOLDED the output of
`prof report -f folded --no-inline` for it. From `objdump -d BINARY`: each function's direct
call targets (a call to `name@plt`, or through the GOT entry of `name`, counts as a call to
`name`), whether it makes indirect calls, and the functions whose address the code takes
(`lea`/`mov` of a function's address: the only ones code elsewhere can call back). For
every pair `caller;callee` of adjacent frames:
  - a caller in BINARY must call the callee directly, or make indirect calls to a callee
    whose address is taken; a callee outside BINARY may also be reached through a library
    function the caller calls (`qsort` tail-calls `qsort_r`), so there the caller must
    call into some library;
  - a callee in BINARY called from outside it (the C library calling back) must have its
    address taken, or be main;
pairs of two functions outside BINARY are not checked. Frames named `[...]` (markers) and
`module+0xOFF` (unnamed) end the pair chain. Prints each violation with its count and
exits 1 when there is any, else prints how many pairs it checked and exits 0.
"""
import re
import subprocess
import sys

CALL = re.compile(r"\s(call|jmp)\s+(?:[0-9a-f]+\s+)?<([^>+]+)(?:\+0x[0-9a-f]+)?>")
INDIRECT = re.compile(r"\scall\s+\*")
# A call through the GOT (`call *0x2e5f(%rip)  # 3fc0 <__libc_start_main@GLIBC_2.34>`,
# as _start makes): a call of that function by name.
GOT_CALL = re.compile(r"\scall\s+\*0x[0-9a-f]+\(%rip\)\s+#\s*[0-9a-f]+\s+<([^>+]+)>")
TAKEN = re.compile(r"\s(lea|mov)\s.*#\s*[0-9a-f]+\s+<([^>+]+)>")
FUNC = re.compile(r"^[0-9a-f]+ <([^>]+)>:$")


def read_code(binary):
    out = subprocess.run(["objdump", "-d", "--no-show-raw-insn", binary], check=True,
                         capture_output=True, text=True).stdout
    calls, indirect, taken, funcs, cur = {}, set(), set(), set(), None
    external = set()  # functions that call through the PLT
    for line in out.splitlines():
        m = FUNC.match(line)
        if m:
            cur = m.group(1)
            if "@plt" not in cur:
                funcs.add(cur)
            calls.setdefault(cur, set())
            continue
        if cur is None:
            continue
        m = CALL.search(line)
        if m:
            if "@plt" in m.group(2):
                external.add(cur)
            target = m.group(2).split("@")[0]
            # A jump to another function is a tail call: the callee's caller is this one's.
            calls[cur].add(target)
        m = GOT_CALL.search(line)
        if m:
            calls[cur].add(m.group(1).split("@")[0])
        if INDIRECT.search(line):
            indirect.add(cur)
        m = TAKEN.search(line)
        if m:
            taken.add(m.group(2).split("@")[0])
    return calls, indirect, taken, funcs, external


def is_name(frame):
    return not frame.startswith("[") and "+0x" not in frame


def main():
    binary, folded = sys.argv[1], sys.argv[2]
    calls, indirect, taken, funcs, external = read_code(binary)
    bad, checked = {}, 0
    for line in open(folded):
        stack, _, count = line.rstrip("\n").rpartition(" ")
        frames = stack.split(";")
        for caller, callee in zip(frames, frames[1:]):
            if not is_name(caller) or not is_name(callee):
                continue
            ok = True
            if caller in funcs:
                checked += 1
                ok = (callee in calls.get(caller, ()) or
                      (caller in indirect and callee in taken) or
                      (callee not in funcs and caller in external))
            elif callee in funcs:
                checked += 1
                ok = callee in taken or callee == "main"
            if not ok:
                key = caller + ";" + callee
                bad[key] = bad.get(key, 0) + int(count)
    for key, n in sorted(bad.items(), key=lambda kv: -kv[1]):
        print("no such call: %s (%d samples)" % (key, n))
    if bad:
        return 1
    print("callers: %d pairs checked, every caller calls its callee" % checked)
    return 0


if __name__ == "__main__":
    sys.exit(main())
