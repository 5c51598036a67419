/// A TLV message's type, as framer metadata: the type a received message carried, or the type
/// to send a message with (none: type 0).
package final class TLVMetadata: Sendable {
    package let type: UInt64

    package init(type: UInt64) {
        self.type = type
    }
}
