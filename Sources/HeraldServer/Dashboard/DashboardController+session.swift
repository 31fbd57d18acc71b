import HTTPTypes
import HeraldCore
import HeraldStore
import Hummingbird
import NIOCore

import struct Foundation.CharacterSet
import struct Foundation.UUID

/// Signing in and out, the entry page and the static files.
extension DashboardController {
    @Sendable func home(_ request: Request, context: Context) async throws -> Response {
        try await signedIn(request) == nil ? Self.redirect("/dashboard/signin") : Self.redirect("/dashboard/apps")
    }

    /// The stylesheet and script, cached by browsers for an hour.
    @Sendable func staticFile(_ request: Request, context: Context) async throws -> Response {
        guard let name = context.parameters.get("file"), let file = pages.files[name] else { throw APIError.notFound("file") }
        return Response(
            status: .ok, headers: [.contentType: file.contentType, .cacheControl: "public, max-age=3600"],
            body: .init(byteBuffer: file.bytes))
    }

    /// A third-party library from Debian's packages (`DashboardPages.vendorFiles`), cached for a day.
    @Sendable func vendorFile(_ request: Request, context: Context) async throws -> Response {
        guard let name = context.parameters.get("file"), let file = pages.files["vendor/" + name] else { throw APIError.notFound("file") }
        return Response(
            status: .ok, headers: [.contentType: file.contentType, .cacheControl: "public, max-age=86400"],
            body: .init(byteBuffer: file.bytes))
    }

    @Sendable func signInPage(_ request: Request, context: Context) async throws -> Response {
        let next = Self.next(request.uri.queryParameters.get("next"))
        if try await signedIn(request) != nil { return Self.redirect(next ?? "/dashboard/apps") }
        return pages.page("signin", ["next": next ?? ""], layout: ["title": "Sign in"])
    }

    /// Exchanges an admin token for a session cookie, and goes to the page asked for (`next`).
    /// A right token always signs in; a wrong one gets one message whatever was wrong with it,
    /// and a client (or everyone) that keeps sending wrong ones gets 429 for a while (`SignInThrottle`).
    @Sendable func signIn(_ request: Request, context: Context) async throws -> Response {
        let form = try await Self.form(request)
        let token = (form["token"] ?? "").trimmingASCIIWhitespace()
        let next = Self.next(form["next"])
        guard !token.isEmpty, (try? await auth.admin(token: token)) != nil else {
            let view: [String: Any] = ["next": next ?? ""]
            if case .refuse(let retryAfter) = throttle.failed(Self.client(context)) {
                // Whole seconds, rounded up, as the Retry-After header counts.
                let (whole, fraction) = retryAfter.components
                let seconds = max(1, whole + (fraction > 0 ? 1 : 0))
                var response = pages.page(
                    "signin", view,
                    layout: [
                        "title": "Sign in",
                        "errorMessage": "Too many wrong tokens; try again in \(seconds) seconds. (A right token is always accepted.)",
                    ],
                    status: .tooManyRequests)
                response.headers[.retryAfter] = String(seconds)
                return response
            }
            return pages.page(
                "signin", view, layout: ["title": "Sign in", "errorMessage": "That admin token was not accepted."], status: .unauthorized)
        }
        let (id, _) = sessions.open(token: token)
        var response = Self.redirect(next ?? "/dashboard/apps")
        response.setCookie(
            Cookie(
                name: Self.cookieName, value: id, maxAge: Int(sessions.lifetime.components.seconds), path: "/dashboard",
                secure: Self.isTLS(request), httpOnly: true, sameSite: .strict))
        return response
    }

    @Sendable func signOut(_ request: Request, context: Context) async throws -> Response {
        try await action(request) { signed, _ in
            sessions.close(signed.id)
            var response = Self.redirect("/dashboard/signin")
            response.setCookie(
                Cookie(
                    name: Self.cookieName, value: "", maxAge: 0, path: "/dashboard", secure: Self.isTLS(request), httpOnly: true,
                    sameSite: .strict))
            return response
        }
    }

    /// The application picker's target.
    @Sendable func go(_ request: Request, context: Context) async throws -> Response {
        guard let raw = request.uri.queryParameters.get("app"), let id = UUID(text: raw) else { return Self.redirect("/dashboard/apps") }
        return Self.redirect("/dashboard/apps/\(id.lowercasedString)")
    }

    // MARK: Helpers

    /// The page to return to after signing in: a dashboard path (with its query) on this host,
    /// nothing else, so that the parameter cannot send a browser to another site.
    static func next(_ text: String?) -> String? {
        guard let text, text.hasPrefix("/dashboard/"), !text.hasPrefix("/dashboard/signin"),
            !text.contains("//"), !text.contains("\\"), !text.contains(".."),
            text.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F })
        else { return nil }
        return text
    }

    /// The sign-in page, asked to come back to `request`'s page (a GET) afterwards.
    static func signInRedirect(_ request: Request) -> Response {
        guard request.method == .get, let next = next(request.uri.description) else { return redirect("/dashboard/signin") }
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~/")
        return redirect("/dashboard/signin?next=" + (next.addingPercentEncoding(withAllowedCharacters: allowed) ?? ""))
    }

    /// Whether the browser reached Herald over TLS: Herald itself serves plain HTTP, so TLS is
    /// a reverse proxy's, which says so with `X-Forwarded-Proto: https`. The header can only
    /// add `Secure` to the cookie (a forged one keeps the forger's own cookie off plain HTTP).
    static func isTLS(_ request: Request) -> Bool {
        request.headers[HTTPField.Name("X-Forwarded-Proto")!]?.lowercased() == "https"
    }

    /// Who is signing in, for the rate limit: the connection's peer address.
    static func client(_ context: Context) -> String {
        guard let address = (context as? any RemoteAddressRequestContext)?.remoteAddress else { return "unknown" }
        return address.ipAddress ?? "unknown"
    }
}
