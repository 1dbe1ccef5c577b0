/// What a coder knows about each `CodingKey` type it meets: the key indexes of its values and
/// the keyed container it made last, so that the next container of that type can reuse it.
///
/// Every keyed container the standard library hands out lives in a box object whose type is
/// generic over the container's: making one costs two generic-metadata look-ups, an allocation
/// and a free, about a quarter of the time a small model takes to encode or decode. A model's
/// `init(from:)` or `encode(to:)` lets its container go before the next item asks for one, so
/// the coder keeps the last box per key type and, when nobody else holds it any more, points it
/// at the new container's state (a frame in the coder's ``FrameBuffer``) and hands it out again.
struct KeyTypeTable {
    /// One key type's entry.
    final class Entry {
        /// The key index of each of a one-byte key type's 256 values (`nil` for other key
        /// types); the coder decides what an unknown index is.
        let indexes: UnsafeMutablePointer<Int32>?
        /// The box of the last keyed container made for this key type, if it may be reused.
        @exclusivity(unchecked) var box: AnyObject?
        /// The frame that box's container reads.
        @exclusivity(unchecked) var frame = 0

        init(indexes: UnsafeMutablePointer<Int32>?) {
            self.indexes = indexes
        }

        /// Whether ``box`` is there and held by nobody but this entry.
        @inline(__always)
        var boxIsFree: Bool {
            box != nil && isKnownUniquelyReferenced(&box)
        }

        /// A keyed container (of the encoder or the decoder) reading or writing `frame`: this
        /// entry's box pointed at the new frame when nobody holds it any more, else a new one,
        /// made by `make` from the frame's number and kept for next time.
        ///
        /// - Parameter reusingBoxes: ``KeyTypeTable/boxesAreReusable``; without it every
        ///   container is made afresh.
        @inline(__always)
        func container<Frame, Container>(
            for frame: Frame, in frames: inout FrameBuffer<Frame>, reusingBoxes: Bool, make: (Int) -> Container
        ) -> Container {
            if reusingBoxes && boxIsFree {
                frames[self.frame] = frame
                return unsafeBitCast(box.unsafelyUnwrapped, to: Container.self)
            }
            let number = frames.append(frame)
            let container = make(number)
            if reusingBoxes {
                box = unsafeBitCast(container, to: AnyObject.self)
                self.frame = number
            }
            return container
        }
    }

    /// Whether a `KeyedEncodingContainer` and a `KeyedDecodingContainer` are exactly one
    /// reference to their box, as in every standard library so far: only then are boxes kept
    /// and handed out again (otherwise every container is made afresh, which is always right).
    static var boxesAreReusable: Bool {
        MemoryLayout<KeyedDecodingContainer<AnyKey>>.size == MemoryLayout<AnyObject>.size
            && MemoryLayout<KeyedEncodingContainer<AnyKey>>.size == MemoryLayout<AnyObject>.size
            && MemoryLayout<KeyedDecodingContainer<AnyKey>>.alignment == MemoryLayout<AnyObject>.alignment
            && MemoryLayout<KeyedEncodingContainer<AnyKey>>.alignment == MemoryLayout<AnyObject>.alignment
    }

    /// What unknown entries of a new index table start as.
    private let unknownIndex: Int32
    private var entries: [ObjectIdentifier: Entry] = [:]
    /// The entries used last, searched before the dictionary: most containers are of a type
    /// met just before (an array's items and their parts).
    private var recent: [(type: ObjectIdentifier, entry: Entry)] = []

    init(unknownIndex: Int32) {
        self.unknownIndex = unknownIndex
    }

    /// The entry for `Key`, made on first use.
    mutating func entry<Key: CodingKey>(for type: Key.Type) -> Entry {
        let id = ObjectIdentifier(Key.self)
        for (known, entry) in recent where known == id { return entry }
        let entry: Entry
        if let known = entries[id] {
            entry = known
        } else {
            var indexes: UnsafeMutablePointer<Int32>?
            // A one-byte key (a synthesized `CodingKeys` enum) is fully described by its byte.
            if MemoryLayout<Key>.size <= 1 {
                let table = UnsafeMutablePointer<Int32>.allocate(capacity: 256)
                table.initialize(repeating: unknownIndex, count: 256)
                indexes = table
            }
            entry = Entry(indexes: indexes)
            entries[id] = entry
        }
        if recent.count == 4 { recent.removeFirst() }
        recent.append((id, entry))
        return entry
    }

    /// Lets go of every box kept for reuse: a box holds its coder, so one kept would keep the
    /// coder alive for ever. Called when a coding ends; containers made after are made afresh.
    func releaseBoxes() {
        for entry in entries.values { entry.box = nil }
    }

    /// Frees the index tables. Call once, last.
    func deallocate() {
        for entry in entries.values { entry.indexes?.deallocate() }
    }
}
