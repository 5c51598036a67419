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
