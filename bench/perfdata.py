# SPDX-License-Identifier: GPL-3.0-or-later
# Counting the samples of the three profilers' files, for bench/overhead.py and
# bench/rates.py: libprof's format (include/libprof/prof_format.h, read by bench.py's
# libprof_samples), gperftools' legacy CPU profile (bench.py's gperf_samples), and
# perf.data, read here directly because `perf script` takes seconds per file at 10 kHz
# with call chains. perf.data (PERFILE2, the kernel's tools/perf/Documentation/
# perf.data-file-format.txt): a header of magic u64, size u64, attr_size u64, then
# sections (offset u64, size u64) for attrs, data, event types; the data section holds
# records of type u32, misc u16, size u16, body. PERF_RECORD_SAMPLE is type 9,
# PERF_RECORD_LOST type 2 (id u64, lost u64).
import struct

PERF_MAGIC = b"PERFILE2"
PERF_RECORD_LOST = 2
PERF_RECORD_SAMPLE = 9


def perf_data_samples(path):
    """(samples, lost) of a perf.data file written by `perf record` (not piped)."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 104 or data[:8] != PERF_MAGIC:
        raise ValueError(f"{path}: not a perf.data file")
    data_off, data_size = struct.unpack_from("<QQ", data, 40)
    off, end = data_off, min(len(data), data_off + data_size)
    samples = lost = 0
    while off + 8 <= end:
        rtype, _misc, size = struct.unpack_from("<IHH", data, off)
        if size < 8:
            break
        if rtype == PERF_RECORD_SAMPLE:
            samples += 1
        elif rtype == PERF_RECORD_LOST and size >= 24:
            lost += struct.unpack_from("<Q", data, off + 16)[0]
        off += size
    return samples, lost
