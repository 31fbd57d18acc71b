extension Push {
    /// Refuses now what a provider would refuse later (a payload over its limit, a bad key):
    /// renders the push for every provider, with a receipt id's worth of room, and throws the
    /// first problem. Checked when a push is accepted or scheduled, so nothing bad is queued.
    package func checkRenderable(now: Int64) throws(ValidationError) {
        _ = try APNsRenderer.render(self, receiptID: APNsRenderer.receiptPlaceholder)
        _ = try FCMRenderer.render(self, receiptID: FCMRenderer.receiptPlaceholder, now: now)
        _ = try WebPushRenderer.render(self, receiptID: APNsRenderer.receiptPlaceholder, now: now)
        _ = try WNSRenderer.render(self, receiptID: WNSRenderer.receiptPlaceholder, now: now)
    }
}
