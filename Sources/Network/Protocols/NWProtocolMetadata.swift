/// The common base of per-protocol metadata: facts about a connection or a single message
/// (``NWProtocolTCP/Metadata``, ``NWProtocolIP/Metadata`` and others).
///
/// Callers downcast to the subclass they asked for, for example
/// `context.protocolMetadata(definition: NWProtocolIP.definition) as? NWProtocolIP.Metadata`.
public class NWProtocolMetadata: @unchecked Sendable {

    /// The protocol this metadata belongs to; lets lookups by definition find it.
    package let definition: NWProtocolDefinition

    /// Creates metadata for the given protocol.
    package init(definition: NWProtocolDefinition) {
        self.definition = definition
    }
}
