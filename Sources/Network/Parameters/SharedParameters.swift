import NetworkSync

/// One private copy of each distinct plain parameters (`PlainParametersKey`), shared by the
/// connections made from equal ones.
///
/// Applications usually make parameters per connection (`.tcp` is a fresh object on every
/// access), and a connection that kept the object it was given kept four objects (~330 bytes)
/// for its whole life. The copies are never handed out: `NWConnection.parameters` answers a
/// copy of its shared one, so nobody can change what other connections see.
enum SharedParameters {
    /// Distinct plain parameters kept at most; later ones are not shared (the first few are
    /// what an application makes over and over).
    static let capacity = 16

    private static let entries = Lock<[(key: PlainParametersKey, parameters: NWParameters)]>([])

    /// The shared copy of parameters equal to `parameters`, made on first use; nil when they are
    /// not plain or `capacity` distinct ones are already kept.
    static func shared(for parameters: NWParameters) -> NWParameters? {
        guard let key = PlainParametersKey(parameters) else { return nil }
        return entries.withLock { entries in
            if let entry = entries.first(where: { $0.key == key }) { return entry.parameters }
            guard entries.count < capacity else { return nil }
            let copy = parameters.copy()
            // Changed by another thread meanwhile: not shared.
            guard PlainParametersKey(copy) == key else { return nil }
            entries.append((key, copy))
            return copy
        }
    }

    /// Whether `parameters` is one of the shared copies.
    static func contains(_ parameters: NWParameters) -> Bool {
        entries.withLock { entries in entries.contains { $0.parameters === parameters } }
    }
}
