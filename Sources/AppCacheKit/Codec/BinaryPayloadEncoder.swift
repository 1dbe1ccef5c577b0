import Foundation

/// Encodes an `Encodable` value into the binary format (``BinaryFormat``), streaming into one
/// buffer, and estimates the memory the value takes once decoded.
///
/// One encoder object per call does all the work: containers are small structs holding an
/// unmanaged reference to it and the number of their state there (no intermediate tree, and a
/// keyed container's box is reused from item to item, see ``KeyTypeTable``), each key's name
/// is written once into the key table, and a synthesized `CodingKeys` enum (a one-byte value)
/// finds its key index through a per-type table indexed by that byte instead of hashing its
/// name per field.
///
/// Streaming asks that a container be written to only while it is the innermost one still
/// open, which is what synthesized and ordinary hand-written `encode(to:)` do. Writing to a
/// container after one nested in it was closed (interleaving) throws
/// ``BinaryEncodingUnsupported``, and the cache falls back to JSON for that collection.
final class BinaryPayloadEncoder: Encoder {
    /// The encoder's mutable state, in memory it allocates: reached through a pointer, it needs
    /// no dynamic exclusivity checks, which stored properties of a class would pay on every
    /// field (they were a third of the encoding time).
    private struct State {
        var writer: ByteWriter
        var keyNames: [String] = []
        /// The key indexes by name, once there are more names than ``BinaryFormat/linearKeyLimit``.
        var keyIndexes: [String: Int] = [:]
        /// The key types met: each one-byte key type's values' key indexes (-1: not yet
        /// interned), and their reusable containers.
        var keyTypes = KeyTypeTable(unknownIndex: -1)
        /// The keyed containers' states.
        var frames = FrameBuffer<KeyedFrame>()
        /// The containers still open, innermost last.
        var open: [OpenContainer] = []
        var nextContainerID: UInt32 = 0
        /// Where the value whose `encode(to:)` is running starts (its first container goes there).
        var valueStart = -1
        /// An estimate of the bytes the encoded value takes in memory once decoded.
        var decodedSize = 0
        /// The innermost open container's id (0: none), checked before every write.
        var topID: UInt32 = 0
        /// How many values' `encode(to:)` are running, one inside the other (super encoders
        /// in use count too).
        var depth = 0
        /// Whether a super encoder went past ``BinaryFormat/maximumDepth``: every write to a
        /// container throws from then on (``topID`` stays an id no container has).
        var tooDeep = false
        /// Why the value cannot be streamed, when a method that cannot throw found out: the
        /// encoding then fails (at the latest in ``finish()``) and the cache writes JSON.
        var unsupported: String?
        /// By key index, the id of the container that last wrote a field with that key: a
        /// key written twice in one container is seen at once, whatever the container's size.
        var lastWriters: [UInt32] = []
    }

    private let state: UnsafeMutablePointer<State>
    private let specialTypes = BinaryFormat.SpecialTypes.shared
    private let reusesBoxes = KeyTypeTable.boxesAreReusable

    /// A keyed container's state: where it is among the open containers, its id, and its key
    /// type's index table.
    struct KeyedFrame {
        var depth: Int
        var id: UInt32
        var indexes: UnsafeMutablePointer<Int32>?
    }

    var writer: ByteWriter {
        _read { yield state.pointee.writer }
        _modify { yield &state.pointee.writer }
    }

    private var keyNames: [String] {
        _read { yield state.pointee.keyNames }
        _modify { yield &state.pointee.keyNames }
    }

    private var keyIndexes: [String: Int] {
        _read { yield state.pointee.keyIndexes }
        _modify { yield &state.pointee.keyIndexes }
    }

    private var open: [OpenContainer] {
        _read { yield state.pointee.open }
        _modify { yield &state.pointee.open }
    }

    private var nextContainerID: UInt32 {
        get { state.pointee.nextContainerID }
        set { state.pointee.nextContainerID = newValue }
    }

    private var valueStart: Int {
        get { state.pointee.valueStart }
        set { state.pointee.valueStart = newValue }
    }

    /// An estimate of the bytes the encoded value takes in memory once decoded.
    private(set) var decodedSize: Int {
        get { state.pointee.decodedSize }
        set { state.pointee.decodedSize = newValue }
    }

    struct OpenContainer {
        var tagOffset: Int
        var isUnkeyed: Bool
        var id: UInt32
        var count: UInt32 = 0
        /// Whether a key came twice (see ``dropRepeatedKeys(ofBodyAt:)``).
        var repeatsKey = false
    }

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(capacityHint: Int) {
        state = .allocate(capacity: 1)
        state.initialize(to: State(writer: ByteWriter(capacity: capacityHint)))
    }

    deinit {
        state.pointee.writer.deallocate()
        state.pointee.keyTypes.deallocate()
        state.pointee.frames.deallocate()
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// The payload for `value`, and an estimate of its decoded size in bytes.
    ///
    /// - Throws: what `value.encode(to:)` throws; ``BinaryEncodingUnsupported`` for
    ///   interleaved containers or a container over 4 GiB.
    static func encode<T: Encodable>(_ value: T, capacityHint: Int = 4096) throws -> (payload: Data, decodedSize: Int) {
        let encoder = BinaryPayloadEncoder(capacityHint: capacityHint)
        try encoder.encodeValue(value)
        encoder.decodedSize += MemoryLayout<T>.stride
        return try encoder.finish()
    }

    /// The payload for `items`, the same bytes as ``encode(_:capacityHint:)`` of the array,
    /// and an estimate of their decoded size in bytes.
    ///
    /// - Throws: as ``encode(_:capacityHint:)``.
    static func encodeItems<Model: Encodable>(_ items: [Model], capacityHint: Int) throws -> (payload: Data, decodedSize: Int) {
        let encoder = BinaryPayloadEncoder(capacityHint: capacityHint)
        // Written here rather than through `Array.encode(to:)`, which reaches each item
        // through an existential container and a copy of it.
        let (depth, _) = encoder.openContainer(unkeyed: true)
        try items.withUnsafeBufferPointer { buffer in
            // Each item borrowed in place (a `for` loop copies each, retaining its fields).
            guard let base = buffer.baseAddress else { return }
            for index in 0..<buffer.count { try encoder.encodeValue((base + index).pointee) }
        }
        guard items.count <= Int(UInt32.max) else { throw BinaryEncodingUnsupported(reason: "more than 4 billion items") }
        encoder.open[depth].count = UInt32(items.count)
        try encoder.close(downTo: depth)
        encoder.decodedSize += items.count * MemoryLayout<Model>.stride + MemoryLayout<[Model]>.stride
        return try encoder.finish()
    }

    /// Appends the key table and its offset, and hands the payload over.
    private func finish() throws -> (payload: Data, decodedSize: Int) {
        // Too deep through super encoders, or containers used in a way a stream cannot follow,
        // even if no write came after to say so.
        if state.pointee.tooDeep { throw Self.nestedTooDeep(()) }
        if let reason = state.pointee.unsupported { throw BinaryEncodingUnsupported(reason: reason) }
        let tableOffset = writer.count
        guard tableOffset <= Int(UInt32.max) else { throw BinaryEncodingUnsupported(reason: "a payload over 4 GiB") }
        writer.varint(UInt64(keyNames.count))
        for name in keyNames { writer.string(name) }
        writer.fixed(UInt32(tableOffset))
        return (writer.takeData(), decodedSize)
    }

    // MARK: - Values

    /// Encodes one value at the current position: the special Foundation types by their own
    /// tags, anything else through its `encode(to:)`.
    func encodeValue<T: Encodable>(_ value: T) throws {
        guard let special = specialTypes.kind(of: ObjectIdentifier(T.self)) else {
            try encodeThroughCodable(value)
            return
        }
        switch special {
        case .date:
            writeDate(unsafeBitCast(value, to: Date.self))
        case .url:
            writeURL(unsafeBitCast(value, to: URL.self))
        case .uuid:
            let uuid = unsafeBitCast(value, to: UUID.self).uuid
            writer.byte(BinaryFormat.uuid)
            withUnsafeBytes(of: uuid) { writer.bytes($0) }
        case .strings:
            // Written here rather than through `Array.encode(to:)`, whose generic code costs
            // more than the strings themselves; the bytes are the same.
            let strings = unsafeBitCast(value, to: [String].self)
            let (depth, _) = openContainer(unkeyed: true)
            for string in strings { writeString(string) }
            open[depth].count = UInt32(truncatingIfNeeded: strings.count)
            decodedSize += strings.count * MemoryLayout<String>.stride
            try close(downTo: depth)
        case .data:
            writeData(unsafeBitCast(value, to: Data.self))
        case .decimal:
            writer.byte(BinaryFormat.decimal)
            let decimal = unsafeBitCast(value, to: Decimal.self)
            writeStringBody(decimal.isNaN ? BinaryFormat.decimalNaN : decimal.description)
        }
    }

    static func nestedTooDeep(_ value: Any) -> EncodingError {
        EncodingError.invalidValue(value, EncodingError.Context(
            codingPath: [],
            debugDescription: "The value nests more than \(BinaryFormat.maximumDepth) levels deep, deeper than the cache reads back."))
    }

    /// Counts a super encoder in use as a level of nesting: a type may encode its own kind
    /// through `superEncoder(forKey:)`, as deep as its data goes, without passing through
    /// ``encodeValue(_:)``. Past ``BinaryFormat/maximumDepth`` nothing can throw at once
    /// (`superEncoder` and `container(keyedBy:)` do not throw), so every container write
    /// throws from then on, which ends the recursion at its next field.
    func enterSuperEncoder() {
        state.pointee.depth += 1
        if state.pointee.depth > BinaryFormat.maximumDepth {
            state.pointee.tooDeep = true
            state.pointee.topID = .max
        }
    }

    /// Gives back the level ``enterSuperEncoder()`` counted.
    func leaveSuperEncoder() {
        state.pointee.depth -= 1
    }

    /// The id writes are checked against (see ``State/topID``).
    private func top(_ id: UInt32) -> UInt32 {
        state.pointee.tooDeep ? .max : id
    }

    /// Encodes a value through its own `encode(to:)`, closing what it opened.
    private func encodeThroughCodable<T: Encodable>(_ value: T) throws {
        // Nested as deep as the decoder reads back and no deeper: a payload past it could
        // never be read, and a value nested without end (a long linked list) would exhaust
        // the stack before it ended.
        state.pointee.depth += 1
        defer { state.pointee.depth -= 1 }
        guard state.pointee.depth <= BinaryFormat.maximumDepth else { throw Self.nestedTooDeep(value) }
        let depth = open.count
        let start = writer.count
        let savedStart = valueStart
        valueStart = start
        defer { valueStart = savedStart }
        try value.encode(to: self)
        try close(downTo: depth)
        if writer.count == start {
            // Nothing encoded: an empty keyed container, as JSON writes `{}`.
            writer.byte(BinaryFormat.keyed)
            writer.fixed(UInt32(0))
        }
    }

    @inline(__always)
    func writeString(_ value: String) {
        writer.byte(BinaryFormat.string)
        writeStringBody(value)
    }

    @inline(__always)
    private func writeStringBody(_ value: String) {
        let count = value.utf8.count
        if count > 15 { decodedSize += Self.heapSize(count + 33) }
        writer.string(value)
    }

    func writeDate(_ date: Date) {
        writer.byte(BinaryFormat.date)
        writer.fixed(date.timeIntervalSinceReferenceDate.bitPattern)
    }

    func writeURL(_ url: URL) {
        writer.byte(BinaryFormat.url)
        // A URL object and its parsed parts, besides its string (measured: about 310 bytes on
        // Linux for a short http URL).
        decodedSize += 310
        writeStringBody(url.absoluteString)
    }

    func writeData(_ data: Data) {
        writer.byte(BinaryFormat.data)
        if data.count > 14 { decodedSize += Self.heapSize(data.count + 32) }
        writer.varint(UInt64(data.count))
        data.withUnsafeBytes { writer.bytes($0) }
    }

    @inline(__always)
    func writeInt(_ value: Int64) {
        writer.byte(BinaryFormat.int)
        writer.varint(BinaryFormat.zigzag(value))
    }

    @inline(__always)
    func writeUInt(_ value: UInt64) {
        writer.byte(BinaryFormat.uint)
        writer.varint(value)
    }

    // `Int128` and `UInt128` exist where the standard library is Swift 6's (on Apple platforms,
    // an SDK of Xcode 16 or later; they run on iOS 18 and macOS 15): an older SDK has no such
    // types, nor the coding requirements that name them, so their members are left out there.
    #if !canImport(Darwin) || canImport(Swift, _version: 6.0)
    /// A 128-bit integer: as an `int` when it fits in 64 bits (so that a narrower property
    /// reads it, as JSON's numbers would be read), in 16 bytes otherwise.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    func writeInt128(_ value: Int128) {
        if let narrow = Int64(exactly: value) { return writeInt(narrow) }
        writer.byte(BinaryFormat.int128)
        writer.fixed(value)
    }

    /// An unsigned 128-bit integer: as a `uint` when it fits in 64 bits, in 16 bytes otherwise.
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    func writeUInt128(_ value: UInt128) {
        if let narrow = UInt64(exactly: value) { return writeUInt(narrow) }
        writer.byte(BinaryFormat.uint128)
        writer.fixed(value)
    }
    #endif

    @inline(__always)
    func writeDouble(_ value: Double) {
        writer.byte(BinaryFormat.double)
        writer.fixed(value.bitPattern)
    }

    @inline(__always)
    func writeFloat(_ value: Float) {
        writer.byte(BinaryFormat.float)
        writer.fixed(value.bitPattern)
    }

    @inline(__always)
    func writeBool(_ value: Bool) {
        writer.byte(value ? BinaryFormat.true : BinaryFormat.false)
    }

    func writeNil() {
        writer.byte(BinaryFormat.nil)
    }

    /// Counts one element of an array of `T` (its slot in the array's storage).
    @inline(__always)
    func countElement<T>(_ type: T.Type) {
        decodedSize += MemoryLayout<T>.stride
    }

    /// What `malloc` takes for `bytes`: rounded up to 16, plus its bookkeeping.
    static func heapSize(_ bytes: Int) -> Int {
        max(32, (bytes + 8 + 15) & ~15)
    }

    // MARK: - Keys

    /// The state of the keyed container with frame `number`.
    @inline(__always)
    func frame(_ number: Int) -> KeyedFrame {
        state.pointee.frames[number]
    }

    /// Writes the index of `key` in the key table, adding its name on first use.
    @inline(__always)
    func writeKey<Key: CodingKey>(_ key: Key, _ table: UnsafeMutablePointer<Int32>?) {
        if let table {
            // A one-byte key is fully described by its byte: the same byte, the same key.
            let byte = MemoryLayout<Key>.size == 0 ? 0 : Int(unsafeBitCast(key, to: UInt8.self))
            var index = table[byte]
            if index < 0 {
                index = Int32(intern(key.stringValue))
                table[byte] = index
            }
            writer.varint(UInt64(index))
            noteKey(Int(index))
        } else {
            // Keys of dictionaries and hand-written key types: hashed by name. A dictionary's
            // entry costs about this much in its storage.
            decodedSize += 48
            let index = intern(key.stringValue)
            writer.varint(UInt64(index))
            noteKey(index)
        }
    }

    /// Notes that the innermost open container (the one written to) has a field with key
    /// `index`, and whether it had one already (see ``dropRepeatedKeys(ofBodyAt:)``).
    @inline(__always)
    private func noteKey(_ index: Int) {
        let top = state.pointee.topID
        if state.pointee.lastWriters[index] == top {
            // No container open: everything was closed early (the encoding fails).
            if !open.isEmpty { open[open.count - 1].repeatsKey = true }
        } else {
            state.pointee.lastWriters[index] = top
        }
    }

    /// The key index of `name`, added to the key table if it is new.
    ///
    /// Up to ``BinaryFormat/linearKeyLimit`` names (most models) are compared in turn: short
    /// names compare as a few machine words, with no hashing and no table to allocate, which
    /// for a payload of one item was half of its encoding time. Past that, names are found by
    /// hash.
    private func intern(_ name: String) -> Int {
        let count = keyNames.count
        if count <= BinaryFormat.linearKeyLimit {
            if let index = keyNames.firstIndex(of: name) { return index }
            appendKeyName(name)
            if count == BinaryFormat.linearKeyLimit {
                for (index, known) in keyNames.enumerated() { keyIndexes[known] = index }
            }
            return count
        }
        if let index = keyIndexes[name] { return index }
        appendKeyName(name)
        keyIndexes[name] = count
        return count
    }

    /// Adds a name to the key table, with no container yet having written it.
    private func appendKeyName(_ name: String) {
        keyNames.append(name)
        state.pointee.lastWriters.append(0)
    }

    // MARK: - Containers

    /// Opens a container at the current position.
    func openContainer(unkeyed: Bool) -> (depth: Int, id: UInt32) {
        let tagOffset = writer.count
        writer.byte(unkeyed ? BinaryFormat.unkeyed : BinaryFormat.keyed)
        writer.fixed(UInt32(0))
        if unkeyed {
            writer.fixed(UInt32(0))
            decodedSize += 48  // an array's header and allocation
        }
        nextContainerID &+= 1
        open.append(OpenContainer(tagOffset: tagOffset, isUnkeyed: unkeyed, id: nextContainerID))
        state.pointee.topID = top(nextContainerID)
        return (open.count - 1, nextContainerID)
    }

    /// Makes the container at `depth` (named `id`) the innermost open one, closing those
    /// nested in it, before it is written to.
    ///
    /// - Throws: ``BinaryEncodingUnsupported`` when it was already closed (interleaving).
    @inline(__always)
    func prepare(_ depth: Int, _ id: UInt32) throws {
        if state.pointee.topID == id && state.pointee.open.count == depth + 1 { return }
        if state.pointee.tooDeep { throw Self.nestedTooDeep(()) }
        guard depth < open.count, open[depth].id == id else {
            throw BinaryEncodingUnsupported(reason: "a container written to after it was closed")
        }
        try close(downTo: depth + 1)
    }

    /// Counts one element of the unkeyed container at `depth`; nothing when that container
    /// was closed early (an interleaving found where nothing throws: the encoding fails).
    @inline(__always)
    func countElement(at depth: Int) {
        if depth < open.count { open[depth].count &+= 1 }
    }

    /// Closes every container above `depth` open containers, writing their lengths and counts.
    func close(downTo depth: Int) throws {
        while open.count > depth {
            let container = open.removeLast()
            let bodyStart = container.tagOffset + (container.isUnkeyed ? 9 : 5)
            if container.repeatsKey { try dropRepeatedKeys(ofBodyAt: bodyStart) }
            let length = writer.count - bodyStart
            guard length <= Int(UInt32.max) else { throw BinaryEncodingUnsupported(reason: "a container over 4 GiB") }
            writer.patch(UInt32(length), at: container.tagOffset + 1)
            if container.isUnkeyed {
                writer.patch(container.count, at: container.tagOffset + 5)
                // An empty array shares the standard library's empty storage: no allocation.
                if container.count == 0 { decodedSize -= 48 }
            }
        }
        state.pointee.topID = top(open.last?.id ?? 0)
    }

    /// Keeps only the last field of each key in the keyed container whose fields start at
    /// `bodyStart` and run to the end of the bytes written, as `JSONEncoder` keeps the last
    /// value encoded for a key (a subclass writing a key its superclass wrote in the same
    /// container, such as a type name, must win over it).
    ///
    /// Runs only for a container ``noteKey(_:)`` saw a key written to twice. O(n) in its fields.
    private func dropRepeatedKeys(ofBodyAt bodyStart: Int) throws {
        let reader = ByteReader(base: writer.base, count: writer.count)
        var fields: [(index: Int, start: Int, end: Int)] = []
        var offset = bodyStart
        do {
            while offset < writer.count {
                let (index, valueStart) = try reader.varint(at: offset)
                guard index < UInt64(keyNames.count) else { throw BinaryDecodingFailure.malformed("a key index outside the key table") }
                let end = try reader.end(ofValueAt: valueStart, valuesEnd: writer.count)
                guard end <= writer.count else { throw BinaryDecodingFailure.truncated }
                fields.append((Int(index), offset, end))
                offset = end
            }
        } catch {
            // Only a value written outside any field (a single value container used while a
            // keyed one is open) leaves a body that does not read as fields. `JSONEncoder`
            // traps on that use, so this is an error of its own, not a reason to write JSON.
            throw EncodingError.invalidValue((), EncodingError.Context(
                codingPath: [], debugDescription: "A value was encoded outside any field of a keyed container (\(error))."))
        }
        // From the last field back: a key already met is an earlier write, dropped.
        var met = [UInt64](repeating: 0, count: keyNames.count / 64 + 1)
        var keep = [Bool](repeating: true, count: fields.count)
        for number in fields.indices.reversed() {
            let index = fields[number].index
            let (word, bit) = (index / 64, UInt64(1) &<< UInt64(index % 64))
            if met[word] & bit != 0 { keep[number] = false }
            met[word] |= bit
        }
        var to = bodyStart
        for (number, field) in fields.enumerated() where keep[number] {
            let length = field.end - field.start
            if to != field.start { (writer.base + to).copyMemory(from: writer.base + field.start, byteCount: length) }
            to += length
        }
        writer.truncate(to: to)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let (depth, id) = container(unkeyed: false, forValueAt: valueStart)
        return keyedContainer(Key.self, depth: depth, id: id)
    }

    /// The container of the value starting at `start`: the one already open there, if it is
    /// of this kind, else a new one. A second request for it (a subclass's after its
    /// superclass's) writes to the same one, as `JSONEncoder` has it, even while a container
    /// the first nested in it is still open (that one closes when the container is next
    /// written to).
    @inline(__always)
    func container(unkeyed: Bool, forValueAt start: Int) -> (depth: Int, id: UInt32) {
        var depth = open.count - 1
        while depth >= 0 && open[depth].tagOffset > start { depth -= 1 }
        if depth >= 0, open[depth].tagOffset == start, open[depth].isUnkeyed == unkeyed { return (depth, open[depth].id) }
        return openContainer(unkeyed: unkeyed)
    }

    /// A keyed container writing to the open container at `depth` (named `id`), reusing the box
    /// of the last one made for `Key` when nobody holds it any more (see ``KeyTypeTable``).
    func keyedContainer<Key: CodingKey>(_ type: Key.Type, depth: Int, id: UInt32) -> KeyedEncodingContainer<Key> {
        let entry = state.pointee.keyTypes.entry(for: Key.self)
        return entry.container(
            for: KeyedFrame(depth: depth, id: id, indexes: entry.indexes), in: &state.pointee.frames, reusingBoxes: reusesBoxes
        ) { number in
            KeyedEncodingContainer(BinaryKeyedEncodingContainer<Key>(core: Unmanaged.passUnretained(self), frame: number))
        }
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let (depth, id) = container(unkeyed: true, forValueAt: valueStart)
        return BinaryUnkeyedEncodingContainer(core: Unmanaged.passUnretained(self), depth: depth, id: id)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        BinarySingleValueEncodingContainer(core: Unmanaged.passUnretained(self))
    }
}

/// Thrown when a value's `encode(to:)` uses containers in a way a streaming encoder cannot
/// follow; the cache then writes that collection as JSON.
struct BinaryEncodingUnsupported: Error {
    var reason: String
}

/// A keyed container: the encoder, unmanaged, and the number of its frame there.
struct BinaryKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let core: Unmanaged<BinaryPayloadEncoder>
    let frame: Int

    var codingPath: [any CodingKey] { [] }

    /// Runs `write` on the encoder, once this container is the innermost open one and the key
    /// is written. The encoder is borrowed, not retained: the caller of the encoding keeps it.
    @inline(__always)
    private func field(_ key: Key, _ write: (BinaryPayloadEncoder) throws -> Void) throws {
        try core._withUnsafeGuaranteedRef { encoder in
            let frame = encoder.frame(frame)
            try encoder.prepare(frame.depth, frame.id)
            encoder.writeKey(key, frame.indexes)
            try write(encoder)
        }
    }

    mutating func encodeNil(forKey key: Key) throws { try field(key) { $0.writeNil() } }
    mutating func encode(_ value: Bool, forKey key: Key) throws { try field(key) { $0.writeBool(value) } }
    mutating func encode(_ value: String, forKey key: Key) throws { try field(key) { $0.writeString(value) } }
    mutating func encode(_ value: Double, forKey key: Key) throws { try field(key) { $0.writeDouble(value) } }
    mutating func encode(_ value: Float, forKey key: Key) throws { try field(key) { $0.writeFloat(value) } }
    mutating func encode(_ value: Int, forKey key: Key) throws { try field(key) { $0.writeInt(Int64(value)) } }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try field(key) { $0.writeInt(Int64(value)) } }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try field(key) { $0.writeInt(Int64(value)) } }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try field(key) { $0.writeInt(Int64(value)) } }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try field(key) { $0.writeInt(value) } }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try field(key) { $0.writeUInt(UInt64(value)) } }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try field(key) { $0.writeUInt(UInt64(value)) } }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try field(key) { $0.writeUInt(UInt64(value)) } }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try field(key) { $0.writeUInt(UInt64(value)) } }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try field(key) { $0.writeUInt(value) } }
    #if !canImport(Darwin) || canImport(Swift, _version: 6.0)
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    mutating func encode(_ value: Int128, forKey key: Key) throws { try field(key) { $0.writeInt128(value) } }
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    mutating func encode(_ value: UInt128, forKey key: Key) throws { try field(key) { $0.writeUInt128(value) } }
    #endif

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try field(key) { try $0.encodeValue(value) }
    }

    /// The encoder, once this container is the innermost open one and `key` is written, for a
    /// container nested under it.
    private func claim(_ key: Key) -> BinaryPayloadEncoder {
        let encoder = core.takeUnretainedValue()
        let frame = encoder.frame(frame)
        if (try? encoder.prepare(frame.depth, frame.id)) == nil { encoder.markInterleaved() }
        // A second container under one key replaces the first, as a second value would (JSON
        // merges two of one kind, and traps on two of different kinds).
        encoder.writeKey(key, frame.indexes)
        return encoder
    }

    mutating func nestedContainer<NestedKey: CodingKey>(
        keyedBy keyType: NestedKey.Type, forKey key: Key
    ) -> KeyedEncodingContainer<NestedKey> {
        let encoder = claim(key)
        let (depth, id) = encoder.openContainer(unkeyed: false)
        return encoder.keyedContainer(NestedKey.self, depth: depth, id: id)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let encoder = claim(key)
        let (depth, id) = encoder.openContainer(unkeyed: true)
        return BinaryUnkeyedEncodingContainer(core: core, depth: depth, id: id)
    }

    mutating func superEncoder() -> any Encoder {
        let frame = core.takeUnretainedValue().frame(frame)
        return BinarySuperEncoder(core: core, depth: frame.depth, id: frame.id, key: .string("super"))
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        let frame = core.takeUnretainedValue().frame(frame)
        return BinarySuperEncoder(core: core, depth: frame.depth, id: frame.id, key: .key(key, frame.indexes))
    }
}

extension BinaryPayloadEncoder {
    /// Records that containers were used out of order (from a method that cannot throw), so
    /// that the encoding fails and the cache falls back to JSON.
    func markInterleaved() {
        markUnsupported("a container written to after it was closed")
        // Closing everything makes every container stale: its next write throws.
        try? close(downTo: 0)
    }

    /// Records (from a method that cannot throw) that the value cannot be streamed, so that
    /// the encoding fails and the cache falls back to JSON.
    func markUnsupported(_ reason: String) {
        if state.pointee.unsupported == nil { state.pointee.unsupported = reason }
    }
}

/// An unkeyed container; small enough (three words) to live inside the `any
/// UnkeyedEncodingContainer` it is returned as, with no box allocated.
struct BinaryUnkeyedEncodingContainer: UnkeyedEncodingContainer {
    let core: Unmanaged<BinaryPayloadEncoder>
    private let storedDepth: UInt32
    let id: UInt32
    private var storedCount: UInt32 = 0

    init(core: Unmanaged<BinaryPayloadEncoder>, depth: Int, id: UInt32) {
        self.core = core
        storedDepth = UInt32(truncatingIfNeeded: depth)
        self.id = id
    }

    var depth: Int { Int(storedDepth) }
    var count: Int { Int(storedCount) }

    var codingPath: [any CodingKey] { [] }

    /// Runs `write` on the (borrowed) encoder for one more element of `T`.
    @inline(__always)
    private mutating func element<T>(_ type: T.Type, _ write: (BinaryPayloadEncoder) throws -> Void) throws {
        storedCount &+= 1
        try core._withUnsafeGuaranteedRef { encoder in
            try encoder.prepare(depth, id)
            encoder.countElement(at: depth)
            encoder.countElement(T.self)
            try write(encoder)
        }
    }

    mutating func encodeNil() throws { try element(Int?.self) { $0.writeNil() } }
    mutating func encode(_ value: Bool) throws { try element(Bool.self) { $0.writeBool(value) } }
    mutating func encode(_ value: String) throws { try element(String.self) { $0.writeString(value) } }
    mutating func encode(_ value: Double) throws { try element(Double.self) { $0.writeDouble(value) } }
    mutating func encode(_ value: Float) throws { try element(Float.self) { $0.writeFloat(value) } }
    mutating func encode(_ value: Int) throws { try element(Int.self) { $0.writeInt(Int64(value)) } }
    mutating func encode(_ value: Int8) throws { try element(Int8.self) { $0.writeInt(Int64(value)) } }
    mutating func encode(_ value: Int16) throws { try element(Int16.self) { $0.writeInt(Int64(value)) } }
    mutating func encode(_ value: Int32) throws { try element(Int32.self) { $0.writeInt(Int64(value)) } }
    mutating func encode(_ value: Int64) throws { try element(Int64.self) { $0.writeInt(value) } }
    mutating func encode(_ value: UInt) throws { try element(UInt.self) { $0.writeUInt(UInt64(value)) } }
    mutating func encode(_ value: UInt8) throws { try element(UInt8.self) { $0.writeUInt(UInt64(value)) } }
    mutating func encode(_ value: UInt16) throws { try element(UInt16.self) { $0.writeUInt(UInt64(value)) } }
    mutating func encode(_ value: UInt32) throws { try element(UInt32.self) { $0.writeUInt(UInt64(value)) } }
    mutating func encode(_ value: UInt64) throws { try element(UInt64.self) { $0.writeUInt(value) } }
    #if !canImport(Darwin) || canImport(Swift, _version: 6.0)
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    mutating func encode(_ value: Int128) throws { try element(Int128.self) { $0.writeInt128(value) } }
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    mutating func encode(_ value: UInt128) throws { try element(UInt128.self) { $0.writeUInt128(value) } }
    #endif

    mutating func encode<T: Encodable>(_ value: T) throws {
        try element(T.self) { try $0.encodeValue(value) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let encoder = core.takeUnretainedValue()
        if (try? encoder.prepare(depth, id)) == nil { encoder.markInterleaved() }
        encoder.countElement(at: depth)
        storedCount &+= 1
        let (depth, id) = encoder.openContainer(unkeyed: false)
        return encoder.keyedContainer(NestedKey.self, depth: depth, id: id)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let encoder = core.takeUnretainedValue()
        if (try? encoder.prepare(depth, id)) == nil { encoder.markInterleaved() }
        encoder.countElement(at: depth)
        storedCount &+= 1
        let (depth, id) = encoder.openContainer(unkeyed: true)
        return BinaryUnkeyedEncodingContainer(core: core, depth: depth, id: id)
    }

    mutating func superEncoder() -> any Encoder {
        BinarySuperEncoder(core: core, depth: depth, id: id, key: .element)
    }
}

struct BinarySingleValueEncodingContainer: SingleValueEncodingContainer {
    let core: Unmanaged<BinaryPayloadEncoder>

    var codingPath: [any CodingKey] { [] }

    private var encoder: BinaryPayloadEncoder { core.takeUnretainedValue() }

    mutating func encodeNil() throws { encoder.writeNil() }
    mutating func encode(_ value: Bool) throws { encoder.writeBool(value) }
    mutating func encode(_ value: String) throws { encoder.writeString(value) }
    mutating func encode(_ value: Double) throws { encoder.writeDouble(value) }
    mutating func encode(_ value: Float) throws { encoder.writeFloat(value) }
    mutating func encode(_ value: Int) throws { encoder.writeInt(Int64(value)) }
    mutating func encode(_ value: Int8) throws { encoder.writeInt(Int64(value)) }
    mutating func encode(_ value: Int16) throws { encoder.writeInt(Int64(value)) }
    mutating func encode(_ value: Int32) throws { encoder.writeInt(Int64(value)) }
    mutating func encode(_ value: Int64) throws { encoder.writeInt(value) }
    mutating func encode(_ value: UInt) throws { encoder.writeUInt(UInt64(value)) }
    mutating func encode(_ value: UInt8) throws { encoder.writeUInt(UInt64(value)) }
    mutating func encode(_ value: UInt16) throws { encoder.writeUInt(UInt64(value)) }
    mutating func encode(_ value: UInt32) throws { encoder.writeUInt(UInt64(value)) }
    mutating func encode(_ value: UInt64) throws { encoder.writeUInt(value) }
    #if !canImport(Darwin) || canImport(Swift, _version: 6.0)
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    mutating func encode(_ value: Int128) throws { encoder.writeInt128(value) }
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    mutating func encode(_ value: UInt128) throws { encoder.writeUInt128(value) }
    #endif
    mutating func encode<T: Encodable>(_ value: T) throws { try encoder.encodeValue(value) }
}

/// The encoder `superEncoder()` hands out: what it encodes becomes the value of the `super`
/// key (or of the given key, or the next element), written when it is first used.
final class BinarySuperEncoder: Encoder {
    enum Slot {
        case string(String)
        case key(any CodingKey, UnsafeMutablePointer<Int32>?)
        case element
    }

    let core: Unmanaged<BinaryPayloadEncoder>
    /// Retained, so that the nesting level this encoder counts once used can be given back
    /// whenever it goes (see ``BinaryPayloadEncoder/enterSuperEncoder()``).
    private let encoder: BinaryPayloadEncoder
    let depth: Int
    let id: UInt32
    let slot: Slot

    init(core: Unmanaged<BinaryPayloadEncoder>, depth: Int, id: UInt32, key: Slot) {
        self.core = core
        encoder = core.takeUnretainedValue()
        self.depth = depth
        self.id = id
        slot = key
    }

    deinit {
        if valueStart >= 0 { encoder.leaveSuperEncoder() }
    }

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// Where the value goes, once the key is written (or the element counted); -1 before.
    private var valueStart = -1
    /// Writes the key (or counts the element) where the value goes, once.
    private func claim() -> BinaryPayloadEncoder {
        guard valueStart < 0 else { return encoder }
        if (try? encoder.prepare(depth, id)) == nil { encoder.markInterleaved() }
        switch slot {
        case .string(let name): encoder.writeKey(AnyKey(stringValue: name), nil)
        case .key(let key, let table): writeKey(key, table, encoder)
        case .element: encoder.countElement(at: depth)
        }
        valueStart = encoder.writer.count
        encoder.enterSuperEncoder()
        return encoder
    }

    private func writeKey<Key: CodingKey>(_ key: Key, _ table: UnsafeMutablePointer<Int32>?, _ encoder: BinaryPayloadEncoder) {
        encoder.writeKey(key, table)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let encoder = claim()
        let (depth, id) = encoder.container(unkeyed: false, forValueAt: valueStart)
        return encoder.keyedContainer(Key.self, depth: depth, id: id)
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let (depth, id) = claim().container(unkeyed: true, forValueAt: valueStart)
        return BinaryUnkeyedEncodingContainer(core: core, depth: depth, id: id)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        _ = claim()
        return BinarySingleValueEncodingContainer(core: core)
    }
}

/// A key known only by its name.
struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int?

    init(stringValue: String) {
        self.stringValue = stringValue
    }

    init(intValue: Int) {
        stringValue = String(intValue)
        self.intValue = intValue
    }
}
