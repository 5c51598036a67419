import NIOCore

/// The resolver's answer to one question, with where it came from and how long it stays
/// valid. NXDOMAIN and NODATA are answers, not errors: the Happy Eyeballs racer must tell "this
/// family has no addresses" apart from "the server did not answer".
package struct DNSAnswer: Hashable, Sendable {
    /// What the answer says.
    package enum Outcome: Hashable, Sendable {
        /// Records of the asked type exist (`records` is not empty).
        case records
        /// NXDOMAIN: the name does not exist at all.
        case nameDoesNotExist
        /// NODATA: the name exists but has no record of this type.
        case noData
    }

    /// Where the answer came from; the establishment report shows it.
    package enum Source: Hashable, Sendable {
        /// The name was an address literal.
        case literal
        /// The hosts file.
        case hosts
        /// The cache, still within its TTL.
        case cache
        /// The cache, past its TTL, handed out because the caller allowed stale answers; a
        /// refresh runs in the background.
        case staleCache
        /// A nameserver, just now.
        case network
        /// getaddrinfo, because nsswitch.conf routes hosts through modules we do not implement.
        case system
    }

    /// The question that was answered (after search-domain expansion: the name that worked).
    package var question: DNSQuestion
    /// Records, NXDOMAIN or NODATA.
    package var outcome: Outcome
    /// Records of the asked type found at the end of the CNAME chain.
    package var records: [DNSResourceRecord]
    /// The CNAME chain followed from the question's name, in order (empty when there is none).
    package var aliases: [DNSName]
    /// Seconds the answer stays valid from now; 0 for stale, literal and system answers.
    package var ttl: UInt32
    /// Hosts, cache, stale cache, network, …: for the establishment report.
    package var source: Source
    /// Time from the start of this lookup to the answer.
    package var duration: TimeAmount

    /// An answer as the resolver, the cache or a test builds it.
    package init(
        question: DNSQuestion, outcome: Outcome, records: [DNSResourceRecord], aliases: [DNSName] = [], ttl: UInt32,
        source: Source, duration: TimeAmount = .zero
    ) {
        self.question = question
        self.outcome = outcome
        self.records = records
        self.aliases = aliases
        self.ttl = ttl
        self.source = source
        self.duration = duration
    }

    /// The name the records belong to: the last alias, or the question's name.
    package var canonicalName: DNSName { aliases.last ?? question.name }

    /// The addresses of A and AAAA records, in answer order.
    package var addresses: [DNSIPAddress] {
        records.compactMap { record in
            switch record.data {
            case .a(let address): .v4(address)
            case .aaaa(let address): .v6(address)
            default: nil
            }
        }
    }
}
