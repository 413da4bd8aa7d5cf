import AppleHealthImport
import CZlib
import Foundation
import FuzzSupport

/// libFuzzer target for the archive reader's CRC path (`ZipArchive`, `ZipEntryReader`, the
/// verification `AppleHealthExportFile.open` does before an import stores anything).
///
/// Input: byte 0 chooses the shape. Even: the rest is a whole file (any zip, a stub before one,
/// anything). Odd: the rest is one entry's data (stored when byte 0 is 1 mod 4, else raw deflate)
/// put into a well-formed archive whose directory lists the CRC-32 and length of bytes 1...8
/// of the rest (so both matching and mismatching checksums are reached). Checks: nothing but an
/// `AppleHealthImportError` ever comes out; an entry that verifies reads back exactly its listed
/// length with its listed CRC-32 (computed here independently), and reads the same every time;
/// an entry that fails verification fails when streamed too; messages have no control bytes.
let path = FileManager.default.temporaryDirectory.appendingPathComponent("fuzz-zip-\(getpid()).zip").path

func fuzzZipEntries(_ bytes: [UInt8]) {
    guard let shape = bytes.first else { return }
    let rest = Array(bytes.dropFirst())
    let file = shape % 2 == 0 ? rest : wrapped(rest, stored: shape % 4 == 1)
    guard FileManager.default.createFile(atPath: path, contents: Data(file)) else { preconditionFailure("cannot write \(path)") }
    defer { unlink(path) }
    let archive: ZipArchive
    do {
        archive = try ZipArchive(file: RandomAccessFile(path: path))
    } catch {
        checkMessage(error)
        return
    }
    for entry in archive.entries.prefix(4) {
        let verified: Bool
        do {
            try ZipEntryReader(archive: archive, entry: entry).verify()
            verified = true
        } catch {
            checkMessage(error)
            verified = false
        }
        let streamed = stream(archive, entry)
        switch streamed {
        case .success(let data):
            precondition(verified, "\(entry.name): verification failed but streaming succeeded")
            precondition(data.count == entry.uncompressedSize, "\(entry.name): \(data.count) bytes read, \(entry.uncompressedSize) listed")
            let crc = data.withUnsafeBufferPointer { UInt32(truncatingIfNeeded: CZlib.crc32(0, $0.baseAddress, uInt($0.count))) }
            precondition(crc == entry.crc32, "\(entry.name): read bytes have CRC 0x\(String(crc, radix: 16)), listed 0x\(String(entry.crc32, radix: 16))")
            precondition(stream(archive, entry) == streamed, "\(entry.name): a second read differs")
        case .failure(let error):
            checkMessage(error)
            precondition(!verified, "\(entry.name): verified but streaming failed: \(error)")
        }
    }
    // The export opener on the same file: an error of its own kind, or a source.
    do { _ = try AppleHealthExportFile.open(path: path) } catch { checkMessage(error) }
}

/// The entry's bytes, read in odd-sized chunks.
func stream(_ archive: ZipArchive, _ entry: ZipEntry) -> Result<[UInt8], AppleHealthImportError> {
    Result { () throws(AppleHealthImportError) -> [UInt8] in
        let reader = try ZipEntryReader(archive: archive, entry: entry)
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4093)
        while true {
            var failure: AppleHealthImportError?
            let count = chunk.withUnsafeMutableBytes { buffer -> Int in
                do throws(AppleHealthImportError) { return try reader.read(into: buffer) } catch {
                    failure = error
                    return 0
                }
            }
            if let failure { throw failure }
            if count == 0 { return data }
            data += chunk[0..<count]
            precondition(data.count <= 1 << 26, "more than 64 MiB from a fuzz input")
        }
    }
}

func checkMessage(_ error: AppleHealthImportError) {
    let text = error.description
    precondition(!text.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }, "control bytes in: \(text)")
    precondition(!text.contains("-9223372036854775808"), "a negative size printed: \(text)")
}

/// One entry named `apple_health_export/export.xml` holding `rest[8...]`, listed with the CRC-32
/// and uncompressed length of `rest[0..<8]`.
func wrapped(_ rest: [UInt8], stored: Bool) -> [UInt8] {
    var header = Array(rest.prefix(8))
    header += [UInt8](repeating: 0, count: 8 - header.count)
    let data = Array(rest.dropFirst(8))
    let crc = UInt32(header[0]) | UInt32(header[1]) << 8 | UInt32(header[2]) << 16 | UInt32(header[3]) << 24
    let size = UInt32(header[4]) | UInt32(header[5]) << 8 | UInt32(header[6]) << 16 | UInt32(header[7] & 0x03) << 24
    let name = Array("apple_health_export/export.xml".utf8)
    func le16(_ v: Int) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF)] }
    func le32(_ v: UInt32) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)] }
    let method = stored ? 0 : 8
    var file: [UInt8] = [0x50, 0x4B, 0x03, 0x04] + le16(20) + le16(0) + le16(method) + le16(0) + le16(0)
    file += le32(crc) + le32(UInt32(data.count)) + le32(size) + le16(name.count) + le16(0) + name + data
    let directoryOffset = file.count
    var directory: [UInt8] = [0x50, 0x4B, 0x01, 0x02] + le16(20) + le16(20) + le16(0) + le16(method) + le16(0) + le16(0)
    directory += le32(crc) + le32(UInt32(data.count)) + le32(size) + le16(name.count) + le16(0) + le16(0) + le16(0) + le16(0)
    directory += le32(0) + le32(0) + name
    file += directory
    file += [0x50, 0x4B, 0x05, 0x06] + le16(0) + le16(0) + le16(1) + le16(1) + le32(UInt32(directory.count)) + le32(UInt32(directoryOffset)) + le16(0)
    return file
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    fuzzEntry(start, count, fuzzZipEntries)
}

#if !FUZZING
@main enum Replay {
    static func main() { replayInputs(CommandLine.arguments.dropFirst(), fuzzZipEntries) }
}
#endif
