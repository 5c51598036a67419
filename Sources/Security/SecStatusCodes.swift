/// A Security-framework status code: zero for success, a negative `errSec…` or `errSSL…` value
/// otherwise.
public typealias OSStatus = Int32

// The values below are the numbers Apple's Security headers assign; code that compares with
// them, or logs them, sees the same numbers as on Apple platforms.

/// The call succeeded.
public let errSecSuccess: OSStatus = 0
/// A parameter was missing or not valid (for example an empty certificate list).
public let errSecParam: OSStatus = -50
/// A system component the call relies on failed (for example the kernel's random source).
public let errSecInternalComponent: OSStatus = -2070
/// The data could not be decoded (not a certificate, not a PKCS#12 file).
public let errSecDecode: OSStatus = -26275
/// The passphrase was wrong (PKCS#12 import).
public let errSecAuthFailed: OSStatus = -25293
/// A certificate in the chain is past its expiry date.
public let errSecCertificateExpired: OSStatus = -67818
/// A certificate in the chain is not valid yet.
public let errSecCertificateNotValidYet: OSStatus = -67819
/// The certificate does not name the host the SSL policy asked for.
public let errSecHostNameMismatch: OSStatus = -67602
/// The chain does not lead to a trusted anchor (or a signature in it is wrong).
public let errSecNotTrusted: OSStatus = -67843
