extension NWBrowser {
    /// What a browser looks for.
    public enum Descriptor: Sendable {
        /// Services of `type` (`_http._tcp`) in `domain` (nil: `local.`).
        case bonjour(type: String, domain: String?)
        /// The same, with each service's TXT record in its result's metadata.
        case bonjourWithTXTRecord(type: String, domain: String?)
        /// An application service by name (an Apple pairing feature: browsing for one fails
        /// with `kDNSServiceErr_Unsupported` here).
        case applicationService(name: String)
    }
}
