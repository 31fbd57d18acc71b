/// A location group's fields after validation: all of them for a create, those given for an update.
package struct LocationGroupChanges: Sendable, Equatable {
    package var name: String?
    package var description: String?
    /// Without duplicates, in the order given; the store checks that they exist in the application.
    package var locationIDs: [Int64]?

    package init(name: String? = nil, description: String? = nil, locationIDs: [Int64]? = nil) {
        self.name = name
        self.description = description
        self.locationIDs = locationIDs
    }
}
