import Foundation
import Testing

@testable import Network

@Suite struct ValueTypesNWErrorTests {
    @Test func codes() {
        #expect(NWError.posix(.ECONNREFUSED).errorCode == 111)
        #expect(NWError.dns(-65554).errorCode == -65554)
        #expect(NWError.tls(-9808).errorCode == -9808)
        #expect(NWError.errorDomain == "Network.NWError")
        #expect(NWError.posix(.ENETDOWN).domainName == kNWErrorDomainPOSIX)
        #expect(NWError.dns(0).domainName == kNWErrorDomainDNS)
        #expect(NWError.tls(0).domainName == kNWErrorDomainTLS)
        #expect(kNWErrorDomainPOSIX == "kNWErrorDomainPOSIX")
        #expect(kNWErrorDomainDNS == "kNWErrorDomainDNS")
        #expect(kNWErrorDomainTLS == "kNWErrorDomainTLS")
        #expect(NWError(errno: 104) == .posix(.ECONNRESET))
    }

    @Test("dns_sd.h's kDNSServiceErr_ constants: Int, as Swift imports them on Apple's platforms, with the values the descriptions name")
    func dnsServiceErrorConstants() {
        #expect(NWError.dns(DNSServiceErrorType(kDNSServiceErr_DefunctConnection)).debugDescription == "-65569: DefunctConnection")
        #expect(NWError.dns(DNSServiceErrorType(kDNSServiceErr_NoSuchRecord)) == .dns(-65554))
        let constants: [Int] = [kDNSServiceErr_NoError, kDNSServiceErr_Unknown, kDNSServiceErr_NoAuth, kDNSServiceErr_PolicyDenied, kDNSServiceErr_StaleData]
        #expect(constants.map { NWError.dnsServiceErrorNames[DNSServiceErrorType($0)] } == ["NoError", "Unknown", "NoAuth", "PolicyDenied", "StaleData"])
    }

    @Test func descriptions() {
        #expect(NWError.posix(.ECONNREFUSED).debugDescription == "POSIXErrorCode(rawValue: 111): Connection refused")
        #expect(NWError.posix(.ETIMEDOUT).debugDescription == "POSIXErrorCode(rawValue: 110): Connection timed out")
        #expect(NWError.dns(-65554).debugDescription == "-65554: NoSuchRecord")
        #expect(NWError.dns(-65538).debugDescription == "-65538: NoSuchName")
        #expect(NWError.dns(-65537).debugDescription == "-65537: Unknown")
        #expect(NWError.dns(-65568).debugDescription == "-65568: Timeout")
        #expect(NWError.dns(-1).debugDescription == "-1: Unknown DNS-SD error")
        #expect(NWError.tls(-9808).debugDescription == "-9808: errSSLBadCert")
        #expect(NWError.tls(-9814).debugDescription == "-9814: errSSLCertExpired")
        #expect(NWError.tls(-9843).debugDescription == "-9843: errSSLHostNameMismatch")
        #expect(NWError.tls(-9824).debugDescription == "-9824: errSSLPeerHandshakeFail")
        #expect(NWError.tls(-9806).debugDescription == "-9806: errSSLClosedAbort")
        #expect(NWError.tls(-9805).debugDescription == "-9805: errSSLClosedGraceful")
        #expect(NWError.tls(-9800).debugDescription == "-9800: errSSLProtocol")
        #expect(NWError.tls(-9807).debugDescription == "-9807: errSSLXCertChainInvalid")
        #expect(NWError.tls(-9812).debugDescription == "-9812: errSSLUnknownRootCert")
        #expect(NWError.tls(-9813).debugDescription == "-9813: errSSLNoRootCert")
        #expect(NWError.tls(-9825).debugDescription == "-9825: errSSLPeerBadCert")
        #expect(NWError.tls(-9828).debugDescription == "-9828: errSSLPeerCertExpired")
        #expect(NWError.tls(-1).debugDescription == "-1: Unknown TLS error")
    }

    @Test func equalityAndBridging() {
        #expect(NWError.posix(.EPIPE) == .posix(.EPIPE))
        #expect(NWError.posix(.EPIPE) != .posix(.ECONNRESET))
        #expect(NWError.dns(-65554) != .tls(-65554))
        #expect(NWError.tls(-9808) == .tls(-9808))

        let error: any Error = NWError.posix(.ECONNRESET)
        let nsError = error as NSError
        #expect(nsError.code == 104)
        #expect(nsError.domain == "Network.NWError")
        #expect(nsError.userInfo[NSDebugDescriptionErrorKey] as? String
            == "POSIXErrorCode(rawValue: 104): Connection reset by peer")
    }
}
