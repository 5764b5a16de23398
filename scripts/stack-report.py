#!/usr/bin/env python3
"""Stack depth of the writeback paths, base vs series (make bench).

usage: stack-report.py BASE_VMLINUX SERIES_VMLINUX

Disassembles both kernels (objdump -d, x86_64) and builds the graph of
direct calls. A function's frame is what its prologue takes: 8 bytes for
the return address, 8 per push before the first call, and its
"sub $N,%rsp". For each writeback path below (a root, the indirect calls
it makes through ->fsync and ->writepages, and the function that ends
it) it finds the deepest chain of calls from the root to the end through the
functions that path may go through, and prints it with each frame, for
both kernels: a static estimate of the stack the path needs (interrupts
and the functions a call at the end makes not counted). Each path is
shown for a never-pinned file and, with the series' own functions
(*pinned*, *bounce*) allowed, for a write-pinned one. The target: no
path of a never-pinned file more than STACK_LIMIT bytes deeper on the
series
(printed as met or MISSED, like bench-report.py's targets). Exits 2 on
bad usage, 1 if a path is not found in a kernel.
"""
import re
import subprocess
import sys

STACK_LIMIT = 64

# The functions each path may go through (the series' own, named *pinned*
# or *bounce*, are added for the pinned variant of each path).
EXT4_WB = ['do_writepages', 'ext4_writepages', 'ext4_do_writepages',
           'mpage_prepare_extent_to_map', 'mpage_process_folio',
           'mpage_submit_folio', 'mpage_map_and_submit_buffers',
           'mpage_map_and_submit_extent', 'ext4_bio_write_folio',
           'io_submit_add_bh', 'ext4_io_submit', 'submit_bio',
           'submit_bio_noacct']
XFS_WB = ['do_writepages', 'xfs_vm_writepages', 'iomap_writepages',
          'iomap_writepage_map', 'iomap_writepage_map_blocks',
          'iomap_add_to_ioend', 'iomap_submit_ioend', 'xfs_submit_ioend',
          'submit_bio', 'submit_bio_noacct']
FSYNC = ['vfs_fsync_range', 'file_write_and_wait_range',
         '__filemap_fdatawrite_range', 'filemap_fdatawrite_wbc']
# name: (root, allowed functions, {caller: [indirect callees]}, end)
PATHS = {
    'ext4 fsync': (
        'vfs_fsync_range', FSYNC + ['ext4_sync_file'] + EXT4_WB,
        {'vfs_fsync_range': ['ext4_sync_file'],
         'vfs_fsync_pinned': ['ext4_sync_file'],
         'do_writepages': ['ext4_writepages']}, 'submit_bio_noacct'),
    'xfs fsync': (
        'vfs_fsync_range', FSYNC + ['xfs_file_fsync'] + XFS_WB,
        {'vfs_fsync_range': ['xfs_file_fsync'],
         'vfs_fsync_pinned': ['xfs_file_fsync'],
         'do_writepages': ['xfs_vm_writepages']}, 'submit_bio_noacct'),
    'ext4 background writeback': (
        'wb_workfn', ['wb_workfn', 'wb_do_writeback', 'wb_writeback',
                      '__writeback_inodes_wb', 'writeback_sb_inodes',
                      '__writeback_single_inode'] + EXT4_WB,
        {'do_writepages': ['ext4_writepages']}, 'submit_bio_noacct'),
}
SERIES_ONLY = re.compile(r'pinned|bounce')
MAX_DEPTH = 24


def parse(vmlinux):
    """{function: (frame bytes, {direct callees})}."""
    dis = subprocess.run(['objdump', '-d', '--no-show-raw-insn', vmlinux],
                         capture_output=True, text=True, check=True).stdout
    funcs = {}
    name = None
    for line in dis.splitlines():
        m = re.match(r'[0-9a-f]+ <([^>]+)>:$', line)
        if m:
            name = m.group(1).split('.')[0]
            frame, calls, called = 8, set(), False
            funcs[name] = [frame, calls, called]
            continue
        if not name or '\t' not in line:
            continue
        ins = line.split('\t', 1)[1].strip()
        f = funcs[name]
        if ins.startswith('call'):
            f[2] = True
            m = re.search(r'<([^>+]+)>', ins)
            if m:
                f[1].add(m.group(1).split('.')[0])
        elif not f[2]:
            if ins.startswith('push'):
                f[0] += 8
            else:
                m = re.match(r'sub\s+\$0x([0-9a-f]+),%rsp', ins)
                if m:
                    f[0] += int(m.group(1), 16)
    return {n: (f[0], f[1]) for n, f in funcs.items()}


def deepest(funcs, root, allowed, indirect, end):
    """(bytes, [(function, frame)]) of the deepest chain root..end."""
    memo = {}

    def walk(f, seen):
        if f == end:
            return funcs.get(f, (8, set()))[0], [f]
        if f not in funcs or f in seen or f not in allowed:
            return None
        if f in memo:
            return memo[f]
        frame, calls = funcs[f]
        best = None
        for c in sorted(calls | set(indirect.get(f, []))):
            r = walk(c, seen | {f})
            if r and (not best or r[0] > best[0]):
                best = r
        res = (frame + best[0], [f] + best[1]) if best else None
        memo[f] = res
        return res

    r = walk(root, frozenset())
    if not r:
        return None
    return r[0], [(f, funcs.get(f, (8, set()))[0]) for f in r[1]]


def main(args):
    if '-h' in args or '--help' in args:
        print(__doc__.strip())
        return 0
    if len(args) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    kernels = {'base': parse(args[0]), 'series': parse(args[1])}
    worst, missing = None, False
    print('Stack depth of the writeback paths (static: return address, '
          'pushes and the fixed frame of each function on the deepest '
          'chain of calls)')
    for what, (root, spine, indirect, end) in PATHS.items():
        for variant in ('never-pinned file', 'write-pinned file'):
            print(f'\n{what}, {variant}:')
            got = {}
            for k, funcs in kernels.items():
                allowed = set(spine)
                if variant.startswith('write'):
                    allowed |= {f for f in funcs if SERIES_ONLY.search(f)}
                got[k] = deepest(funcs, root, allowed, indirect, end)
                if not got[k]:
                    print(f'  {k}: no chain from {root} to {end}')
                    missing = True
                    continue
                depth, chain = got[k]
                print(f'  {k:<6} {depth:>5} bytes: ' +
                      ' > '.join(f'{f}({b})' for f, b in chain))
            if got['base'] and got['series']:
                d = got['series'][0] - got['base'][0]
                print(f'  series - base: {d:+d} bytes')
                if variant.startswith('never'):
                    worst = d if worst is None else max(worst, d)
    if worst is not None:
        ok = worst <= STACK_LIMIT
        print(f'\nTarget: no path of a never-pinned file more than '
              f'{STACK_LIMIT} bytes deeper on the series: '
              f'{"met" if ok else "MISSED"} (worst {worst:+d})')
    return 1 if missing else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
