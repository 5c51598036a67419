/// Reads a response for one (name, type): follows the CNAME chain inside the answer section,
/// collects the records at its end, and tells NXDOMAIN from NODATA with the negative TTL from
/// the SOA (RFC 2308). Records that are not on the chain are ignored (they could be planted).
package struct DNSAnswerInterpreter {
    /// The records of the asked type at the end of the chain.
    package var records: [DNSResourceRecord] = []
    /// The CNAME targets followed, in order.
    package var aliases: [DNSName] = []
    /// Records, NXDOMAIN or NODATA.
    package var outcome: DNSAnswer.Outcome = .noData
    /// Lowest TTL along the chain, or the negative TTL.
    package var ttl: UInt32 = .max
    /// Whether the authority section holds an SOA (the negative answer is authoritative).
    package var hasAuthority = false

    /// Reads `response` as the answer to (`name`, `type`, `recordClass`).
    package init(
        response: DNSMessage, name: DNSName, type: DNSRecordType, recordClass: DNSClass, maximumNegativeTTL: UInt32,
        defaultNegativeTTL: UInt32
    ) {
        var current = name
        var visited: Set<DNSName> = [name.lowercased()]
        let relevant = response.answers.filter { $0.recordClass == recordClass }
        while true {
            let owned = relevant.filter { $0.name.equalsIgnoringCase(current) }
            let matching = owned.filter { $0.type == type }
            if !matching.isEmpty {
                records = matching
                ttl = min(ttl, matching.map(\.ttl).min() ?? ttl)
                outcome = .records
                return
            }
            guard type != .cname, let alias = owned.first(where: { $0.type == .cname }),
                case .cname(let target) = alias.data, visited.insert(target.lowercased()).inserted
            else { break }
            aliases.append(target)
            ttl = min(ttl, alias.ttl)
            current = target
        }
        // RFC 6604: with a chain, the RCODE describes its last name.
        outcome = response.header.responseCode == .nameError ? .nameDoesNotExist : .noData
        var negativeTTL = defaultNegativeTTL
        for record in response.authorities where record.type == .soa {
            if case .soa(let soa) = record.data {
                negativeTTL = min(record.ttl, soa.minimum)
                hasAuthority = true
                break
            }
        }
        ttl = min(ttl, min(negativeTTL, maximumNegativeTTL))
    }
}
