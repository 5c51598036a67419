import Foundation
import NetworkSync

/// Everything about how a connection, listener or browser should work other than where it
/// goes: its protocol stack and its path, proxy and behaviour preferences.
///
/// Parameters are a reference type: set them up, then hand them to a connection or listener.
/// Changes made after that are not guaranteed to be seen; use ``copy()`` to derive variants.
/// All properties may be used from any thread.
public final class NWParameters: CustomDebugStringConvertible, Sendable {

    /// Equatable so that ``hasDefaultPreferences`` compares every field, including ones added
    /// later, with a fresh state.
    private struct State: Equatable {
        /// The required interface and local endpoint: rarely set, and large inline, so boxed
        /// (parameters are often made per connection, as `.tcp` does on every access).
        private var origin: RequiredOrigin?
        var requiredInterface: NWInterface? {
            get { origin?.interface }
            set { origin = RequiredOrigin.make(interface: newValue, localEndpoint: requiredLocalEndpoint) }
        }
        var requiredLocalEndpoint: NWEndpoint? {
            get { origin?.localEndpoint }
            set { origin = RequiredOrigin.make(interface: requiredInterface, localEndpoint: newValue) }
        }
        var requiredInterfaceType: NWInterface.InterfaceType = .other
        var prohibitedInterfaces: [NWInterface]?
        var prohibitedInterfaceTypes: [NWInterface.InterfaceType]?
        var prohibitExpensivePaths = false
        var prohibitConstrainedPaths = false
        var allowUltraConstrainedPaths = false
        var preferNoProxies = false
        var allowLocalEndpointReuse = false
        var acceptLocalOnly = false
        var includePeerToPeer = false
        var serviceClass: ServiceClass = .bestEffort
        var multipathServiceType: MultipathServiceType = .disabled
        var allowFastOpen = false
        var expiredDNSBehavior: ExpiredDNSBehavior = .systemDefault
        var requiresDNSSECValidation = false
        var attribution: Attribution = .developer
        private var context = ContextReference(.default)
        var privacyContext: PrivacyContext {
            get { context.object }
            set { context = ContextReference(newValue) }
        }
        var customIPProtocolNumber: UInt8?
    }

    /// A privacy context compared by identity (the class itself is not `Equatable`).
    private struct ContextReference: Equatable {
        let object: PrivacyContext

        init(_ object: PrivacyContext) {
            self.object = object
        }

        static func == (lhs: ContextReference, rhs: ContextReference) -> Bool {
            lhs.object === rhs.object
        }
    }

    /// Where traffic must originate: an interface, a local endpoint. Immutable, so copies of
    /// the state share it; a change replaces it.
    private final class RequiredOrigin: Equatable, Sendable {
        let interface: NWInterface?
        let localEndpoint: NWEndpoint?

        static func == (lhs: RequiredOrigin, rhs: RequiredOrigin) -> Bool {
            lhs.interface == rhs.interface && lhs.localEndpoint == rhs.localEndpoint
        }

        private init(interface: NWInterface?, localEndpoint: NWEndpoint?) {
            self.interface = interface
            self.localEndpoint = localEndpoint
        }

        /// Nil when neither is set.
        static func make(interface: NWInterface?, localEndpoint: NWEndpoint?) -> RequiredOrigin? {
            interface == nil && localEndpoint == nil ? nil : RequiredOrigin(interface: interface, localEndpoint: localEndpoint)
        }
    }

    private let state: Lock<State>

    /// The protocol stack. It is a shared object: modify it in place.
    public let defaultProtocolStack: NWParameters.ProtocolStack

    private init(stack: ProtocolStack, state: State) {
        self.defaultProtocolStack = stack
        self.state = Lock(state)
    }

    /// Creates parameters with an empty protocol stack (no transport, no application protocols)
    /// and every preference at its default.
    public init() {
        self.defaultProtocolStack = ProtocolStack()
        self.state = Lock(State())
    }

    /// Creates parameters for TCP, with TLS on top unless `tls` is nil.
    public convenience init(tls: NWProtocolTLS.Options?, tcp: NWProtocolTCP.Options = NWProtocolTCP.Options()) {
        self.init(stack: ProtocolStack(applicationProtocols: tls.map { [$0] } ?? [], transportProtocol: tcp), state: State())
    }

    /// Creates parameters for UDP, with DTLS on top unless `dtls` is nil.
    public convenience init(dtls: NWProtocolTLS.Options?, udp: NWProtocolUDP.Options = NWProtocolUDP.Options()) {
        self.init(stack: ProtocolStack(applicationProtocols: dtls.map { [$0] } ?? [], transportProtocol: udp), state: State())
    }

    /// Creates parameters for a raw IP protocol with the given protocol number (a raw socket,
    /// which needs `CAP_NET_RAW` on Linux).
    public convenience init(customIPProtocolNumber: UInt8) {
        var state = State()
        state.customIPProtocolNumber = customIPProtocolNumber
        self.init(stack: ProtocolStack(), state: state)
    }

    /// Creates parameters for QUIC with `quic`'s settings: a connection carries one
    /// bidirectional stream (docs/quic.md).
    public convenience init(quic: NWProtocolQUIC.Options) {
        self.init(stack: ProtocolStack(applicationProtocols: [], transportProtocol: quic), state: State())
    }

    /// New parameters for QUIC offering the application protocols `alpn` (QUIC requires one).
    public final class func quic(alpn: [String]) -> NWParameters {
        NWParameters(quic: NWProtocolQUIC.Options(alpn: alpn))
    }

    /// New parameters for QUIC's datagram flow (RFC 9221) with `alpn`. Datagram flows are not
    /// built yet: a connection made with them fails with `EPROTONOSUPPORT`.
    public final class func quicDatagram(alpn: [String]) -> NWParameters {
        let options = NWProtocolQUIC.Options(alpn: alpn)
        options.isDatagram = true
        return NWParameters(quic: options)
    }

    /// New parameters for TLS over TCP with default options (a fresh object on every access).
    public class var tls: NWParameters { NWParameters(tls: NWProtocolTLS.Options()) }

    /// New parameters for plain TCP with default options (a fresh object on every access).
    public class var tcp: NWParameters { NWParameters(tls: nil) }

    /// New parameters for DTLS over UDP with default options (a fresh object on every access).
    public class var dtls: NWParameters { NWParameters(dtls: NWProtocolTLS.Options()) }

    /// New parameters for plain UDP with default options (a fresh object on every access).
    public class var udp: NWParameters { NWParameters(dtls: nil) }

    /// Returns independent parameters with the same settings: the protocol stack and every
    /// options object in it are copied too. The privacy context is shared, not copied.
    public func copy() -> NWParameters {
        NWParameters(stack: defaultProtocolStack.deepCopy(), state: state.withLock { $0 })
    }

    /// Places connections using these parameters in a privacy context.
    public func setPrivacyContext(_ privacyContext: NWParameters.PrivacyContext) {
        state.withLock { $0.privacyContext = privacyContext }
    }

    /// The privacy context set with ``setPrivacyContext(_:)``, or the default one.
    package var privacyContext: PrivacyContext { state.withLock { $0.privacyContext } }

    /// True when every preference (everything but the protocol stack) is at its default.
    var hasDefaultPreferences: Bool { state.withLock { $0 == State() } }

    /// The raw IP protocol number given to ``init(customIPProtocolNumber:)``, if any.
    package var customIPProtocolNumber: UInt8? { state.withLock { $0.customIPProtocolNumber } }

    /// Restricts traffic to this one interface; nil (the default) allows any.
    public var requiredInterface: NWInterface? {
        get { state.withLock { $0.requiredInterface } }
        set { state.withLock { $0.requiredInterface = newValue } }
    }

    /// Restricts traffic to interfaces of this type; `.other` (the default) means no restriction.
    public var requiredInterfaceType: NWInterface.InterfaceType {
        get { state.withLock { $0.requiredInterfaceType } }
        set { state.withLock { $0.requiredInterfaceType = newValue } }
    }

    /// Interfaces traffic must not use; nil by default.
    public var prohibitedInterfaces: [NWInterface]? {
        get { state.withLock { $0.prohibitedInterfaces } }
        set { state.withLock { $0.prohibitedInterfaces = newValue } }
    }

    /// Interface types traffic must not use; nil by default.
    public var prohibitedInterfaceTypes: [NWInterface.InterfaceType]? {
        get { state.withLock { $0.prohibitedInterfaceTypes } }
        set { state.withLock { $0.prohibitedInterfaceTypes = newValue } }
    }

    /// Keeps traffic off expensive interfaces (cellular, hotspots). False by default.
    public var prohibitExpensivePaths: Bool {
        get { state.withLock { $0.prohibitExpensivePaths } }
        set { state.withLock { $0.prohibitExpensivePaths = newValue } }
    }

    /// Keeps traffic off interfaces in a data-saving mode. False by default.
    public var prohibitConstrainedPaths: Bool {
        get { state.withLock { $0.prohibitConstrainedPaths } }
        set { state.withLock { $0.prohibitConstrainedPaths = newValue } }
    }

    /// Lets traffic use interfaces with very tight data limits. False by default.
    public var allowUltraConstrainedPaths: Bool {
        get { state.withLock { $0.allowUltraConstrainedPaths } }
        set { state.withLock { $0.allowUltraConstrainedPaths = newValue } }
    }

    /// Connects directly even when proxies are configured for the system. False by default.
    public var preferNoProxies: Bool {
        get { state.withLock { $0.preferNoProxies } }
        set { state.withLock { $0.preferNoProxies = newValue } }
    }

    /// The local address and port to bind to; nil (the default) lets the system choose.
    public var requiredLocalEndpoint: NWEndpoint? {
        get { state.withLock { $0.requiredLocalEndpoint } }
        set { state.withLock { $0.requiredLocalEndpoint = newValue } }
    }

    /// Allows binding to a local address and port that are already in use
    /// (`SO_REUSEADDR` / `SO_REUSEPORT`). False by default.
    public var allowLocalEndpointReuse: Bool {
        get { state.withLock { $0.allowLocalEndpointReuse } }
        set { state.withLock { $0.allowLocalEndpointReuse = newValue } }
    }

    /// Makes listeners accept only peers on the local link and advertise only there. False by
    /// default.
    public var acceptLocalOnly: Bool {
        get { state.withLock { $0.acceptLocalOnly } }
        set { state.withLock { $0.acceptLocalOnly = newValue } }
    }

    /// Allows peer-to-peer interfaces for discovery and connections. False by default.
    public var includePeerToPeer: Bool {
        get { state.withLock { $0.includePeerToPeer } }
        set { state.withLock { $0.includePeerToPeer = newValue } }
    }

    /// How the traffic should be prioritized. ``ServiceClass/bestEffort`` by default.
    public var serviceClass: NWParameters.ServiceClass {
        get { state.withLock { $0.serviceClass } }
        set { state.withLock { $0.serviceClass = newValue } }
    }

    /// Whether and how TCP connections use several paths (Multipath TCP).
    /// ``MultipathServiceType/disabled`` by default.
    public var multipathServiceType: NWParameters.MultipathServiceType {
        get { state.withLock { $0.multipathServiceType } }
        set { state.withLock { $0.multipathServiceType = newValue } }
    }

    /// Lets idempotent data sent before the connection is ready travel in the handshake (TCP
    /// Fast Open, TLS early data). False by default.
    public var allowFastOpen: Bool {
        get { state.withLock { $0.allowFastOpen } }
        set { state.withLock { $0.allowFastOpen = newValue } }
    }

    /// Whether expired DNS answers may be used. ``ExpiredDNSBehavior/systemDefault`` by default.
    public var expiredDNSBehavior: NWParameters.ExpiredDNSBehavior {
        get { state.withLock { $0.expiredDNSBehavior } }
        set { state.withLock { $0.expiredDNSBehavior = newValue } }
    }

    /// Requires DNS answers to be DNSSEC-validated. False by default.
    public var requiresDNSSECValidation: Bool {
        get { state.withLock { $0.requiresDNSSECValidation } }
        set { state.withLock { $0.requiresDNSSECValidation = newValue } }
    }

    /// Who the traffic is attributed to. ``Attribution/developer`` by default.
    public var attribution: NWParameters.Attribution {
        get { state.withLock { $0.attribution } }
        set { state.withLock { $0.attribution = newValue } }
    }

    /// A one-line summary: the protocol stack from the top down, then every preference that
    /// differs from its default.
    public var debugDescription: String {
        let current = state.withLock { $0 }
        var parts = [defaultProtocolStack.layerNames.joined(separator: "/")]
        if let number = current.customIPProtocolNumber { parts.append("ip protocol \(number)") }
        if let interface = current.requiredInterface { parts.append("interface: \(interface.name)") }
        if current.requiredInterfaceType != .other { parts.append("interface type: \(current.requiredInterfaceType)") }
        if let interfaces = current.prohibitedInterfaces, !interfaces.isEmpty {
            parts.append("prohibited interfaces: " + interfaces.map(\.name).joined(separator: " "))
        }
        if let types = current.prohibitedInterfaceTypes, !types.isEmpty {
            parts.append("prohibited types: " + types.map { "\($0)" }.joined(separator: " "))
        }
        if current.prohibitExpensivePaths { parts.append("prohibit expensive") }
        if current.prohibitConstrainedPaths { parts.append("prohibit constrained") }
        if current.allowUltraConstrainedPaths { parts.append("allow ultra-constrained") }
        if current.preferNoProxies { parts.append("prefer no proxies") }
        if let local = current.requiredLocalEndpoint { parts.append("local: \(local.debugDescription)") }
        if current.allowLocalEndpointReuse { parts.append("reuse local endpoint") }
        if current.acceptLocalOnly { parts.append("accept local only") }
        if current.includePeerToPeer { parts.append("include peer-to-peer") }
        if current.serviceClass != .bestEffort { parts.append("service class: \(current.serviceClass)") }
        if current.multipathServiceType != .disabled { parts.append("multipath: \(current.multipathServiceType)") }
        if current.allowFastOpen { parts.append("fast open") }
        if current.expiredDNSBehavior != .systemDefault { parts.append("expired DNS: \(current.expiredDNSBehavior)") }
        if current.requiresDNSSECValidation { parts.append("require DNSSEC") }
        parts.append("attribution: \(current.attribution)")
        if current.privacyContext !== PrivacyContext.default {
            parts.append("privacy context: \(current.privacyContext.debugDescription)")
        }
        return parts.joined(separator: ", ")
    }
}
