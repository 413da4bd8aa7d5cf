#!/usr/bin/env python3
"""Cut a usbmon pcapng capture (LINKTYPE 220) short: keep every block before the first submission of an OUT transfer
whose data starts with the given bytes. Used to make a capture of a device that goes silent mid-session (a strict
replay under umockdev then times out at the cut, as a device pulled out would stop answering).

With --writes-before-reads, the IN transfers that lie between a control transfer and the OUT transfers following it
are moved after those OUT transfers: umockdev replays strictly in the captured order, and a program that writes first
(ingestd's Omron session sends the clearing block right after selecting the mode, then reads the empty report the
device sent meanwhile) would otherwise find the capture expecting a read.

Python 3 standard library only. Example (an Omron HJ-720IT session cut before day 5 of its history):
  scripts/usbmon-cut.py Tests/AdapterTests/Captures/omron-hj720it/pedometerLog1-session.pcapng \\
      Tests/LibUSBTransportTests/Fixtures/omron-cut-mid-history.pcapng --before-out 0747544400000501 \\
      --writes-before-reads
"""

import argparse
import struct
import sys


def transfer_kind(block):
    """'control', 'in', 'out' or None (not a packet block) for a pcapng block."""
    if struct.unpack_from('<I', block, 0)[0] != 6:
        return None
    packet = block[28:]
    if packet[9] == 2:
        return 'control'
    return 'in' if packet[10] & 0x80 else 'out'


def writes_before_reads(blocks):
    result = []
    held = []           # IN blocks after a control transfer, waiting for the writes that follow
    state = 'idle'      # 'after-control': collecting reads; 'writing': in the run of writes
    for block in blocks:
        kind = transfer_kind(block)
        if state == 'after-control' and kind == 'in':
            held.append(block)
            continue
        if state == 'after-control' and kind == 'out':
            state = 'writing'
        elif state == 'writing' and kind != 'out':
            result += held
            held = []
            state = 'idle'
        if kind == 'control':
            result += held
            held = []
            state = 'after-control'
        result.append(block)
    return result + held


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('input')
    parser.add_argument('output')
    parser.add_argument('--before-out', required=True, help='hex bytes the OUT data starts with')
    parser.add_argument('--writes-before-reads', action='store_true',
                        help='move reads between a control transfer and the writes after it behind those writes')
    arguments = parser.parse_args()
    prefix = bytes.fromhex(arguments.before_out)
    data = open(arguments.input, 'rb').read()
    kept = []
    offset = 0
    packets = 0
    while offset + 12 <= len(data):
        kind, length = struct.unpack_from('<II', data, offset)
        if length < 12 or offset + length > len(data):
            sys.exit(f'error: {arguments.input}: block at byte {offset} has length {length}')
        block = data[offset:offset + length]
        if kind == 6:
            captured = struct.unpack_from('<I', block, 20)[0]
            packet = block[28:28 + captured]
            if len(packet) >= 64:
                event, endpoint = packet[8], packet[10]
                if event == ord('S') and endpoint & 0x80 == 0 and packet[64:].startswith(prefix) and packet[9] != 2:
                    break
            packets += 1
        kept.append(block)
        offset += length
    else:
        sys.exit(f'error: {arguments.input}: no OUT submission starting with {prefix.hex()}')
    if arguments.writes_before_reads:
        kept = writes_before_reads(kept)
    open(arguments.output, 'wb').write(b''.join(kept))
    print(f'{arguments.output}: {packets} packets kept')


if __name__ == '__main__':
    main()
