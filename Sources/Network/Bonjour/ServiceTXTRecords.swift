import NetworkSync

/// The TXT records browsers have found, by service (`NWEndpoint.txtRecord`). An endpoint is
/// an enum here and cannot carry the record itself, so a `.service` endpoint looks its record
/// up: the one the newest browse result for that name, type and domain carried. Entries leave
/// with their result, so the table holds no more than the browsers do.
enum ServiceTXTRecords {
    private struct Key: Hashable {
        var name: String
        var type: String
        var domain: String
    }

    private static let records = Lock<[Key: NWTXTRecord]>([:])

    private static func key(_ endpoint: NWEndpoint) -> Key? {
        guard case .service(let name, let type, let domain, _) = endpoint else { return nil }
        return Key(name: name, type: type, domain: domain.lowercased())
    }

    static func record(for endpoint: NWEndpoint) -> NWTXTRecord? {
        guard let key = key(endpoint) else { return nil }
        return records.withLock { $0[key] }
    }

    /// Keeps what a browser's changes say about the results' TXT records.
    static func update(_ changes: Set<NWBrowser.Result.Change>) {
        records.withLock { records in
            for change in changes {
                switch change {
                case .added(let result), .changed(_, let result, _):
                    guard let key = key(result.endpoint) else { continue }
                    if case .bonjour(let record) = result.metadata { records[key] = record } else { records[key] = nil }
                case .removed(let result):
                    if let key = key(result.endpoint) { records[key] = nil }
                case .identical:
                    break
                }
            }
        }
    }
}
