/// RFC 8305 §4 interleaving over addresses that arrive over time.
///
/// Each family keeps its own queue, best RFC 6724 key first (equal keys in arrival order). The
/// first pick takes the family of the best address known at that moment; that family then gets
/// `firstFamilyCount` picks in a row, after which the families alternate for as long as both
/// have addresses left. An answer that arrives after picking began (draft-ietf-happy-happyeyeballs-v3
/// "late answers") goes into its family's queue by key, so it is tried where it would have been
/// had it come with the others: next, when its family is due.
struct FamilyInterleaver: Sendable {
    /// RFC 8305's "First Address Family Count".
    let firstFamilyCount: Int
    private var ipv6: [RaceCandidate] = []
    private var ipv4: [RaceCandidate] = []
    /// The family picked first, how many picks it has had in a row from the start, and whether
    /// that opening run is over (the other family had a turn).
    private var leadingFamily: AddressFamily?
    private var leadingPicks = 0
    private var openingRunOver = false
    private var lastFamily: AddressFamily?

    /// `leading`, when given, is the family of the first pick; otherwise the family of the
    /// better address known at that moment leads (IPv6 on a tie, as RFC 8305 prefers).
    init(firstFamilyCount: Int = 1, leading: AddressFamily? = nil) {
        self.firstFamilyCount = max(1, firstFamilyCount)
        self.leadingFamily = leading
    }

    var isEmpty: Bool { ipv6.isEmpty && ipv4.isEmpty }

    /// Adds addresses, each into its family's queue after every address at least as good.
    mutating func insert(_ candidates: [RaceCandidate]) {
        for candidate in candidates {
            switch candidate.family {
            case .ipv6: Self.insert(candidate, into: &ipv6)
            case .ipv4: Self.insert(candidate, into: &ipv4)
            }
        }
    }

    private static func insert(_ candidate: RaceCandidate, into queue: inout [RaceCandidate]) {
        let index = queue.firstIndex { $0.rank < candidate.rank } ?? queue.endIndex
        queue.insert(candidate, at: index)
    }

    /// Adds addresses at the end of their family's queue, keys ignored (the order given is the
    /// preference).
    mutating func append(_ candidates: [RaceCandidate]) {
        for candidate in candidates {
            switch candidate.family {
            case .ipv6: ipv6.append(candidate)
            case .ipv4: ipv4.append(candidate)
            }
        }
    }

    /// Takes the address to try next.
    mutating func next() -> RaceCandidate? {
        guard let family = nextFamily() else { return nil }
        let candidate = family == .ipv6 ? ipv6.removeFirst() : ipv4.removeFirst()
        if leadingFamily == nil { leadingFamily = family }
        if !openingRunOver && family == leadingFamily {
            leadingPicks += 1
        } else {
            openingRunOver = true
        }
        lastFamily = family
        return candidate
    }

    private func nextFamily() -> AddressFamily? {
        switch (ipv6.first, ipv4.first) {
        case (nil, nil):
            return nil
        case (.some, nil):
            return .ipv6
        case (nil, .some):
            return .ipv4
        case (let six?, let four?):
            guard let last = lastFamily else {
                if let leadingFamily { return leadingFamily }
                return four.rank > six.rank ? .ipv4 : .ipv6
            }
            if !openingRunOver && leadingPicks < firstFamilyCount {
                return last
            }
            return last.other
        }
    }

    /// RFC 8305 §4 on a whole list, already sorted best first (RFC 6724): the first address's
    /// family leads with `firstFamilyCount` addresses, then the families alternate.
    static func interleave(_ sorted: [RaceCandidate], firstFamilyCount: Int = 1) -> [RaceCandidate] {
        var interleaver = FamilyInterleaver(firstFamilyCount: firstFamilyCount, leading: sorted.first?.family)
        interleaver.append(sorted)
        var result: [RaceCandidate] = []
        while let next = interleaver.next() { result.append(next) }
        return result
    }
}
