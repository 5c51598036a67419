import Foundation
import NetworkCore

/// A message protocol's way of turning what a receive gave into its message (content and
/// metadata).
protocol ChannelMessageDecoding: MessageProtocol {
    func message(from received: ChannelCore.Received) throws -> Message<ContentType>
}

extension UDP: ChannelMessageDecoding {
    func message(from received: ChannelCore.Received) throws -> Message<Data> {
        (received.data, Metadata(other: [NWProtocolUDP.Metadata(), NWProtocolIP.Metadata.received(received.message)]))
    }
}

extension DTLS: ChannelMessageDecoding {
    func message(from received: ChannelCore.Received) throws -> Message<Data> {
        (received.data, Metadata(other: [NWProtocolUDP.Metadata(), NWProtocolIP.Metadata()]))
    }
}

extension TLV: ChannelMessageDecoding {
    func message(from received: ChannelCore.Received) throws -> Message<Data> {
        let type = (received.message as? TLVMetadata)?.type ?? 0
        // (A type wider than Int, from a UInt64 field, keeps its bits.)
        return (received.data, Metadata(type: Int(truncatingIfNeeded: type), other: []))
    }
}

extension Coder: ChannelMessageDecoding {
    /// Decodes the message; a decoding failure is thrown as the decoder's error and leaves the
    /// connection as it was (the next message is whole).
    func message(from received: ChannelCore.Received) throws -> Message<Receiving> {
        (try coder.makeDecoder().decode(Receiving.self, from: received.data), Metadata(other: []))
    }
}

extension Framer: ChannelMessageDecoding {
    func message(from received: ChannelCore.Received) throws -> Message<Data> {
        (received.data, Metadata(message: received.message as? NWProtocolFramer.Message))
    }
}

extension WebSocket: ChannelMessageDecoding {
    func message(from received: ChannelCore.Received) throws -> Message<Data> {
        guard let info = received.message as? WebSocketMessageInfo else {
            return (received.data, Metadata(isComplete: received.isComplete, lastMessage: received.isFinal, other: [], opcode: .binary, closeCode: nil))
        }
        let classic = NWProtocolWebSocket.Metadata(received: info)
        return (received.data, Metadata(
            isComplete: received.isComplete, lastMessage: received.isFinal || classic.opcode == .close, other: [classic],
            opcode: classic.opcode, closeCode: classic.opcode == .close ? classic.closeCode : nil))
    }
}
