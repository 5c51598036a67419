import NetworkCore

/// A built-in framer of the structured-concurrency API (TLV, the Coder's length prefix) as an
/// application protocol of a classic stack: it runs on the same framer host as an
/// `NWProtocolFramer`, with the engine's own implementation (`TLVFramer`).
package final class BuiltInFramerOptions: NWProtocolOptions, @unchecked Sendable {
    // (`package`, not internal: Swift 6.3 warns of an infinite recursion in what it synthesizes
    // for an internal subclass of a class whose initializer is `package`.)
    /// The layout of the framer's headers.
    let layout: TLVLayout
    /// Its name in log lines.
    let label: String

    init(layout: TLVLayout, label: String) {
        self.layout = layout
        self.label = label
        super.init(definition: NWProtocolDefinition(name: label))
    }

    /// Makes the framer of each connection.
    var factory: TLVFramerFactory { TLVFramerFactory(layout: layout, label: label) }

    /// Immutable: copies may share the object.
    override package func copyOptions() -> NWProtocolOptions {
        self
    }
}
