import Foundation
import NetworkCore

extension NWError {
    /// The public form of an engine error.
    init(_ error: FlowError) {
        switch error {
        case .posix(let code): self = .posix(POSIXErrorCode(rawValue: code) ?? .EIO)
        case .dns(let code): self = .dns(code)
        case .tls(let code): self = .tls(code)
        }
    }
}

extension FlowError {
    /// The engine form of a public error (a framer's `markFailed`).
    init(_ error: NWError) {
        switch error {
        case .posix(let code): self = .posix(code.rawValue)
        case .dns(let code): self = .dns(code)
        case .tls(let code): self = .tls(code)
        }
    }
}
