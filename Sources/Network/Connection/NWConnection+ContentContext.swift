import Foundation

extension NWConnection {
    /// Describes one logical message: how to send it (priority, expiry, ordering, whether it
    /// ends the stream) and, on receive, the per-message protocol metadata that came with it.
    public class ContentContext: @unchecked Sendable {
        /// A name for the message, for your own bookkeeping and for logs.
        public final let identifier: String
        /// Milliseconds after which unsent data of this message may be dropped; 0 never expires.
        public final let expirationMilliseconds: UInt64
        /// Priority relative to other messages on the same connection, from 0.0 to 1.0.
        public final let relativePriority: Double
        /// Whether completing this message closes the sending side of the connection.
        public final let isFinal: Bool
        /// A message that must be sent before this one.
        public final let antecedent: NWConnection.ContentContext?
        /// The metadata: never changed after init, so read without a lock. A received message
        /// carries one protocol's metadata, kept in `single` (no array allocated per message).
        private let single: NWProtocolMetadata?
        private let list: [NWProtocolMetadata]

        /// Creates a context for sending a message.
        public init(
            identifier: String,
            expiration: UInt64 = 0,
            priority: Double = 0.5,
            isFinal: Bool = false,
            antecedent: NWConnection.ContentContext? = nil,
            metadata: [NWProtocolMetadata]? = []
        ) {
            self.identifier = identifier
            self.expirationMilliseconds = expiration
            self.relativePriority = priority
            self.isFinal = isFinal
            self.antecedent = antecedent
            self.single = nil
            self.list = metadata ?? []
        }

        /// A received message's context, with one protocol's `metadata`.
        init(identifier: String, received metadata: NWProtocolMetadata) {
            self.identifier = identifier
            self.expirationMilliseconds = 0
            self.relativePriority = 0.5
            self.isFinal = false
            self.antecedent = nil
            self.single = metadata
            self.list = []
        }

        /// The protocol metadata attached to this message.
        public var protocolMetadata: [NWProtocolMetadata] {
            single.map { [$0] } ?? list
        }

        /// The metadata of one protocol attached to this message, if any.
        public func protocolMetadata(definition: NWProtocolDefinition) -> NWProtocolMetadata? {
            if let single { return single.definition == definition ? single : nil }
            return list.first { $0.definition == definition }
        }

        /// A plain message: completing it ends the message but leaves the connection open.
        public static let defaultMessage = NWConnection.ContentContext(identifier: "Default Message")

        /// The last message: completing it closes the sending side (a TCP FIN).
        public static let finalMessage = NWConnection.ContentContext(identifier: "Final Message", isFinal: true)

        /// The whole stream as one message: completing it closes the sending side too.
        public static let defaultStream = NWConnection.ContentContext(identifier: "Default Stream", isFinal: true)
    }
}
