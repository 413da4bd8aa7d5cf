import BLEWire
import Foundation

/// What a record's bytes are.
public enum CaptureRecordContent: Hashable, Sendable {
    /// One HCI packet of the given type; the bytes exclude the H4 indicator byte.
    case hci(HCIPacketType)
    /// A frame of another link type handed through unparsed (e.g. usbmon, LINKTYPE 189 / 220).
    case linkLayerFrame(linkType: Int)
}

/// One packet read from a capture file, with its original timestamp.
///
/// `bytes` is a slice of the reader's buffer: its indices start at `bytes.startIndex`, not 0.
/// Holding on to a record is safe (copy-on-write), but letting it go before asking the reader
/// for the next one avoids a copy.
public struct CaptureRecord: Sendable {
    /// Microseconds since 1970-01-01T00:00:00Z, from the capture (never the wall clock).
    public var timestamp: Int64
    /// Which way the packet travelled; nil when the format does not say (e.g. LINKTYPE 187
    /// ACL data, usbmon frames).
    public var direction: CaptureDirection?
    /// What the bytes are.
    public var content: CaptureRecordContent
    /// The packet bytes (for HCI without the indicator byte, for other link types the whole frame).
    public var bytes: ArraySlice<UInt8>
    /// The length of the packet on the wire; larger than the captured length when the capture
    /// kept only a prefix (snap length).
    public var originalLength: Int
    /// Byte offset in the file of the record's header.
    public var fileOffset: Int
    /// The controller index for BlueZ monitor captures (btsnoop 2001, LINKTYPE 254); else 0.
    public var controllerIndex: UInt16

    /// Creates a record.
    public init(timestamp: Int64, direction: CaptureDirection?, content: CaptureRecordContent,
                bytes: ArraySlice<UInt8>, originalLength: Int, fileOffset: Int, controllerIndex: UInt16 = 0) {
        self.timestamp = timestamp
        self.direction = direction
        self.content = content
        self.bytes = bytes
        self.originalLength = originalLength
        self.fileOffset = fileOffset
        self.controllerIndex = controllerIndex
    }

    /// The timestamp as a `Date`.
    public var date: Date { Date(microsecondsSince1970: timestamp) }
}
