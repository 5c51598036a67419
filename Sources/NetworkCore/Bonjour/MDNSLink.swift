import NIOCore
import NIOPosix
import NetworkDNS
import NetworkSystem

/// One multicast-capable interface as the mDNS engine uses it: its sockets (one per address
/// family it has an address of), what was heard on it (`MDNSCache`), the names claimed on it
/// (one `MDNSRegistration` per advertised service) and the questions kept asked on it (one
/// `MDNSContinuousQuery` per browsed type). The value types decide; this class sends, reads
/// and keeps their timers.
///
/// Confined to the engine's event loop: every method runs there (hence `@unchecked Sendable`,
/// so that its timers may capture it).
final class MDNSLink: @unchecked Sendable {
    private(set) var interface: SystemInterface
    private let engine: MDNSEngine
    private var eventLoop: any EventLoop { engine.eventLoop }

    private var ipv4: (any Channel)?
    private var ipv6: (any Channel)?
    private(set) var cache = MDNSCache()
    private var answerer = MDNSAnswerer()
    private var registrations: [Int: Registration<MDNSService>] = [:]
    /// Keyed by the lowercased question name.
    private var queries: [DNSName: Query] = [:]
    private var cacheTimer: Scheduled<Void>?
    private var closed = false

    private struct Registration<Claim: MDNSClaim> {
        var machine: MDNSRegistration<Claim>
        var timer: Scheduled<Void>?
    }

    /// This host's name and addresses here, claimed while services are advertised.
    private var host: Registration<MDNSHost>?

    private struct Query {
        var machine: MDNSContinuousQuery
        var timer: Scheduled<Void>?
    }

    init(interface: SystemInterface, engine: MDNSEngine) {
        self.interface = interface
        self.engine = engine
    }

    // MARK: Sockets

    /// Opens a socket for each family the interface has a usable address of; `ready` runs once
    /// they are all open or failed (a link without any socket only answers nothing).
    func open(ready: @escaping @Sendable () -> Void) {
        var pending: [EventLoopFuture<Void>] = []
        for family in [SocketFamily.inet, .inet6] where hasAddress(family) {
            let descriptor: Int32
            do {
                let source = interface.addresses.first { $0.family == .inet }?.bytes ?? []
                descriptor = try MDNSSocket.open(family: family, interfaceIndex: interface.index, source: source)
            } catch {
                NetworkLog.bonjour.debug("cannot open mDNS socket", metadata: ["interface": "\(interface.name)", "family": "\(family)", "error": "\(error)"])
                continue
            }
            let future = DatagramBootstrap(group: eventLoop)
                .channelInitializer { [self] channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(MDNSLinkReader(link: self, family: family))
                    }
                }
                .withBoundSocket(descriptor)
                .map { [self] channel -> Void in
                    if closed {
                        channel.close(promise: nil)
                        return
                    }
                    if family == .inet { ipv4 = channel } else { ipv6 = channel }
                    NetworkLog.bonjour.debug("mDNS socket open", metadata: ["interface": "\(interface.name)", "family": "\(family)"])
                }
            future.whenFailure { [interface] error in
                NetworkLog.bonjour.debug("cannot open mDNS socket", metadata: ["interface": "\(interface.name)", "family": "\(family)", "error": "\(error)"])
            }
            pending.append(future)
        }
        EventLoopFuture.whenAllComplete(pending, on: eventLoop).whenComplete { _ in ready() }
    }

    /// IPv4 needs an address; IPv6 a link-local one (mDNS over IPv6 speaks link-local).
    private func hasAddress(_ family: SocketFamily) -> Bool {
        interface.addresses.contains { address in
            guard address.family == family else { return false }
            return family == .inet || (address.bytes.count == 16 && address.bytes[0] == 0xfe && address.bytes[1] & 0xc0 == 0x80)
        }
    }

    /// New addresses on the same interface: the host records change with them.
    func update(_ interface: SystemInterface) {
        self.interface = interface
    }

    /// Stops everything: goodbyes for what was announced (when `goodbyes`), timers cancelled,
    /// sockets closed after what is queued on them. Returns what the cache held, as removals.
    func close(goodbyes: Bool) -> [MDNSCache.Change] {
        for id in Array(registrations.keys) { unregister(id, goodbyes: goodbyes) }
        releaseHost(goodbyes: goodbyes)
        for key in Array(queries.keys) { queries[key]?.timer?.cancel() }
        queries = [:]
        cacheTimer?.cancel()
        closed = true
        ipv4?.close(promise: nil)
        ipv6?.close(promise: nil)
        ipv4 = nil
        ipv6 = nil
        return cache.expire(now: .distantFuture)
    }

    // MARK: Registrations

    func register(_ id: Int, service: MDNSService, noAutoRename: Bool) {
        var registration = Registration(machine: MDNSRegistration(service: service, noAutoRename: noAutoRename))
        let actions = registration.machine.start(initialDelay: .milliseconds(Int64.random(in: 0...250)))
        registrations[id] = registration
        perform(actions, registration: id)
    }

    /// The service as this link currently claims it (after renames), if registered here.
    func service(of id: Int) -> MDNSService? { registrations[id]?.machine.service }

    func unregister(_ id: Int, goodbyes: Bool) {
        guard var registration = registrations.removeValue(forKey: id) else { return }
        registration.timer?.cancel()
        let actions = registration.machine.cancel()
        if goodbyes { perform(actions, registration: nil) }
    }

    /// New records for a registered service under the same name (another TXT record, another
    /// SRV target): announced again (RFC 6762 §8.4).
    func update(_ id: Int, service: MDNSService) {
        guard var registration = registrations[id] else { return }
        let actions = registration.machine.update(service)
        registrations[id] = registration
        perform(actions, registration: id)
    }

    // MARK: The host's name

    /// Claims `claim` (the host's name with this interface's addresses), unless it is claimed
    /// already under that name; another name starts over (goodbyes for the old one).
    func claimHost(_ claim: MDNSHost) {
        if var current = host, current.machine.claim.label == claim.label {
            let actions = current.machine.update(claim)
            host = current
            performHost(actions)
            return
        }
        releaseHost(goodbyes: true)
        var registration = Registration(machine: MDNSRegistration(claim: claim))
        let actions = registration.machine.start(initialDelay: .milliseconds(Int64.random(in: 0...250)))
        host = registration
        performHost(actions)
    }

    func releaseHost(goodbyes: Bool) {
        guard var registration = host else { return }
        host = nil
        registration.timer?.cancel()
        let actions = registration.machine.cancel()
        if goodbyes { performHost(actions, ended: true) }
    }

    private func performHost(_ actions: [MDNSRegistration<MDNSHost>.Action], ended: Bool = false) {
        for action in actions {
            switch action {
            case .send(let message):
                multicast(message)
            case .wake(let delay):
                guard !ended else { continue }
                host?.timer?.cancel()
                host?.timer = eventLoop.scheduleTask(in: delay) { [self] in
                    guard var registration = host else { return }
                    let actions = registration.machine.wake(now: .now())
                    host = registration
                    performHost(actions)
                }
            case .registered(let claim):
                engine.hostRegistered(claim, on: self)
            case .failed:
                // Only with `noAutoRename`, which a host claim never sets.
                break
            }
        }
    }

    private func perform(_ actions: [MDNSRegistration<MDNSService>.Action], registration id: Int?) {
        for action in actions {
            switch action {
            case .send(let message):
                multicast(message)
            case .wake(let delay):
                guard let id else { continue }
                registrations[id]?.timer?.cancel()
                registrations[id]?.timer = eventLoop.scheduleTask(in: delay) { [self] in
                    guard var registration = registrations[id] else { return }
                    let actions = registration.machine.wake(now: .now())
                    registrations[id] = registration
                    perform(actions, registration: id)
                }
            case .registered(let service):
                if let id { engine.registered(id, as: service, on: self) }
            case .failed(let service):
                if let id {
                    registrations[id]?.timer?.cancel()
                    registrations[id] = nil
                    engine.registrationFailed(id, service: service)
                }
            }
        }
    }

    /// Every record this link answers for: the announced services', and the host's addresses
    /// once its name is claimed here.
    private var ownedRecords: [MDNSRecord] {
        let services = registrations.values.filter(\.machine.isRegistered).flatMap { (try? $0.machine.service.records()) ?? [] }
        guard let host, host.machine.isRegistered else { return services }
        return services + ((try? host.machine.claim.records()) ?? [])
    }

    /// This interface's addresses as address record data.
    var addressData: [DNSRecordData] {
        interface.addresses.compactMap { address -> DNSRecordData? in
            if address.family == .inet, address.bytes.count == 4 {
                return .a(DNSIPv4Address(address.bytes[0], address.bytes[1], address.bytes[2], address.bytes[3]))
            }
            return DNSIPv6Address(octets: address.bytes).map(DNSRecordData.aaaa)
        }
    }

    // MARK: Queries

    /// Starts asking `question` here (once per name and type; browses of one type share it).
    func ask(_ question: DNSQuestion) {
        let key = question.name.lowercased()
        guard queries[key] == nil else { return }
        var query = Query(machine: MDNSContinuousQuery(question: question))
        let actions = query.machine.start(now: .now(), initialDelay: .milliseconds(Int64.random(in: 20...120)))
        queries[key] = query
        perform(actions, query: key)
    }

    /// Asks `questions` once (a resolve's one-shot query, RFC 6762 §5.3), listing what the
    /// cache already knows.
    func query(_ questions: [DNSQuestion]) {
        let now = NIODeadline.now()
        let known = questions.flatMap { cache.knownAnswers(name: $0.name, type: $0.type, now: now) }
        multicast(DNSMessage(header: DNSHeader(id: 0, recursionDesired: false), questions: questions, answers: known))
    }

    func stopAsking(_ name: DNSName) {
        queries.removeValue(forKey: name.lowercased())?.timer?.cancel()
    }

    private func perform(_ actions: [MDNSContinuousQuery.Action], query key: DNSName) {
        for action in actions {
            switch action {
            case .send(let message):
                multicast(message)
            case .wake(let delay):
                queries[key]?.timer?.cancel()
                queries[key]?.timer = eventLoop.scheduleTask(in: delay) { [self] in
                    guard var query = queries[key] else { return }
                    let actions = query.machine.wake(now: .now(), cache: cache)
                    queries[key] = query
                    perform(actions, query: key)
                }
            }
        }
    }

    // MARK: Input

    /// A datagram from the interface (ours looped back included).
    func received(_ bytes: [UInt8], from source: SocketAddress, family: SocketFamily) {
        guard !closed, let port = source.port, isOnLink(source) else {
            NetworkLog.bonjour.trace("mDNS datagram from off-link source ignored", metadata: ["interface": "\(interface.name)", "source": "\(source)", "addresses": "\(interface.addresses)"])
            return
        }
        guard let message = try? DNSMessage(decoding: bytes) else {
            NetworkLog.bonjour.trace("malformed mDNS datagram ignored", metadata: ["interface": "\(interface.name)", "bytes": "\(bytes.count)"])
            return
        }
        let now = NIODeadline.now()
        if var registration = host {
            let actions = registration.machine.received(message, now: now)
            host = registration
            performHost(actions)
        }
        for id in Array(registrations.keys) {
            guard var registration = registrations[id] else { continue }
            let actions = registration.machine.received(message, now: now)
            registrations[id] = registration
            perform(actions, registration: id)
        }
        if message.header.isResponse {
            // Responses from any other port are not mDNS (RFC 6762 §6).
            guard port == Int(MDNSAnswerer.mdnsPort) else { return }
            let changes = cache.insert(message.answers + message.additionals, now: now)
            NetworkLog.bonjour.trace("mDNS response", metadata: ["interface": "\(interface.name)", "records": "\(message.answers.count + message.additionals.count)", "cache_changes": "\(changes.count)"])
            scheduleExpiry()
            if !changes.isEmpty { engine.cacheChanged(changes, on: self) }
            return
        }
        for key in Array(queries.keys) {
            guard var query = queries[key] else { continue }
            let actions = query.machine.received(message, now: now, cache: cache)
            queries[key] = query
            perform(actions, query: key)
        }
        let replies = answerer.replies(
            to: message, fromPort: UInt16(port), owned: ownedRecords, now: now,
            sharedDelay: .milliseconds(Int64.random(in: 20...120)))
        for reply in replies {
            switch reply {
            case .unicast(let answer):
                send(answer, to: source, family: family)
            case .multicast(let answer, let delay) where delay == .zero:
                send(answer, to: Self.group(family), family: family)
            case .multicast(let answer, let delay):
                eventLoop.scheduleTask(in: delay) { [self] in send(answer, to: Self.group(family), family: family) }
            }
        }
    }

    /// RFC 6762 §11: only sources on this interface's subnets (IPv6: or link-local) count.
    private func isOnLink(_ source: SocketAddress) -> Bool {
        guard let bytes = LocalNetworkCheck.rawBytes(source) else { return false }
        if bytes.count == 16 && bytes[0] == 0xfe && bytes[1] & 0xc0 == 0x80 { return true }
        return interface.addresses.contains { address in
            IPLiteral.isWithin(bytes, network: address.bytes, prefixLength: address.prefixLength)
        }
    }

    private func scheduleExpiry() {
        cacheTimer?.cancel()
        guard let next = cache.nextExpiry else { return }
        cacheTimer = eventLoop.scheduleTask(deadline: next) { [self] in
            let changes = cache.expire(now: .now())
            scheduleExpiry()
            if !changes.isEmpty { engine.cacheChanged(changes, on: self) }
        }
    }

    // MARK: Output

    private static let groupIPv4 = try! SocketAddress(ipAddress: "224.0.0.251", port: Int(MDNSSocket.port))
    private static let groupIPv6 = try! SocketAddress(ipAddress: "ff02::fb", port: Int(MDNSSocket.port))

    private static func group(_ family: SocketFamily) -> SocketAddress {
        family == .inet ? groupIPv4 : groupIPv6
    }

    /// To the group on every family this link has a socket for.
    private func multicast(_ message: DNSMessage) {
        send(message, to: Self.groupIPv4, family: .inet)
        send(message, to: Self.groupIPv6, family: .inet6)
    }

    private func send(_ message: DNSMessage, to destination: SocketAddress, family: SocketFamily) {
        guard let channel = family == .inet ? ipv4 : ipv6 else { return }
        let bytes = message.encoded()
        let buffer = channel.allocator.buffer(bytes: bytes)
        channel.writeAndFlush(AddressedEnvelope(remoteAddress: destination, data: buffer), promise: nil)
    }
}
