import NIOCore

/// What an mDNS querier has heard on a link (RFC 6762 §5, §10): records with the time they
/// arrived and their TTL, as a value type driven by the caller's clock.
/// - A record heard again replaces the earlier copy (its TTL starts over).
/// - A goodbye (TTL 0) keeps the record one more second, then it goes (§10.1).
/// - A record with the cache-flush bit makes every other record of its name, type and class
///   that arrived more than a second earlier go in one second (§10.2).
/// Every change comes back as a `Change`, so a browser can tell what appeared and what went.
package struct MDNSCache: Sendable {
    package enum Change: Equatable, Sendable {
        case added(DNSResourceRecord)
        case removed(DNSResourceRecord)
    }

    private struct Key: Hashable, Sendable {
        var name: DNSName
        var type: DNSRecordType
        var recordClass: DNSClass

        init(_ record: DNSResourceRecord) {
            name = record.name.lowercased()
            type = record.type
            recordClass = record.recordClass.withoutMDNSBit
        }

        init(name: DNSName, type: DNSRecordType) {
            self.name = name.lowercased()
            self.type = type
            self.recordClass = .internet
        }
    }

    private struct Entry: Sendable {
        /// As received, the cache-flush bit cleared.
        var record: DNSResourceRecord
        var received: NIODeadline
        var expires: NIODeadline
    }

    private var entries: [Key: [Entry]] = [:]
    /// The most records kept: a flood of answers from a hostile host must not grow without
    /// bound. The records that expire soonest make room.
    package let capacity: Int

    /// How long a goodbye or a flushed record lingers (§10.1, §10.2).
    package static let lingering = TimeAmount.seconds(1)

    package init(capacity: Int = 4096) {
        self.capacity = capacity
    }

    package var count: Int { entries.values.reduce(0) { $0 + $1.count } }

    /// Takes the records of one response (answers and additionals alike).
    package mutating func insert(_ records: [DNSResourceRecord], now: NIODeadline) -> [Change] {
        var changes: [Change] = []
        // Flushes first, per name/type/class, so records of this same packet all stay (§10.2).
        for record in records where record.recordClass.hasMDNSBit && record.ttl > 0 {
            let key = Key(record)
            guard var list = entries[key] else { continue }
            for index in list.indices where now - list[index].received > Self.lingering {
                list[index].expires = min(list[index].expires, now + Self.lingering)
            }
            entries[key] = list
        }
        for var record in records where record.type != .opt {
            record.recordClass = record.recordClass.withoutMDNSBit
            let key = Key(record)
            var list = entries[key] ?? []
            let existing = list.firstIndex { $0.record.data == record.data }
            if record.ttl == 0 {
                // A goodbye: the record goes in a second (a second chance for a correction).
                if let existing { list[existing].expires = min(list[existing].expires, now + Self.lingering) }
                entries[key] = list
                continue
            }
            let entry = Entry(record: record, received: now, expires: now + .seconds(Int64(record.ttl)))
            if let existing {
                list[existing] = entry
            } else {
                list.append(entry)
                changes.append(.added(record))
            }
            entries[key] = list
        }
        changes += evictBeyondCapacity()
        return changes
    }

    /// Drops what expired by `now`.
    package mutating func expire(now: NIODeadline) -> [Change] {
        var changes: [Change] = []
        for (key, list) in entries {
            let (kept, gone) = (list.filter { $0.expires > now }, list.filter { $0.expires <= now })
            changes += gone.map { .removed($0.record) }
            entries[key] = kept.isEmpty ? nil : kept
        }
        return changes
    }

    /// When the next record expires, for the caller's timer.
    package var nextExpiry: NIODeadline? {
        entries.values.lazy.flatMap { $0 }.map(\.expires).min()
    }

    /// The records of `name` and `type` (any letter case), with the TTL they have left.
    package func records(name: DNSName, type: DNSRecordType, now: NIODeadline) -> [DNSResourceRecord] {
        (entries[Key(name: name, type: type)] ?? []).filter { $0.expires > now }.map { entry in
            var record = entry.record
            record.ttl = UInt32(clamping: max(0, (entry.expires - now).nanoseconds / 1_000_000_000))
            return record
        }
    }

    /// The answers a query for `name` and `type` lists as known (§7.1): those with more than half
    /// their TTL left, so that responders leave them out.
    package func knownAnswers(name: DNSName, type: DNSRecordType, now: NIODeadline) -> [DNSResourceRecord] {
        (entries[Key(name: name, type: type)] ?? []).compactMap { entry in
            let left = entry.expires - now
            guard left.nanoseconds * 2 > Int64(entry.record.ttl) * 1_000_000_000 else { return nil }
            var record = entry.record
            record.ttl = UInt32(clamping: left.nanoseconds / 1_000_000_000)
            return record
        }
    }

    /// Over capacity (a packet adds a few records at most): drops the soonest to expire, one
    /// linear scan each, so a flood costs time in proportion to the bound, not more.
    private mutating func evictBeyondCapacity() -> [Change] {
        var changes: [Change] = []
        while count > capacity {
            var soonest: (key: Key, index: Int, expires: NIODeadline)?
            for (key, list) in entries {
                for (index, entry) in list.enumerated() where soonest.map({ entry.expires < $0.expires }) ?? true {
                    soonest = (key, index, entry.expires)
                }
            }
            guard let soonest, var list = entries[soonest.key] else { break }
            changes.append(.removed(list.remove(at: soonest.index).record))
            entries[soonest.key] = list.isEmpty ? nil : list
        }
        return changes
    }
}
