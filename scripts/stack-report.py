#!/usr/bin/env python3
"""Stack frames of the writeback paths, base vs series (make bench).

usage: stack-report.py BASE_VMLINUX SERIES_VMLINUX [--tree LINUX]

Disassembles both kernels (objdump -d) and runs the kernel's own
scripts/checkstack.pl on them (from --tree, default build/linux) to get
each function's fixed frame (its "sub $N,%rsp"; pushes of callee-saved
registers and return addresses are not counted). For each writeback call
chain below it prints the frame of every function on it in both kernels
(0: inlined or absent), and the sum: a static estimate of the stack the
chain needs. The target: no chain is more than STACK_LIMIT bytes deeper
on the series (printed as met or MISSED, like bench-report.py's
targets). Exits 2 on bad usage.
"""
import os
import re
import subprocess
import sys

STACK_LIMIT = 64

# Outermost caller first; names as in System.map (GCC suffixes stripped).
CHAINS = {
    'ext4 fsync': [
        'vfs_fsync_range', 'ext4_sync_file', 'file_write_and_wait_range',
        '__filemap_fdatawrite_range', 'filemap_fdatawrite_wbc',
        'do_writepages', 'ext4_writepages', 'ext4_do_writepages',
        'mpage_prepare_extent_to_map', 'mpage_process_folio',
        'mpage_submit_folio', 'ext4_bio_write_folio', 'io_submit_add_bh',
        'ext4_io_submit', 'submit_bio', 'submit_bio_noacct',
        '__blk_pinned_bounce', 'pinned_bounce_parts', 'pinned_bounce_copy'],
    'ext4 background writeback': [
        'wb_workfn', 'wb_do_writeback', 'wb_writeback',
        '__writeback_inodes_wb', 'writeback_sb_inodes',
        '__writeback_single_inode', 'do_writepages', 'ext4_writepages',
        'ext4_do_writepages', 'mpage_prepare_extent_to_map',
        'mpage_process_folio', 'mpage_submit_folio',
        'ext4_bio_write_folio', 'io_submit_add_bh', 'ext4_io_submit',
        'submit_bio', 'submit_bio_noacct'],
    'xfs fsync': [
        'vfs_fsync_range', 'xfs_file_fsync', 'file_write_and_wait_range',
        '__filemap_fdatawrite_range', 'filemap_fdatawrite_wbc',
        'do_writepages', 'xfs_vm_writepages', 'iomap_writepages',
        'iomap_writepage_map', 'iomap_writepage_map_blocks',
        'iomap_add_to_ioend', 'iomap_submit_ioend', 'submit_bio',
        'submit_bio_noacct', '__blk_pinned_bounce', 'pinned_bounce_parts',
        'pinned_bounce_copy'],
}


def frames(vmlinux, tree):
    """{function: frame bytes} of one kernel."""
    dis = subprocess.Popen(['objdump', '-d', '--no-show-raw-insn', vmlinux],
                           stdout=subprocess.PIPE)
    out = subprocess.run(['perl', os.path.join(tree, 'scripts/checkstack.pl'),
                          'x86_64', '0'], stdin=dis.stdout,
                         capture_output=True, text=True, check=True).stdout
    dis.wait()
    res = {}
    for line in out.splitlines():
        m = re.match(r'\S+\s+(\S+)\s+\[\S+\]:\s*(\d+)', line)
        if m:
            name = m.group(1).split('.')[0]
            res[name] = max(res.get(name, 0), int(m.group(2)))
    return res


def main(args):
    if '-h' in args or '--help' in args:
        print(__doc__.strip())
        return 0
    tree = 'build/linux'
    if '--tree' in args:
        i = args.index('--tree')
        tree = args[i + 1]
        del args[i:i + 2]
    if len(args) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    base, series = (frames(v, tree) for v in args)
    worst = None
    print('Stack frames on the writeback paths (checkstack.pl, bytes; '
          '0: inlined or absent)')
    for chain, funcs in CHAINS.items():
        print(f'\n{chain}:')
        print(f'  {"function":<30} {"base":>6} {"series":>6}')
        tb = ts = 0
        for f in funcs:
            b, s = base.get(f, 0), series.get(f, 0)
            tb, ts = tb + b, ts + s
            if b or s:
                mark = '  <- grew' if s > b else ''
                print(f'  {f:<30} {b:>6} {s:>6}{mark}')
        print(f'  {"sum":<30} {tb:>6} {ts:>6}  (series - base: {ts - tb:+d})')
        worst = ts - tb if worst is None else max(worst, ts - tb)
    ok = worst <= STACK_LIMIT
    print(f'\nTarget: no chain more than {STACK_LIMIT} bytes deeper on the '
          f'series: {"met" if ok else "MISSED"} (worst {worst:+d})')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
