import Foundation

/// Encodes an `Encodable` value into the binary format (``BinaryFormat``), streaming into one
/// buffer, so that the binary decoder gives back what `JSONDecoder` gives for what
/// `JSONEncoder` writes of the same value; and estimates the memory the value takes decoded.
///
/// One encoder object per call does all the work: containers are small structs holding the
/// encoder and the number of their state there (no intermediate tree, and a keyed container's
/// box is reused from item to item, see ``KeyTypeTable``), each key's name is written once into
/// the key table, and a synthesized `CodingKeys` enum (a one-byte value) finds its key index
/// through a per-type table indexed by that byte instead of hashing its name per field.
///
/// `JSONEncoder` builds a tree and writes it last, so a container can be written to in any
/// order and asked for again; a stream follows what synthesized and ordinary hand-written
/// `encode(to:)` do, and more:
/// - a container asked for again at the same value, or a nested container asked for again
///   under the same key, is the same container (JSON merges them), reopened when it was the
///   last thing written;
/// - a key written twice keeps its last value, as in JSON;
/// - a write that throws leaves no trace (JSON only stores a value once it encoded), so a
///   `try?` around a field that failed half-way skips the field;
/// - a super encoder's value goes where JSON puts it (at the key, or at the index the super
///   encoder was asked for at), `{}` when it encoded nothing;
/// - `Float` and `Double` that are not finite are refused with JSON's error, at JSON's path.
///
/// What a stream cannot follow (writing to a container after one nested in it was closed, a
/// super encoder's value that must go before elements written since) throws
/// ``BinaryEncodingUnsupported``, and the cache writes that collection as JSON, which is what
/// JSON gives by construction. What would trap in `JSONEncoder` (a single value encoded twice,
/// a keyed container where an unkeyed one is) throws an `EncodingError` instead.
final class BinaryPayloadEncoder: Encoder {
    /// The value whose `encode(to:)` runs: where it starts, and whether a single value
    /// container encoded it (JSON traps on a second; a container asked for after one that is
    /// keyed or unkeyed merges with it).
    struct ValueSlot {
        var start: Int
        var single = false
    }

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
        /// The value whose `encode(to:)` is running.
        var value = ValueSlot(start: -1)
        /// An estimate of the bytes the encoded value takes in memory once decoded.
        var decodedSize = 0
        /// The innermost open container's id (0: none; `.max` once nothing may be written),
        /// checked before every write.
        var topID: UInt32 = 0
        var path = CodingPathStack()
        /// Where containers nested deeper than JSON writes were opened (-1: none): the
        /// encoding then fails as JSON's does, unless a write that throws takes them back.
        var tooDeepAt = -1
        /// Why the value cannot be streamed, when a method that cannot throw found out: the
        /// encoding then fails (at the latest in ``finish()``) and the cache writes JSON.
        var unsupported: String?
        /// What `JSONEncoder` would have trapped on: the encoding fails with this error.
        var invalid: EncodingError?
        /// Whether nothing may be written any more: ``invalid`` is set, or the encoding ended.
        /// Read on every container change, where testing an optional error (an enum of
        /// existentials) would cost a call.
        var failed = false
        /// How many writes that threw were taken back (a super encoder that claimed its place
        /// before one cannot trust it).
        var rollbacks = 0
        /// Whether keyed containers' boxes are kept for reuse: until the encoding ends (a box
        /// holds the encoder, so one kept after would keep it alive for ever).
        var reusesBoxes = KeyTypeTable.boxesAreReusable
        /// By key index, the id of the container that last wrote a field with that key: a
        /// key written twice in one container is seen at once, whatever the container's size.
        var lastWriters: [UInt32] = []
    }

    private let state: UnsafeMutablePointer<State>
    private let specialTypes = BinaryFormat.SpecialTypes.shared

    /// A keyed container's state: where it is among the open containers, its id, its key
    /// type's index table and its coding path.
    struct KeyedFrame {
        var depth: Int
        var id: UInt32
        var indexes: UnsafeMutablePointer<Int32>?
        var path: CodingPathStack.Mark
    }

    struct OpenContainer {
        var tagOffset: Int
        var isUnkeyed: Bool
        var id: UInt32
        var count: UInt32 = 0
        /// Whether a key came twice (see ``dropRepeatedKeys(ofBodyAt:)``).
        var repeatsKey = false
    }

    /// Where the bytes stood before a write that may throw, to take it back.
    struct WritePoint {
        let count: Int
        let openCount: Int
        let decodedSize: Int
    }

    var writer: ByteWriter {
        _read { yield state.pointee.writer }
        _modify { yield &state.pointee.writer }
    }

    private var keyNames: [String] {
        _read { yield state.pointee.keyNames }
        _modify { yield &state.pointee.keyNames }
    }

    private var open: [OpenContainer] {
        _read { yield state.pointee.open }
        _modify { yield &state.pointee.open }
    }

    /// An estimate of the bytes the encoded value takes in memory once decoded.
    private(set) var decodedSize: Int {
        get { state.pointee.decodedSize }
        set { state.pointee.decodedSize = newValue }
    }

    var codingPath: [any CodingKey] { state.pointee.path.codingPath }
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

    // MARK: - Encoding a value

    /// The payload for `value`, and an estimate of its decoded size in bytes.
    ///
    /// - Throws: what `value.encode(to:)` throws; `EncodingError.invalidValue` where
    ///   `JSONEncoder` throws one (a number that is not finite, a top-level value that encodes
    ///   nothing, nesting deeper than JSON writes) or would trap; ``BinaryEncodingUnsupported``
    ///   for what a stream cannot follow.
    static func encode<T: Encodable>(_ value: T, capacityHint: Int = 4096) throws -> (payload: Data, decodedSize: Int) {
        try encoding(capacityHint: capacityHint) { encoder in
            if encoder.specialTypes.kind(of: ObjectIdentifier(T.self)) == nil {
                try encoder.encodeThroughCodable(value, entering: nil, from: .root, emptyAsObject: false)
            } else {
                try encoder.encodeValue(value, entering: nil)
            }
            if encoder.writer.count == 0 {
                throw EncodingError.invalidValue(value, EncodingError.Context(codingPath: [], debugDescription: "Top-level \(T.self) did not encode any values."))
            }
            encoder.decodedSize += MemoryLayout<T>.stride
        }
    }

    /// The payload for `items`, the same bytes as ``encode(_:capacityHint:)`` of the array,
    /// and an estimate of their decoded size in bytes.
    ///
    /// - Throws: as ``encode(_:capacityHint:)``.
    static func encodeItems<Model: Encodable>(_ items: [Model], capacityHint: Int) throws -> (payload: Data, decodedSize: Int) {
        try encoding(capacityHint: capacityHint) { encoder in
            // Written here rather than through `Array.encode(to:)`, which reaches each item
            // through an existential container and a copy of it.
            let (depth, _) = encoder.openContainer(unkeyed: true)
            try items.withUnsafeBufferPointer { buffer in
                // Each item borrowed in place (a `for` loop copies each, retaining its fields).
                guard let base = buffer.baseAddress else { return }
                for index in 0..<buffer.count { try encoder.encodeValue((base + index).pointee, entering: .index(index)) }
            }
            guard items.count <= Int(UInt32.max) else { throw BinaryEncodingUnsupported(reason: "more than 4 billion items") }
            encoder.open[depth].count = UInt32(items.count)
            try encoder.close(downTo: depth)
            encoder.decodedSize += items.count * MemoryLayout<Model>.stride + MemoryLayout<[Model]>.stride
        }
    }

    /// Runs an encoding, then appends the key table and hands the payload over.
    private static func encoding(capacityHint: Int, _ body: (BinaryPayloadEncoder) throws -> Void) throws -> (payload: Data, decodedSize: Int) {
        var encoder = BinaryPayloadEncoder(capacityHint: capacityHint)
        defer { encoder.finishEncoding() }
        try body(encoder)
        try encoder.checkStreamed()
        let tableOffset = encoder.writer.count
        guard tableOffset <= Int(UInt32.max) else { throw BinaryEncodingUnsupported(reason: "a payload over 4 GiB") }
        encoder.writer.varint(UInt64(encoder.keyNames.count))
        for name in encoder.keyNames { encoder.writer.string(name) }
        encoder.writer.fixed(UInt32(tableOffset))
        encoder.state.pointee.reusesBoxes = false
        encoder.state.pointee.keyTypes.releaseBoxes()
        // A container or a super encoder kept past `encode(to:)` may still be written to: the
        // payload is then a copy, and what is written later goes nowhere (as in JSON, whose
        // tree was written already).
        let payload = isKnownUniquelyReferenced(&encoder) ? encoder.writer.takeData() : Data(bytes: encoder.writer.base, count: encoder.writer.count)
        return (payload, encoder.decodedSize)
    }

    /// Fails the encoding for what was found along the way: a trap JSON would have hit, nesting
    /// deeper than JSON writes, or what a stream cannot follow.
    private func checkStreamed() throws {
        if state.pointee.failed { throw failure }
        if state.pointee.tooDeepAt >= 0 {
            throw EncodingError.invalidValue((), EncodingError.Context(
                codingPath: [],
                debugDescription: "The value nests containers more than \(BinaryFormat.maximumWrittenDepth) levels deep, deeper than JSON writes."))
        }
        if let reason = state.pointee.unsupported { throw BinaryEncodingUnsupported(reason: reason) }
    }

    /// Ends the encoding: keyed containers' boxes are no longer kept, and nothing more is
    /// written (a container kept past `encode(to:)` throws when used).
    private func finishEncoding() {
        state.pointee.reusesBoxes = false
        state.pointee.keyTypes.releaseBoxes()
        state.pointee.open.removeAll()
        state.pointee.failed = true
        state.pointee.topID = .max
    }

    // MARK: - Values

    /// Encodes one value at the current position, entered through `component` (a key or an
    /// index; `nil` for the value being encoded, through a single value container): the
    /// special Foundation types by their own tags, anything else through its `encode(to:)`.
    func encodeValue<T: Encodable>(
        _ value: T, entering component: @autoclosure () -> CodingPathStack.Component?, from container: CodingPathStack.Mark = .root
    ) throws {
        guard let special = specialTypes.kind(of: ObjectIdentifier(T.self)) else {
            try encodeThroughCodable(value, entering: component(), from: container)
            return
        }
        switch special {
        case .date:
            let seconds = unsafeBitCast(value, to: Date.self).timeIntervalSinceReferenceDate
            // A date is a number in JSON, so one that is not finite is refused as one.
            guard seconds.isFinite else { throw Self.notFinite(seconds, at: codingPath(entering: component(), from: container)) }
            writer.byte(BinaryFormat.date)
            writer.fixed(seconds.bitPattern)
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
            let decimal = unsafeBitCast(value, to: Decimal.self)
            // JSON writes `NaN`, which no JSON parse reads back: that value is left to JSON.
            guard !decimal.isNaN else { throw BinaryEncodingUnsupported(reason: "a Decimal that is not a number") }
            writer.byte(BinaryFormat.decimal)
            writeStringBody(decimal.description)
        }
    }

    /// The coding path of a value entered through `component` of the container marked `container`.
    private func codingPath(entering component: CodingPathStack.Component?, from container: CodingPathStack.Mark) -> [any CodingKey] {
        guard let component else { return codingPath }
        return state.pointee.path.path(container, appending: component)
    }

    /// Encodes a value through its own `encode(to:)`, closing what it opened; with
    /// `emptyAsObject`, a value that encodes nothing is `{}`, as JSON writes it in a container.
    private func encodeThroughCodable<T: Encodable>(
        _ value: T, entering component: CodingPathStack.Component?, from container: CodingPathStack.Mark, emptyAsObject: Bool = true
    ) throws {
        // Past the depth JSON writes, nothing more is encoded: the encoding fails at its end.
        guard state.pointee.tooDeepAt < 0 else { return }
        let depth = open.count
        let start = writer.count
        let saved = state.pointee.value
        state.pointee.value = ValueSlot(start: start)
        let left = component.map { state.pointee.path.enter($0, from: container) }
        defer {
            state.pointee.value = saved
            if let left { state.pointee.path.leave(left) }
        }
        try value.encode(to: self)
        try close(downTo: depth)
        if writer.count == start && emptyAsObject {
            // Nothing encoded: an empty keyed container, as JSON writes `{}`.
            writer.byte(BinaryFormat.keyed)
            writer.fixed(UInt32(0))
        }
    }

    /// The error `JSONEncoder` throws for a number that is not finite, at `path`.
    static func notFinite<Value: BinaryFloatingPoint>(_ value: Value, at path: [any CodingKey]) -> EncodingError {
        .invalidValue(value, EncodingError.Context(codingPath: path, debugDescription: "Unable to encode \(Value.self).\(value) directly in JSON."))
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

    // MARK: - Writes that throw

    /// Where the bytes stand now, to take back a write that throws.
    @inline(__always)
    func writePoint() -> WritePoint {
        WritePoint(count: writer.count, openCount: open.count, decodedSize: decodedSize)
    }

    /// Takes back everything written since `point`, as a write that threw leaves nothing in
    /// JSON (it stores a value only once the value encoded).
    func rollBack(to point: WritePoint) {
        guard open.count >= point.openCount else {
            // The failed write wrote to a container outside it, now closed: nothing can be
            // taken back in place.
            return markUnsupported("a write that failed after writing to a container outside it")
        }
        open.removeSubrange(point.openCount...)
        writer.truncate(to: point.count)
        decodedSize = point.decodedSize
        if state.pointee.tooDeepAt >= point.count { state.pointee.tooDeepAt = -1 }
        state.pointee.rollbacks += 1
        state.pointee.topID = top(open.last?.id ?? 0)
    }

    /// How many writes were taken back so far.
    var rollbacks: Int { state.pointee.rollbacks }

    /// Whether the encoding ended (or cannot succeed): nothing more may be written.
    var isFinished: Bool { state.pointee.failed }

    /// How many containers are open.
    var openCount: Int { open.count }

    // MARK: - Keys

    /// The state of the keyed container with frame `number`.
    @inline(__always)
    func frame(_ number: Int) -> KeyedFrame {
        state.pointee.frames[number]
    }

    /// The key index of `key`, adding its name to the key table on first use.
    @inline(__always)
    func keyIndex<Key: CodingKey>(_ key: Key, _ table: UnsafeMutablePointer<Int32>?) -> Int {
        if let table {
            // A one-byte key is fully described by its byte: the same byte, the same key.
            let byte = MemoryLayout<Key>.size == 0 ? 0 : Int(unsafeBitCast(key, to: UInt8.self))
            var index = table[byte]
            if index < 0 {
                index = Int32(intern(key.stringValue))
                table[byte] = index
            }
            return Int(index)
        }
        // Keys of dictionaries and hand-written key types: found by name. A dictionary's entry
        // costs about this much in its storage.
        decodedSize += 48
        return intern(key.stringValue)
    }

    /// Writes the index of `key` in the key table, adding its name on first use.
    @inline(__always)
    func writeKey<Key: CodingKey>(_ key: Key, _ table: UnsafeMutablePointer<Int32>?) {
        writeKey(index: keyIndex(key, table))
    }

    /// Writes a key index, noting that the innermost open container (the one written to) has
    /// a field with that key, and whether it had one already (see
    /// ``dropRepeatedKeys(ofBodyAt:)``).
    @inline(__always)
    func writeKey(index: Int) {
        writer.varint(UInt64(index))
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
    /// Names compare as Swift strings (canonical equivalence), as the keys of `JSONEncoder`'s
    /// dictionaries do: a name spelled decomposed and the same name spelled precomposed are
    /// one key, written under the spelling met first. Up to ``BinaryFormat/linearKeyLimit``
    /// names (most models) are compared in turn: short names compare as a few machine words,
    /// with no hashing and no table to allocate, which for a payload of one item was half of
    /// its encoding time. Past that, names are found by hash.
    private func intern(_ name: String) -> Int {
        let count = keyNames.count
        if count <= BinaryFormat.linearKeyLimit {
            if let index = keyNames.firstIndex(of: name) { return index }
            appendKeyName(name)
            if count == BinaryFormat.linearKeyLimit {
                for (index, known) in keyNames.enumerated() where state.pointee.keyIndexes[known] == nil {
                    state.pointee.keyIndexes[known] = index
                }
            }
            return count
        }
        if let index = state.pointee.keyIndexes[name] { return index }
        appendKeyName(name)
        state.pointee.keyIndexes[name] = count
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
        if open.count >= BinaryFormat.maximumWrittenDepth {
            if state.pointee.tooDeepAt < 0 { state.pointee.tooDeepAt = writer.count }
            // JSON fails such a value once it is all built; far deeper, a value nested without
            // end (a long linked list written through super encoders) would exhaust the stack
            // first, so every write fails from here.
            if open.count >= 2 * BinaryFormat.maximumWrittenDepth {
                markInvalid("The value nests containers more than \(BinaryFormat.maximumWrittenDepth) levels deep, deeper than JSON writes.")
            }
        }
        let tagOffset = writer.count
        writer.byte(unkeyed ? BinaryFormat.unkeyed : BinaryFormat.keyed)
        writer.fixed(UInt32(0))
        if unkeyed {
            writer.fixed(UInt32(0))
            decodedSize += 48  // an array's header and allocation
        }
        return push(OpenContainer(tagOffset: tagOffset, isUnkeyed: unkeyed, id: 0))
    }

    /// Makes `container` (given a new id) the innermost open container.
    private func push(_ container: OpenContainer) -> (depth: Int, id: UInt32) {
        var container = container
        state.pointee.nextContainerID &+= 1
        container.id = state.pointee.nextContainerID
        open.append(container)
        state.pointee.topID = top(container.id)
        return (open.count - 1, container.id)
    }

    /// The id writes are checked against: a container's, or `.max` (no container's) once
    /// nothing may be written.
    private func top(_ id: UInt32) -> UInt32 {
        state.pointee.failed ? .max : id
    }

    /// Makes the container at `depth` (named `id`) the innermost open one, closing those
    /// nested in it, before it is written to.
    ///
    /// - Throws: ``BinaryEncodingUnsupported`` when it was already closed (interleaving); the
    ///   error found, once the encoding cannot succeed.
    @inline(__always)
    func prepare(_ depth: Int, _ id: UInt32) throws {
        if state.pointee.topID == id && state.pointee.open.count == depth + 1 { return }
        try prepareSlowly(depth, id)
    }

    private func prepareSlowly(_ depth: Int, _ id: UInt32) throws {
        if state.pointee.failed { throw failure }
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

    /// Takes back the count of an element whose write threw.
    func uncountElement(at depth: Int, id: UInt32) {
        if depth < open.count, open[depth].id == id { open[depth].count &-= 1 }
    }

    /// The element count of the unkeyed container at `depth`, if it is still open.
    func elementCount(at depth: Int, id: UInt32) -> Int? {
        depth < open.count && open[depth].id == id ? Int(open[depth].count) : nil
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

    /// The fields of the keyed container whose fields start at `bodyStart` and run to the end
    /// of the bytes written: each one's key index, start and end.
    private func fields(ofBodyAt bodyStart: Int) throws -> [(index: Int, start: Int, end: Int)] {
        let reader = ByteReader(base: writer.base, count: writer.count)
        var fields: [(index: Int, start: Int, end: Int)] = []
        var offset = bodyStart
        do {
            while offset < writer.count {
                let (index, valueStart) = try reader.varint(at: offset)
                guard index < UInt64(keyNames.count) else { throw BinaryDecodingFailure.malformed("a key index outside the key table") }
                let end = try reader.end(ofValueAt: valueStart, valuesEnd: writer.count)
                fields.append((Int(index), offset, end))
                offset = end
            }
        } catch {
            // Only a value written outside any field (a single value container used while a
            // keyed one is open) leaves a body that does not read as fields; `JSONEncoder`
            // traps on that use.
            throw EncodingError.invalidValue((), EncodingError.Context(
                codingPath: [], debugDescription: "A value was encoded outside any field of a keyed container (\(error))."))
        }
        return fields
    }

    /// Keeps only the last field of each key in the keyed container whose fields start at
    /// `bodyStart` and run to the end of the bytes written, as `JSONEncoder` keeps the last
    /// value encoded for a key (a subclass writing a key its superclass wrote in the same
    /// container, such as a type name, must win over it).
    ///
    /// Runs only for a container ``writeKey(index:)`` saw a key written to twice. O(n) in its
    /// fields.
    private func dropRepeatedKeys(ofBodyAt bodyStart: Int) throws {
        let fields = try fields(ofBodyAt: bodyStart)
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

    /// Records (from a method that cannot throw) that the value cannot be streamed, so that
    /// the encoding fails and the cache falls back to JSON.
    func markUnsupported(_ reason: String) {
        if state.pointee.unsupported == nil { state.pointee.unsupported = reason }
    }

    /// Why nothing may be written any more: what JSON would have trapped on, or the end of the
    /// encoding.
    private var failure: EncodingError {
        state.pointee.invalid ?? EncodingError.invalidValue((), EncodingError.Context(
            codingPath: [], debugDescription: "A container was written to after the encoding it belongs to ended."))
    }

    /// Records (from a method that cannot throw) a use `JSONEncoder` traps on: the encoding
    /// fails with this error, and every write from now on throws it.
    func markInvalid(_ description: String) {
        guard !state.pointee.failed else { return }
        state.pointee.invalid = EncodingError.invalidValue((), EncodingError.Context(codingPath: codingPath, debugDescription: description))
        state.pointee.failed = true
        state.pointee.topID = .max
    }

    /// Records that containers were used out of order (from a method that cannot throw), so
    /// that the encoding fails and the cache falls back to JSON.
    func markInterleaved() {
        markUnsupported("a container written to after it was closed")
        // Closing everything makes every container stale: its next write throws.
        try? close(downTo: 0)
    }

    // MARK: - Containers of a value

    /// The slot of the value `owner` (a super encoder) stands for, or of the value being
    /// encoded.
    func slot(of owner: BinarySuperEncoder?) -> ValueSlot {
        owner?.slot ?? state.pointee.value
    }

    /// Changes the slot ``slot(of:)`` gives.
    func setSlot(_ slot: ValueSlot, of owner: BinarySuperEncoder?) {
        if let owner { owner.slot = slot } else { state.pointee.value = slot }
    }

    /// The container of kind `unkeyed` for the value in `owner`'s slot: the one already there
    /// (open, or reopened when it was the last thing written), as JSON hands out the one
    /// container a value has; a new one when the value has nothing yet.
    func container(unkeyed: Bool, of owner: BinarySuperEncoder?) -> (depth: Int, id: UInt32) {
        var slot = slot(of: owner)
        let start = slot.start
        // Open already: the innermost open container starting at the value.
        var depth = open.count - 1
        while depth >= 0 && open[depth].tagOffset > start { depth -= 1 }
        if depth >= 0, open[depth].tagOffset == start {
            if open[depth].isUnkeyed == unkeyed { return (depth, open[depth].id) }
            markInvalid("Attempt to push a new \(unkeyed ? "unkeyed" : "keyed") encoding container when already previously encoded at this path.")
            return openContainer(unkeyed: unkeyed)
        }
        if writer.count == start { return openContainer(unkeyed: unkeyed) }
        // Written and closed: a single value, or a container the value was done with.
        let tag = writer.base.load(fromByteOffset: start, as: UInt8.self)
        let kind = unkeyed ? BinaryFormat.unkeyed : BinaryFormat.keyed
        let end = try? ByteReader(base: writer.base, count: writer.count).end(ofValueAt: start, valuesEnd: writer.count)
        guard tag == kind else {
            markInvalid("Attempt to push a new \(unkeyed ? "unkeyed" : "keyed") encoding container when already previously encoded at this path.")
            return openContainer(unkeyed: unkeyed)
        }
        guard end == writer.count else {
            markUnsupported("a container asked for again after more was written")
            return openContainer(unkeyed: unkeyed)
        }
        // A keyed single value then a keyed container (or an array then an unkeyed one): JSON
        // merges them, and the single value is no longer one.
        slot.single = false
        setSlot(slot, of: owner)
        return reopen(at: start)
    }

    /// Makes the closed container at `tagOffset` (the last thing written) open again, with a
    /// new id, so that more fields or elements go into it.
    private func reopen(at tagOffset: Int) -> (depth: Int, id: UInt32) {
        let isUnkeyed = writer.base.load(fromByteOffset: tagOffset, as: UInt8.self) == BinaryFormat.unkeyed
        let count = isUnkeyed ? UInt32(littleEndian: writer.base.loadUnaligned(fromByteOffset: tagOffset + 5, as: UInt32.self)) : 0
        // A keyed one's keys were noted under its old id: the next close checks them all.
        return push(OpenContainer(tagOffset: tagOffset, isUnkeyed: isUnkeyed, id: 0, count: count, repeatsKey: !isUnkeyed))
    }

    /// The container nested under key index `index` of the keyed container at `depth` (named
    /// `id`), of kind `unkeyed`: a new one, or, when the key was written before in this
    /// container, the container already there, as JSON merges them.
    func nestedContainer(unkeyed: Bool, underKey index: Int, in depth: Int, id: UInt32) -> (depth: Int, id: UInt32) {
        if (try? prepare(depth, id)) == nil { markInterleaved() }
        if depth < open.count, open[depth].id == id, state.pointee.lastWriters[index] == id,
            let existing = try? fields(ofBodyAt: open[depth].tagOffset + 5).last(where: { $0.index == index }),
            let valueStart = try? ByteReader(base: writer.base, count: writer.count).varint(at: existing.start).end
        {
            let tag = writer.base.load(fromByteOffset: valueStart, as: UInt8.self)
            guard tag == (unkeyed ? BinaryFormat.unkeyed : BinaryFormat.keyed) else {
                markInvalid("Attempt to re-encode into a nested \(unkeyed ? "unkeyed" : "keyed") container for a key that holds a value of another kind.")
                writeKey(index: index)
                return openContainer(unkeyed: unkeyed)
            }
            if existing.end == writer.count { return reopen(at: valueStart) }
            markUnsupported("a nested container asked for again under a key after more was written")
        }
        writeKey(index: index)
        return openContainer(unkeyed: unkeyed)
    }

    /// A keyed container writing to the open container at `depth` (named `id`), with the coding
    /// path `path`, reusing the box of the last one made for `Key` when nobody holds it any more
    /// (see ``KeyTypeTable``).
    func keyedContainer<Key: CodingKey>(_ type: Key.Type, depth: Int, id: UInt32, path: CodingPathStack.Mark) -> KeyedEncodingContainer<Key> {
        let entry = state.pointee.keyTypes.entry(for: Key.self)
        return entry.container(
            for: KeyedFrame(depth: depth, id: id, indexes: entry.indexes, path: path), in: &state.pointee.frames,
            reusingBoxes: state.pointee.reusesBoxes
        ) { number in
            KeyedEncodingContainer(BinaryKeyedEncodingContainer<Key>(encoder: self, frame: number))
        }
    }

    /// Encodes a single value into `owner`'s slot (or the value being encoded's) with
    /// `write`, as `JSONEncoder`'s single value container does.
    ///
    /// - Throws: what `write` throws; what JSON traps on (a second single value) as an
    ///   `EncodingError`.
    func encodeSingleValue(of owner: BinarySuperEncoder?, _ write: () throws -> Void) throws {
        if state.pointee.failed { throw failure }
        let slot = slot(of: owner)
        if slot.single {
            markInvalid("Attempt to encode value through single value container when previously value already encoded.")
            throw failure
        }
        var depth = open.count - 1
        while depth >= 0 && open[depth].tagOffset > slot.start { depth -= 1 }
        if writer.count > slot.start || (depth >= 0 && open[depth].tagOffset == slot.start) {
            // JSON keeps the container the value has and drops this single value.
            markUnsupported("a single value encoded after a container of the same value")
        }
        try write()
        var done = self.slot(of: owner)
        done.single = true
        setSlot(done, of: owner)
    }

    /// The path component of `key`.
    @inline(__always)
    func component<Key: CodingKey>(_ key: Key) -> CodingPathStack.Component {
        state.pointee.path.component(key)
    }

    /// The mark of a container made now at the value being encoded.
    var currentMark: CodingPathStack.Mark { state.pointee.path.current }

    /// The path a container's mark stands for.
    func path(of mark: CodingPathStack.Mark) -> [any CodingKey] {
        state.pointee.path.path(mark)
    }

    /// The path of a container's field or element.
    func path(of mark: CodingPathStack.Mark, appending component: CodingPathStack.Component) -> [any CodingKey] {
        state.pointee.path.path(mark, appending: component)
    }

    /// A mark for a container nested under `component` of the container marked `mark`.
    func mark(_ mark: CodingPathStack.Mark, appending component: CodingPathStack.Component) -> CodingPathStack.Mark {
        state.pointee.path.mark(mark, appending: component)
    }

    // MARK: - Encoder

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        let (depth, id) = container(unkeyed: false, of: nil)
        return keyedContainer(Key.self, depth: depth, id: id, path: currentMark)
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        let (depth, id) = container(unkeyed: true, of: nil)
        return BinaryUnkeyedEncodingContainer(encoder: self, depth: depth, id: id, path: currentMark)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        BinarySingleValueEncodingContainer(encoder: self, owner: nil)
    }
}

/// Thrown when a value's `encode(to:)` uses containers in a way a streaming encoder cannot
/// follow; the cache then writes that collection as JSON.
struct BinaryEncodingUnsupported: Error {
    var reason: String
}
