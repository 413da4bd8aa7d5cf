#!/usr/bin/env python3
"""Independent count check for the capture fixtures (not used by the Swift tests at run time).

Written once to verify the numbers the Swift tests hard-code. It shares no code with
CaptureFormats: a direct, minimal reading of btsnoop (datalink 1002) and pcapng (link type 201).
"""
import struct, sys, collections

def btsnoop_records(path):
    data = open(path, 'rb').read()
    assert data[:8] == b'btsnoop\0'
    version, datalink = struct.unpack('>II', data[8:16])
    off = 16
    while off + 24 <= len(data):
        orig, incl, flags, drops, ts = struct.unpack('>IIIIq', data[off:off+24])
        pkt = data[off+24:off+24+incl]
        assert len(pkt) == incl
        yield ts - 0x00DCDDB30F2F8000, flags, pkt
        off += 24 + incl
    assert off == len(data), (off, len(data))

def pcapng_records(path):
    data = open(path, 'rb').read()
    off = 0
    end = '<'
    links = []
    while off < len(data):
        btype = struct.unpack(end + 'I', data[off:off+4])[0]
        if btype == 0x0A0D0D0A:
            bom = data[off+8:off+12]
            end = '<' if bom == b'\x4d\x3c\x2b\x1a' else '>'
            links = []
        blen = struct.unpack(end + 'I', data[off+4:off+8])[0]
        body = data[off+8:off+blen-4]
        if btype == 1:
            links.append(struct.unpack(end + 'H', body[:2])[0])
        elif btype == 6:
            iface, hi, lo, cap, orig = struct.unpack(end + 'IIIII', body[:20])
            pkt = body[20:20+cap]
            direction = struct.unpack('>I', pkt[:4])[0]
            yield links[iface], (hi << 32) | lo, direction, pkt[4:]
        off += blen
    assert off == len(data)

def analyse(packets):
    """packets: iterable of (direction 0 sent / 1 received, h4 bytes)."""
    c = collections.Counter()
    names = collections.Counter()
    companies = collections.Counter()
    sdata = collections.Counter()
    notif_handles = collections.Counter()
    for direction, p in packets:
        c['records'] += 1
        t = p[0]
        if t == 4 and p[1] == 0x3E and p[3] == 0x02:
            n = p[4]; i = 5
            for _ in range(n):
                et, at = p[i], p[i+1]; addr = p[i+2:i+8][::-1].hex(':').upper(); dl = p[i+8]
                ad = p[i+9:i+9+dl]; i += 9 + dl + 1
                c['adv'] += 1; c['adv_type_%d' % et] += 1
                j = 0
                while j < len(ad):
                    l = ad[j]
                    if l == 0: break
                    if j + 1 + l > len(ad):
                        c['ad_overrun'] += 1
                        break
                    typ = ad[j+1]; val = ad[j+2:j+1+l]
                    if typ in (8, 9): names[val.decode('utf-8', 'replace')] += 1
                    if typ == 0xFF: companies['%04X' % int.from_bytes(val[:2], 'little')] += 1
                    if typ == 0x16: sdata['%04X' % int.from_bytes(val[:2], 'little')] += 1
                    j += 1 + l
        if t == 4 and p[1] == 0x3E and p[3] in (0x01, 0x0A):
            c['le_conn_complete_status_%d' % p[4]] += 1
        if t == 4 and p[1] == 0x05:
            c['disconnection_complete'] += 1
        if t == 2:
            hdr = int.from_bytes(p[1:3], 'little'); pb = (hdr >> 12) & 3
            if pb != 1 and len(p) >= 9:
                l2len, cid = struct.unpack('<HH', p[5:9])
                if l2len + 4 != int.from_bytes(p[3:5], 'little'): c['acl_fragmented_start'] += 1
                if cid == 4:
                    op = p[9]
                    c['att_%02X' % op] += 1
                    if op == 0x1B:
                        notif_handles['%04X' % int.from_bytes(p[10:12], 'little')] += 1
            elif pb == 1:
                c['acl_continuation'] += 1
    return c, names, companies, sdata, notif_handles

def show(title, result):
    c, names, companies, sdata, nh = result
    print('==', title)
    print(' ', dict(sorted(c.items())))
    print('  names', dict(names))
    print('  companies', dict(companies))
    print('  service data', dict(sdata))
    print('  notifications per handle', dict(nh))

if __name__ == '__main__':
    for f in ['dsd6_btsnoop_hci.log', 'dsd6_btsnoop_hci.log.63758104325217312',
              'hidrate-spark_wban-python_btsnoop_hci.log']:
        show(f, analyse(((fl & 1), p) for ts, fl, p in btsnoop_records(f)))
    recs = list(pcapng_records('airbily_veryfitpro_bluethoot_logs.pcapng'))
    print('pcapng link types', set(r[0] for r in recs))
    show('airbily pcapng', analyse((d & 1, p) for lt, ts, d, p in recs))
