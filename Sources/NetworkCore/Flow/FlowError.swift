/// An engine-level error: the three domains Apple's `NWError` has. `Network` maps it to `NWError`.
package enum FlowError: Error, Equatable, Hashable, Sendable {
    /// An errno value.
    case posix(Int32)
    /// A DNS-SD style code (`kDNSServiceErr_*`).
    case dns(Int32)
    /// A Security-framework style `OSStatus`.
    case tls(Int32)
}
