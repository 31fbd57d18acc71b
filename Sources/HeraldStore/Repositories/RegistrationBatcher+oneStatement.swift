import HeraldCore

extension RegistrationBatcher {
    /// Writes the batch in one statement where the database can (`SQLDatabase.writeInOneStatement`);
    /// nil, having written nothing, where it cannot.
    static func writeInOneStatement(_ batch: [Request], on database: any SQLDatabase) async throws -> [Device]? {
        guard let rows = try await database.writeInOneStatement(RegistrationBatch(batch)) else { return nil }
        var devices: [Device?] = Array(repeating: nil, count: batch.count)
        for row in rows {
            let position = Int(try row.int("position"))
            guard devices.indices.contains(position - 1) else {
                throw StoreError(reason: .unknown("upsert"), message: "the registration batch returned a row for position \(position)")
            }
            devices[position - 1] = try batch[position - 1].answer(row)
        }
        return try devices.map { device in
            guard let device else {
                throw StoreError(reason: .unknown("upsert"), message: "the device upsert returned no row for a registration")
            }
            return device
        }
    }
}

extension RegistrationBatch {
    /// The requests' columns, in the batch's order.
    init(_ batch: [RegistrationBatcher.Request]) {
        for (index, request) in batch.enumerated() {
            let device = request.written
            uuid.append(device.uuid.lowercasedString)
            applicationID.append(device.applicationID.lowercasedString)
            platformID.append(device.platformID.lowercasedString)
            platformType.append(device.platformType.rawValue)
            token.append(device.registrationToken)
            os.append(device.os)
            osVersion.append(device.osVersion)
            deviceAlias.append(device.deviceAlias)
            deviceModel.append(device.deviceModel)
            deviceManufacturer.append(device.deviceManufacturer)
            customUserID.append(device.customUserID)
            timeZone.append(request.registration.timeZone.applied(to: nil))
            time.append(request.time)
            for name in request.tags {
                tagPosition.append(Int64(index + 1))
                tag.append(name)
            }
            batchTime = max(batchTime, request.time)
        }
    }
}
