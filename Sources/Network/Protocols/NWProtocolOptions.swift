/// The common base of per-protocol configuration objects (``NWProtocolTCP/Options``,
/// ``NWProtocolUDP/Options``, ``NWProtocolIP/Options``, ``NWProtocolTLS/Options`` and others).
///
/// Options are reference types: they are placed in an ``NWParameters/ProtocolStack`` and may
/// be changed there until the parameters are used. Subclasses protect their state with a lock,
/// because the engine reads options on its own threads.
public class NWProtocolOptions: @unchecked Sendable {

    /// The protocol these options configure.
    package let definition: NWProtocolDefinition

    /// Creates options for the given protocol.
    package init(definition: NWProtocolDefinition) {
        self.definition = definition
    }

    /// Returns an independent copy with the same settings (used by ``NWParameters/copy()``).
    ///
    /// Every subclass with settings must override this; the base implementation returns the
    /// object itself, which is only right for options without state.
    package func copyOptions() -> NWProtocolOptions {
        self
    }
}
