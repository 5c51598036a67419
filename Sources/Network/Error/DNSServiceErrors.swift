// dns_sd.h's error codes, so that code written for Apple platforms that compares an
// `NWError.dns` code with them compiles unchanged. dns_sd.h declares them in an anonymous enum,
// which Swift imports as `Int` constants; they are the same here, so
// `DNSServiceErrorType(kDNSServiceErr_DefunctConnection)` reads as it does on Apple's platforms.

/// DNS-SD error 0: no error.
public let kDNSServiceErr_NoError: Int = 0

/// DNS-SD error -65537: an error with no more specific code.
public let kDNSServiceErr_Unknown: Int = -65537

/// DNS-SD error -65538: the name does not exist.
public let kDNSServiceErr_NoSuchName: Int = -65538

/// DNS-SD error -65539: out of memory.
public let kDNSServiceErr_NoMemory: Int = -65539

/// DNS-SD error -65540: a parameter was not valid.
public let kDNSServiceErr_BadParam: Int = -65540

/// DNS-SD error -65541: a reference (to a service or a record) was not valid.
public let kDNSServiceErr_BadReference: Int = -65541

/// DNS-SD error -65542: the operation does not fit the current state.
public let kDNSServiceErr_BadState: Int = -65542

/// DNS-SD error -65543: the flags were not valid.
public let kDNSServiceErr_BadFlags: Int = -65543

/// DNS-SD error -65544: the operation is not supported.
public let kDNSServiceErr_Unsupported: Int = -65544

/// DNS-SD error -65545: the reference was not initialized.
public let kDNSServiceErr_NotInitialized: Int = -65545

/// DNS-SD error -65547: the record or service is already registered.
public let kDNSServiceErr_AlreadyRegistered: Int = -65547

/// DNS-SD error -65548: the name is already in use on the network.
public let kDNSServiceErr_NameConflict: Int = -65548

/// DNS-SD error -65549: a value was not valid.
public let kDNSServiceErr_Invalid: Int = -65549

/// DNS-SD error -65550: a firewall blocked the operation.
public let kDNSServiceErr_Firewall: Int = -65550

/// DNS-SD error -65551: the client library and the service do not match.
public let kDNSServiceErr_Incompatible: Int = -65551

/// DNS-SD error -65552: the interface index was not valid.
public let kDNSServiceErr_BadInterfaceIndex: Int = -65552

/// DNS-SD error -65553: the request was refused.
public let kDNSServiceErr_Refused: Int = -65553

/// DNS-SD error -65554: the name exists but has no record of the type asked for.
public let kDNSServiceErr_NoSuchRecord: Int = -65554

/// DNS-SD error -65555: authentication failed.
public let kDNSServiceErr_NoAuth: Int = -65555

/// DNS-SD error -65556: the key was not found.
public let kDNSServiceErr_NoSuchKey: Int = -65556

/// DNS-SD error -65557: NAT traversal failed.
public let kDNSServiceErr_NATTraversal: Int = -65557

/// DNS-SD error -65558: more than one NAT lies on the path.
public let kDNSServiceErr_DoubleNAT: Int = -65558

/// DNS-SD error -65559: a signature's time was out of range.
public let kDNSServiceErr_BadTime: Int = -65559

/// DNS-SD error -65560: a signature was not valid.
public let kDNSServiceErr_BadSig: Int = -65560

/// DNS-SD error -65561: a key was not valid.
public let kDNSServiceErr_BadKey: Int = -65561

/// DNS-SD error -65562: a temporary failure; trying again may succeed.
public let kDNSServiceErr_Transient: Int = -65562

/// DNS-SD error -65563: the DNS-SD service is not running.
public let kDNSServiceErr_ServiceNotRunning: Int = -65563

/// DNS-SD error -65564: the NAT does not support port mapping.
public let kDNSServiceErr_NATPortMappingUnsupported: Int = -65564

/// DNS-SD error -65565: the NAT supports port mapping, but it is turned off.
public let kDNSServiceErr_NATPortMappingDisabled: Int = -65565

/// DNS-SD error -65566: no router is configured (probably no network).
public let kDNSServiceErr_NoRouter: Int = -65566

/// DNS-SD error -65567: the service polls rather than waits for events.
public let kDNSServiceErr_PollingMode: Int = -65567

/// DNS-SD error -65568: the operation timed out.
public let kDNSServiceErr_Timeout: Int = -65568

/// DNS-SD error -65569: the connection to the DNS-SD service ended; start the operation again.
public let kDNSServiceErr_DefunctConnection: Int = -65569

/// DNS-SD error -65570: a policy denied the operation.
public let kDNSServiceErr_PolicyDenied: Int = -65570

/// DNS-SD error -65571: the operation is not permitted.
public let kDNSServiceErr_NotPermitted: Int = -65571

/// DNS-SD error -65572: the data is stale.
public let kDNSServiceErr_StaleData: Int = -65572
