import Foundation
import HeraldCore
import NIOCore

/// An answer of `messages:send`, read: the message name of a 200, or Google's error shape
/// `{"error":{"code":…,"message":…,"status":…,"details":[…]}}`, where the FCM-specific code is in
/// the detail of type `google.firebase.fcm.v1.FcmError` and bad fields in `google.rpc.BadRequest`.
struct FCMErrorBody {
    static let fcmErrorType = "type.googleapis.com/google.firebase.fcm.v1.FcmError"
    static let badRequestType = "type.googleapis.com/google.rpc.BadRequest"

    var status: Int
    /// `name` of a 200.
    var messageName: String?
    /// The `FcmError` code if there is one, else the API status, else `HTTP <status>`.
    var reason: FCMErrorReason
    var message: String
    /// The `field`s of `BadRequest.fieldViolations`.
    var badFields: [String]

    init(status: Int, body: ByteBuffer) {
        self.status = status
        let json = (try? JSONDecoder().decode(JSONValue.self, from: Data(body.readableBytesView)))?.objectValue ?? [:]
        messageName = json["name"]?.stringValue
        let error = json["error"]?.objectValue ?? [:]
        var errorCode: String?
        var badFields: [String] = []
        if case .array(let details)? = error["details"] {
            for detail in details.compactMap(\.objectValue) {
                switch detail["@type"]?.stringValue {
                case Self.fcmErrorType?:
                    errorCode = detail["errorCode"]?.stringValue
                case Self.badRequestType?:
                    if case .array(let violations)? = detail["fieldViolations"] {
                        badFields += violations.compactMap { $0.objectValue?["field"]?.stringValue }
                    }
                default:
                    break
                }
            }
        }
        self.badFields = badFields
        reason = FCMErrorReason(errorCode ?? error["status"]?.stringValue ?? "HTTP \(status)")
        message = error["message"]?.stringValue ?? (status == 200 ? "" : "HTTP \(status)")
    }

    var rejection: FCMRejection { FCMRejection(status: status, reason: reason, message: message) }

    /// An `INVALID_ARGUMENT` about the target token rather than the message ("The registration
    /// token is not a valid FCM registration token", or a bad `message.token` field).
    var isAboutTheRegistrationToken: Bool {
        badFields.contains("message.token") || message.lowercased().contains("registration token")
    }
}
