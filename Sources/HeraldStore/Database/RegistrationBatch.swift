/// New registrations to write together, column by column: what `SQLDatabase.writeInOneStatement`
/// takes. Row `i` of the device columns is the batch's `i`-th registration; each subscription
/// names its registration by that row's position, counted from 1.
package struct RegistrationBatch: Sendable {
    var uuid: [String] = []
    var applicationID: [String] = []
    var platformID: [String] = []
    var platformType: [String] = []
    var token: [String] = []
    var os: [String] = []
    var osVersion: [String?] = []
    var deviceAlias: [String?] = []
    var deviceModel: [String?] = []
    var deviceManufacturer: [String?] = []
    var customUserID: [String?] = []
    var timeZone: [String?] = []
    /// Each registration's time, epoch milliseconds.
    var time: [Int64] = []
    /// Each subscription's registration: its row in the device columns, counted from 1.
    var tagPosition: [Int64] = []
    var tag: [String] = []
    /// The latest registration's time, epoch milliseconds: topics expired by then block the batch.
    var batchTime: Int64 = 0
}
