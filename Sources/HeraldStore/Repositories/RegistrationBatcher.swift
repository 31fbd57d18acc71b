import HeraldCore
import Synchronization

import struct Foundation.UUID

/// Writes concurrent new registrations together: while one batch is being written, arrivals
/// wait, and the next batch writes them all at once. On PostgreSQL that is one statement (see
/// `writeInOneStatement`): one round trip, no BEGIN and COMMIT of its own. On SQLite, and on
/// PostgreSQL when a tag names an expired topic, it is three statements in one transaction (an
/// upsert of every device, the removal of re-registered devices' old tags, the insertion of all
/// tags, after creating the topics that are new).
///
/// This is what lets registration keep up with thousands of devices a second: per request it
/// saves the transaction, the commit (an fsync) and most statement round trips. A registration
/// returns only after the transaction that holds it committed. If a batch fails, its
/// registrations are written one by one, so that each caller gets its own outcome.
final class RegistrationBatcher: Sendable {
    /// The most registrations one batch writes (14 bound values each, 2,800 in all).
    static let maximumBatch = 200
    /// How long a small batch waits for more registrations.
    static let linger = Duration.microseconds(500)
    /// Batches smaller than this wait `linger` first.
    static let lingerBelow = 16

    /// A class: the batcher's queue and batches copy requests around, and a struct of this size
    /// costs a retain and release of each of its fields at every copy.
    final class Request: Sendable {
        let platform: Platform
        let registration: Registration
        let tags: [String]
        /// The device as this registration writes it: every column the upsert sets, on insert and
        /// on conflict alike, with the candidate uuid, `time` as created_at and no id. The batch
        /// writes these values, and answers with them once the row's id, uuid and created_at
        /// are known (`answer`, which says why nothing else in the row can differ).
        let written: Device
        let complete: @Sendable (Result<Device, any Error>) -> Void

        init(
            platform: Platform, token: String, registration: Registration, tags: [String], time: Int64, candidate: UUID,
            complete: @escaping @Sendable (Result<Device, any Error>) -> Void
        ) {
            self.platform = platform
            self.registration = registration
            self.tags = tags
            self.written = Device(
                id: 0, uuid: candidate, applicationID: platform.applicationID, platformID: platform.id, platformType: platform.type,
                os: registration.os ?? DeviceRepository.defaultOS(platform.type), osVersion: registration.osVersion.applied(to: nil),
                deviceAlias: registration.deviceAlias.applied(to: nil), deviceModel: registration.deviceModel.applied(to: nil),
                deviceManufacturer: registration.deviceManufacturer.applied(to: nil), registrationToken: token,
                customUserID: registration.customUserID.applied(to: nil), tags: tags.sorted(), active: true,
                createdAt: time, updatedAt: time)
            self.complete = complete
        }

        var token: String { written.registrationToken }
        var time: Int64 { written.createdAt }
        /// The uuid a new row gets; a re-registration keeps its row's.
        var candidate: UUID { written.uuid }

        /// The stored device once its row is written: `written` with the row's id, and, for a
        /// re-registration (the upsert met the row of an earlier one), the uuid and created_at
        /// that row keeps. Everything else in the row is what `written` holds: the upsert
        /// overwrites every other column it sets, and the ones it does not (app_id,
        /// platform_type, platform_id, token) are the conflict's key or follow from the platform,
        /// whose application and type never change.
        ///
        /// Built from the request rather than from the fifteen columns `RETURNING` could give,
        /// which would cost each registration the drivers' row objects, `SQLRow`'s values and
        /// look-ups by name (the figures are in docs/benchmarks-history.md).
        ///
        /// - Parameter row: the row's `id`, `uuid` and `created_at`, as both write paths return them.
        func answer(_ row: SQLRow) throws -> Device {
            var device = written
            device.id = try row.int("id")
            device.uuid = try row.uuid("uuid")
            device.createdAt = try row.int("created_at")
            return device
        }
    }

    /// What `write`'s upsert and `writeInOneStatement` return of each row: what the request cannot know.
    static let returnedColumns = "id, uuid, platform_id, token, created_at"

    /// A device as its platform knows it: one batch may hold each once.
    struct DeviceKey: Hashable {
        let platformID: UUID
        let token: String
    }

    private struct Queue {
        var pending: [Request] = []
        var drainers = 0
    }

    private let database: any SQLDatabase
    private let queue = Mutex(Queue())
    /// Batches written at once. One keeps batches large, which is what makes them cheap; more
    /// at once on PostgreSQL were no faster and worsened p99.
    private let concurrentBatches = 1

    init(database: any SQLDatabase) {
        self.database = database
    }

    /// Registers one device, batched with whatever else arrives meanwhile.
    func register(platform: Platform, token: String, registration: Registration, tags: [String], time: Int64) async throws -> Device {
        try await withCheckedThrowingContinuation { continuation in
            let request = Request(
                platform: platform, token: token, registration: registration, tags: tags, time: time,
                candidate: .timeOrdered(milliseconds: time),
                complete: { continuation.resume(with: $0) })
            let startDrain = queue.withLock { queue -> Bool in
                queue.pending.append(request)
                guard queue.drainers < concurrentBatches else { return false }
                queue.drainers += 1
                return true
            }
            if startDrain {
                Task(executorPreference: database.writeExecutor) { await self.drain() }
            }
        }
    }

    private func drain() async {
        while true {
            // Under load, give stragglers a moment to join: every commit rewrites the touched
            // index pages, so ten rows in one commit cost little more than one.
            if queue.withLock({ $0.pending.count }) < Self.lingerBelow {
                try? await Task.sleep(for: Self.linger)
            }
            let batch = queue.withLock { queue -> [Request] in
                // One batch may hold a (platform, token) once: an upsert cannot touch a row twice.
                var seen = Set<DeviceKey>()
                var batch: [Request] = []
                var rest: [Request] = []
                for request in queue.pending {
                    if batch.count < Self.maximumBatch,
                        seen.insert(DeviceKey(platformID: request.platform.id, token: request.token)).inserted
                    {
                        batch.append(request)
                    } else {
                        rest.append(request)
                    }
                }
                queue.pending = rest
                if batch.isEmpty { queue.drainers -= 1 }
                return batch
            }
            if batch.isEmpty { return }
            do {
                let devices: [Device]
                if let written = try await Self.writeInOneStatement(batch, on: database) {
                    devices = written
                } else {
                    devices = try await database.transaction { connection in
                        try await Self.write(batch, on: connection)
                    }
                }
                for (request, device) in zip(batch, devices) { request.complete(.success(device)) }
            } catch {
                for request in batch {
                    do {
                        let device = try await database.transaction { connection in
                            try await Self.write([request], on: connection)
                        }
                        request.complete(.success(device[0]))
                    } catch {
                        request.complete(.failure(error))
                    }
                }
            }
        }
    }

    /// Writes the batch; the devices come back in the batch's order.
    static func write(_ batch: [Request], on connection: any SQLExecutor) async throws -> [Device] {
        var insert: SQL = """
            INSERT INTO devices (uuid, app_id, platform_id, platform_type, token, os, os_version, device_alias, device_model,
                device_manufacturer, custom_user_id, time_zone, active, created_at, updated_at) VALUES
            """
        for (index, request) in batch.enumerated() {
            let device = request.written
            insert.append(
                """
                \(unsafeRaw: index == 0 ? "" : ",") (\(device.uuid), \(device.applicationID), \(device.platformID),
                \(device.platformType.rawValue), \(device.registrationToken), \(device.os), \(device.osVersion),
                \(device.deviceAlias), \(device.deviceModel), \(device.deviceManufacturer), \(device.customUserID),
                \(request.registration.timeZone.applied(to: nil)), 1,
                \(device.createdAt), \(device.updatedAt))
                """)
        }
        insert.append(
            """
             ON CONFLICT (platform_id, token) DO UPDATE SET
                os = excluded.os, os_version = excluded.os_version, device_alias = excluded.device_alias,
                device_model = excluded.device_model, device_manufacturer = excluded.device_manufacturer,
                custom_user_id = excluded.custom_user_id, time_zone = excluded.time_zone, active = 1, updated_at = excluded.updated_at
            RETURNING \(unsafeRaw: returnedColumns)
            """)
        let devices = try devices(for: batch, from: try await connection.query(insert))

        let reRegistered = zip(batch, devices).filter { $0.0.candidate != $0.1.uuid }.map(\.1.id)
        if !reRegistered.isEmpty {
            try await connection.query("DELETE FROM device_tags WHERE device_id IN (\(list: reRegistered))")
        }
        var rows: [DeviceTagRow] = []
        for (request, device) in zip(batch, devices) {
            for tag in request.tags {
                rows.append(DeviceTagRow(deviceID: device.id, applicationID: request.platform.applicationID, tag: tag))
            }
        }
        try await DeviceRepository.subscribe(rows, time: batch.map(\.time).max() ?? 0, on: connection)
        return devices
    }

    /// The batch's devices in its order, from the upsert's rows (`returnedColumns`, in any order).
    static func devices(for batch: [Request], from rows: [SQLRow]) throws -> [Device] {
        var byKey: [DeviceKey: SQLRow] = [:]
        byKey.reserveCapacity(rows.count)
        for row in rows {
            byKey[DeviceKey(platformID: try row.uuid("platform_id"), token: try row.string("token"))] = row
        }
        var devices: [Device] = []
        devices.reserveCapacity(batch.count)
        for request in batch {
            guard let row = byKey[DeviceKey(platformID: request.platform.id, token: request.token)] else {
                throw StoreError(reason: .unknown("upsert"), message: "the device upsert returned no row for a registration")
            }
            devices.append(try request.answer(row))
        }
        return devices
    }
}
