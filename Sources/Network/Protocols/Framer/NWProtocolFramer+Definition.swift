extension NWProtocolFramer {
    /// Identifies a framer protocol: its implementation class, and its name (the class's
    /// `label`), by which messages and metadata find it again.
    public class Definition: NWProtocolDefinition, @unchecked Sendable {
        /// The class each connection's framer is made from.
        package let implementation: any NWProtocolFramerImplementation.Type

        /// A definition for framers of the given class.
        public init(implementation: any NWProtocolFramerImplementation.Type) {
            self.implementation = implementation
            super.init(name: implementation.label)
        }
    }
}
