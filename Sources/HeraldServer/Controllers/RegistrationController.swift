import HeraldCore
import HeraldStore
import Hummingbird
import NIOCore

import struct Foundation.UUID

/// `/v1/registration`: devices register, update, read and delete themselves with platform credentials.
struct RegistrationController<Context: RequestContext>: Sendable {
    let store: Store
    let auth: Authenticator
    /// A WNS channel host accepted besides `*.notify.windows.com` (a test WNS).
    var wnsTestHost: String? = nil

    func addRoutes(to router: Router<Context>) {
        let group = router.group("v1/registration")
        group.post(use: register)
        group.get("count", use: count)
        group.get(":device_uuid", use: find)
        group.put(":device_uuid", use: update)
        group.delete(":device_uuid", use: delete)
    }

    @Sendable func register(_ request: Request, context: Context) async throws -> RegistrationResponse {
        var request = request
        let platform = try await auth.platform(request)
        let input = try await verifyingCustomUserID(try await request.decodeRegistration(), platform: platform)
        var registration = try input.validated(for: platform.type, requireToken: true)
        try checkChannel(registration, platform)
        // Written with the device in the batched upsert; a new registration says everything, so
        // no time_zone clears it.
        registration.timeZone = try input.validatedTimeZone()
        let badge = try input.validatedBadge()
        let quietTime = try input.validatedQuietTime()
        let device = try await store.devices.register(on: platform, registration)
        if let badge { try await store.devices.setBadge(badge, deviceID: device.id) }
        try await store.devices.setQuietTime(quietTime, deviceID: device.id)
        return RegistrationResponse(device: device)
    }

    /// Windows devices register a WNS channel URI, which Herald only sends to on Microsoft's hosts.
    private func checkChannel(_ registration: Registration, _ platform: Platform) throws {
        guard platform.type == .windows, let channel = registration.registrationToken else { return }
        _ = try WNSChannel.check(channel, allowedTestHost: wnsTestHost)
    }

    @Sendable func update(_ request: Request, context: Context) async throws -> RegistrationResponse {
        var request = request
        let platform = try await auth.platform(request)
        let uuid = try deviceUUID(context)
        let input = try await verifyingCustomUserID(try await request.decodeRegistration(), platform: platform)
        let registration = try input.validated(for: platform.type, requireToken: false)
        try checkChannel(registration, platform)
        let timeZone = try input.validatedTimeZone()
        let badge = try input.validatedBadge()
        let quietTime = try input.validatedQuietTime()
        guard let device = try await store.devices.update(on: platform, uuid: uuid, registration) else {
            throw APIError.notFound("device")
        }
        try await store.devices.setTimeZone(timeZone, deviceID: device.id)
        if let badge { try await store.devices.setBadge(badge, deviceID: device.id) }
        try await store.devices.setQuietTime(quietTime, deviceID: device.id)
        return RegistrationResponse(device: device)
    }

    @Sendable func find(_ request: Request, context: Context) async throws -> RegistrationResponse {
        let platform = try await auth.platform(request)
        let uuid = try deviceUUID(context)
        guard let device = try await store.devices.find(platformID: platform.id, uuid: uuid) else {
            throw APIError.notFound("device")
        }
        return RegistrationResponse(device: device)
    }

    @Sendable func delete(_ request: Request, context: Context) async throws -> Response {
        let platform = try await auth.platform(request)
        let uuid = try deviceUUID(context)
        guard try await store.devices.delete(platformID: platform.id, uuid: uuid) else {
            throw APIError.notFound("device")
        }
        return Response(status: .noContent)
    }

    /// The number of devices on the platform, as a bare JSON integer.
    @Sendable func count(_ request: Request, context: Context) async throws -> Response {
        let platform = try await auth.platform(request)
        let count = try await store.devices.count(platformID: platform.id)
        return Response(
            status: .ok, headers: [.contentType: "application/json; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: String(count))))
    }

    private func deviceUUID(_ context: Context) throws -> UUID {
        guard let raw = context.parameters.get("device_uuid"), let uuid = UUID(text: raw) else {
            // An id that cannot exist is simply not found.
            throw APIError.notFound("device")
        }
        return uuid
    }
}
