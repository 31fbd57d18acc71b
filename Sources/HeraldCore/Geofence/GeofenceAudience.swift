/// The devices a geofence change concerns: those of some platforms, either all of them or those
/// subscribed to one of some tags. Changes merge into one audience, which may grow wider (a
/// device told to sync for nothing syncs nothing) but never narrower.
package struct GeofenceAudience: Sendable, Equatable {
    package var platforms: Set<PlatformType>
    /// Lower-case tags; ignored when `everyone` is set.
    package var topics: Set<String>
    /// Every device of `platforms`, whatever its tags.
    package var everyone: Bool

    package init(platforms: Set<PlatformType>, topics: Set<String>, everyone: Bool) {
        self.platforms = platforms
        self.topics = everyone ? [] : topics
        self.everyone = everyone
    }

    /// The devices that monitor a geofence of this definition.
    package init(_ definition: GeofenceDefinition) {
        self.init(
            platforms: Set(definition.platform.platformTypes), topics: Set(definition.tags), everyone: definition.tags.isEmpty)
    }

    /// The devices of either audience.
    package func union(_ other: GeofenceAudience) -> GeofenceAudience {
        let everyone = everyone || other.everyone || topics.count + other.topics.count > Limits.pushTopics
        return GeofenceAudience(platforms: platforms.union(other.platforms), topics: topics.union(other.topics), everyone: everyone)
    }
}
