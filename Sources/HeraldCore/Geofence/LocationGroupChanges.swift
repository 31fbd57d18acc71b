/// A location group's fields after validation: all of them for a create, those given for an update.
public struct LocationGroupChanges: Sendable, Equatable {
    public var name: String?
    public var description: String?
    /// Without duplicates, in the order given; the store checks that they exist in the application.
    public var locationIDs: [Int64]?

    public init(name: String? = nil, description: String? = nil, locationIDs: [Int64]? = nil) {
        self.name = name
        self.description = description
        self.locationIDs = locationIDs
    }
}
