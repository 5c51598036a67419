import Foundation

/// Byte streams (TCP, TLS): sends of bytes and big-endian integers, receives of byte ranges.
extension NetworkChannel where ApplicationProtocol: StreamProtocol {
    /// Sends `content`; returns once the stack has taken it. `endOfStream` closes the sending
    /// side after it (the peer's receives then report the end of the stream).
    public nonisolated(nonsending) func send<Content: DataProtocol>(
        _ content: Content, endOfStream: Bool = false,
        @ProtocolMetadataBuilder metadata builder: () -> [NWProtocolMetadata] = { [] }
    ) async throws {
        try await core.sendStream(content, closesWrite: endOfStream)
    }

    /// Sends `value` as its raw bytes in network byte order (big-endian).
    public nonisolated(nonsending) func send<Value: NetworkFixedWidthInteger>(
        _ value: Value, endOfStream: Bool = false,
        @ProtocolMetadataBuilder metadata builder: () -> [NWProtocolMetadata] = { [] }
    ) async throws {
        try await core.sendStream(Self.bytes(of: value), closesWrite: endOfStream)
    }

    /// Sends `content` without waiting: idempotent data, which may go out more than once (in a
    /// TCP Fast Open SYN, when the parameters allow Fast Open).
    public func sendIdempotent<Content: DataProtocol>(
        _ content: Content, endOfStream: Bool = false,
        @ProtocolMetadataBuilder metadata builder: () -> [NWProtocolMetadata] = { [] }
    ) {
        core.sendStreamIdempotent(content, closesWrite: endOfStream)
    }

    /// Sends `value` (big-endian) without waiting, as idempotent data.
    public func sendIdempotent<Value: NetworkFixedWidthInteger>(
        _ value: Value, endOfStream: Bool = false,
        @ProtocolMetadataBuilder metadata builder: () -> [NWProtocolMetadata] = { [] }
    ) {
        core.sendStreamIdempotent(Self.bytes(of: value), closesWrite: endOfStream)
    }

    /// Receives exactly `byteCount` bytes. If the peer ends the stream first, what came is
    /// returned with `endOfStream` set in the metadata (nothing is lost).
    public nonisolated(nonsending) func receive(exactly byteCount: Int) async throws -> ApplicationProtocol.Message<Data> {
        try await receive(atLeast: byteCount, atMost: byteCount)
    }

    /// Receives between `atLeast` and `atMost` bytes, whatever is there once there are at least
    /// `atLeast`; fewer only at the end of the stream (`endOfStream` in the metadata).
    public nonisolated(nonsending) func receive(atLeast: Int = 1, atMost: Int) async throws -> ApplicationProtocol.Message<Data> {
        let received = try await core.receive(minimum: atLeast, maximum: atMost)
        return (received.data, try streamMetadata(received))
    }

    /// Receives an integer sent as its raw big-endian bytes; throws `ENODATA` if the stream
    /// ends before all of them came.
    public nonisolated(nonsending) func receive<Value: NetworkFixedWidthInteger>(as type: Value.Type) async throws -> ApplicationProtocol.Message<Value> {
        let size = MemoryLayout<Value>.size
        let received = try await core.receive(minimum: size, maximum: size)
        guard received.data.count == size else { throw NWError.posix(.ENODATA) }
        var value = Value.zero
        withUnsafeMutableBytes(of: &value) { $0.copyBytes(from: received.data) }
        return (Value(bigEndian: value), try streamMetadata(received))
    }

    private func streamMetadata(_ received: ChannelCore.Received) throws -> ApplicationProtocol.Metadata {
        func make<Made: StreamMetadataMaking>(_ type: Made.Type) -> ApplicationProtocol.Metadata? {
            // (Made is ApplicationProtocol.Metadata: a cast between equal types, no lookup.)
            Made(endOfStream: received.isFinal || received.isComplete, other: []) as? ApplicationProtocol.Metadata
        }
        guard let streamMetadataType, let metadata = make(streamMetadataType) else { throw NWError.posix(.EPROTONOSUPPORT) }
        return metadata
    }

    private static func bytes<Value: NetworkFixedWidthInteger>(of value: Value) -> Data {
        withUnsafeBytes(of: value.bigEndian) { Data($0) }
    }
}
