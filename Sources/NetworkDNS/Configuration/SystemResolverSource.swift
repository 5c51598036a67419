#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NetworkSync

/// The resolver for the system's configuration files, rebuilt when one of them changes. Long
/// -running processes (servers, desktops moving between networks) otherwise keep asking the
/// nameservers of the network they started on. The files are looked at (stat) at most once a
/// second; on a change of resolv.conf the shared cache is emptied too, since answers from the
/// old network's servers (split-horizon names, captive portals) may be wrong on the new one.
package final class SystemResolverSource: Sendable {
    /// The real files.
    package static let standard = SystemResolverSource()

    private let resolvConfPath: String
    private let hostsPath: String
    private let nsswitchPath: String
    private let cache: DNSCache
    private let recheckInterval: TimeAmount

    private struct Snapshot {
        var resolver: DNSResolver
        var stamps: [FileStamp?]
        var checked: NIODeadline
    }

    /// What identifies one version of a file.
    private struct FileStamp: Equatable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var seconds: Int
        var nanoseconds: Int
    }

    private let state = Lock<Snapshot?>(nil)

    package init(
        resolvConfPath: String = "/etc/resolv.conf", hostsPath: String = "/etc/hosts",
        nsswitchPath: String = "/etc/nsswitch.conf", cache: DNSCache = .shared, recheckInterval: TimeAmount = .seconds(1)
    ) {
        self.resolvConfPath = resolvConfPath
        self.hostsPath = hostsPath
        self.nsswitchPath = nsswitchPath
        self.cache = cache
        self.recheckInterval = recheckInterval
    }

    /// The resolver for the files as they are (at most `recheckInterval` old).
    package func current() -> DNSResolver {
        let now = NIODeadline.now()
        return state.withLock { snapshot in
            if let existing = snapshot, now - existing.checked < recheckInterval { return existing.resolver }
            let stamps = [resolvConfPath, hostsPath, nsswitchPath].map(Self.stamp)
            if var existing = snapshot, existing.stamps == stamps {
                existing.checked = now
                snapshot = existing
                return existing.resolver
            }
            if let existing = snapshot, existing.stamps.first != stamps.first {
                cache.removeAll()
            }
            let resolver = DNSResolver(
                configuration: .system(resolvConfPath: resolvConfPath, hostsPath: hostsPath, nsswitchPath: nsswitchPath),
                cache: cache)
            snapshot = Snapshot(resolver: resolver, stamps: stamps, checked: now)
            return resolver
        }
    }

    private static func stamp(_ path: String) -> FileStamp? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return FileStamp(
            device: UInt64(info.st_dev), inode: UInt64(info.st_ino), size: Int64(info.st_size),
            seconds: info.st_mtim.tv_sec, nanoseconds: info.st_mtim.tv_nsec)
    }
}
