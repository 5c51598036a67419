import NIOCore
import NetworkDNS

/// What the mDNS engine does with a datagram any host on the link may send (`MDNSLink.received`
/// without its sockets): the registrations of an announced service and of the host's name, the answerer, the cache and
/// a browse for the service's type, and a continuous query all see the decoded message. The
/// first byte says where it came from (bit 0 clear: port 5353; set: a one-shot resolver's port),
/// the rest is the datagram. What they promise: nothing crashes; every message we would send
/// decodes back to itself; the cache never holds more than its capacity and is empty once
/// everything expired, and the browse then has no result.
enum MDNSInputFuzzBody {
    static let capacity = 64

    static func run(_ bytes: [UInt8]) {
        guard let flags = bytes.first, let message = try? DNSMessage(decoding: Array(bytes.dropFirst())),
            let host = try? DNSName("fuzz.local."), let typeName = try? DNSName("_fuzz._tcp.local.")
        else { return }
        var now = NIODeadline.uptimeNanoseconds(1_000_000_000)
        var txt = DNSSDTXTAttributes()
        _ = txt.set(.bytes(Array("v".utf8)), for: "k")
        let service = MDNSService(instance: "Fuzz Seed", type: "_fuzz._tcp", host: host, port: 7, txt: txt)

        // A registration that has probed and announced, then hears the datagram.
        var registration = MDNSRegistration(service: service)
        sent(registration.start(initialDelay: .zero))
        for _ in 0..<8 {
            now = now + .milliseconds(250)
            sent(registration.wake(now: now))
        }
        FuzzFailure.check(registration.isRegistered, "the registration never got its name")
        sent(registration.received(message, now: now))
        sent(registration.cancel())

        // The host's name, claimed the same way.
        let addresses: [DNSRecordData] = [.a(DNSIPv4Address(127, 0, 0, 1))]
        var hostClaim = MDNSRegistration(claim: MDNSHost(label: "fuzz", addresses: addresses, allAddresses: Set(addresses)))
        sent(hostClaim.start(initialDelay: .zero))
        for _ in 0..<8 { sent(hostClaim.wake(now: now)) }
        sent(hostClaim.received(message, now: now))
        sent(hostClaim.cancel())

        // The answerer, with the service's records and an address for the host.
        var answerer = MDNSAnswerer()
        let address = MDNSRecord(DNSResourceRecord(name: host, type: .a, ttl: MDNSService.hostRecordTTL, data: .a(DNSIPv4Address(127, 0, 0, 1))), unique: true)
        let owned = ((try? service.records()) ?? []) + [address]
        let port: UInt16 = flags & 1 == 0 ? MDNSAnswerer.mdnsPort : 40000
        for reply in answerer.replies(to: message, fromPort: port, owned: owned, now: now, sharedDelay: .milliseconds(20)) {
            switch reply {
            case .multicast(let answer, _), .unicast(let answer): roundTrip(answer)
            }
        }

        // The cache, a browse of the type, and a query that keeps asking.
        var cache = MDNSCache(capacity: capacity)
        var browse = MDNSBrowseResults(typeName: typeName, includesTXT: true)
        var query = MDNSContinuousQuery(question: DNSQuestion(name: typeName, type: .ptr))
        _ = query.start(now: now, initialDelay: .zero)
        _ = browse.apply(cache.insert(message.answers + message.additionals, now: now), interface: 1)
        FuzzFailure.check(cache.count <= capacity, "the cache holds \(cache.count) records, more than \(capacity)")
        for action in query.received(message, now: now, cache: cache) + query.wake(now: now + .seconds(2), cache: cache) {
            if case .send(let asked) = action { roundTrip(asked) }
        }
        _ = browse.apply(cache.expire(now: .distantFuture), interface: 1)
        FuzzFailure.check(cache.count == 0, "records outlived every TTL")
        FuzzFailure.check(browse.results.isEmpty, "browse results outlived their records: \(browse.results)")
    }

    private static func sent<Claim>(_ actions: [MDNSRegistration<Claim>.Action]) {
        for action in actions {
            if case .send(let message) = action { roundTrip(message) }
        }
    }

    /// A message we would send reads back as itself.
    private static func roundTrip(_ message: DNSMessage) {
        let decoded = try? DNSMessage(decoding: message.encoded())
        FuzzFailure.check(decoded == message, "a message we would send does not read back: \(message)")
    }
}
