import struct Foundation.URLComponents

/// WNS channel URIs: the registration token of a Windows device, and where its notifications
/// are POSTed with the platform's access token.
///
/// Sending to any URL a device registered would hand the access token to whoever runs it, so
/// only WNS's own hosts are accepted, and one test host when a deployment names it.
package enum WNSChannel {
    /// Channel URIs are on hosts under this domain (`wns2-by3p.notify.windows.com`, …).
    package static let hostSuffix = ".notify.windows.com"

    /// Checks that `uri` is an https URL, without user information, whose host ends in
    /// `.notify.windows.com` or is `allowedTestHost` (compared without case; any port).
    ///
    /// - Returns: the URI's host, lower-cased.
    @discardableResult
    package static func check(_ uri: String, allowedTestHost: String? = nil, field: String = "registration_token") throws(ValidationError)
        -> String
    {
        guard let components = URLComponents(string: uri), components.scheme?.lowercased() == "https",
            let host = components.host?.lowercased(), !host.isEmpty
        else {
            throw ValidationError(code: "invalid_token", message: "a WNS channel URI is an https URL", field: field)
        }
        guard components.user == nil, components.password == nil else {
            throw ValidationError(code: "invalid_token", message: "a WNS channel URI carries no user name or password", field: field)
        }
        if let allowedTestHost, host == allowedTestHost.lowercased() {
            return host
        }
        guard host.hasSuffix(hostSuffix) else {
            throw ValidationError(
                code: "invalid_token",
                message: "'\(host)' is not a WNS host: channel URIs are on hosts ending in \(hostSuffix)"
                    + (allowedTestHost.map { " (or on the test host \($0))" } ?? ""),
                field: field)
        }
        return host
    }
}
