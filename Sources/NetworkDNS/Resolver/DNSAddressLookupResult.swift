/// Both families' results of an address lookup, for callers that just want the addresses.
package struct DNSAddressLookupResult: Sendable {
    /// The AAAA lookup's result.
    package var ipv6: Result<DNSAnswer, DNSResolverError>
    /// The A lookup's result.
    package var ipv4: Result<DNSAnswer, DNSResolverError>

    /// Pairs the two families' results.
    package init(ipv6: Result<DNSAnswer, DNSResolverError>, ipv4: Result<DNSAnswer, DNSResolverError>) {
        self.ipv6 = ipv6
        self.ipv4 = ipv4
    }

    /// All addresses, families interleaved IPv6 first (RFC 8305 section 4 without the RFC 6724
    /// sort, which needs the routing table and belongs to the racer).
    package var addresses: [DNSIPAddress] {
        let v6 = (try? ipv6.get().addresses) ?? []
        let v4 = (try? ipv4.get().addresses) ?? []
        var merged: [DNSIPAddress] = []
        for index in 0..<max(v6.count, v4.count) {
            if index < v6.count { merged.append(v6[index]) }
            if index < v4.count { merged.append(v4[index]) }
        }
        return merged
    }

    /// The error to report when there are no addresses: a failure if either family failed,
    /// otherwise nil (the name simply has no addresses).
    package var failure: DNSResolverError? {
        if case .failure(let error) = ipv6, case .failure = ipv4 { return error }
        return nil
    }
}
