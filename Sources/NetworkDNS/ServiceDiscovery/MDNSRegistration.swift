import NIOCore

/// Claims and advertises one name on a link (a service instance's, or the host's), as RFC 6762 §8–§10 asks of an mDNS
/// responder: three probes 250 ms apart after a random delay of up to 250 ms, then two
/// announcements one second apart; a conflict renames the instance ("Name (2)", unless
/// `noAutoRename`) and probes again; a simultaneous probe for the same name is settled by
/// comparing the proposed records (§8.2: the lexicographically later set wins, the loser probes
/// again a second later); cancelling after the announcements sends goodbyes (TTL 0, §10.1).
///
/// A value type: each event returns what to do (send a message to the group, wake again after a
/// delay, report the outcome); the caller owns sockets and timers, and draws the initial delay.
package struct MDNSRegistration<Claim: MDNSClaim>: Sendable {
    package enum Action: Equatable, Sendable {
        /// Send this message to the mDNS group (224.0.0.251 / ff02::fb, port 5353).
        case send(DNSMessage)
        /// Call `wake(now:)` after this long (replacing any earlier wake-up).
        case wake(after: TimeAmount)
        /// The claim is announced under this name (after a rename, the new one).
        case registered(Claim)
        /// The name is taken and may not be changed (`noAutoRename`): the registration ended.
        case failed(Claim)
    }

    private enum State: Equatable, Sendable {
        case idle
        /// `sent` probes are out; the next wake-up sends another or, after three, announces.
        case probing(sent: Int)
        /// Lost a simultaneous probe: probing starts over at the next wake-up.
        case deferring
        /// `sent` announcements are out.
        case announcing(sent: Int)
        case registered
        case ended
    }

    /// What is claimed: its records and name (after a rename, the new one).
    package private(set) var claim: Claim
    private let noAutoRename: Bool
    private var state = State.idle
    /// When recent conflicts happened, for the rate limit of §8.1.
    private var conflicts: [NIODeadline] = []

    // The schedule of §8 (computed: a generic type has no stored statics).
    package static var probeInterval: TimeAmount { .milliseconds(250) }
    package static var probeCount: Int { 3 }
    package static var announcementCount: Int { 2 }
    package static var announcementInterval: TimeAmount { .seconds(1) }
    /// How long the loser of a simultaneous probe waits before probing again (§8.2).
    package static var lostTieBreakDelay: TimeAmount { .seconds(1) }
    /// After 15 conflicts within 10 seconds, wait 5 seconds before probing again (§8.1).
    package static var conflictLimit: (count: Int, window: TimeAmount, pause: TimeAmount) { (15, .seconds(10), .seconds(5)) }

    package init(claim: Claim, noAutoRename: Bool = false) {
        self.claim = claim
        self.noAutoRename = noAutoRename
    }

    /// Whether the name is announced (and not given up).
    package var isRegistered: Bool {
        switch state {
        case .announcing, .registered: return true
        default: return false
        }
    }

    // MARK: Events

    /// Starts probing after `initialDelay` (RFC 6762 §8.1: random, 0–250 ms).
    package mutating func start(initialDelay: TimeAmount) -> [Action] {
        guard state == .idle else { return [] }
        state = .probing(sent: 0)
        return [.wake(after: initialDelay)]
    }

    /// The wake-up asked for is due.
    package mutating func wake(now: NIODeadline) -> [Action] {
        switch state {
        case .deferring:
            state = .probing(sent: 0)
            return wake(now: now)
        case .probing(let sent) where sent < Self.probeCount:
            state = .probing(sent: sent + 1)
            return [.send(probe(unicastResponse: sent == 0)), .wake(after: Self.probeInterval)]
        case .probing:
            state = .announcing(sent: 1)
            return [.send(announcement(ttl: nil)), .registered(claim), .wake(after: Self.announcementInterval)]
        case .announcing(let sent) where sent < Self.announcementCount:
            state = .announcing(sent: sent + 1)
            let more: [Action] = sent + 1 < Self.announcementCount ? [.wake(after: Self.announcementInterval * Int64(1 << sent))] : []
            if sent + 1 == Self.announcementCount { state = .registered }
            return [.send(announcement(ttl: nil))] + more
        case .idle, .announcing, .registered, .ended:
            return []
        }
    }

    /// A message from the link (our own, looped back, included).
    package mutating func received(_ message: DNSMessage, now: NIODeadline) -> [Action] {
        guard let ours = try? claim.records().filter(\.unique).map(\.record),
            let name = ours.first?.name
        else { return [] }
        switch state {
        case .idle, .ended:
            return []
        case .probing, .deferring, .announcing, .registered:
            break
        }
        if message.header.isResponse {
            let theirs = (message.answers + message.additionals).filter { $0.name.equalsIgnoringCase(name) }
            // A record of ours sent back (our own announcement looped back, or a cache
            // answering with it) is no conflict; any other data for the name is.
            let conflicting = theirs.contains { record in
                !ours.contains { Self.sameData($0, record) } && !claim.owns(record)
            }
            return conflicting ? conflict(now: now) : []
        }
        // A query: another host probing for the same name at the same time (§8.2)?
        guard case .probing = state,
            message.questions.contains(where: { $0.name.equalsIgnoringCase(name) })
        else { return [] }
        let theirs = message.authorities.filter { $0.name.equalsIgnoringCase(name) }
        guard !theirs.isEmpty, Self.compare(ours, theirs) < 0 else { return [] }
        // Ours is earlier: we lose, and try the same name again a second later.
        state = .deferring
        return [.wake(after: Self.lostTieBreakDelay)]
    }

    /// New records under the same name (another TXT record, SRV target or set of addresses).
    /// Once the name is ours they are announced again, twice, a second apart (§8.4: no new
    /// probing); while probing, the probes that follow propose them.
    package mutating func update(_ claim: Claim) -> [Action] {
        guard claim != self.claim else { return [] }
        self.claim = claim
        guard isRegistered else { return [] }
        state = .announcing(sent: 0)
        return [.wake(after: .zero)]
    }

    /// Stops advertising: goodbyes when the name had been announced.
    package mutating func cancel() -> [Action] {
        let announced = isRegistered
        state = .ended
        return announced ? [.send(announcement(ttl: 0))] : []
    }

    // MARK: Inside

    private mutating func conflict(now: NIODeadline) -> [Action] {
        if case .probing = state {} else if case .deferring = state {} else {
            // Announced already (§9): claim the same name again first; a second conflict renames.
            state = .probing(sent: 0)
            return [.wake(after: .zero)]
        }
        if noAutoRename {
            state = .ended
            return [.failed(claim)]
        }
        claim = claim.renamed()
        conflicts = conflicts.filter { now - $0 < Self.conflictLimit.window } + [now]
        state = .probing(sent: 0)
        let pause = conflicts.count >= Self.conflictLimit.count ? Self.conflictLimit.pause : .zero
        return [.wake(after: pause)]
    }

    /// A probe: an ANY question for the instance name (QU on the first probe), with the records
    /// we propose in the authority section (§8.1, §8.2).
    private func probe(unicastResponse: Bool) -> DNSMessage {
        let records = (try? claim.records()) ?? []
        let unique = records.filter(\.unique).map(\.record)
        let questionClass = unicastResponse ? DNSClass.internet.withMDNSBit : .internet
        return DNSMessage(
            header: DNSHeader(id: 0, recursionDesired: false),
            questions: unique.first.map { [DNSQuestion(name: $0.name, type: .any, recordClass: questionClass)] } ?? [],
            authorities: unique)
    }

    /// An unsolicited response with every record (`ttl` 0: goodbyes, without the cache-flush
    /// bit, which would also flush what others still hold).
    private func announcement(ttl: UInt32?) -> DNSMessage {
        let records = (try? claim.records()) ?? []
        let answers: [DNSResourceRecord] = records.map { record in
            guard let ttl else { return record.responseRecord }
            var goodbye = record.record
            goodbye.ttl = ttl
            return goodbye
        }
        return DNSMessage(
            header: DNSHeader(id: 0, isResponse: true, isAuthoritative: true, recursionDesired: false), answers: answers)
    }

    /// Same type and RDATA (class bits and TTL aside).
    private static func sameData(_ a: DNSResourceRecord, _ b: DNSResourceRecord) -> Bool {
        a.type == b.type && a.data == b.data
    }

    /// §8.2's order of two proposed record sets: each sorted by class, type and raw RDATA, then
    /// compared record by record; a set that runs out first is the earlier. Negative when `a`
    /// is earlier, zero when equal, positive when later.
    package static func compare(_ a: [DNSResourceRecord], _ b: [DNSResourceRecord]) -> Int {
        let left = a.map(sortKey).sorted { $0.lexicographicallyPrecedes($1) }
        let right = b.map(sortKey).sorted { $0.lexicographicallyPrecedes($1) }
        for (x, y) in zip(left, right) where x != y {
            return x.lexicographicallyPrecedes(y) ? -1 : 1
        }
        return left.count == right.count ? 0 : (left.count < right.count ? -1 : 1)
    }

    /// Class (without the cache-flush bit), type, then the uncompressed RDATA, as bytes.
    private static func sortKey(_ record: DNSResourceRecord) -> [UInt8] {
        var writer = DNSWriter()
        writer.write(record.recordClass.withoutMDNSBit.rawValue)
        writer.write(record.type.rawValue)
        record.data.encode(into: &writer)
        return writer.bytes
    }
}
