/// The decoder's side of HPACK's dynamic table (RFC 7541 §2.3.2, §4): entries newest first,
/// sized as their name's and value's octets plus 32, the oldest evicted to stay within the
/// current maximum size.
///
/// No allocation per entry: the octets of all entries lie in one byte array, appended at its
/// end, the oldest at the front; when an entry would not fit behind the others, the live bytes
/// (at most the table's size) move back to the start. The array holds twice the largest size,
/// so a move happens at most once per that many octets added.
struct HPACKDynamicTable {
    private struct Entry {
        /// Where the name starts in `storage`; the value follows it.
        var offset: Int
        var nameLength: Int
        var valueLength: Int
    }

    /// The limit a size update may not exceed: the SETTINGS_HEADER_TABLE_SIZE this client announced.
    let capacity: Int
    /// The current maximum size (the last dynamic table size update, or `capacity`).
    private(set) var maximumSize: Int
    /// The entries' sizes summed.
    private(set) var size = 0
    private var storage: [UInt8]
    /// Oldest first, from `first` on.
    private var entries: [Entry] = []
    private var first = 0

    init(capacity: Int) {
        self.capacity = capacity
        self.maximumSize = capacity
        self.storage = []
        storage.reserveCapacity(2 * capacity)
    }

    var count: Int { entries.count - first }

    /// Appends the name of the entry at dynamic index `index` (1 is the newest) to `name`, and
    /// its value to `value` when `withValue`; false past the end.
    func append(entry index: Int, name: inout [UInt8], value: inout [UInt8], withValue: Bool) -> Bool {
        guard index >= 1, index <= count else { return false }
        let entry = entries[entries.count - index]
        name.append(contentsOf: storage[entry.offset..<entry.offset + entry.nameLength])
        if withValue {
            let start = entry.offset + entry.nameLength
            value.append(contentsOf: storage[start..<start + entry.valueLength])
        }
        return true
    }

    /// Sets the maximum size (a dynamic table size update, already checked against `capacity`),
    /// evicting what no longer fits.
    mutating func setMaximumSize(_ newSize: Int) {
        maximumSize = newSize
        evict(toFit: 0)
    }

    /// Adds an entry. One larger than the maximum size empties the table and is not added
    /// (RFC 7541 §4.4).
    mutating func add(name: some Collection<UInt8>, value: some Collection<UInt8>) {
        let entrySize = name.count + value.count + 32
        evict(toFit: entrySize)
        guard entrySize <= maximumSize else { return }
        let start = entries.count > first ? entries[first].offset : storage.count
        if storage.count + name.count + value.count > 2 * capacity {
            // The live bytes take at most `capacity` - 32: after the move the new entry fits.
            storage.removeSubrange(0..<start)
            for position in first..<entries.count { entries[position].offset -= start }
        }
        entries.append(Entry(offset: storage.count, nameLength: name.count, valueLength: value.count))
        storage.append(contentsOf: name)
        storage.append(contentsOf: value)
        size += entrySize
    }

    /// Evicts the oldest entries until `extra` more octets fit within the maximum size.
    private mutating func evict(toFit extra: Int) {
        while size + extra > maximumSize, first < entries.count {
            let oldest = entries[first]
            size -= oldest.nameLength + oldest.valueLength + 32
            first += 1
        }
        if first == entries.count {
            entries.removeAll(keepingCapacity: true)
            first = 0
            storage.removeAll(keepingCapacity: true)
        } else if first >= 64, first * 2 > entries.count {
            entries.removeFirst(first)
            first = 0
        }
    }
}
