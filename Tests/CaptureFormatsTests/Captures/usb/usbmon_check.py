#!/usr/bin/env python3
"""Independent minimal reading of the usbmon captures in this folder (pcapng / pcap, LINKTYPE
220, little-endian only), printing the facts USBMonTests hard-codes. Run: python3 usbmon_check.py"""
import struct, sys, collections

def packets(path):
    data = open(path, 'rb').read()
    if data[:4] == b'\x0a\x0d\x0d\x0a':
        off, link = 0, None
        while off + 12 <= len(data):
            btype, blen = struct.unpack_from('<II', data, off)
            if btype == 1:
                link = struct.unpack_from('<H', data, off + 8)[0]
            elif btype == 6:
                caplen = struct.unpack_from('<I', data, off + 20)[0]
                yield link, off, data[off + 28:off + 28 + caplen]
            off += blen
    else:
        link = struct.unpack_from('<I', data, 20)[0]
        off = 24
        while off + 16 <= len(data):
            caplen = struct.unpack_from('<I', data, off + 8)[0]
            yield link, off, data[off + 16:off + 16 + caplen]
            off += 16 + caplen

def events(path):
    for link, off, p in packets(path):
        assert link == 220
        (urb, typ, xfer, ep, dev, bus, fsetup, fdata, sec, usec, status, length, lencap) = \
            struct.unpack_from('<QBBBBHbbqiiII', p, 0)
        setup = p[40:48]
        yield dict(off=off, urb=urb, type=chr(typ), xfer=xfer, ep=ep, dev=dev, bus=bus, setup_flag=fsetup,
                   status=status, length=length, len_cap=lencap, setup=setup, data=p[64:64 + lencap])

for name in sys.argv[1:] or ['usbkbd.pcap.pcapng', 'fake_ant.pcapng', 'fake_ant.pcap', 'fake_omron.pcapng']:
    ev = list(events(name))
    print(f'== {name}: {len(ev)} events')
    print('  by type', dict(collections.Counter(e['type'] for e in ev)))
    print('  by (bus, dev)', dict(collections.Counter((e['bus'], e['dev']) for e in ev)))
    print('  by transfer type', dict(collections.Counter(e['xfer'] for e in ev)))
    print('  statuses', dict(collections.Counter(e['status'] for e in ev)))
    pending = {}
    for e in ev:
        if e['type'] == 'S' and e['xfer'] == 2 and e['setup_flag'] == 0:
            pending[e['urb']] = e['setup']
        elif e['type'] == 'C' and e['urb'] in pending:
            s = pending.pop(e['urb'])
            if s[0] == 0x80 and s[1] == 6 and s[3] == 1 and len(e['data']) >= 12:
                vid, pid = struct.unpack_from('<HH', e['data'], 8)
                print(f'  GET_DESCRIPTOR(DEVICE) bus {e["bus"]} dev {e["dev"]}: {vid:04x}:{pid:04x} ({len(e["data"])} bytes)')
    for e in ev[:8]:
        print('  ', e['off'], e['type'], e['xfer'], hex(e['ep']), e['dev'], e['status'], e['length'], e['len_cap'],
              e['setup'].hex(), e['data'].hex())
