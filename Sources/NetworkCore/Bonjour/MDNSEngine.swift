#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NIOPosix
import NetworkDNS
import NetworkSync
import NetworkSystem

/// The process's mDNS stack (RFC 6762/6763): one `MDNSLink` per multicast-capable interface
/// that is up, following the path monitor's view of the interfaces, shared by every listener
/// that advertises and every browser. It runs while anyone uses it: the first advertisement or
/// browse opens the sockets, the last one leaving closes them (after the goodbyes).
///
/// Callers talk to it from any thread through the methods below, which hop to its event loop;
/// everything else runs on that loop (hence `@unchecked Sendable`).
package final class MDNSEngine: @unchecked Sendable {
    package static let shared = MDNSEngine()

    /// What an advertisement reports: the name it holds (after any rename) and losing it.
    package enum AdvertisementEvent: Sendable, Equatable {
        case added(MDNSBrowseResults.Instance)
        case removed(MDNSBrowseResults.Instance)
        /// The name is taken and `noAutoRename` forbids another: advertising ended.
        case failed(FlowError)
    }

    package typealias AdvertisementHandler = @Sendable (AdvertisementEvent) -> Void
    /// A browse's changes, in order: the receiver keeps the set of results itself (rebuilding
    /// the whole list on every change would cost a flood of services quadratic time).
    package typealias BrowseHandler = @Sendable ([MDNSBrowseResults.Change]) -> Void

    package let eventLoop: any EventLoop
    private let ids = Lock(0)
    /// Browses and resolves in other domains than `local.` (unicast DNS-SD through the
    /// resolver), from any thread.
    private let unicastBrowses = Lock<[Int: UnicastServiceBrowse]>([:])
    private let unicastResolves = Lock<[Int: Task<Void, Never>]>([:])

    // Loop-confined state.
    private var links: [Int: MDNSLink] = [:]
    private var advertisements: [Int: Advertisement] = [:]
    private var browses: [Int: Browse] = [:]
    private var resolves: [Int: Resolve] = [:]
    private var pathToken: Int?
    /// This host's name in `local.` as claimed (after renames), while anything is advertised.
    private var hostLabel = MDNSEngine.hostLabel()
    /// Bumped on every start and stop, so that a late path update of an earlier run is ignored.
    private var generation = 0

    private struct Advertisement {
        var service: MDNSService
        var noAutoRename: Bool
        var handler: AdvertisementHandler
        /// The name last reported as added.
        var reported: MDNSBrowseResults.Instance?
    }

    private struct Browse {
        var results: MDNSBrowseResults
        var question: DNSQuestion
        var handler: BrowseHandler
    }

    private struct Resolve {
        var instance: DNSName
        /// Only this interface, when the endpoint names one.
        var interfaceIndex: Int?
        var completion: ResolveHandler
        var retry: Scheduled<Void>?
        var timeout: Scheduled<Void>?
        var queries = 0
    }

    package typealias ResolveHandler = @Sendable (Result<[SocketAddress], FlowError>) -> Void

    /// How long a service resolution waits for the SRV record and its host's addresses.
    package static let resolveTimeout = TimeAmount.seconds(10)

    private init() {
        eventLoop = MultiThreadedEventLoopGroup.singleton.next()
    }

    private func nextID() -> Int {
        ids.withLock { value in
            value += 1
            return value
        }
    }

    /// This host's name in `local.`: the first label of the system's host name.
    package static func hostLabel() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "linux" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let label = name.split(separator: ".").first.map(String.init) ?? ""
        return label.isEmpty ? "linux" : label
    }

    // MARK: Advertising

    /// Starts advertising `instance` (nil: the host's name) of `type` on port `port`; returns
    /// the token for `stopAdvertising` and `updateAdvertisement`. Only the `local.` domain is
    /// advertised (by mDNS); any other fails with `kDNSServiceErr_Unsupported`.
    package func advertise(
        instance: String?, type: String, domain: String?, port: UInt16, txt: DNSSDTXTAttributes, noAutoRename: Bool,
        handler: @escaping AdvertisementHandler
    ) -> Int {
        let id = nextID()
        let type = MDNSServiceType.normalized(type)
        eventLoop.execute { [self] in
            guard Self.isLocal(domain) else {
                handler(.failed(.dns(DNSServiceCode.unsupported)))
                return
            }
            let systemLabel = Self.hostLabel()
            if advertisements.isEmpty { hostLabel = systemLabel }
            guard let host = try? DNSName(labels: [Array(hostLabel.utf8)]).appending(DNSName("local.")) else {
                handler(.failed(.dns(DNSServiceCode.badParam)))
                return
            }
            let service = MDNSService(instance: instance ?? systemLabel, type: type, domain: "local.", host: host, port: port, txt: txt)
            guard (try? service.records()) != nil, MDNSServiceType.isValid(type) else {
                handler(.failed(.dns(DNSServiceCode.badParam)))
                return
            }
            advertisements[id] = Advertisement(service: service, noAutoRename: noAutoRename, handler: handler)
            NetworkLog.bonjour.debug("advertising", metadata: ["instance": "\(service.instance)", "type": "\(type)", "port": "\(port)"])
            startIfNeeded()
            for link in links.values {
                link.claimHost(hostClaim(on: link))
                link.register(id, service: service, noAutoRename: noAutoRename)
            }
        }
        return id
    }

    /// A new TXT record for an advertisement.
    package func updateAdvertisement(_ id: Int, txt: DNSSDTXTAttributes) {
        eventLoop.execute { [self] in
            guard var advertisement = advertisements[id] else { return }
            advertisement.service.txt = txt
            advertisements[id] = advertisement
            for link in links.values {
                guard var service = link.service(of: id) else { continue }
                service.txt = txt
                link.update(id, service: service)
            }
        }
    }

    /// Stops an advertisement: goodbyes on every link where it was announced.
    package func stopAdvertising(_ id: Int) {
        eventLoop.execute { [self] in
            guard advertisements.removeValue(forKey: id) != nil else { return }
            for link in links.values { link.unregister(id, goodbyes: true) }
            if advertisements.isEmpty { for link in links.values { link.releaseHost(goodbyes: true) } }
            stopIfUnused()
        }
    }

    /// A link claimed the name (perhaps renamed): reported once per name; a rename is taken
    /// over by the other links, so that the service has one name everywhere.
    func registered(_ id: Int, as service: MDNSService, on link: MDNSLink) {
        guard var advertisement = advertisements[id] else { return }
        let instance = MDNSBrowseResults.Instance(name: service.instance, type: service.type, domain: service.domain)
        guard advertisement.reported != instance else { return }
        if service.instance != advertisement.service.instance {
            NetworkLog.bonjour.debug("renamed after a conflict", metadata: ["from": "\(advertisement.service.instance)", "to": "\(service.instance)"])
            advertisement.service.instance = service.instance
            for other in links.values where other !== link && other.service(of: id)?.instance != service.instance {
                other.unregister(id, goodbyes: true)
                other.register(id, service: advertisement.service, noAutoRename: advertisement.noAutoRename)
            }
        }
        let previous = advertisement.reported
        advertisement.reported = instance
        advertisements[id] = advertisement
        if let previous { advertisement.handler(.removed(previous)) }
        advertisement.handler(.added(instance))
    }

    /// The host's records as a link claims them: the claimed name, that interface's
    /// addresses, and every address of the host (a record with one of them is ours).
    private func hostClaim(on link: MDNSLink) -> MDNSHost {
        MDNSHost(label: hostLabel, addresses: link.addressData, allAddresses: Set(links.values.flatMap(\.addressData)))
    }

    /// A link claimed the host's name. Under a new name (a conflict renamed it) every link
    /// claims that one, and every service's SRV record points at it (announced again).
    func hostRegistered(_ claim: MDNSHost, on link: MDNSLink) {
        guard claim.label != hostLabel, let host = try? claim.name else { return }
        NetworkLog.bonjour.debug("host name renamed after a conflict", metadata: ["from": "\(hostLabel)", "to": "\(claim.label)"])
        hostLabel = claim.label
        for other in links.values where other !== link { other.claimHost(hostClaim(on: other)) }
        for id in advertisements.keys.sorted() {
            advertisements[id]?.service.host = host
            for each in links.values {
                guard var service = each.service(of: id) else { continue }
                service.host = host
                each.update(id, service: service)
            }
        }
    }

    func registrationFailed(_ id: Int, service: MDNSService) {
        guard let advertisement = advertisements.removeValue(forKey: id) else { return }
        NetworkLog.bonjour.debug("name taken, not renaming (noAutoRename)", metadata: ["instance": "\(service.instance)"])
        for link in links.values { link.unregister(id, goodbyes: true) }
        if let reported = advertisement.reported { advertisement.handler(.removed(reported)) }
        advertisement.handler(.failed(.dns(DNSServiceCode.nameConflict)))
        stopIfUnused()
    }

    // MARK: Browsing

    /// Starts browsing for `type` in `domain` (nil: `local.`, by mDNS; any other through the
    /// resolver); `handler` gets every change, the first time even when nothing was found. Returns the token for `stopBrowsing`, or nil when the type or domain
    /// is malformed.
    package func browse(type: String, domain: String?, includeTXT: Bool, handler: @escaping BrowseHandler) -> Int? {
        let type = MDNSServiceType.normalized(type)
        if !Self.isLocal(domain) {
            guard MDNSServiceType.isValid(type), let domain, let typeName = try? DNSName(type).appending(DNSName(domain)) else { return nil }
            let id = nextID()
            let browse = UnicastServiceBrowse(typeName: typeName, includeTXT: includeTXT, handler: handler)
            unicastBrowses.withLock { $0[id] = browse }
            NetworkLog.bonjour.debug("browsing by unicast DNS", metadata: ["type": "\(typeName)", "txt": "\(includeTXT)"])
            browse.start()
            return id
        }
        guard MDNSServiceType.isValid(type),
            let typeName = try? DNSName(type).appending(DNSName("local."))
        else { return nil }
        let id = nextID()
        eventLoop.execute { [self] in
            let question = DNSQuestion(name: typeName, type: .ptr)
            var browse = Browse(results: MDNSBrowseResults(typeName: typeName, includesTXT: includeTXT), question: question, handler: handler)
            NetworkLog.bonjour.debug("browsing", metadata: ["type": "\(type)", "txt": "\(includeTXT)"])
            startIfNeeded()
            var changes: [MDNSBrowseResults.Change] = []
            for link in links.values {
                link.ask(question)
                changes += browse.results.apply(Self.known(typeName, in: link.cache), interface: link.interface.index)
            }
            browses[id] = browse
            // The first report, even when empty: the browser is ready.
            handler(changes)
        }
        return id
    }

    package func stopBrowsing(_ id: Int) {
        if let unicast = unicastBrowses.withLock({ $0.removeValue(forKey: id) }) {
            unicast.cancel()
            return
        }
        eventLoop.execute { [self] in
            guard let browse = browses.removeValue(forKey: id) else { return }
            let stillAsked = browses.values.contains { $0.question.name.equalsIgnoringCase(browse.question.name) }
            if !stillAsked { for link in links.values { link.stopAsking(browse.question.name) } }
            stopIfUnused()
        }
    }

    /// What a link's cache already holds for `typeName`, as additions (for a browse that starts
    /// after others filled the cache, or a link that comes later).
    private static func known(_ typeName: DNSName, in cache: MDNSCache) -> [MDNSCache.Change] {
        let now = NIODeadline.now()
        let pointers = cache.records(name: typeName, type: .ptr, now: now)
        var changes = pointers.map(MDNSCache.Change.added)
        for pointer in pointers {
            guard case .ptr(let instance) = pointer.data else { continue }
            changes += cache.records(name: instance, type: .txt, now: now).map(MDNSCache.Change.added)
        }
        return changes
    }

    func cacheChanged(_ changes: [MDNSCache.Change], on link: MDNSLink) {
        report(changes, interface: link.interface.index)
        for id in resolves.keys.sorted() { attemptResolving(id, ask: false) }
    }

    private func report(_ changes: [MDNSCache.Change], interface: Int) {
        for id in browses.keys.sorted() {
            guard var browse = browses[id] else { continue }
            let found = browse.results.apply(changes, interface: interface)
            browses[id] = browse
            if !found.isEmpty { browse.handler(found) }
        }
    }

    // MARK: Resolving

    /// Looks up a service instance's SRV record and its host's addresses (from what the links
    /// heard, else by asking once a second); `completion` gets the addresses with the service's
    /// port, once. Returns the token for `stopResolving`, or nil when the name cannot be
    /// resolved by mDNS (`completion` is then not called).
    package func resolve(
        instance: String, type: String, domain: String?, interfaceName: String?, completion: @escaping ResolveHandler
    ) -> Int? {
        let type = MDNSServiceType.normalized(type)
        let zone = Self.isLocal(domain) ? "local." : domain ?? "local."
        guard MDNSServiceType.isValid(type),
            let name = try? DNSName(labels: [Array(instance.utf8)]).appending(DNSName(type)).appending(DNSName(zone))
        else { return nil }
        let id = nextID()
        if !Self.isLocal(domain) {
            let task = Task {
                let result = await Self.resolveByUnicast(name)
                guard !Task.isCancelled else { return }
                completion(result)
            }
            unicastResolves.withLock { $0[id] = task }
            return id
        }
        let interfaceIndex = interfaceName.flatMap(InterfaceTable.index(named:))
        eventLoop.execute { [self] in
            NetworkLog.bonjour.debug("resolving", metadata: ["service": "\(name)"])
            resolves[id] = Resolve(instance: name, interfaceIndex: interfaceIndex, completion: completion)
            resolves[id]?.timeout = eventLoop.scheduleTask(in: Self.resolveTimeout) { [self] in
                finishResolving(id, .failure(.dns(DNSServiceCode.timeout)))
            }
            startIfNeeded()
            attemptResolving(id, ask: true)
        }
        return id
    }

    package func stopResolving(_ id: Int) {
        if let task = unicastResolves.withLock({ $0.removeValue(forKey: id) }) {
            task.cancel()
            return
        }
        eventLoop.execute { [self] in
            guard endResolving(id) != nil else { return }
            stopIfUnused()
        }
    }

    /// Forgets a resolve and its timers; nil when it had ended already.
    private func endResolving(_ id: Int) -> Resolve? {
        guard let resolve = resolves.removeValue(forKey: id) else { return nil }
        resolve.retry?.cancel()
        resolve.timeout?.cancel()
        return resolve
    }

    /// Answers the resolve from the caches when they have the SRV record and its host's
    /// addresses; else (with `ask`) asks for what is missing and tries again in a second.
    private func attemptResolving(_ id: Int, ask: Bool) {
        guard let resolve = resolves[id] else { return }
        let now = NIODeadline.now()
        var addresses: [SocketAddress] = []
        var missing: [(MDNSLink, [DNSQuestion])] = []
        for link in links.values.sorted(by: { $0.interface.index < $1.interface.index })
        where resolve.interfaceIndex == nil || resolve.interfaceIndex == link.interface.index {
            guard let srv = link.cache.records(name: resolve.instance, type: .srv, now: now).first,
                case .srv(let service) = srv.data
            else {
                missing.append((link, [DNSQuestion(name: resolve.instance, type: .srv)]))
                continue
            }
            let found = link.cache.records(name: service.target, type: .aaaa, now: now)
                + link.cache.records(name: service.target, type: .a, now: now)
            addresses += found.compactMap { Self.socketAddress($0.data, port: Int(service.port), link: link) }
            if found.isEmpty {
                missing.append((link, [DNSQuestion(name: service.target, type: .a), DNSQuestion(name: service.target, type: .aaaa)]))
            }
        }
        if !addresses.isEmpty {
            finishResolving(id, .success(addresses))
            return
        }
        guard ask else { return }
        for (link, questions) in missing { link.query(questions) }
        resolves[id]?.queries += 1
        // Once a second, then less often (RFC 6762 §5.3 asks one-shot queriers not to hammer).
        let wait = TimeAmount.seconds(Int64(min(1 << min(resolve.queries, 3), 4)))
        resolves[id]?.retry = eventLoop.scheduleTask(in: wait) { [self] in attemptResolving(id, ask: true) }
    }

    private func finishResolving(_ id: Int, _ result: Result<[SocketAddress], FlowError>) {
        guard let resolve = endResolving(id) else { return }
        NetworkLog.bonjour.debug("resolved", metadata: ["service": "\(resolve.instance)", "outcome": "\(result.map(\.count))"])
        resolve.completion(result)
        stopIfUnused()
    }

    /// A service in a unicast DNS-SD domain: its SRV record through the resolver (the lowest
    /// priority first), then the target's addresses as any host name's.
    private static func resolveByUnicast(_ name: DNSName) async -> Result<[SocketAddress], FlowError> {
        let resolver = DNSResolver.shared
        let answer: DNSAnswer
        do {
            answer = try await resolver.resolve(DNSQuestion(name: name, type: .srv))
        } catch {
            return .failure(DNSResolverAddressLookup.flowError(error as? DNSResolverError ?? .timedOut))
        }
        let services = answer.records.compactMap { record -> DNSServiceRecord? in
            if case .srv(let service) = record.data { return service } else { return nil }
        }.sorted { $0.priority < $1.priority }
        guard let service = services.first else {
            return .failure(.dns(answer.outcome == .nameDoesNotExist ? DNSServiceCode.noSuchName : DNSServiceCode.noSuchRecord))
        }
        var addresses: [SocketAddress] = []
        for type in [DNSRecordType.aaaa, .a] {
            guard let found = try? await resolver.query(service.target.description, type: type) else { continue }
            addresses += found.addresses.compactMap { try? $0.socketAddress(port: Int(service.port)) }
        }
        NetworkLog.bonjour.debug("resolved by unicast DNS", metadata: ["service": "\(name)", "addresses": "\(addresses.count)"])
        return addresses.isEmpty ? .failure(.dns(DNSServiceCode.noSuchRecord)) : .success(addresses)
    }

    private static func socketAddress(_ data: DNSRecordData, port: Int, link: MDNSLink) -> SocketAddress? {
        switch data {
        case .a(let address):
            return SocketAddress(literal: address.description, port: port)
        case .aaaa(let address):
            // Link-local addresses only mean something on the link they were heard on.
            return SocketAddress(literal: address.description, port: port, interfaceName: link.interface.name)
        default:
            return nil
        }
    }

    // MARK: Links

    private func startIfNeeded() {
        guard pathToken == nil else { return }
        generation += 1
        let run = generation
        pathToken = PathMonitorEngine.shared.subscribe { [self] inputs in
            eventLoop.execute { [self] in
                guard generation == run else { return }
                interfacesChanged(inputs.interfaces)
            }
        }
    }

    private func stopIfUnused() {
        guard advertisements.isEmpty, browses.isEmpty, resolves.isEmpty, let token = pathToken else { return }
        PathMonitorEngine.shared.unsubscribe(token)
        pathToken = nil
        generation += 1
        for link in links.values { _ = link.close(goodbyes: true) }
        links = [:]
        NetworkLog.bonjour.debug("mDNS stopped: nothing advertised or browsed")
    }

    /// Links for the interfaces that are up, running and multicast-capable with an address;
    /// gone interfaces take their results with them.
    private func interfacesChanged(_ interfaces: [SystemInterface]) {
        let usable = interfaces.filter { $0.isUp && $0.isRunning && $0.supportsMulticast && !$0.addresses.isEmpty }
        let byIndex = Dictionary(usable.map { ($0.index, $0) }, uniquingKeysWith: { first, _ in first })
        for (index, link) in links {
            guard let interface = byIndex[index] else {
                links[index] = nil
                NetworkLog.bonjour.debug("interface gone", metadata: ["interface": "\(link.interface.name)"])
                report(link.close(goodbyes: false), interface: index)
                continue
            }
            if Set(interface.addresses) != Set(link.interface.addresses) {
                // Other addresses: start over on this interface, as if it had just come.
                report(link.close(goodbyes: true), interface: index)
                links[index] = nil
            } else {
                link.update(interface)
            }
        }
        for interface in usable where links[interface.index] == nil {
            let link = MDNSLink(interface: interface, engine: self)
            links[interface.index] = link
            link.open { [self] in
                eventLoop.execute { [self] in activate(link) }
            }
        }
    }

    /// A link's sockets are open: its share of every advertisement and browse starts.
    private func activate(_ link: MDNSLink) {
        guard links[link.interface.index] === link else { return }
        if !advertisements.isEmpty { link.claimHost(hostClaim(on: link)) }
        for (id, advertisement) in advertisements.sorted(by: { $0.key < $1.key }) {
            link.register(id, service: advertisement.service, noAutoRename: advertisement.noAutoRename)
        }
        for browse in browses.values { link.ask(browse.question) }
        for id in resolves.keys.sorted() { attemptResolving(id, ask: true) }
    }

    /// `nil`, `local` and `local.` (any letter case) are mDNS's domain.
    private static func isLocal(_ domain: String?) -> Bool {
        guard let domain, !domain.isEmpty else { return true }
        return ["local", "local."].contains(domain.lowercased())
    }
}
