import HeraldCore

import struct Foundation.UUID

extension PushRepository {
    /// The devices of a batch that still exist, in id order; with `quietTime`, each with its
    /// time zone and quiet time (only a push whose quiet time matters reads them).
    package func targets(_ ids: [Int64], quietTime: Bool = false) async throws -> [DeliveryTarget] {
        guard !ids.isEmpty else { return [] }
        if quietTime { return try await targetsWithQuietTime(ids) }
        // One row for each platform among the devices, which joins their ids and tokens
        // (`joinedTargets`): a row for each device costs the database and Herald far more than
        // the device itself (docs/decisions/0006-joined-rows-fanout.md).
        let rows = try await database.query(
            """
            SELECT platform_id, platform_type, \(unsafeRaw: Self.joinedTargets(database.dialect)) AS devices
            FROM devices WHERE \(Self.among(ids, column: "id", database.dialect)) GROUP BY platform_id, platform_type
            """)
        var targets: [DeliveryTarget] = []
        targets.reserveCapacity(ids.count)
        for row in rows {
            let platformID = try row.uuid("platform_id")
            let type = PlatformType(rawValue: try row.string("platform_type")) ?? .ios
            guard
                Self.scanJoinedTargets(
                    try row.string("devices"),
                    {
                        targets.append(DeliveryTarget(id: $0, platformID: platformID, platformType: type, token: $1))
                    })
            else {
                throw StoreError.decoding(column: "devices", expected: "id:length:token, repeated")
            }
        }
        // The aggregate's order is the database's; the one a batch is sent in is the ids'.
        targets.sort { $0.id < $1.id }
        return targets
    }

    /// `targets` with each device's zone and quiet time, a row a device.
    private func targetsWithQuietTime(_ ids: [Int64]) async throws -> [DeliveryTarget] {
        try await database.query(
            """
            SELECT id, platform_id, platform_type, token, time_zone, quiet_time FROM devices
            WHERE \(Self.among(ids, column: "id", database.dialect)) ORDER BY id
            """
        ).map { row in
            var target = DeliveryTarget(
                id: try row.int("id"), platformID: try row.uuid("platform_id"),
                platformType: PlatformType(rawValue: try row.string("platform_type")) ?? .ios, token: try row.string("token"))
            target.timeZone = try row.optionalString("time_zone")
            target.quietTime = try row.optionalString("quiet_time").flatMap(QuietTime.init(stored:))
            return target
        }
    }

    /// The aggregate that joins each device of a group as `<id>:<the token's length in
    /// bytes>:<token>`, with nothing between them: the lengths let a token hold any character.
    static func joinedTargets(_ dialect: SQLDialect) -> String {
        switch dialect {
        case .sqlite: "group_concat(id || ':' || length(CAST(token AS BLOB)) || ':' || token, '')"
        case .postgres: "string_agg(id || ':' || octet_length(token) || ':' || token, '')"
        }
    }

    /// Reads `joinedTargets`' text, calling `device` with each id and token; false (having
    /// stopped) where the text does not follow the form.
    static func scanJoinedTargets(_ text: String, _ device: (Int64, String) -> Void) -> Bool {
        var text = text
        return text.withUTF8 { bytes in
            var index = 0
            /// The decimal number that ends at the next ':', which is passed.
            func number() -> Int64? {
                let start = index
                while index < bytes.count, bytes[index] != UInt8(ascii: ":") { index += 1 }
                guard index < bytes.count else { return nil }
                defer { index += 1 }
                return Self.integer(bytes, start..<index)
            }
            while index < bytes.count {
                guard let id = number(), let length = number(), length >= 0, length <= bytes.count - index else { return false }
                let end = index + Int(length)
                device(id, String(decoding: UnsafeBufferPointer(rebasing: bytes[index..<end]), as: UTF8.self))
                index = end
            }
            return true
        }
    }
}
