import Glibc
import Foundation
import Synchronization

/// Which way a packet travelled, seen from this host.
public enum PacketDirection: Hashable, Sendable {
    /// Written by this host (an HCI command, an ATT request or confirmation).
    case sent
    /// Read from the descriptor (an HCI event, an ATT response, notification or indication).
    case received
}

/// Sees every packet an engine writes or reads, e.g. for `ingestd capture` to write them to a
/// btsnoop file. Called on the engine's executor: keep it quick.
public typealias PacketTap = @Sendable (PacketDirection, [UInt8]) -> Void

/// Why a descriptor stopped delivering packets.
public enum PacketChannelEnd: Hashable, Sendable, CustomStringConvertible {
    /// The peer closed its end (a read returned 0).
    case closedByPeer
    /// A read failed with this errno (ECONNRESET, ETIMEDOUT, EPIPE when a controller is removed, …).
    case failed(errno: Int32)
    /// ``PacketChannel/close()`` was called on this side.
    case closedLocally

    public var description: String {
        switch self {
        case .closedByPeer: "closed by peer"
        case .failed(let code): "read failed: \(String(cString: strerror(code))) (errno \(code))"
        case .closedLocally: "closed locally"
        }
    }
}

/// What a ``PacketChannel`` delivers: packets in arrival order, then exactly one end.
public enum PacketChannelEvent: Hashable, Sendable {
    /// One packet as one read returned it.
    case packet([UInt8])
    /// No more packets will arrive; the descriptor is closed.
    case end(PacketChannelEnd)
}

/// Why a packet could not be written.
public enum PacketChannelError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The channel was closed (locally or because its reader ended).
    case closed
    /// The wake-up pipe of the reader thread could not be created (errno of `pipe`).
    case pipeFailed(errno: Int32)
    /// `write` failed with this errno.
    case writeFailed(errno: Int32)
    /// `write` wrote fewer bytes than the packet has (a packet socket never does this).
    case shortWrite(written: Int, expected: Int)

    public var description: String {
        switch self {
        case .closed: "the descriptor is closed"
        case .pipeFailed(let code): "cannot create the reader's wake-up pipe: \(String(cString: strerror(code))) (errno \(code))"
        case .writeFailed(let code): "write failed: \(String(cString: strerror(code))) (errno \(code))"
        case .shortWrite(let written, let expected): "short write: \(written) of \(expected) bytes"
        }
    }
}

/// A packet-oriented file descriptor (a raw HCI socket, an L2CAP SOCK_SEQPACKET socket, or one
/// end of an AF_UNIX SOCK_SEQPACKET socketpair in tests) with a dedicated reader thread.
///
/// Each successful `read` is one packet. The reader thread blocks in `poll` on the descriptor
/// and on a wake-up pipe, so ``close()`` ends it promptly; the reader thread alone closes the
/// descriptor, after its last read, and writes are serialised with that close so a write never
/// reaches a descriptor number that has been reused.
public final class PacketChannel: Sendable {
    /// Packets in arrival order, then one ``PacketChannelEvent/end(_:)``; then the stream finishes.
    public let events: AsyncStream<PacketChannelEvent>

    private struct State {
        var descriptor: Int32?
        var wakeWriteEnd: Int32?
        var closeRequested = false
    }

    private let state: Mutex<State>
    private let continuation: AsyncStream<PacketChannelEvent>.Continuation
    private let wakeReadEnd: Int32
    private let maximumPacketSize: Int

    /// Takes ownership of `descriptor` (it is closed when the channel ends) and starts reading.
    /// - Parameter maximumPacketSize: the read buffer; a longer packet is cut to this size.
    /// - Throws: the errno of `pipe` when the wake-up pipe cannot be created (the descriptor is
    ///   closed in that case too).
    public init(adopting descriptor: Int32, maximumPacketSize: Int = 2048, threadName: String = "packet-reader")
        throws(PacketChannelError)
    {
        var pipeEnds: [Int32] = [-1, -1]
        guard pipe(&pipeEnds) == 0,
              fcntl(pipeEnds[0], F_SETFD, FD_CLOEXEC) == 0, fcntl(pipeEnds[1], F_SETFD, FD_CLOEXEC) == 0
        else {
            let code = errno
            Glibc.close(descriptor)
            throw .pipeFailed(errno: code)
        }
        wakeReadEnd = pipeEnds[0]
        self.maximumPacketSize = max(1, maximumPacketSize)
        state = Mutex(State(descriptor: descriptor, wakeWriteEnd: pipeEnds[1]))
        (events, continuation) = AsyncStream.makeStream(of: PacketChannelEvent.self, bufferingPolicy: .unbounded)
        let thread = Thread { [self] in self.readLoop(descriptor) }
        thread.name = threadName
        thread.start()
    }

    /// Writes one packet.
    public func send(_ packet: [UInt8]) throws(PacketChannelError) {
        let result: Result<Void, PacketChannelError> = state.withLock { state in
            guard let descriptor = state.descriptor, !state.closeRequested else { return .failure(.closed) }
            while true {
                let written = packet.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
                if written == packet.count { return .success(()) }
                if written < 0 {
                    if errno == EINTR { continue }
                    return .failure(.writeFailed(errno: errno))
                }
                return .failure(.shortWrite(written: written, expected: packet.count))
            }
        }
        try result.get()
    }

    /// Runs `body` with the open descriptor (a socket option), serialised with writes and the
    /// close; `.failure(.closed)` once the channel is closed.
    package func withDescriptor<T>(_ body: (Int32) -> Result<T, PacketChannelError>) -> Result<T, PacketChannelError> {
        state.withLock { state in
            guard let descriptor = state.descriptor, !state.closeRequested else { return .failure(.closed) }
            return body(descriptor)
        }
    }

    /// Asks the reader thread to stop; it closes the descriptor and ends ``events`` with
    /// ``PacketChannelEnd/closedLocally`` (unless the stream had already ended). Idempotent.
    public func close() {
        state.withLock { state in
            guard !state.closeRequested, let wake = state.wakeWriteEnd else { return }
            state.closeRequested = true
            var byte: UInt8 = 1
            _ = write(wake, &byte, 1)
        }
    }

    /// True once ``close()`` was called or the reader ended.
    public var isClosed: Bool { state.withLock { $0.closeRequested || $0.descriptor == nil } }

    private func readLoop(_ descriptor: Int32) {
        var buffer = [UInt8](repeating: 0, count: maximumPacketSize)
        var end = PacketChannelEnd.closedLocally
        loop: while true {
            var fds = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: wakeReadEnd, events: Int16(POLLIN), revents: 0)]
            let ready = poll(&fds, 2, -1)
            if ready < 0 {
                if errno == EINTR { continue }
                end = .failed(errno: errno)
                break
            }
            if fds[1].revents != 0 { break }
            if fds[0].revents == 0 { continue }
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            switch count {
            case 0:
                end = .closedByPeer
                break loop
            case ..<0:
                let code = errno
                if code == EINTR || code == EAGAIN || code == EWOULDBLOCK { continue }
                end = .failed(errno: code)
                break loop
            default:
                continuation.yield(.packet(Array(buffer[0..<count])))
            }
        }
        state.withLock { state in
            if let descriptor = state.descriptor { Glibc.close(descriptor) }
            if let wake = state.wakeWriteEnd { Glibc.close(wake) }
            state.descriptor = nil
            state.wakeWriteEnd = nil
            state.closeRequested = true
        }
        Glibc.close(wakeReadEnd)
        continuation.yield(.end(end))
        continuation.finish()
    }
}
