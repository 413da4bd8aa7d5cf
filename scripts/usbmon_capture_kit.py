#!/usr/bin/env python3
"""What the USB adapters' capture generators share: usbmon events written as pcapng
(LINKTYPE_USB_LINUX_MMAPPED = 220), standard control transfers and string descriptors.

Used by `Tests/AdapterTests/Captures/<adapter-id>/make-captures.py` (ant-plus, temper). Python 3 standard library only.
"""

import struct

XFER_INTERRUPT, XFER_CONTROL, XFER_BULK = 1, 2, 3
EINPROGRESS = -115


class UsbmonCapture:
    """usbmon events of one device (bus, address), written as pcapng."""

    def __init__(self, bus, device, first_urb=0xFFFF8880_00000000):
        self.bus = bus
        self.device = device
        self.events = []
        self.next_urb = first_urb

    def event(self, urb, kind, xfer, endpoint, time, status, length, data=b'', setup=None):
        flag_setup = 0 if setup is not None else ord('-')
        if data:
            flag_data = 0
        elif kind == 'S':
            flag_data = ord('<') if endpoint & 0x80 else ord('>')
        else:
            flag_data = ord('>') if endpoint & 0x80 == 0 else ord('<')
        header = struct.pack('<QBBBBHBBqiiII8siiII', urb, ord(kind), xfer, endpoint, self.device, self.bus,
                             flag_setup, flag_data, time // 1_000_000, time % 1_000_000, status, length, len(data),
                             bytes(setup or b'\0' * 8), 0, 0, 0, 0)
        self.events.append((time, header + bytes(data)))

    def urb(self):
        self.next_urb += 0x40
        return self.next_urb

    def control_in(self, time, setup, answer):
        urb = self.urb()
        length = struct.unpack_from('<H', setup, 6)[0]
        self.event(urb, 'S', XFER_CONTROL, 0x80, time, EINPROGRESS, length, setup=setup)
        self.event(urb, 'C', XFER_CONTROL, 0x80, time + 150, 0, len(answer), answer)

    def control_out(self, time, setup, data=b''):
        urb = self.urb()
        self.event(urb, 'S', XFER_CONTROL, 0x00, time, EINPROGRESS, len(data), data, setup=setup)
        self.event(urb, 'C', XFER_CONTROL, 0x00, time + 150, 0, len(data))

    def write(self, path):
        def block(kind, body):
            body += b'\0' * (-len(body) % 4)
            return struct.pack('<II', kind, 12 + len(body)) + body + struct.pack('<I', 12 + len(body))
        with open(path, 'wb') as handle:
            handle.write(block(0x0A0D0D0A, struct.pack('<IHHq', 0x1A2B3C4D, 1, 0, -1)))
            handle.write(block(1, struct.pack('<HHI', 220, 0, 65535)))
            for time, packet in self.events:
                handle.write(block(6, struct.pack('<IIIII', 0, time >> 32, time & 0xFFFFFFFF, len(packet),
                                                  len(packet)) + packet))


def string_descriptor(text):
    encoded = text.encode('utf-16-le')
    return bytes([2 + len(encoded), 3]) + encoded


def standard_enumeration(capture, time, device, configuration, strings):
    """What the kernel asks a new device (standard requests at its address): the device descriptor, the
    configuration (header, then whole), the language list, each (index, text) string, SET_CONFIGURATION 1.
    Returns the time after it."""
    capture.control_in(time, bytes([0x80, 6, 0, 1, 0, 0, 18, 0]), device)
    capture.control_in(time + 1000, bytes([0x80, 6, 0, 2, 0, 0, 9, 0]), configuration[:9])
    capture.control_in(time + 2000, bytes([0x80, 6, 0, 2, 0, 0, len(configuration), 0]), configuration)
    capture.control_in(time + 3000, bytes([0x80, 6, 0, 3, 0, 0, 0xFF, 0]), bytes([4, 3, 0x09, 0x04]))
    for index, text in strings:
        capture.control_in(time + 3000 + 1000 * index, bytes([0x80, 6, index, 3, 0x09, 0x04, 0xFF, 0]),
                           string_descriptor(text))
    capture.control_out(time + 8000, bytes([0x00, 9, 1, 0, 0, 0, 0, 0]))
    return time + 10_000
