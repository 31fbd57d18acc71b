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

    struct Request: Sendable {
        let platform: Platform
        let token: String
        let registration: Registration
        let tags: [String]
        let time: Int64
        let candidate: UUID
        let complete: @Sendable (Result<Device, any Error>) -> Void
    }

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
    /// Batches written at once. One keeps batches large, which is what makes them cheap; on
    /// PostgreSQL four were measured no faster and with a worse p99.
    private let concurrentBatches = 1

    init(database: any SQLDatabase) {
        self.database = database
    }

    /// Registers one device, batched with whatever else arrives meanwhile.
    func register(platform: Platform, token: String, registration: Registration, tags: [String], time: Int64) async throws -> Device {
        try await withCheckedThrowingContinuation { continuation in
            let request = Request(
                platform: platform, token: token, registration: registration, tags: tags, time: time, candidate: .timeOrdered(milliseconds: time),
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
                    if batch.count < Self.maximumBatch, seen.insert(DeviceKey(platformID: request.platform.id, token: request.token)).inserted {
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
            let registration = request.registration
            let os = registration.os ?? DeviceRepository.defaultOS(request.platform.type)
            insert.append("""
                \(unsafeRaw: index == 0 ? "" : ",") (\(request.candidate), \(request.platform.applicationID), \(request.platform.id),
                \(request.platform.type.rawValue), \(request.token), \(os), \(registration.osVersion.applied(to: nil)),
                \(registration.deviceAlias.applied(to: nil)), \(registration.deviceModel.applied(to: nil)),
                \(registration.deviceManufacturer.applied(to: nil)), \(registration.customUserID.applied(to: nil)),
                \(registration.timeZone.applied(to: nil)), 1,
                \(request.time), \(request.time))
                """)
        }
        insert.append("""
             ON CONFLICT (platform_id, token) DO UPDATE SET
                os = excluded.os, os_version = excluded.os_version, device_alias = excluded.device_alias,
                device_model = excluded.device_model, device_manufacturer = excluded.device_manufacturer,
                custom_user_id = excluded.custom_user_id, time_zone = excluded.time_zone, active = 1, updated_at = excluded.updated_at
            RETURNING \(unsafeRaw: DeviceRepository.unqualifiedColumns)
            """)
        let devices = try devices(for: batch, from: try await connection.query(insert))

        let reRegistered = zip(batch, devices).filter { $0.0.candidate != $0.1.uuid }.map(\.1.id)
        if !reRegistered.isEmpty {
            try await connection.query("DELETE FROM device_tags WHERE device_id IN (\(list: reRegistered))")
        }
        var rows: [DeviceTagRow] = []
        for (request, device) in zip(batch, devices) {
            for tag in request.tags { rows.append(DeviceTagRow(deviceID: device.id, applicationID: request.platform.applicationID, tag: tag)) }
        }
        try await DeviceRepository.subscribe(rows, time: batch.map(\.time).max() ?? 0, on: connection)
        return devices
    }

    /// The upserted rows in the batch's order, each with the tags it was registered with.
    static func devices(for batch: [Request], from rows: [SQLRow]) throws -> [Device] {
        var byKey: [DeviceKey: Device] = [:]
        byKey.reserveCapacity(rows.count)
        for row in rows {
            let device = try DeviceRepository.device(row)
            byKey[DeviceKey(platformID: device.platformID, token: device.registrationToken)] = device
        }
        var devices: [Device] = []
        devices.reserveCapacity(batch.count)
        for request in batch {
            guard var device = byKey[DeviceKey(platformID: request.platform.id, token: request.token)] else {
                throw StoreError(reason: .unknown("upsert"), message: "the device upsert returned no row for a registration")
            }
            device.tags = request.tags.sorted()
            devices.append(device)
        }
        return devices
    }
}
