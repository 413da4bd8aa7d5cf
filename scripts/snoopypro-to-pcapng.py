#!/usr/bin/env python3
"""Convert a SnoopyPro XML USB log into a Linux usbmon capture (pcapng, LINKTYPE 220).

SnoopyPro (a Windows USB sniffer) writes one <urb> element when a request goes down to the device and a second
<urb> with the same sequence number when it comes back. This script pairs the two, turns each transfer into a
usbmon Submit ('S') and Complete ('C') record with the 64-byte "mmapped" header, and writes them in the order
the transfers completed, each Submit immediately followed by its Complete. That order is the one a program
doing one synchronous transfer at a time would see, which is what a replaying fake device needs; the Windows
software that made the logs kept several IN requests pending at once, so their submit times are earlier than
the position they get here.

What the XML does not record is reconstructed (and listed in the output summary):
  * setup packets: GET_DESCRIPTOR (device/configuration: 0x80 0x06, HID report descriptor: 0x81 0x06 0x22),
    SET_CONFIGURATION (0x00 0x09) and HID SET_REPORT for a feature report with id 0 (0x21 0x09 0x0300);
    wLength is the length of the data the log shows;
  * endpoint numbers for logs that give -1: IN when the request went down without data, OUT otherwise, with
    the endpoint addresses of the configuration descriptor in the same log;
  * class requests without data (the HID driver's own SET_IDLE at start-up) are left out: the log names no
    request code for them and the device program never issues them;
  * bytes after the byte count of an OUT report are "don't care" in the Omron protocol; the Windows software left
    stale buffer contents there. They are written as zeros (as libomron and ingestd send them) unless
    --keep-out-padding is given;
  * transfers that never completed (the IN requests still pending when the log ended) are dropped;
  * time: SnoopyPro gives milliseconds since the start of the log; --start sets the wall-clock time of 0.

With --omron-session the output is instead re-sequenced for a strict replay of ingestd's omron-hj720it session
(one request at a time, each answer read before the next request): the HID driver's standard requests, then the
logged exchanges in the order that session makes them -- mode 01 02, clearing block, VER00, SRL00, CNT00, the
GTD blocks of every logged day (day 0 first, blocks 1-4), CTD00 and END. Each exchange is the logged request with
the input reports the log shows in answer to it; nothing is made up, but the vendor software's extra requests
(PRF00, repeated hand-shakes, other mode values) are left out. Input reports are attributed to requests first-in
first-out: a reply ends with a report of fewer than 7 valid bytes (14 bytes for PRF00, which fills two reports).

Python 3 standard library only.

Example:
  scripts/snoopypro-to-pcapng.py pedometerLog1.xml pedometerLog1.pcapng --start 2009-05-20T11:30:00Z
"""

import argparse
import datetime
import struct
import sys
import xml.etree.ElementTree as ElementTree

USBMON_HEADER = struct.Struct('<QBBBBHBBqiiII8siiII')  # 64 bytes, the "mmapped" usbmon header
assert USBMON_HEADER.size == 64

XFER_ISO, XFER_INTERRUPT, XFER_CONTROL, XFER_BULK = 0, 1, 2, 3
EINPROGRESS = 115
URB_DIR_IN = 0x0200


class ConversionError(Exception):
    """The log cannot be converted; the message says where."""


def read_log(path):
    """The <urb> elements of a SnoopyPro log as dicts, in file order."""
    with open(path, 'rb') as handle:
        text = handle.read().decode('utf-8', errors='replace')
    # SnoopyPro writes an empty line before the XML declaration, which the XML parser refuses.
    try:
        root = ElementTree.fromstring(text.lstrip())
    except ElementTree.ParseError as error:
        raise ConversionError(f'{path}: not readable as XML: {error}') from error
    records = []
    for index, element in enumerate(root.iter('urb')):
        sequence = element.get('sequence')
        function = (element.findtext('function') or '').strip()
        try:
            timestamp = int((element.findtext('timestamp') or '0').strip())
            endpoint = int((element.findtext('endpoint') or '-1').strip())
        except ValueError as error:
            raise ConversionError(f'{path}: urb #{index} (sequence {sequence}): {error}') from error
        payload = b''
        for packet in element.iter('payload'):
            hex_text = (packet.findtext('payloadbytes') or '').strip()
            try:
                payload += bytes.fromhex(hex_text)
            except ValueError as error:
                raise ConversionError(f'{path}: urb #{index} (sequence {sequence}): bad hex {hex_text!r}') from error
        records.append({'index': index, 'sequence': sequence, 'function': function,
                        'timestamp': timestamp, 'endpoint': endpoint, 'payload': payload})
    return records


def pair_transfers(records):
    """(submit, completion) pairs in completion order, and the submits that never completed."""
    pending = {}
    pairs = []
    for record in records:
        sequence = record['sequence']
        if sequence in pending:
            pairs.append((pending.pop(sequence), record))
        else:
            pending[sequence] = record
    return pairs, list(pending.values())


def endpoints_from_configuration(pairs):
    """Interrupt/bulk endpoints (address -> (transfer type, max packet, interval)) from the logged
    configuration descriptor, and the configuration value."""
    endpoints = {}
    configuration_value = 1
    for submit, completion in pairs:
        data = completion['payload']
        if submit['function'] != 'GET_DESCRIPTOR_FROM_DEVICE' or len(data) < 9 or data[1] != 0x02:
            continue
        configuration_value = data[5]
        offset = 0
        while offset + 2 <= len(data):
            length, kind = data[offset], data[offset + 1]
            if length == 0:
                break
            if kind == 0x05 and offset + 7 <= len(data):
                address, attributes = data[offset + 2], data[offset + 3]
                max_packet = data[offset + 4] | data[offset + 5] << 8
                transfer = {1: XFER_ISO, 2: XFER_BULK, 3: XFER_INTERRUPT}.get(attributes & 0x03, XFER_BULK)
                endpoints[address] = (transfer, max_packet, data[offset + 6])
            offset += length
    return endpoints, configuration_value


def setup_packet(request_type, request, value, index, length):
    return struct.pack('<BBHHH', request_type, request, value, index, length)


def transfers(pairs, endpoints, configuration_value, interface, keep_out_padding, notes):
    """Each logged transfer as a dict for the usbmon writer."""
    result = []
    in_endpoint = next((a for a in sorted(endpoints) if a & 0x80), None)
    out_endpoint = next((a for a in sorted(endpoints) if not a & 0x80), None)
    for submit, completion in pairs:
        function = submit['function']
        submitted = submit['payload']
        returned = completion['payload']
        times = (submit['timestamp'], completion['timestamp'])
        if function == 'GET_DESCRIPTOR_FROM_DEVICE':
            if len(returned) < 2:
                notes.append(f"sequence {submit['sequence']}: descriptor request without answer left out")
                continue
            kind = returned[1]
            result.append({'kind': 'control-in', 'times': times,
                           'setup': setup_packet(0x80, 0x06, kind << 8, 0, len(returned)), 'data': returned})
        elif function == 'GET_DESCRIPTOR_FROM_INTERFACE':
            result.append({'kind': 'control-in', 'times': times,
                           'setup': setup_packet(0x81, 0x06, 0x22 << 8, interface, len(returned)), 'data': returned})
        elif function == 'SELECT_CONFIGURATION':
            result.append({'kind': 'control-out', 'times': times,
                           'setup': setup_packet(0x00, 0x09, configuration_value, 0, 0), 'data': b''})
        elif function == 'CLASS_INTERFACE':
            if not submitted:
                notes.append(f"sequence {submit['sequence']}: class request without data (HID driver start-up) left out")
                continue
            result.append({'kind': 'control-out', 'times': times,
                           'setup': setup_packet(0x21, 0x09, 0x0300, interface, len(submitted)), 'data': submitted})
        elif function == 'BULK_OR_INTERRUPT_TRANSFER':
            endpoint = submit['endpoint']
            if endpoint < 0:
                endpoint = out_endpoint if submitted else in_endpoint
                if endpoint is None:
                    raise ConversionError(f"sequence {submit['sequence']}: endpoint not logged and no configuration descriptor")
            transfer_type, max_packet, interval = endpoints.get(endpoint, (XFER_INTERRUPT, 8, 10))
            if endpoint & 0x80:
                result.append({'kind': 'in', 'endpoint': endpoint, 'xfer': transfer_type, 'interval': interval,
                               'times': times, 'requested': max(len(returned), max_packet), 'data': returned})
            else:
                data = submitted
                if not keep_out_padding and data:
                    count = min(data[0], len(data) - 1)
                    data = data[:1 + count] + bytes(len(data) - 1 - count)
                result.append({'kind': 'out', 'endpoint': endpoint, 'xfer': transfer_type, 'interval': interval,
                               'times': times, 'data': data})
        else:
            notes.append(f"sequence {submit['sequence']}: {function} left out")
    return result


def omron_exchanges(items):
    """Logged requests (mode changes, commands, clearing blocks) with the input reports that answer them:
    {key: [{'request': [items], 'answer': [items]}, ...]} in log order."""
    exchanges = {}
    latest = None
    waiting = []
    command, command_items = b'', []
    reply_items, reply_bytes = [], b''

    def start(key, request):
        nonlocal latest
        occurrence = {'request': request, 'answer': []}
        exchanges.setdefault(key, []).append(occurrence)
        latest = occurrence
        return occurrence

    for item in items:
        kind = item['kind']
        if kind == 'control-out' and item['setup'][0] == 0x21:
            start('mode ' + item['data'].hex(), [item])
            waiting = []
        elif kind == 'out':
            data = item['data']
            count = data[0] if data else 0
            if count > 7 or len(data) <= count:
                continue
            command += data[1:1 + count]
            command_items.append(item)
            if count < 7:
                key = 'clear' if not any(command) else command.hex()
                occurrence = start(key, command_items)
                if key == 'clear':
                    waiting = []
                else:
                    waiting.append((key, occurrence))
                command, command_items = b'', []
        elif kind == 'in':
            data = item['data']
            count = data[0] if data else 0
            if count == 0 or count > 7:
                if latest is not None:
                    latest['answer'].append(item)
                continue
            reply_items.append(item)
            reply_bytes += data[1:1 + count]
            expected = 14 if waiting and bytes.fromhex(waiting[0][0]).startswith(b'PRF') else None
            if count < 7 or len(reply_bytes) == expected:
                target = waiting.pop(0)[1] if waiting else latest
                if target is not None:
                    target['answer'] += reply_items
                reply_items, reply_bytes = [], b''
    return exchanges


def omron_session_order(items):
    """The logged exchanges re-sequenced as ingestd's omron-hj720it session makes them (see the module doc)."""
    standard = [item for item in items
                if item['kind'] in ('control-in', 'control-out') and item['setup'][0] & 0x60 == 0]
    exchanges = omron_exchanges(items)

    def pick(key, which=0):
        occurrences = exchanges.get(key)
        if not occurrences:
            raise ConversionError(f'the log has no {key} exchange')
        occurrence = occurrences[which]
        return occurrence['request'] + occurrence['answer']

    ordered = list(standard) + pick('mode 0102') + pick('clear')
    for verb in (b'VER00', b'SRL00', b'CNT00'):
        ordered += pick(verb.hex())
    commands = [bytes.fromhex(key) for key in exchanges if key != 'clear' and not key.startswith('mode ')]
    blocks = sorted((command for command in commands if command.startswith(b'GTD')),
                    key=lambda command: (command[5], command[6]))
    for block in blocks:
        ordered += pick(block.hex())
    ordered += pick(b'CTD00'.hex()) + pick(b'END\xff\xff'.hex(), -1)
    return ordered


def usbmon_record(urb_id, event, transfer_type, endpoint, device, bus, timestamp_us, status, length,
                  data, setup=None, interval=0, flags=0, no_data_flag=b'<'):
    seconds, micros = divmod(timestamp_us, 1_000_000)
    setup_flag = 0 if setup is not None else ord('-')
    data_flag = 0 if data else no_data_flag[0]
    header = USBMON_HEADER.pack(urb_id, ord(event), transfer_type, endpoint, device, bus, setup_flag, data_flag,
                                seconds, micros, status, length, len(data), setup or bytes(8),
                                interval, 0, flags, 0)
    return header + data


def usbmon_records(items, bus, device, start_us):
    records = []
    last_time = start_us
    for number, item in enumerate(items, start=1):
        urb_id = 0xffff_8800_0000_0000 + number * 0x100
        submit_time = max(start_us + item['times'][0] * 1000, last_time)
        complete_time = max(start_us + item['times'][1] * 1000, submit_time)
        last_time = complete_time
        kind = item['kind']
        if kind == 'control-in':
            records.append(usbmon_record(urb_id, 'S', XFER_CONTROL, 0x80, device, bus, submit_time, -EINPROGRESS,
                                         len(item['data']), b'', setup=item['setup']))
            records.append(usbmon_record(urb_id, 'C', XFER_CONTROL, 0x80, device, bus, complete_time, 0,
                                         len(item['data']), item['data']))
        elif kind == 'control-out':
            records.append(usbmon_record(urb_id, 'S', XFER_CONTROL, 0x00, device, bus, submit_time, -EINPROGRESS,
                                         len(item['data']), item['data'], setup=item['setup']))
            records.append(usbmon_record(urb_id, 'C', XFER_CONTROL, 0x00, device, bus, complete_time, 0,
                                         len(item['data']), b'', no_data_flag=b'>'))
        elif kind == 'in':
            records.append(usbmon_record(urb_id, 'S', item['xfer'], item['endpoint'], device, bus, submit_time,
                                         -EINPROGRESS, item['requested'], b'', interval=item['interval'],
                                         flags=URB_DIR_IN))
            records.append(usbmon_record(urb_id, 'C', item['xfer'], item['endpoint'], device, bus, complete_time, 0,
                                         len(item['data']), item['data'], interval=item['interval'],
                                         flags=URB_DIR_IN))
        else:
            records.append(usbmon_record(urb_id, 'S', item['xfer'], item['endpoint'], device, bus, submit_time,
                                         -EINPROGRESS, len(item['data']), item['data'], interval=item['interval']))
            records.append(usbmon_record(urb_id, 'C', item['xfer'], item['endpoint'], device, bus, complete_time, 0,
                                         len(item['data']), b'', interval=item['interval'], no_data_flag=b'>'))
    return records


def pad4(data):
    return data + bytes(-len(data) % 4)


def option(code, value):
    return struct.pack('<HH', code, len(value)) + pad4(value)


def block(block_type, body):
    length = 12 + len(body)
    return struct.pack('<II', block_type, length) + body + struct.pack('<I', length)


def pcapng(records, application):
    section = struct.pack('<IHHq', 0x1A2B3C4D, 1, 0, -1) + option(4, application.encode()) + option(0, b'')
    interface = (struct.pack('<HHI', 220, 0, 0) + option(2, b'usbmon1') + option(9, bytes([6]))
                 + option(0, b''))
    out = block(0x0A0D0D0A, section) + block(0x00000001, interface)
    for record in records:
        seconds, micros = struct.unpack_from('<qi', record, 16)
        stamp = seconds * 1_000_000 + micros
        body = struct.pack('<IIIII', 0, stamp >> 32, stamp & 0xFFFFFFFF, len(record), len(record)) + pad4(record)
        out += block(0x00000006, body)
    return out


def parse_start(text):
    try:
        moment = datetime.datetime.fromisoformat(text.replace('Z', '+00:00'))
    except ValueError as error:
        raise ConversionError(f'--start {text!r}: {error}') from error
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.timezone.utc)
    return int(moment.timestamp() * 1_000_000)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('input', help='SnoopyPro XML log')
    parser.add_argument('output', help='pcapng file to write')
    parser.add_argument('--start', default='2009-01-01T00:00:00Z', help='wall-clock time of the log start (ISO 8601)')
    parser.add_argument('--bus', type=int, default=1, help='usbmon bus number (default 1)')
    parser.add_argument('--device', type=int, default=2, help='usbmon device address (default 2)')
    parser.add_argument('--interface', type=int, default=0, help='interface number for class requests (default 0)')
    parser.add_argument('--keep-out-padding', action='store_true',
                        help='keep the bytes after the count byte of OUT reports as logged')
    parser.add_argument('--omron-session', action='store_true',
                        help="re-sequence the logged exchanges for a strict replay of ingestd's Omron session")
    arguments = parser.parse_args(argv)
    try:
        records = read_log(arguments.input)
        pairs, unfinished = pair_transfers(records)
        endpoints, configuration_value = endpoints_from_configuration(pairs)
        notes = [f"sequence {record['sequence']}: {record['function']} never completed, dropped" for record in unfinished]
        items = transfers(pairs, endpoints, configuration_value, arguments.interface, arguments.keep_out_padding, notes)
        if arguments.omron_session:
            items = omron_session_order(items)
        usbmon = usbmon_records(items, arguments.bus, arguments.device, parse_start(arguments.start))
        with open(arguments.output, 'wb') as handle:
            handle.write(pcapng(usbmon, 'snoopypro-to-pcapng.py'))
    except (ConversionError, OSError) as error:
        print(f'snoopypro-to-pcapng: {error}', file=sys.stderr)
        return 1
    print(f'{arguments.output}: {len(items)} transfers, {len(usbmon)} usbmon records', file=sys.stderr)
    for note in notes:
        print(f'  {note}', file=sys.stderr)
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
