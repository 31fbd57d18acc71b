import HeraldCore

extension RegistrationBatcher {
    /// Writes the batch in one statement where the database can (`SQLDatabase.writeInOneStatement`);
    /// nil, having written nothing, where it cannot.
    static func writeInOneStatement(_ batch: [Request], on database: any SQLDatabase) async throws -> [Device]? {
        guard let rows = try await database.writeInOneStatement(RegistrationBatch(batch)) else { return nil }
        return try devices(for: batch, from: rows)
    }
}

extension RegistrationBatch {
    /// The requests' columns, in the batch's order.
    init(_ batch: [RegistrationBatcher.Request]) {
        for (index, request) in batch.enumerated() {
            let registration = request.registration
            uuid.append(request.candidate.lowercasedString)
            applicationID.append(request.platform.applicationID.lowercasedString)
            platformID.append(request.platform.id.lowercasedString)
            platformType.append(request.platform.type.rawValue)
            token.append(request.token)
            os.append(registration.os ?? DeviceRepository.defaultOS(request.platform.type))
            osVersion.append(registration.osVersion.applied(to: nil))
            deviceAlias.append(registration.deviceAlias.applied(to: nil))
            deviceModel.append(registration.deviceModel.applied(to: nil))
            deviceManufacturer.append(registration.deviceManufacturer.applied(to: nil))
            customUserID.append(registration.customUserID.applied(to: nil))
            timeZone.append(registration.timeZone.applied(to: nil))
            time.append(request.time)
            for name in request.tags {
                tagPosition.append(Int64(index + 1))
                tag.append(name)
            }
            batchTime = max(batchTime, request.time)
        }
    }
}
