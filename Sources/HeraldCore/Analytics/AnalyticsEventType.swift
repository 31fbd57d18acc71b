/// The event types the PCF SDKs post to `/v1/analytics`. Others are stored as they come.
package enum AnalyticsEventType {
    /// A device received a push (`receiptId` names it).
    package static let received = "pcf_push_event_type_push_notification_received"
    /// The user opened a push.
    package static let opened = "pcf_push_event_type_push_notification_opened"
    /// A device entered or left one of a geofence's locations (`geofenceId`, `locationId`).
    package static let geofenceTriggered = "pcf_push_event_type_geofence_location_triggered"
    /// A device received a heartbeat push.
    package static let heartbeat = "pcf_push_event_type_heartbeat"
}
