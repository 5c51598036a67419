import Logging
import NIOCore
import NIOPosix
import NetworkSync
import Synchronization

/// The unicast stub resolver: hosts file, then the cache, then the nameservers of
/// resolv.conf over UDP (TCP when truncated), following CNAMEs and search domains. Address
/// lookups ask AAAA and A in parallel and report each as it arrives.
///
/// Thread-safe; one instance can serve the whole process (`DNSResolver.shared`), and tests
/// make their own with a hand-built configuration, cache and clock.
package final class DNSResolver: Sendable {
    /// What the resolver was built with; fixed for its lifetime.
    package let configuration: DNSResolverConfiguration
    /// Where answers are kept (the shared cache unless a test gave its own).
    package let cache: DNSCache
    private let group: any EventLoopGroup
    private let clock: DNSClock
    /// Where the next query starts in the server list when `rotate` is set.
    private let rotation = Atomic<Int>(0)
    /// Questions whose stale cache entry is being refreshed, so a burst of lookups starts one
    /// refresh, not one each.
    private let refreshing = Lock<Set<DNSCacheKey>>([])
    /// The query sockets open now.
    private let sockets = DNSSocketCount()

    /// How many queries are on the wire right now (each has a socket of its own until it is
    /// answered, times out or is cancelled).
    package var outstandingQueries: Int { sockets.current }

    /// The process-wide resolver over /etc/resolv.conf, /etc/hosts and /etc/nsswitch.conf as
    /// they are now: a change to any of them (a new network's DHCP, an edited hosts file) is
    /// picked up within a second (see `SystemResolverSource`).
    package static var shared: DNSResolver { SystemResolverSource.standard.current() }

    /// Longest CNAME chain followed (glibc and most stub resolvers stop well before this).
    static let maximumChainLength = 16

    /// A resolver over `configuration`, caching in `cache`, doing I/O on `group`, timing with `clock`.
    package init(
        configuration: DNSResolverConfiguration, cache: DNSCache = .shared,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton, clock: DNSClock = .system
    ) {
        self.configuration = configuration
        self.cache = cache
        self.group = group
        self.clock = clock
    }

    // MARK: Address lookups

    /// Starts AAAA and A lookups for `host` in parallel and calls `handler` once per family,
    /// as each completes (from any thread). With `allowStale`, an expired cache entry is
    /// delivered at once (source `.staleCache`) and refreshed in the background.
    @discardableResult
    package func lookUpAddresses(
        _ host: String, allowStale: Bool = false, handler: @escaping @Sendable (DNSAddressLookupEvent) -> Void
    ) -> DNSAddressLookup {
        let task = Task {
            await withTaskGroup(of: Void.self) { group in
                for type in [DNSRecordType.aaaa, .a] {
                    group.addTask {
                        let event: DNSAddressLookupEvent
                        do {
                            event = .answer(try await self.query(host, type: type, allowStale: allowStale))
                        } catch {
                            event = .failure(type, Self.resolverError(error))
                        }
                        if !Task.isCancelled { handler(event) }
                    }
                }
            }
        }
        return DNSAddressLookup(task: task)
    }

    /// The same two events as an async sequence (it finishes after both).
    package func addressLookupEvents(_ host: String, allowStale: Bool = false) -> AsyncStream<DNSAddressLookupEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: DNSAddressLookupEvent.self)
        let lookup = lookUpAddresses(host, allowStale: allowStale) { continuation.yield($0) }
        let finisher = Task {
            await lookup.wait()
            continuation.finish()
        }
        continuation.onTermination = { _ in
            lookup.cancel()
            finisher.cancel()
        }
        return stream
    }

    /// Both families at once, for callers that do not race.
    package func lookUpAddresses(_ host: String, allowStale: Bool = false) async -> DNSAddressLookupResult {
        async let v6 = result { try await self.query(host, type: .aaaa, allowStale: allowStale) }
        async let v4 = result { try await self.query(host, type: .a, allowStale: allowStale) }
        return DNSAddressLookupResult(ipv6: await v6, ipv4: await v4)
    }

    private func result(_ body: () async throws -> DNSAnswer) async -> Result<DNSAnswer, DNSResolverError> {
        do {
            return .success(try await body())
        } catch {
            return .failure(Self.resolverError(error))
        }
    }

    // MARK: Generic queries

    /// Answers one question about `host` (any type: A, AAAA, SRV, TXT, HTTPS, PTR, …),
    /// applying the search list. Address types consult address literals and the hosts file
    /// first, and go to getaddrinfo when nsswitch.conf involves modules we do not implement.
    package func query(_ host: String, type: DNSRecordType, allowStale: Bool = false) async throws -> DNSAnswer {
        do {
            let answer = try await answer(host, type: type, allowStale: allowStale)
            NetworkLog.dns.debug(
                "\(host) \(type): \(answer.outcome), \(answer.records.count) records",
                metadata: [
                    "source": "\(answer.source)", "ttl": "\(answer.ttl)",
                    "duration_ms": "\(answer.duration.nanoseconds / 1_000_000)",
                ])
            return answer
        } catch {
            NetworkLog.dns.debug("\(host) \(type): failed: \(Self.resolverError(error))")
            throw error
        }
    }

    /// `query` without the log line.
    private func answer(_ host: String, type: DNSRecordType, allowStale: Bool) async throws -> DNSAnswer {
        let started = clock.now()
        let isAddressType = type == .a || type == .aaaa
        if isAddressType, let literal = literalAnswer(host, type: type) { return literal }
        if isAddressType, let hosts = hostsAnswer(host, type: type, started: started) { return hosts }
        if isAddressType, !configuration.nsswitch.resolverMayAnswer {
            return try await DNSSystemResolver.lookup(host: host, type: type, started: started, clock: clock)
        }
        let candidates = try DNSSearchList.candidates(
            for: host, searchDomains: configuration.searchDomains, ndots: configuration.ndots)
        var negative: DNSAnswer?
        var failure: DNSResolverError?
        for name in candidates {
            do {
                var answer = try await resolve(DNSQuestion(name: name, type: type), allowStale: allowStale)
                answer.duration = clock.now() - started
                if answer.outcome == .records { return answer }
                // NODATA somewhere beats NXDOMAIN everywhere (the name exists).
                if negative == nil || (negative?.outcome == .nameDoesNotExist && answer.outcome == .noData) {
                    negative = answer
                }
            } catch DNSResolverError.serverFailure(let code) {
                // glibc carries on with the next search domain after SERVFAIL…
                failure = .serverFailure(code)
            } catch {
                // …but a timeout means the servers are unreachable: stop.
                throw Self.resolverError(error)
            }
        }
        if let negative { return negative }
        throw failure ?? DNSResolverError.timedOut
    }

    /// Answers one fully-qualified question: cache (fresh, or stale if allowed), else network.
    package func resolve(_ question: DNSQuestion, allowStale: Bool = false) async throws -> DNSAnswer {
        if let cached = cache.lookup(question, allowStale: allowStale) {
            if cached.source == .staleCache { refreshInBackground(question) }
            return cached
        }
        let answer = try await resolveFromNetwork(question)
        cache.insert(answer)
        return answer
    }

    private func refreshInBackground(_ question: DNSQuestion) {
        let key = DNSCacheKey(question)
        guard refreshing.withLock({ $0.insert(key).inserted }) else { return }
        NetworkLog.dns.debug("\(question.name) \(question.type): answered from the expired cache, refreshing")
        Task {
            defer { _ = refreshing.withLock { $0.remove(key) } }
            if let answer = try? await resolveFromNetwork(question) { cache.insert(answer) }
        }
    }

    // MARK: Answers that need no network

    private func literalAnswer(_ host: String, type: DNSRecordType) -> DNSAnswer? {
        guard let address = DNSIPAddress(host) else { return nil }
        let name = (try? DNSName(host)) ?? .root
        let question = DNSQuestion(name: name, type: type)
        switch (address, type) {
        case (.v4(let v4), .a):
            return DNSAnswer(question: question, outcome: .records, records: [DNSResourceRecord(name: name, type: .a, ttl: 0, data: .a(v4))], ttl: 0, source: .literal)
        case (.v6(let v6), .aaaa):
            return DNSAnswer(question: question, outcome: .records, records: [DNSResourceRecord(name: name, type: .aaaa, ttl: 0, data: .aaaa(v6))], ttl: 0, source: .literal)
        default:
            return DNSAnswer(question: question, outcome: .noData, records: [], ttl: 0, source: .literal)
        }
    }

    /// A name listed in the hosts file is answered from it for both families (a family it
    /// does not list is NODATA), as glibc's files module does for AF_UNSPEC lookups.
    private func hostsAnswer(_ host: String, type: DNSRecordType, started: NIODeadline) -> DNSAnswer? {
        guard configuration.nsswitch.consultsFilesFirst, configuration.hosts.contains(host),
            let name = try? DNSName(host)
        else { return nil }
        let records = configuration.hosts.addresses(for: host, type: type).map { address -> DNSResourceRecord in
            switch address {
            case .v4(let v4): DNSResourceRecord(name: name, type: .a, ttl: 0, data: .a(v4))
            case .v6(let v6): DNSResourceRecord(name: name, type: .aaaa, ttl: 0, data: .aaaa(v6))
            }
        }
        return DNSAnswer(
            question: DNSQuestion(name: name, type: type), outcome: records.isEmpty ? .noData : .records, records: records,
            ttl: 0, source: .hosts, duration: clock.now() - started)
    }

    // MARK: Network

    /// Asks the nameservers, following a CNAME chain across queries when a server returns
    /// only part of it.
    private func resolveFromNetwork(_ question: DNSQuestion) async throws -> DNSAnswer {
        let started = clock.now()
        var current = question.name
        var aliases: [DNSName] = []
        var minimumTTL = UInt32.max
        for _ in 0..<Self.maximumChainLength {
            let response = try await exchange(DNSQuestion(name: current, type: question.type, recordClass: question.recordClass))
            let interpretation = DNSAnswerInterpreter(
                response: response, name: current, type: question.type, recordClass: question.recordClass,
                maximumNegativeTTL: configuration.maximumNegativeTTL, defaultNegativeTTL: configuration.defaultNegativeTTL)
            aliases += interpretation.aliases
            minimumTTL = min(minimumTTL, interpretation.ttl)
            if interpretation.outcome == .noData, !interpretation.aliases.isEmpty, !interpretation.hasAuthority,
                let last = interpretation.aliases.last, !aliases.dropLast().contains(where: { $0.equalsIgnoringCase(last) })
            {
                // The server gave the alias but not the target's records: ask for the target.
                current = last
                continue
            }
            return DNSAnswer(
                question: question, outcome: interpretation.outcome, records: interpretation.records, aliases: aliases,
                ttl: minimumTTL, source: .network, duration: clock.now() - started)
        }
        return DNSAnswer(
            question: question, outcome: .noData, records: [], aliases: aliases, ttl: configuration.defaultNegativeTTL,
            source: .network, duration: clock.now() - started)
    }

    /// One question to the servers: per attempt, each server in turn with the configured
    /// timeout; a truncated reply is retried over TCP with the same server, a FORMERR to an
    /// EDNS query is retried without EDNS. Returns the first NOERROR or NXDOMAIN reply.
    private func exchange(_ question: DNSQuestion) async throws -> DNSMessage {
        let servers = configuration.nameservers
        guard !servers.isEmpty else { throw DNSResolverError.noNameservers }
        let start = configuration.rotate ? rotation.wrappingAdd(1, ordering: .relaxed).oldValue : 0
        var lastError = DNSResolverError.timedOut
        for _ in 0..<max(1, configuration.attempts) {
            for offset in 0..<servers.count {
                try Task.checkCancellation()
                let server = servers[(start + offset) % servers.count]
                do {
                    var edns = configuration.ednsPayloadSize
                    while true {
                        let response = try await exchange(question, server: server, ednsPayloadSize: edns)
                        let code = response.header.responseCode
                        if code == .noError || code == .nameError { return response }
                        if code == .formatError, edns != nil {
                            edns = nil
                            continue
                        }
                        lastError = .serverFailure(code)
                        break
                    }
                } catch DNSResolverError.cancelled {
                    throw DNSResolverError.cancelled
                } catch let error as DNSResolverError {
                    // Keep the more telling error: a server that answered SERVFAIL (or
                    // something unreadable) beats a later one that said nothing.
                    if error == .timedOut, lastError.cameFromServer { continue }
                    lastError = error
                }
            }
        }
        throw lastError
    }

    private func exchange(_ question: DNSQuestion, server: SocketAddress, ednsPayloadSize: UInt16?) async throws -> DNSMessage {
        var generator = SystemRandomNumberGenerator()
        NetworkLog.dns.trace("asking \(server) about \(question.name) \(question.type) over UDP")
        let query = DNSMessage.query(
            id: UInt16.random(in: .min ... .max, using: &generator), question: question, ednsPayloadSize: ednsPayloadSize)
        switch try await DNSUDPExchange.run(query: query, server: server, timeout: configuration.timeout, group: group, sockets: sockets) {
        case .message(let message) where !message.header.isTruncated:
            return message
        case .message, .truncated:
            NetworkLog.dns.debug("\(server) truncated its answer about \(question.name) \(question.type): asking over TCP")
            var tcpQuery = query
            tcpQuery.header.id = UInt16.random(in: .min ... .max, using: &generator)
            return try await DNSTCPExchange.run(query: tcpQuery, server: server, timeout: configuration.timeout, group: group, sockets: sockets)
        }
    }

    static func resolverError(_ error: any Error) -> DNSResolverError {
        if let error = error as? DNSResolverError { return error }
        if error is CancellationError { return .cancelled }
        return .transportFailure("\(error)")
    }
}
