import Foundation
import HeraldCore

/// The `apns-id`s of a batch's notifications, chosen by Herald rather than left to APNs.
///
/// Apple lets the provider name each notification with a UUID in `apns-id` and echoes it back;
/// without one, APNs makes one up. Sending it costs the server less (the h2o APNs sink spends
/// markedly less CPU a request with one; docs/benchmarks-history.md), since an APNs-shaped
/// server has to make the UUID somewhere.
///
/// One random version-4 UUID per batch (Foundation's, from the system's random source), and the
/// request's index in the batch XORed into its last 48 bits (the node field, clear of the
/// version and variant bits): the ids of one batch differ from each other by construction, and
/// from other batches' as random UUIDs do. They name notifications; they are not secrets.
struct APNsNotificationIDs {
    private let base: uuid_t

    init() {
        base = UUID().uuid
    }

    /// The id of the batch's `index`th notification (`index` below 2^48).
    func id(_ index: Int) -> UUID {
        var bytes = base
        withUnsafeMutableBytes(of: &bytes) { raw in
            for byte in 0..<6 {
                raw[15 - byte] ^= UInt8(truncatingIfNeeded: index >> (8 * byte))
            }
        }
        return UUID(uuid: bytes)
    }
}
