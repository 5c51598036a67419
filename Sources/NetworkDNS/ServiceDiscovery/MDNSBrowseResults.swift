/// The services a browse for one service type has found, across interfaces, kept up to date
/// from the changes of each interface's `MDNSCache` (RFC 6763 §4): a PTR from the type to an
/// instance adds the instance on that interface, its removal (TTL run out, goodbye) takes it
/// away there, and the instance's TXT record is its metadata. What a browser reports is the
/// `Change` list each update returns, shaped like `NWBrowser.Result.Change`.
package struct MDNSBrowseResults: Sendable {
    /// One service instance as a browse result.
    package struct Instance: Hashable, Sendable {
        /// The instance label, as advertised (any UTF-8).
        package var name: String
        /// `_type._proto`.
        package var type: String
        /// The domain, `local.` for mDNS.
        package var domain: String

        package init(name: String, type: String, domain: String) {
            self.name = name
            self.type = type
            self.domain = domain
        }
    }

    package struct Result: Equatable, Sendable {
        package var instance: Instance
        /// The interfaces it was found on (interface indexes), in ascending order.
        package var interfaces: [Int]
        /// Its TXT record, when the browse asked for it and one arrived.
        package var txt: DNSSDTXTAttributes?

        package init(instance: Instance, interfaces: [Int], txt: DNSSDTXTAttributes?) {
            self.instance = instance
            self.interfaces = interfaces
            self.txt = txt
        }
    }

    package enum Change: Equatable, Sendable {
        case added(Result)
        case removed(Result)
        /// The same instance, with other interfaces or another TXT record.
        case changed(old: Result, new: Result, interfacesAdded: Bool, interfacesRemoved: Bool, metadataChanged: Bool)
    }

    package let typeName: DNSName
    /// Whether results carry TXT records (`bonjourWithTXTRecord`).
    package let includesTXT: Bool
    /// The interfaces each instance's PTR is on.
    private var found: [Instance: Set<Int>] = [:]
    /// The TXT records seen per instance and interface, whether or not its PTR came yet (a TXT
    /// can arrive first). As bounded as the caches these changes come from.
    private var txts: [Instance: [Int: DNSSDTXTAttributes]] = [:]

    package init(typeName: DNSName, includesTXT: Bool) {
        self.typeName = typeName
        self.includesTXT = includesTXT
    }

    /// Every current result, sorted by instance name.
    package var results: [Result] {
        found.keys.sorted { $0.name < $1.name }.compactMap(result)
    }

    /// Applies what the cache of interface `interface` reported; returns what changed for the
    /// browser.
    package mutating func apply(_ changes: [MDNSCache.Change], interface: Int) -> [Change] {
        var touched: [Instance: Result?] = [:]
        for change in changes {
            let (record, added): (DNSResourceRecord, Bool)
            switch change {
            case .added(let r): (record, added) = (r, true)
            case .removed(let r): (record, added) = (r, false)
            }
            if record.type == .ptr, record.name.equalsIgnoringCase(typeName), case .ptr(let target) = record.data,
                let instance = instance(named: target)
            {
                if touched[instance] == nil { touched[instance] = result(instance) }
                if added {
                    found[instance, default: []].insert(interface)
                } else {
                    found[instance]?.remove(interface)
                    if found[instance]?.isEmpty == true { found[instance] = nil }
                }
            } else if includesTXT, record.type == .txt, case .txt(let strings) = record.data,
                let instance = instance(named: record.name)
            {
                if touched[instance] == nil { touched[instance] = result(instance) }
                if added {
                    txts[instance, default: [:]][interface] = DNSSDTXTAttributes(strings: strings)
                } else {
                    txts[instance]?[interface] = nil
                    if txts[instance]?.isEmpty == true { txts[instance] = nil }
                }
            }
        }
        var out: [Change] = []
        for (instance, before) in touched.sorted(by: { $0.key.name < $1.key.name }) {
            let after = result(instance)
            switch (before, after) {
            case (nil, let new?): out.append(.added(new))
            case (let old?, nil): out.append(.removed(old))
            case (let old?, let new?) where old != new:
                let oldSet = Set(old.interfaces), newSet = Set(new.interfaces)
                out.append(.changed(
                    old: old, new: new, interfacesAdded: !newSet.subtracting(oldSet).isEmpty,
                    interfacesRemoved: !oldSet.subtracting(newSet).isEmpty, metadataChanged: old.txt != new.txt))
            default: break
            }
        }
        return out
    }

    private func result(_ instance: Instance) -> Result? {
        guard let interfaces = found[instance] else { return nil }
        // One TXT record per instance: that of the lowest interface it was found on with one.
        let txt = includesTXT ? (txts[instance] ?? [:]).filter { interfaces.contains($0.key) }.min { $0.key < $1.key }?.value : nil
        return Result(instance: instance, interfaces: interfaces.sorted(), txt: txt)
    }

    /// `instance.<type name>`: the first label is the instance, the rest must be the browsed type.
    private func instance(named name: DNSName) -> Instance? {
        guard name.labels.count == typeName.labels.count + 1, let first = name.labels.first,
            (try? DNSName(labels: Array(name.labels.dropFirst())))?.equalsIgnoringCase(typeName) == true
        else { return nil }
        let typeLabels = typeName.labels.prefix(2).map { String(decoding: $0, as: UTF8.self) }
        let domain = typeName.labels.dropFirst(2).map { String(decoding: $0, as: UTF8.self) }.joined(separator: ".") + "."
        return Instance(name: String(decoding: first, as: UTF8.self), type: typeLabels.joined(separator: "."), domain: domain)
    }
}
