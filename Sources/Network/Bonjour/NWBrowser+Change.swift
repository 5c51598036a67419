import NetworkDNS

extension NWBrowser.Result {
    /// How the set of results changed for one service.
    public enum Change: Equatable, Hashable, Sendable {
        /// Nothing changed.
        case identical
        /// A service was found.
        case added(NWBrowser.Result)
        /// A service went away (its goodbye, or its records expired).
        case removed(NWBrowser.Result)
        /// A service was found on other interfaces, or its TXT record changed; `flags` say which.
        case changed(old: NWBrowser.Result, new: NWBrowser.Result, flags: NWBrowser.Result.Change.Flags)

        /// The change from `old` to `new` (either nil for a service that appears or goes).
        public init(between old: NWBrowser.Result?, _ new: NWBrowser.Result?) {
            switch (old, new) {
            case (nil, nil): self = .identical
            case (nil, let new?): self = .added(new)
            case (let old?, nil): self = .removed(old)
            case (let old?, let new?):
                var flags: Flags = []
                let before = Set(old.interfaces.map(\.index)), after = Set(new.interfaces.map(\.index))
                if !after.subtracting(before).isEmpty { flags.insert(.interfaceAdded) }
                if !before.subtracting(after).isEmpty { flags.insert(.interfaceRemoved) }
                if old.metadata != new.metadata { flags.insert(.metadataChanged) }
                self = flags.isEmpty && old.endpoint == new.endpoint ? .identical : .changed(old: old, new: new, flags: flags.isEmpty ? .identical : flags)
            }
        }

        init(_ change: MDNSBrowseResults.Change) {
            switch change {
            case .added(let result): self = .added(NWBrowser.Result(result))
            case .removed(let result): self = .removed(NWBrowser.Result(result))
            case .changed(let old, let new, let added, let removed, let metadata):
                var flags: Flags = []
                if added { flags.insert(.interfaceAdded) }
                if removed { flags.insert(.interfaceRemoved) }
                if metadata { flags.insert(.metadataChanged) }
                self = .changed(old: NWBrowser.Result(old), new: NWBrowser.Result(new), flags: flags)
            }
        }
    }
}

extension NWBrowser.Result.Change {
    /// What a `changed` result differs in.
    public struct Flags: OptionSet, Hashable, Sendable {
        /// The flags' bits.
        public let rawValue: UInt32

        /// Creates flags from their raw bits.
        public init(rawValue: UInt32) {
            self.rawValue = rawValue
        }

        /// No difference.
        public static let identical = Flags([])
        /// Found on another interface too.
        public static let interfaceAdded = Flags(rawValue: 1 << 0)
        /// No longer found on one of its interfaces.
        public static let interfaceRemoved = Flags(rawValue: 1 << 1)
        /// The TXT record changed.
        public static let metadataChanged = Flags(rawValue: 1 << 2)
    }
}
