import Foundation

/// Shared plumbing of the libFuzzer targets in `Tests/Fuzz/` (run them with `scripts/fuzz.sh`).
///
/// A target defines `LLVMFuzzerTestOneInput` through ``fuzzEntry(_:_:_:)``. Built with
/// `--sanitize=fuzzer -Xswiftc -DFUZZING`, libFuzzer supplies `main`; in a plain build the
/// target's `@main` calls ``replayInputs(_:_:)`` so that a crash file can be replayed under a
/// debugger: `fuzz-gatt crash-1234…`.

/// Calls `body` with the input libFuzzer hands over. Always returns 0 (libFuzzer's "keep going").
public func fuzzEntry(_ start: UnsafePointer<UInt8>?, _ count: Int, _ body: ([UInt8]) -> Void) -> CInt {
    guard let start, count > 0 else {
        body([])
        return 0
    }
    body(Array(UnsafeBufferPointer(start: start, count: count)))
    return 0
}

/// Runs `body` on every file named in `paths` (directories: every file inside, sorted).
public func replayInputs(_ paths: some Sequence<String>, _ body: ([UInt8]) -> Void) {
    var files: [String] = []
    for path in paths {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            print("no such file: \(path)")
            continue
        }
        if isDirectory.boolValue {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
            files += names.sorted().map { URL(fileURLWithPath: path).appendingPathComponent($0).path }
        } else {
            files.append(path)
        }
    }
    for file in files {
        guard let data = FileManager.default.contents(atPath: file) else {
            print("cannot read \(file)")
            continue
        }
        body([UInt8](data))
        print("replayed \(file): \(data.count) bytes OK")
    }
}

/// Reads a fuzz input as a sequence of small fields; past the end every read yields zero or empty.
public struct FuzzBytes {
    public let bytes: [UInt8]
    public private(set) var position = 0

    public init(_ bytes: [UInt8]) { self.bytes = bytes }

    public var isAtEnd: Bool { position >= bytes.count }

    /// The next byte, or 0 at the end.
    public mutating func byte() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    /// A little-endian 16-bit field.
    public mutating func uint16() -> UInt16 {
        UInt16(byte()) | UInt16(byte()) << 8
    }

    /// Up to `count` bytes (fewer at the end).
    public mutating func take(_ count: Int) -> [UInt8] {
        let end = min(bytes.count, position + max(0, count))
        defer { position = end }
        return Array(bytes[position..<end])
    }

    /// A length byte, then that many bytes.
    public mutating func chunk() -> [UInt8] {
        take(Int(byte()))
    }
}
