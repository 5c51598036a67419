import Foundation

// Apple's Security functions take and return Core Foundation types, and Apple-platform code
// crosses between them and Swift types with `as` (`data as CFData`, `[ca] as CFArray`,
// `SecCertificateCopyData(c) as Data`). That toll-free bridging does not exist on Linux, where
// Core Foundation's classes (when a file imports CoreFoundation at all) convert to nothing.
// So the names are spelled here as the Swift types the bridging would have produced: every
// such `as` becomes an identity or an ordinary upcast and compiles unchanged.
// docs/api-deviations.md explains the choice and its one limit (a file that also imports
// CoreFoundation must qualify these names).

/// Bytes, as Core Foundation's data object: on Linux simply `Data`, so `x as CFData` and
/// `y as Data` are identities.
public typealias CFData = Data

/// An array of objects: on Linux `[Any]`, so `[certificate] as CFArray` is an upcast and
/// `array as? [SecCertificate]` a conditional cast.
public typealias CFArray = [Any]

/// A string: on Linux `String`, so `kSecImportExportPassphrase as String` and
/// `SecCertificateCopySubjectSummary(c) as String?` compile.
public typealias CFString = String

/// An error: on Linux `NSError`, so `error as Error?`, `error.code` and `error.domain` work.
public typealias CFError = NSError

/// A dictionary: on Linux `[AnyHashable: Any]`, so a `[String: Any]` literal converts with
/// `as CFDictionary`.
public typealias CFDictionary = [AnyHashable: Any]

/// Any Core Foundation object: on Linux `Any`, because the Swift values standing in for them
/// (arrays, `Data`) are not classes.
public typealias CFTypeRef = Any

/// Core Foundation's signed count and index type.
public typealias CFIndex = Int

/// Stands in for Core Foundation's allocator so that the first argument of
/// `SecCertificateCreateWithData(nil, …)` or `(kCFAllocatorDefault, …)` type-checks. Swift
/// manages memory here; no allocator value is ever made.
public final class CFAllocator: Sendable {
    private init() {}
}

/// The default allocator: nil, which every function taking an allocator treats as "the usual".
public let kCFAllocatorDefault: CFAllocator? = nil

/// The code of a Security error (its `OSStatus`), as Core Foundation's accessor spells it.
public func CFErrorGetCode(_ error: CFError) -> CFIndex {
    error.code
}
