import Dispatch
import Foundation
import NetworkSync

/// A certificate chain together with how to judge it, as the Security framework's `SecTrust`:
/// the certificates to evaluate (leaf first), the policies they must satisfy and, optionally,
/// the anchors to trust instead of (or besides) the system's roots.
public final class SecTrust: Sendable {
    package struct State: Sendable {
        package var certificates: [SecCertificate]
        package var policies: [SecPolicy]
        /// Nil until `SecTrustSetAnchorCertificates` is called; then the custom roots.
        package var anchors: [SecCertificate]?
        /// With custom anchors: true to trust only them, false to trust the system's roots too.
        package var anchorsOnly = true
    }

    package let state: Lock<State>

    package init(certificates: [SecCertificate], policies: [SecPolicy]) {
        state = Lock(State(certificates: certificates, policies: policies))
    }
}

/// The callback of ``SecTrustEvaluateAsyncWithError(_:_:_:)``: the trust, the verdict and, on
/// failure, the reason.
public typealias SecTrustWithErrorCallback = @Sendable (SecTrust, Bool, CFError?) -> Void

/// Apple's functions take "a certificate or an array of them" (likewise for policies); this
/// reads either form and returns nil if anything else is mixed in.
private func objects<T>(_ value: Any, as type: T.Type) -> [T]? {
    if let single = value as? T { return [single] }
    guard let array = value as? [Any] else { return nil }
    let typed = array.compactMap { $0 as? T }
    return typed.count == array.count ? typed : nil
}

/// Makes a trust for `certificates` (one ``SecCertificate`` or an array, leaf first) under
/// `policies` (one ``SecPolicy``, an array, or nil for ``SecPolicyCreateBasicX509()``).
@discardableResult
public func SecTrustCreateWithCertificates(
    _ certificates: CFTypeRef, _ policies: CFTypeRef?, _ trust: UnsafeMutablePointer<SecTrust?>
) -> OSStatus {
    guard let chain = objects(certificates, as: SecCertificate.self), !chain.isEmpty else { return errSecParam }
    var policyList = [SecPolicyCreateBasicX509()]
    if let policies {
        guard let given = objects(policies, as: SecPolicy.self) else { return errSecParam }
        policyList = given
    }
    trust.pointee = SecTrust(certificates: chain, policies: policyList)
    return errSecSuccess
}

/// Replaces the policies the chain is judged by (one ``SecPolicy`` or an array).
@discardableResult
public func SecTrustSetPolicies(_ trust: SecTrust, _ policies: CFTypeRef) -> OSStatus {
    guard let given = objects(policies, as: SecPolicy.self) else { return errSecParam }
    trust.state.withLock { $0.policies = given }
    return errSecSuccess
}

/// Sets the roots to trust (for a private CA). From then on only these are trusted, unless
/// ``SecTrustSetAnchorCertificatesOnly(_:_:)`` is called with false afterwards.
@discardableResult
public func SecTrustSetAnchorCertificates(_ trust: SecTrust, _ anchorCertificates: CFArray) -> OSStatus {
    guard let anchors = objects(anchorCertificates, as: SecCertificate.self) else { return errSecParam }
    trust.state.withLock {
        $0.anchors = anchors
        $0.anchorsOnly = true
    }
    return errSecSuccess
}

/// With custom anchors set: true trusts only them, false trusts the system's roots as well.
@discardableResult
public func SecTrustSetAnchorCertificatesOnly(_ trust: SecTrust, _ anchorCertificatesOnly: Bool) -> OSStatus {
    trust.state.withLock { $0.anchorsOnly = anchorCertificatesOnly }
    return errSecSuccess
}

/// Evaluates the chain: it must lead to a trusted root (the system's, or the custom anchors),
/// every certificate must be within its validity dates, and each policy must hold (for an SSL
/// policy with a host name, the leaf must name that host). On failure `error` receives an
/// `NSOSStatusErrorDomain` error whose code is the `errSec…` status, for example
/// ``errSecCertificateExpired``, ``errSecHostNameMismatch`` or ``errSecNotTrusted``.
@discardableResult
public func SecTrustEvaluateWithError(_ trust: SecTrust, _ error: UnsafeMutablePointer<CFError?>?) -> Bool {
    let state = trust.state.withLock { $0 }
    let failure = TrustEvaluation(state).run()
    error?.pointee = failure
    return failure == nil
}

/// Evaluates the trust as ``SecTrustEvaluateWithError(_:_:)`` does and calls `result` on `queue`
/// with the verdict.
@discardableResult
public func SecTrustEvaluateAsyncWithError(
    _ trust: SecTrust, _ queue: DispatchQueue, _ result: @escaping SecTrustWithErrorCallback
) -> OSStatus {
    queue.async {
        var error: CFError?
        let trusted = SecTrustEvaluateWithError(trust, &error)
        result(trust, trusted, error)
    }
    return errSecSuccess
}

/// How many certificates the trust holds.
public func SecTrustGetCertificateCount(_ trust: SecTrust) -> CFIndex {
    trust.state.withLock { $0.certificates.count }
}

/// The certificate at `ix` (0 is the leaf), or nil past the end.
public func SecTrustGetCertificateAtIndex(_ trust: SecTrust, _ ix: CFIndex) -> SecCertificate? {
    trust.state.withLock { ix >= 0 && ix < $0.certificates.count ? $0.certificates[ix] : nil }
}

/// The certificates, leaf first, as an array of ``SecCertificate`` (cast it with
/// `as? [SecCertificate]`). This is the chain as presented; Apple's may also end with the
/// anchor the evaluation found.
public func SecTrustCopyCertificateChain(_ trust: SecTrust) -> CFArray? {
    trust.state.withLock { $0.certificates }
}
