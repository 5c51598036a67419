/// A classic framer (an `NWProtocolFramerImplementation`) named for use in a stack:
/// `Framer<MyFramer> { TLS() }`.
public protocol FramerProtocol {
    /// The framer's definition.
    static var definition: NWProtocolFramer.Definition { get }
}
