import Transport

/// The two binary layouts of a Linux usbmon event header.
///
/// Both start with the same 48 bytes (`id`, type, transfer type, endpoint, device, bus, setup and
/// data flags, seconds, microseconds, status, URB length, captured length, setup bytes); the
/// memory-mapped layout adds interval, start frame, transfer flags and the number of isochronous
/// descriptors. Integers are in the byte order of the capturing host, which is the byte order of
/// the pcap / pcapng file.
public enum USBMonHeaderLayout: Hashable, Sendable {
    /// LINKTYPE_USB_LINUX (189): 48-byte header.
    case legacy
    /// LINKTYPE_USB_LINUX_MMAPPED (220): 64-byte header; what libpcap writes on current kernels.
    case memoryMapped

    /// The layout a link type uses, or nil when the link type is not usbmon.
    public init?(linkType: Int) {
        switch linkType {
        case LinkType.usbLinux: self = .legacy
        case LinkType.usbLinuxMMapped: self = .memoryMapped
        default: return nil
        }
    }

    /// 48 or 64.
    public var headerLength: Int { self == .legacy ? 48 : 64 }

    /// 189 or 220.
    public var linkType: Int { self == .legacy ? LinkType.usbLinux : LinkType.usbLinuxMMapped }
}

/// What a usbmon event reports about its URB.
public enum USBMonEventType: UInt8, Hashable, Sendable, CustomStringConvertible {
    /// 'S': the host submitted the URB (OUT data travels here).
    case submit = 0x53
    /// 'C': the URB completed (IN data travels here).
    case complete = 0x43
    /// 'E': the submission failed; `status` says why.
    case error = 0x45

    public var description: String { String(UnicodeScalar(rawValue)) }
}

/// The 8-byte SETUP packet of a control transfer (USB 2.0 §9.3).
public struct USBSetupPacket: Hashable, Sendable, CustomStringConvertible {
    /// bmRequestType: bit 7 direction (1 = device to host), bits 6..5 type, 4..0 recipient.
    public var requestType: UInt8
    public var request: UInt8
    public var value: UInt16
    public var index: UInt16
    /// wLength: bytes of the data stage.
    public var length: UInt16

    public init(requestType: UInt8, request: UInt8, value: UInt16, index: UInt16, length: UInt16) {
        self.requestType = requestType
        self.request = request
        self.value = value
        self.index = index
        self.length = length
    }

    /// Reads the 8 bytes (little-endian fields); nil when fewer than 8 are given.
    public init?(bytes: some Collection<UInt8>) {
        let raw = Array(bytes.prefix(8))
        guard raw.count == 8 else { return nil }
        requestType = raw[0]
        request = raw[1]
        value = UInt16(raw[2]) | UInt16(raw[3]) << 8
        index = UInt16(raw[4]) | UInt16(raw[5]) << 8
        length = UInt16(raw[6]) | UInt16(raw[7]) << 8
    }

    /// The 8 bytes as sent on the bus.
    public var bytes: [UInt8] {
        [requestType, request, UInt8(value & 0xFF), UInt8(value >> 8), UInt8(index & 0xFF), UInt8(index >> 8),
         UInt8(length & 0xFF), UInt8(length >> 8)]
    }

    /// Device to host (an IN data stage).
    public var isDeviceToHost: Bool { requestType & 0x80 != 0 }

    /// A standard request (type bits 0), such as the ones the kernel issues while enumerating.
    public var isStandard: Bool { requestType & 0x60 == 0 }

    /// GET_DESCRIPTOR (standard, device to host, request 6): the descriptor type and index.
    public var requestedDescriptor: (type: UInt8, index: UInt8)? {
        guard requestType & 0xE0 == 0x80, request == 0x06 else { return nil }
        return (UInt8(value >> 8), UInt8(value & 0xFF))
    }

    public var description: String { USBMonHex.spaced(bytes) }
}

/// One usbmon event: a URB submitted, completed or failed, with its data.
public struct USBMonEvent: Hashable, Sendable {
    /// The URB tag (a kernel address): pairs a submission with its completion.
    public var urbID: UInt64
    public var type: USBMonEventType
    public var transferType: USBTransferType
    /// The endpoint address with the direction bit (0x80 = IN).
    public var endpoint: UInt8
    /// The device address on its bus.
    public var device: UInt8
    public var bus: UInt16
    /// The SETUP packet, when the event carries one (control submissions).
    public var setup: USBSetupPacket?
    /// For isochronous events the setup field holds the error count and descriptor count instead.
    public var isochronousErrorCount: Int32?
    /// The event time from the usbmon header, in microseconds since 1970.
    public var timestamp: Int64
    /// 0 on success; a negative errno otherwise (-EINPROGRESS = -115 on submissions, -EPIPE = -32
    /// for a stall, -ENOENT / -ECONNRESET when unlinked, -ENODEV / -ESHUTDOWN when the device left).
    public var status: Int32
    /// The URB length: the requested length on a submission, the actual length on a completion.
    public var length: Int
    /// The data bytes captured with the event (OUT data on submissions, IN data on completions).
    public var data: [UInt8]
    /// The data flag byte: 0 when data was captured, else a reason character such as '<' or '>'.
    public var dataFlag: UInt8
    /// True when the capture's snap length cut the data short of what usbmon recorded.
    public var isDataTruncated: Bool
    /// Memory-mapped layout only: polling interval, start frame, URB transfer flags and the
    /// number of isochronous descriptors.
    public var interval: Int32?
    public var startFrame: Int32?
    public var transferFlags: UInt32?
    public var isochronousDescriptorCount: UInt32?
    /// Byte offset in the file of the record that held the event.
    public var fileOffset: Int

    public init(urbID: UInt64, type: USBMonEventType, transferType: USBTransferType, endpoint: UInt8, device: UInt8,
                bus: UInt16, setup: USBSetupPacket? = nil, isochronousErrorCount: Int32? = nil, timestamp: Int64,
                status: Int32, length: Int, data: [UInt8], dataFlag: UInt8 = 0, isDataTruncated: Bool = false,
                interval: Int32? = nil, startFrame: Int32? = nil, transferFlags: UInt32? = nil,
                isochronousDescriptorCount: UInt32? = nil, fileOffset: Int = 0) {
        self.urbID = urbID
        self.type = type
        self.transferType = transferType
        self.endpoint = endpoint
        self.device = device
        self.bus = bus
        self.setup = setup
        self.isochronousErrorCount = isochronousErrorCount
        self.timestamp = timestamp
        self.status = status
        self.length = length
        self.data = data
        self.dataFlag = dataFlag
        self.isDataTruncated = isDataTruncated
        self.interval = interval
        self.startFrame = startFrame
        self.transferFlags = transferFlags
        self.isochronousDescriptorCount = isochronousDescriptorCount
        self.fileOffset = fileOffset
    }

    /// Device to host.
    public var isInput: Bool { endpoint & 0x80 != 0 }
}

/// Why a usbmon record cannot be read. Every case names the file offset of its record, and the
/// header-relative byte where that applies.
public enum USBMonError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The capture file itself could not be read.
    case capture(CaptureError)
    /// The capture holds records of another link type (not 189 or 220).
    case notUSBMon(recordOffset: Int, linkType: Int?)
    /// The record is shorter than the usbmon header of its layout.
    case shortHeader(recordOffset: Int, length: Int, headerLength: Int)
    /// Header byte 8 is not 'S', 'C' or 'E'.
    case unknownEventType(recordOffset: Int, byte: UInt8)
    /// Header byte 9 is not 0 (isochronous), 1 (interrupt), 2 (control) or 3 (bulk).
    case unknownTransferType(recordOffset: Int, byte: UInt8)
    /// The header promises more captured bytes (descriptors + data) than the record holds, and
    /// the capture does not say it cut the record (snap length).
    case dataBeyondRecord(recordOffset: Int, declared: Int, available: Int)
    /// A length field that no URB can have (negative when read as signed).
    case impossibleLength(recordOffset: Int, headerByte: Int, value: UInt32)

    public var description: String {
        switch self {
        case .capture(let error): error.description
        case .notUSBMon(let offset, let linkType):
            "record at byte \(offset) is not a usbmon frame (link type \(linkType.map(String.init) ?? "none"); expected 189 or 220)"
        case .shortHeader(let offset, let length, let headerLength):
            "usbmon record at byte \(offset) has \(length) bytes, less than its \(headerLength)-byte header"
        case .unknownEventType(let offset, let byte):
            "usbmon record at byte \(offset): event type \(USBMonHex.byte(byte)) at header byte 8 is not S, C or E"
        case .unknownTransferType(let offset, let byte):
            "usbmon record at byte \(offset): transfer type \(byte) at header byte 9 is not 0-3"
        case .dataBeyondRecord(let offset, let declared, let available):
            "usbmon record at byte \(offset) declares \(declared) captured bytes after its header but holds \(available)"
        case .impossibleLength(let offset, let headerByte, let value):
            "usbmon record at byte \(offset): length \(value) at header byte \(headerByte) is impossible"
        }
    }
}

/// Decodes one usbmon frame (the bytes of a LINKTYPE 189 / 220 packet).
public enum USBMonParser {
    /// Size of one isochronous descriptor after the memory-mapped header (status, offset, length, padding).
    public static let isochronousDescriptorLength = 16

    /// Parses `frame`. `originalLength` is the packet's length before any snap-length cut (the
    /// data may then be shorter than the header says, and the event is marked truncated).
    public static func event(frame: ArraySlice<UInt8>, layout: USBMonHeaderLayout, bigEndian: Bool,
                             originalLength: Int? = nil, fileOffset: Int = 0) throws(USBMonError) -> USBMonEvent {
        let fields = Fields(bytes: frame, bigEndian: bigEndian)
        guard frame.count >= layout.headerLength else {
            throw .shortHeader(recordOffset: fileOffset, length: frame.count, headerLength: layout.headerLength)
        }
        guard let type = USBMonEventType(rawValue: fields.byte(8)) else {
            throw .unknownEventType(recordOffset: fileOffset, byte: fields.byte(8))
        }
        guard let transferType = usbmonTransferType(fields.byte(9)) else {
            throw .unknownTransferType(recordOffset: fileOffset, byte: fields.byte(9))
        }
        let seconds = Int64(bitPattern: fields.uint64(16))
        let microseconds = Int64(Int32(bitPattern: fields.uint32(24)))
        let urbLength = fields.uint32(32)
        let capturedLength = fields.uint32(36)
        guard urbLength <= UInt32(Int32.max) else {
            throw .impossibleLength(recordOffset: fileOffset, headerByte: 32, value: urbLength)
        }
        guard capturedLength <= UInt32(Int32.max) else {
            throw .impossibleLength(recordOffset: fileOffset, headerByte: 36, value: capturedLength)
        }
        var event = USBMonEvent(
            urbID: fields.uint64(0), type: type, transferType: transferType, endpoint: fields.byte(10),
            device: fields.byte(11), bus: fields.uint16(12),
            timestamp: seconds &* 1_000_000 &+ microseconds,
            status: Int32(bitPattern: fields.uint32(28)), length: Int(urbLength), data: [],
            dataFlag: fields.byte(15), fileOffset: fileOffset)
        if fields.byte(14) == 0 {
            event.setup = USBSetupPacket(bytes: frame.dropFirst(40).prefix(8))
        } else if transferType == .isochronous {
            event.isochronousErrorCount = Int32(bitPattern: fields.uint32(40))
        }
        var descriptorBytes = 0
        if layout == .memoryMapped {
            event.interval = Int32(bitPattern: fields.uint32(48))
            event.startFrame = Int32(bitPattern: fields.uint32(52))
            event.transferFlags = fields.uint32(56)
            let descriptors = fields.uint32(60)
            event.isochronousDescriptorCount = descriptors
            // Isochronous descriptors sit between the header and the data.
            if transferType == .isochronous {
                guard descriptors <= 1024 else {
                    throw .impossibleLength(recordOffset: fileOffset, headerByte: 60, value: descriptors)
                }
                descriptorBytes = Int(descriptors) * isochronousDescriptorLength
            }
        }
        let available = frame.count - layout.headerLength
        let declared = descriptorBytes + Int(capturedLength)
        if declared > available {
            let cutBySnapLength = (originalLength ?? frame.count) > frame.count
            guard cutBySnapLength else {
                throw .dataBeyondRecord(recordOffset: fileOffset, declared: declared, available: available)
            }
            event.isDataTruncated = true
        }
        let dataStart = frame.startIndex + layout.headerLength + min(descriptorBytes, available)
        let dataEnd = min(frame.endIndex, dataStart + Int(capturedLength))
        event.data = Array(frame[dataStart..<dataEnd])
        return event
    }

    /// usbmon numbers transfer types as the kernel's pipe types (0 isochronous, 1 interrupt,
    /// 2 control, 3 bulk), not as endpoint descriptors do.
    public static func usbmonTransferType(_ byte: UInt8) -> USBTransferType? {
        switch byte {
        case 0: .isochronous
        case 1: .interrupt
        case 2: .control
        case 3: .bulk
        default: nil
        }
    }

    /// Integer fields of the header in the capture's byte order.
    private struct Fields {
        let bytes: ArraySlice<UInt8>
        let bigEndian: Bool

        func byte(_ offset: Int) -> UInt8 { bytes[bytes.startIndex + offset] }

        func uint16(_ offset: Int) -> UInt16 { UInt16(truncatingIfNeeded: integer(offset, width: 2)) }
        func uint32(_ offset: Int) -> UInt32 { UInt32(truncatingIfNeeded: integer(offset, width: 4)) }
        func uint64(_ offset: Int) -> UInt64 { integer(offset, width: 8) }

        private func integer(_ offset: Int, width: Int) -> UInt64 {
            var value: UInt64 = 0
            for index in 0..<width {
                let shift = bigEndian ? (width - 1 - index) * 8 : index * 8
                value |= UInt64(byte(offset + index)) << shift
            }
            return value
        }
    }
}

/// Reads a pcap or pcapng usbmon capture (LINKTYPE 189 or 220) as a stream of events, in file
/// order, on top of the package's pcap / pcapng readers.
public final class USBMonReader {
    private let reader: any CaptureReader

    /// Reads the records of an opened capture.
    public init(_ reader: any CaptureReader) {
        self.reader = reader
    }

    /// Opens a capture file.
    public convenience init(path: String) throws(USBMonError) {
        do {
            self.init(try CaptureFile.open(path: path))
        } catch {
            throw .capture(error)
        }
    }

    /// Reads a capture held in memory.
    public convenience init(bytes: [UInt8]) throws(USBMonError) {
        do {
            self.init(try CaptureFile.reader(bytes: bytes))
        } catch {
            throw .capture(error)
        }
    }

    /// Problems that did not stop reading (a truncated final record).
    public var warnings: [CaptureWarning] { reader.warnings }

    /// The next event, or nil at the end of the capture.
    public func next() throws(USBMonError) -> USBMonEvent? {
        let record: CaptureRecord
        do {
            guard let next = try reader.next() else { return nil }
            record = next
        } catch {
            throw .capture(error)
        }
        guard case .linkLayerFrame(let linkType) = record.content, let layout = USBMonHeaderLayout(linkType: linkType) else {
            var linkType: Int?
            if case .linkLayerFrame(let type) = record.content { linkType = type }
            throw .notUSBMon(recordOffset: record.fileOffset, linkType: linkType)
        }
        return try USBMonParser.event(frame: record.bytes, layout: layout, bigEndian: isBigEndian,
                                      originalLength: record.originalLength, fileOffset: record.fileOffset)
    }

    /// Every remaining event.
    public func readAll() throws(USBMonError) -> [USBMonEvent] {
        var events: [USBMonEvent] = []
        while let event = try next() { events.append(event) }
        return events
    }

    /// usbmon headers are in the capturing host's byte order, which is the file's.
    private var isBigEndian: Bool {
        switch reader {
        case let pcap as PcapReader: pcap.isBigEndian
        case let pcapng as PcapNGReader: pcapng.isBigEndian
        default: false
        }
    }
}

/// Hex text for messages.
enum USBMonHex {
    static func byte(_ value: UInt8) -> String {
        let text = String(value, radix: 16)
        return "0x" + (text.count == 1 ? "0" + text : text)
    }

    /// "a4 01 4a 00 ef"; long runs are cut after `limit` bytes with the total shown.
    static func spaced(_ bytes: [UInt8], limit: Int = 64) -> String {
        let shown = bytes.prefix(limit).map { value in
            let text = String(value, radix: 16)
            return text.count == 1 ? "0" + text : text
        }.joined(separator: " ")
        if bytes.isEmpty { return "(none)" }
        return bytes.count > limit ? shown + " … (\(bytes.count) bytes)" : shown
    }
}
