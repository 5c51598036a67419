// Darwin-only names that appear in the Network API's public signatures, provided here so that
// code written for Apple platforms compiles unchanged. (`POSIXErrorCode` already exists on Linux:
// Glibc defines it and Foundation re-exports it.)

/// A DNS-SD (`dns_sd.h`) error code; the `kDNSServiceErr_*` values are negative numbers.
public typealias DNSServiceErrorType = Int32

// `OSStatus` lives in the Security module (re-exported by Network), beside the errSec codes.

// The error-domain constants. On Apple platforms they are `CFString` values; Core Foundation's
// string type does not exist on Linux, so they are plain `String`s here, holding the same text.
// Code that writes `kNWErrorDomainPOSIX as String` or compares them with `NSError.domain` keeps
// working.

/// The domain name for POSIX (`errno`) errors: routing, socket and most protocol failures.
public let kNWErrorDomainPOSIX: String = "kNWErrorDomainPOSIX"

/// The domain name for DNS-SD errors met while resolving, browsing or advertising.
public let kNWErrorDomainDNS: String = "kNWErrorDomainDNS"

/// The domain name for TLS errors reported by a TLS connection or listener.
public let kNWErrorDomainTLS: String = "kNWErrorDomainTLS"
