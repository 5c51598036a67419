/// Builds the classic metadata a send carries (for example an ``NWProtocolIP/Metadata`` with an
/// ECN codepoint) from the closure after `metadata:`.
@resultBuilder
public struct ProtocolMetadataBuilder {
    /// The metadata listed, in order.
    public static func buildBlock(_ metadata: NWProtocolMetadata...) -> [NWProtocolMetadata] {
        metadata
    }
}
