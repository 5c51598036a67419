/// Marks a protocol layer's per-message metadata type (for example ``TLV/Metadata``).
public protocol NetworkMetadataProtocol: Sendable {}
