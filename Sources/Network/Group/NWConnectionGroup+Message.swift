import Foundation

extension NWConnectionGroup {
    /// A message of a group: how to send it, and on receive where it came from.
    public class Message: NWConnection.ContentContext, @unchecked Sendable {
        /// The sender of a received message; nil for messages made to send.
        public let remoteEndpoint: NWEndpoint?
        /// The local endpoint a received message arrived on.
        public let localEndpoint: NWEndpoint?
        /// The path a received message came over, when known.
        public let path: NWPath?
        /// The group a received message belongs to, for `reply` and `extractConnection`.
        private(set) weak var group: NWConnectionGroup?

        /// Creates a message to send, with the same settings as a connection's context.
        public override init(
            identifier: String,
            expiration: UInt64 = 0,
            priority: Double = 0.5,
            isFinal: Bool = false,
            antecedent: NWConnection.ContentContext? = nil,
            metadata: [NWProtocolMetadata]? = []
        ) {
            self.remoteEndpoint = nil
            self.localEndpoint = nil
            self.path = nil
            super.init(
                identifier: identifier, expiration: expiration, priority: priority, isFinal: isFinal,
                antecedent: antecedent, metadata: metadata)
        }

        /// A message that arrived in `group` from `remoteEndpoint`, sent to `localEndpoint` when
        /// known, with the metadata of its protocols.
        init(
            receivedFrom remoteEndpoint: NWEndpoint, at localEndpoint: NWEndpoint? = nil, in group: NWConnectionGroup,
            metadata: [NWProtocolMetadata] = []
        ) {
            self.remoteEndpoint = remoteEndpoint
            self.localEndpoint = localEndpoint
            self.path = nil
            self.group = group
            super.init(identifier: "Received Group Message", metadata: metadata)
        }

        /// A plain message to the whole group.
        public static let `default` = NWConnectionGroup.Message(identifier: "Default Group Message")

        /// Sends `content` back to this message's sender through its group (nothing happens for
        /// a message that was not received).
        public func reply(content: Data?, message: NWConnectionGroup.Message = .default) {
            guard let group, let remoteEndpoint else { return }
            group.send(content: content, to: remoteEndpoint, message: message) { _ in }
        }

        /// A connection to this message's sender, taken from its group; nil for a message that
        /// was not received, or a group that cannot make one.
        public func extractConnection() -> NWConnection? {
            guard let group, let remoteEndpoint else { return nil }
            return group.extract(connectionTo: remoteEndpoint)
        }

        /// The metadata of one protocol that came with this message, if any.
        public func metadata(definition: NWProtocolDefinition) -> NWProtocolMetadata? {
            protocolMetadata(definition: definition)
        }
    }
}
