/// What a trust evaluation checks besides the chain, as the Security framework's `SecPolicy`.
public final class SecPolicy: Sendable {
    /// The kinds this package evaluates.
    package enum Kind: Sendable, Equatable {
        /// Chain and validity dates only.
        case basicX509
        /// TLS: `server` true checks a server's certificate (and `hostname`, if given); false a client's.
        case ssl(server: Bool, hostname: String?)
    }

    package let kind: Kind

    package init(_ kind: Kind) {
        self.kind = kind
    }
}

/// A TLS policy. `server` true evaluates a server's certificate, as a client does; the chain
/// must then also name `hostname` (a DNS name or an IP literal) when one is given. `server`
/// false evaluates a client's certificate, as a server does.
public func SecPolicyCreateSSL(_ server: Bool, _ hostname: CFString?) -> SecPolicy {
    SecPolicy(.ssl(server: server, hostname: hostname))
}

/// A policy that checks only the chain of trust and the validity dates.
public func SecPolicyCreateBasicX509() -> SecPolicy {
    SecPolicy(.basicX509)
}
