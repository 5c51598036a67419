/// The IP layer of a stack, written only to change its options:
/// `TCP { IP().version(.v4) }`.
public struct IP: NetworkProtocolOptions, Sendable {
    /// IP has no layer below it.
    public typealias BelowProtocol = Never

    /// Per-packet IP metadata (none is reported yet).
    public struct Metadata: NetworkMetadataProtocol {}

    private var edits: [@Sendable (NWProtocolIP.Options) -> Void] = []

    /// IP with the system's defaults (either version, chosen per address).
    public init() {}

    private func with(_ edit: @escaping @Sendable (NWProtocolIP.Options) -> Void) -> IP {
        var copy = self
        copy.edits.append(edit)
        return copy
    }

    /// Restricts the connection to one IP version.
    public func version(_ version: NWProtocolIP.Options.Version) -> IP { with { $0.version = version } }
    /// The hop limit (TTL) of packets sent.
    public func hopLimit(_ hopLimit: UInt8) -> IP { with { $0.hopLimit = hopLimit } }
    /// Which kind of local address to prefer (temporary or stable IPv6 addresses).
    public func localAddressPreference(_ preference: NWProtocolIP.Options.AddressPreference) -> IP {
        with { $0.localAddressPreference = preference }
    }
    /// Sends IPv6 packets no larger than the minimum MTU (1280 bytes).
    public func minimumMTU(_ enabled: Bool) -> IP { with { $0.useMinimumMTU = enabled } }
    /// Sets the don't-fragment bit (path MTU discovery decides the size instead).
    public func fragmentationDisabled(_ disabled: Bool) -> IP { with { $0.disableFragmentation = disabled } }
    /// The opposite of ``fragmentationDisabled(_:)``: the spelling of the June 2025 beta, which
    /// WWDC 2025's sample code uses (`IP().fragmentationEnabled(false)`).
    public func fragmentationEnabled(_ enabled: Bool) -> IP { fragmentationDisabled(!enabled) }
    /// Records the time each packet was received.
    public func receiveTimeCalculated(_ enabled: Bool) -> IP { with { $0.shouldCalculateReceiveTime = enabled } }
    /// Stops multicast this host sends from looping back to its own sockets.
    public func multicastLoopbackDisabled(_ disabled: Bool) -> IP { with { $0.disableMulticastLoopback = disabled } }

    /// Classic options with this layer's settings.
    func makeOptions() -> NWProtocolIP.Options {
        let options = NWProtocolIP.Options()
        for edit in edits { edit(options) }
        return options
    }
}

extension IP: StackLayer {
    func addLayers(to plan: inout StackPlan) {
        plan.ip = makeOptions()
    }
}
