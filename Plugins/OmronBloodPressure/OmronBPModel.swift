import Foundation

/// One Omron blood-pressure monitor model: where its memory keeps each user's readings, how a
/// reading is laid out, how the monitor is unlocked and where its clock is. Values from the
/// public memory maps (see README.md for the sources).
public struct OmronBPModel: Sendable, Hashable {
    /// How the bytes of one stored reading are laid out.
    public enum RecordLayout: String, Sendable, Hashable {
        /// Byte-aligned, little-endian flag words: systolic − 25, diastolic, pulse, year − 2000,
        /// then hour/day/month/irregular/movement and second/minute words (HEM-7142T2, HEM-7155T,
        /// HEM-7361T, BP5360).
        case byteAligned
        /// Bit-packed, big-endian: diastolic, systolic − 25, year − 2000, pulse, then movement,
        /// irregular, month, day, hour, minute, second in one 32-bit word (HEM-7600T).
        case bitPacked
    }

    /// How the monitor lets a host at its memory.
    public enum Unlock: String, Sendable, Hashable {
        /// A 16-byte key the host programmed once while the monitor was in pairing mode (`-P-`).
        case pairingKey
        /// A 4-byte token the monitor echoes (no stored key; the bond is the kernel's).
        case token
    }

    /// The model name, as the vendor prints it (`HEM-7361T`).
    public var name: String
    /// Other names of the same memory map (regional variants, the US "BP" numbers).
    public var aliases: [String]
    /// Where each user's ring of readings starts (user 1 first).
    public var userStartAddresses: [UInt16]
    /// Readings each user's ring holds.
    public var recordsPerUser: Int
    /// Bytes per reading.
    public var recordSize: Int
    public var recordLayout: RecordLayout
    /// Where the settings block is read; its first bytes are the index (each user's write cursor).
    public var settingsReadAddress: UInt16
    /// Where the settings block is written (a copy of the read block at another address).
    public var settingsWriteAddress: UInt16
    /// The bytes of the index read from `settingsReadAddress`.
    public var indexSize: Int
    /// Per user, the offset in the index of the 16-bit word whose low-order byte is the slot the
    /// monitor writes next.
    public var cursorOffsets: [Int]
    /// The index words' byte order (true: big-endian, the low-order byte second).
    public var indexBigEndian: Bool
    /// Offset in the settings block of the clock block.
    public var clockOffset: Int
    /// How the clock block is laid out.
    public var clockLayout: OmronClockBlock.Layout
    public var unlock: Unlock

    /// The number of users.
    public var users: Int { userStartAddresses.count }

    /// Every model the adapter knows, by memory map.
    public static let all: [OmronBPModel] = [
        OmronBPModel(name: "HEM-7142T2", aliases: ["HEM-7142T2-AP", "HEM-7142T2-Z", "HEM-7142T2-ZAZ", "HEM-7142T1-AP",
                                                   "HEM-7141T1-AP", "HEM-7140T1-AP"],
                     userStartAddresses: [0x02E8], recordsPerUser: 14, recordSize: 14, recordLayout: .byteAligned,
                     settingsReadAddress: 0x0260, settingsWriteAddress: 0x02A4, indexSize: 0x10, cursorOffsets: [0x00],
                     indexBigEndian: false, clockOffset: 0x2C, clockLayout: .yearFirst, unlock: .token),
        OmronBPModel(name: "HEM-7155T", aliases: ["HEM-7155T-D", "HEM-7155T-EBK", "HEM-7155T-EBL", "HEM-7155T_ESL",
                                                  "HEM-7340T-Z", "HEM-7341T-Z"],
                     userStartAddresses: [0x0098, 0x0458], recordsPerUser: 60, recordSize: 16, recordLayout: .byteAligned,
                     settingsReadAddress: 0x0010, settingsWriteAddress: 0x0054, indexSize: 0x10, cursorOffsets: [0x00, 0x02],
                     indexBigEndian: false, clockOffset: 0x2C, clockLayout: .yearFirst, unlock: .pairingKey),
        OmronBPModel(name: "HEM-7361T", aliases: ["HEM-7361T-D", "HEM-7361T-EBK", "HEM-7361T-AP", "HEM-7361T_ESL",
                                                  "HEM-7342T", "HEM-7343T"],
                     userStartAddresses: [0x0098, 0x06D8], recordsPerUser: 100, recordSize: 16, recordLayout: .byteAligned,
                     settingsReadAddress: 0x0010, settingsWriteAddress: 0x0054, indexSize: 0x10, cursorOffsets: [0x00, 0x02],
                     indexBigEndian: false, clockOffset: 0x2C, clockLayout: .yearFirst, unlock: .pairingKey),
        OmronBPModel(name: "HEM-7600T", aliases: ["HEM-7600T-E", "HEM-7600T-Z", "HEM-7600T_W", "HEM-7270C", "HEM-7271T"],
                     userStartAddresses: [0x02AC], recordsPerUser: 100, recordSize: 14, recordLayout: .bitPacked,
                     settingsReadAddress: 0x0260, settingsWriteAddress: 0x0286, indexSize: 0x08, cursorOffsets: [0x00],
                     indexBigEndian: true, clockOffset: 0x14, clockLayout: .wordSwapped, unlock: .pairingKey),
        OmronBPModel(name: "HEM-7377T1", aliases: ["BP5360", "HEM-7377T1-ZAZ"],
                     userStartAddresses: [0x080C, 0x0D0C], recordsPerUser: 80, recordSize: 16, recordLayout: .byteAligned,
                     settingsReadAddress: 0x0010, settingsWriteAddress: 0x0058, indexSize: 0x1C, cursorOffsets: [0x00, 0x02],
                     indexBigEndian: false, clockOffset: 0x30, clockLayout: .yearFirst, unlock: .token),
    ]

    /// The model named `text` (a model or alias, case and `-`/`_` insensitive), nil when unknown.
    public static func named(_ text: String) -> OmronBPModel? {
        func key(_ name: String) -> String { name.uppercased().replacingOccurrences(of: "_", with: "-") }
        let wanted = key(text.trimmingCharacters(in: .whitespacesAndNewlines))
        return all.first { ([$0.name] + $0.aliases).map(key).contains(wanted) }
    }

    /// The address of reading `slot` (0-based) of `user` (0-based).
    func address(user: Int, slot: Int) -> UInt16 {
        userStartAddresses[user] &+ UInt16(truncatingIfNeeded: slot * recordSize)
    }

    /// The slot each user's monitor writes next, from the index bytes (nil when the index is short).
    func cursors(fromIndex index: [UInt8]) -> [Int]? {
        var cursors: [Int] = []
        for offset in cursorOffsets {
            let position = offset + (indexBigEndian ? 1 : 0)
            guard position < index.count else { return nil }
            cursors.append(Int(index[position]) % recordsPerUser)
        }
        return cursors
    }
}
