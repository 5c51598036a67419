import NIOCore
import NetworkDNS
import NetworkSync

/// Browsing a service type in a domain that a normal DNS server serves (unicast DNS-SD,
/// RFC 6763 §4 over the system's resolver): the type's PTR records name the instances, each
/// instance's TXT record is its metadata. Asked again when the shortest TTL runs out (at least
/// every `shortestRefresh`, at most every `longestRefresh`), and each round's differences are
/// reported as `MDNSBrowseResults` changes, so both kinds of browse look the same upstream.
final class UnicastServiceBrowse: Sendable {
    private let typeName: DNSName
    private let includeTXT: Bool
    private let handler: MDNSEngine.BrowseHandler
    private let task = Lock<Task<Void, Never>?>(nil)

    static let shortestRefresh = TimeAmount.seconds(5)
    static let longestRefresh = TimeAmount.seconds(300)

    init(typeName: DNSName, includeTXT: Bool, handler: @escaping MDNSEngine.BrowseHandler) {
        self.typeName = typeName
        self.includeTXT = includeTXT
        self.handler = handler
    }

    func start() {
        let work = Task { [typeName, includeTXT, handler] in
            var results = MDNSBrowseResults(typeName: typeName, includesTXT: includeTXT)
            var known: [DNSResourceRecord] = []
            var first = true
            while !Task.isCancelled {
                let (records, ttl) = await Self.round(typeName: typeName, includeTXT: includeTXT)
                // The same records compare equal whatever their TTL.
                let current = records.map(Self.withoutTTL)
                let changes = current.filter { !known.contains($0) }.map(MDNSCache.Change.added)
                    + known.filter { !current.contains($0) }.map(MDNSCache.Change.removed)
                known = current
                let found = results.apply(changes, interface: 0)
                if Task.isCancelled { return }
                if first || !found.isEmpty { handler(found) }
                first = false
                let wait = min(max(TimeAmount.seconds(Int64(ttl)), Self.shortestRefresh), Self.longestRefresh)
                try? await Task.sleep(nanoseconds: UInt64(wait.nanoseconds))
            }
        }
        task.withLock { $0 = work }
    }

    func cancel() {
        task.withLock { $0?.cancel() }
    }

    /// One round of questions: the PTRs, then (when wanted) each instance's TXT record; with
    /// the shortest TTL among the answers. A failed question counts as no records.
    private static func round(typeName: DNSName, includeTXT: Bool) async -> ([DNSResourceRecord], UInt32) {
        let resolver = DNSResolver.shared
        guard let pointers = try? await resolver.resolve(DNSQuestion(name: typeName, type: .ptr)) else {
            return ([], 0)
        }
        var records = pointers.records.filter { $0.type == .ptr }
        var ttl = pointers.ttl
        guard includeTXT else { return (records, ttl) }
        for pointer in records {
            guard case .ptr(let instance) = pointer.data,
                let answer = try? await resolver.resolve(DNSQuestion(name: instance, type: .txt))
            else { continue }
            records += answer.records.filter { $0.type == .txt }
            ttl = min(ttl, answer.ttl)
        }
        return (records, ttl)
    }

    private static func withoutTTL(_ record: DNSResourceRecord) -> DNSResourceRecord {
        var record = record
        record.ttl = 1
        return record
    }
}
