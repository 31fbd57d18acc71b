import HeraldCore
import HeraldStore

import struct Foundation.UUID

extension AdminScope {
    // MARK: Badge counts

    /// The iOS badge count Herald keeps for the application's device `uuid` (autobadge), with
    /// the device's row id; not found when the application has no such device. The application
    /// comes from `application(_:)`, so another tenant's device is never reached.
    func badge(of app: App, device uuid: UUID) async throws -> (deviceID: Int64, badge: Int64) {
        guard let found = try await store.devices.badge(applicationID: app.id, uuid: uuid) else {
            throw APIError.notFound("device")
        }
        return found
    }

    /// Sets the application's device's badge count (0 resets it): what
    /// `PUT /admin/v1/apps/:app/devices/:device/badge` and the dashboard's device page do.
    func setBadge(_ value: Int64, of app: App, device uuid: UUID) async throws {
        let found = try await badge(of: app, device: uuid)
        try await store.devices.setBadge(value, deviceID: found.deviceID)
    }
}
