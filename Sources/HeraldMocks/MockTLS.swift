import Crypto
import Foundation
import NIOSSL
import SwiftASN1
import X509

/// A throw-away certificate authority and server certificate for mock servers on 127.0.0.1,
/// generated in memory at start (nothing is written to disk or committed).
package struct MockTLS: Sendable {
    /// The CA certificate, PEM: what a client must trust (`HERALD_EXTRA_CA_FILE`).
    package let caCertificatePEM: String
    /// The server's certificate chain and key.
    package let serverCertificate: NIOSSLCertificate
    package let serverKey: NIOSSLPrivateKey

    package init(hostnames: [String] = ["localhost"], addresses: [[UInt8]] = [[127, 0, 0, 1]]) throws {
        let caKey = P256.Signing.PrivateKey()
        // A name of its own: with several mocks' CAs trusted at once, certificate paths are built
        // by issuer name, and two CAs of one name would be confused.
        let caName = try DistinguishedName { CommonName("Herald Mock CA \(UUID().uuidString.prefix(8))") }
        let now = Date()
        let validity = (now.addingTimeInterval(-3600), now.addingTimeInterval(86_400 * 30))
        let ca = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(caKey.publicKey),
            notValidBefore: validity.0, notValidAfter: validity.1, issuer: caName, subject: caName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(keyCertSign: true))
            },
            issuerPrivateKey: .init(caKey))

        let serverKey = P256.Signing.PrivateKey()
        var names: [GeneralName] = hostnames.map { .dnsName($0) }
        names += addresses.map { .ipAddress(ASN1OctetString(contentBytes: ArraySlice($0))) }
        let server = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(serverKey.publicKey),
            notValidBefore: validity.0, notValidAfter: validity.1, issuer: caName,
            subject: try DistinguishedName { CommonName(hostnames.first ?? "localhost") },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                SubjectAlternativeNames(names)
                try ExtendedKeyUsage([.serverAuth])
            },
            issuerPrivateKey: .init(caKey))

        var caSerializer = DER.Serializer()
        try caSerializer.serialize(ca)
        self.caCertificatePEM = PEMDocument(type: "CERTIFICATE", derBytes: caSerializer.serializedBytes).pemString
        var serverSerializer = DER.Serializer()
        try serverSerializer.serialize(server)
        self.serverCertificate = try NIOSSLCertificate(bytes: serverSerializer.serializedBytes, format: .der)
        self.serverKey = try NIOSSLPrivateKey(bytes: Array(serverKey.pemRepresentation.utf8), format: .pem)
    }

    /// A server TLS context offering `alpn` (h2 for APNs), requiring client certificates that
    /// chain to `clientCertificateRoots` when given.
    package func serverContext(alpn: [String] = ["h2"], clientCertificateRoots: [NIOSSLCertificate]? = nil) throws -> NIOSSLContext {
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: [.certificate(serverCertificate)], privateKey: .privateKey(serverKey))
        configuration.applicationProtocols = alpn
        if let clientCertificateRoots {
            configuration.certificateVerification = .noHostnameVerification
            configuration.trustRoots = .certificates(clientCertificateRoots)
        }
        return try NIOSSLContext(configuration: configuration)
    }
}
