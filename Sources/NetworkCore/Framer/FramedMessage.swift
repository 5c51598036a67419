import Foundation
import NIOCore

/// A whole message between a framer host and the flow above it, with the framer metadata it
/// carries (nil for none). Upward it is what the framer delivered; downward, what the
/// application sent (`isComplete` false: more of the same message follows).
package struct FramedMessage: Sendable {
    package var bytes: ByteBuffer
    package var metadata: (any AnyObject & Sendable)?
    package var isComplete: Bool

    package init(bytes: ByteBuffer, metadata: (any AnyObject & Sendable)?, isComplete: Bool = true) {
        self.bytes = bytes
        self.metadata = metadata
        self.isComplete = isComplete
    }

    /// A whole message of `data`'s bytes, copied into a buffer of its own.
    package init(copying data: Data, metadata: (any AnyObject & Sendable)?) {
        var bytes = ByteBufferAllocator().buffer(capacity: data.count)
        bytes.writeBytes(data)
        self.init(bytes: bytes, metadata: metadata)
    }
}
