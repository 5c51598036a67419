/// The common base of the protocol namespaces (``NWProtocolTCP``, ``NWProtocolUDP``,
/// ``NWProtocolIP``, ``NWProtocolTLS`` and the others).
///
/// Each subclass groups a protocol's `definition` with its nested `Options` and `Metadata`
/// classes; instances are never needed. The class holds no state; it is `@unchecked Sendable`
/// only because Swift requires that spelling for a non-final class.
public class NWProtocol: @unchecked Sendable {
    /// Namespaces are not instantiated; the initializer exists for the subclasses.
    package init() {}
}
