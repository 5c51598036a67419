import Testing
@testable import NetworkDNS
