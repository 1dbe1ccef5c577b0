import Foundation

#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Decodes a `Decodable` value from the binary format (``BinaryFormat``), giving back what
/// `JSONDecoder` gives for the JSON `JSONEncoder` writes of the same value: the same values,
/// the same conversions between stored and asked-for types, the same errors at the same paths.
///
/// Fields are found by name, as `JSONDecoder` finds them: a keyed container remembers where
/// the next field starts, so fields read in the order they were written cost one key-index
/// comparison each; a field asked for out of order is found by a scan of its container, a
/// missing one is absent (so a missing optional is `nil`), and fields nobody asks for are
/// skipped. Key names compare as Swift strings do, by canonical equivalence, as `JSONDecoder`'s
/// dictionary of keys compares them. A keyed container's box is reused from item to item (see
/// ``KeyTypeTable``).
///
/// Containers and super decoders hold the decoder strongly, so a model may keep one past its
/// `init(from:)` and read it later: when decoding ends and something still holds the decoder,
/// the decoder copies the payload it was lent (``adoptBytes()``), as `JSONDecoder` copies its
/// input then.
///
/// Nothing in the payload is trusted: lengths and counts are checked against the bytes left,
/// nesting is capped at ``BinaryFormat/maximumReadDepth``, and any inconsistency is a
/// `DecodingError.dataCorrupted`, never a crash or an allocation beyond the payload's size.
final class BinaryPayloadDecoder: Decoder {
    /// The payload: the bytes lent for the call, or the decoder's own copy of them once
    /// decoding is over and something outlived it.
    @exclusivity(unchecked) private(set) var reader: ByteReader
    /// Where the root value ends (the key table starts).
    let valuesEnd: Int
    private let specialTypes = BinaryFormat.SpecialTypes.shared

    /// The offset a super decoder for a missing key reads: a `nil` that is nowhere in the
    /// payload, as `JSONDecoder` gives a decoder over `null` there.
    static let nilOffset = -1

    /// A keyed container's state: where its fields start and end, where the next field
    /// starts, its key type's index table, and its coding path.
    struct KeyedFrame {
        var start: Int
        var end: Int
        var next: Int
        var indexes: UnsafeMutablePointer<Int32>?
        var path: CodingPathStack.Mark
    }

    /// The decoder's mutable state, in memory it allocates: reached through a pointer, it needs
    /// no dynamic exclusivity checks on every field.
    private struct State {
        /// Where each key name of the key table lies in the payload, by key index.
        var keySpans: [KeySpan] = []
        /// The key indexes by name, made on first use for payloads with many keys (fewer are
        /// searched by comparing bytes, which needs no string and no hashing).
        var keyIndexes: [String: Int]?
        /// The key types met: their values' key indexes in this payload (-2: not yet looked
        /// up; -1: not in the payload), and their reusable containers.
        var keyTypes = KeyTypeTable(unknownIndex: -2)
        /// The keyed containers' states.
        var frames = FrameBuffer<KeyedFrame>()
        /// Where the value whose `init(from:)` runs starts.
        var position = 0
        /// How many values are being decoded, one inside another (see ``enterLevel()``).
        var depth = 0
        var path = CodingPathStack()
        /// Whether keyed containers' boxes are kept for reuse: until decoding ends (a box
        /// holds the decoder, so one kept after would keep it alive for ever).
        var reusesBoxes = KeyTypeTable.boxesAreReusable
        /// The copy of the payload ``adoptBytes()`` made, freed with the decoder.
        var ownedBytes: UnsafeMutableRawPointer?
    }

    /// Allocated in `init` once nothing can throw: an initialiser that throws before every
    /// stored property is set never runs `deinit`, so memory allocated before the throw leaked.
    private let state: UnsafeMutablePointer<State>

    /// Where a key name lies in the payload.
    struct KeySpan {
        var start: Int
        var length: Int
    }

    /// Checks the payload's frame and reads its key table; throws before anything is allocated.
    private convenience init(reader: ByteReader) throws {
        guard reader.count >= 5 else { throw BinaryDecodingFailure.truncated }
        // Offsets are 32-bit (the encoder writes no payload of 4 GiB or more).
        guard reader.count <= Int(UInt32.max) else { throw BinaryDecodingFailure.malformed("a payload over 4 GiB") }
        let tableOffset = Int(try reader.fixed(UInt32.self, at: reader.count - 4))
        guard tableOffset < reader.count - 4 else { throw BinaryDecodingFailure.malformed("a key table outside the payload") }
        let limit = reader.count - 4
        let table = ByteReader(base: reader.base, count: limit)
        // Each name takes at least its length's byte: the count is checked against them.
        var (count, offset) = try table.length(at: tableOffset, limit: limit - tableOffset)
        var spans: [KeySpan] = []
        spans.reserveCapacity(count)
        while count > 0 {
            let (length, start) = try table.length(at: offset, limit: limit)
            _ = try table.slice(at: start, length: length)
            spans.append(KeySpan(start: start, length: length))
            offset = start + length
            count -= 1
        }
        self.init(reader: reader, valuesEnd: tableOffset, keySpans: spans)
    }

    private init(reader: ByteReader, valuesEnd: Int, keySpans: [KeySpan]) {
        self.reader = reader
        self.valuesEnd = valuesEnd
        state = .allocate(capacity: 1)
        state.initialize(to: State(keySpans: keySpans))
    }

    deinit {
        state.pointee.keyTypes.deallocate()
        state.pointee.frames.deallocate()
        state.pointee.ownedBytes?.deallocate()
        state.deinitialize(count: 1)
        state.deallocate()
    }

    // MARK: - Decoding a payload

    /// Decodes a `type` from `payload`; `type` may be a subclass's metatype, whose initialiser
    /// then runs, as with `JSONDecoder`.
    ///
    /// - Throws: `DecodingError` when the payload is not a `type` or is damaged.
    static func decode<T: Decodable>(_ type: T.Type, from payload: Data) throws -> T {
        try payload.withUnsafeBytes { raw in
            try decoding(raw) { decoder in try decoder.decodeValue(type, at: 0, entering: nil) }
        }
    }

    /// Decodes a collection of `Model` from `payload`: the same as decoding `[Model]`, with its
    /// storage reserved at once (the count is checked against the bytes first).
    static func decodeItems<Model: Decodable>(_ type: Model.Type, from payload: Data) throws -> [Model] {
        try payload.withUnsafeBytes { raw in try decodeItems(type, from: raw) }
    }

    /// ``decodeItems(_:from:)`` of bytes the caller holds (an archive's payload in its read
    /// buffer).
    static func decodeItems<Model: Decodable>(_ type: Model.Type, from raw: UnsafeRawBufferPointer) throws -> [Model] {
        try decoding(raw) { decoder in
            var container = try BinaryUnkeyedDecodingContainer(decoder: decoder, at: 0, path: .root)
            guard let count = container.reservableCount else {
                // Elements under 4 bytes each, or a count claiming more than the bytes
                // hold: no reservation; a false count fails when the elements run out.
                var items: [Model] = []
                while !container.isAtEnd { items.append(try container.decode(type)) }
                return items
            }
            // Built in place: appending to a generic array looks its type up every time.
            return try [Model](unsafeUninitializedCapacity: count) { buffer, initialized in
                guard let base = buffer.baseAddress else { return }
                while initialized < count {
                    (base + initialized).initialize(to: try container.decode(type))
                    initialized += 1
                }
            }
        }
    }

    /// Runs a decoding of `raw` and settles what outlived it; turns the failures that reach the
    /// top into the `DecodingError`s `JSONDecoder` throws for them.
    private static func decoding<Result>(_ raw: UnsafeRawBufferPointer, _ body: (BinaryPayloadDecoder) throws -> Result) throws -> Result {
        do {
            guard let base = raw.baseAddress else { throw BinaryDecodingFailure.truncated }
            var decoder = try BinaryPayloadDecoder(reader: ByteReader(base: base, count: raw.count))
            defer {
                decoder.finishDecoding()
                // A container, a super decoder or the decoder itself kept past `init(from:)`
                // reads the payload later: it gets a copy, the caller's bytes are only lent.
                if !isKnownUniquelyReferenced(&decoder) { decoder.adoptBytes() }
            }
            return try body(decoder)
        } catch let failure as BinaryValueFailure {
            throw failure.error(at: [])
        } catch let failure as BinaryNumberNotRepresentable {
            throw failure.decodingError
        } catch let failure as BinaryDecodingFailure {
            throw DecodingError.dataCorrupted(DecodingError.Context(codingPath: [], debugDescription: failure.description))
        }
    }

    /// Ends the decoding: keyed containers' boxes are no longer kept (each holds the decoder).
    private func finishDecoding() {
        state.pointee.reusesBoxes = false
        state.pointee.keyTypes.releaseBoxes()
    }

    /// Copies the payload into memory the decoder owns and reads that from now on.
    private func adoptBytes() {
        let count = reader.count
        let copy = UnsafeMutableRawPointer.allocate(byteCount: max(count, 1), alignment: 16)
        copy.copyMemory(from: reader.base, byteCount: count)
        state.pointee.ownedBytes = copy
        reader = ByteReader(base: copy, count: count)
    }

    // MARK: - Where decoding is

    var position: Int {
        get { state.pointee.position }
        set { state.pointee.position = newValue }
    }

    var codingPath: [any CodingKey] { state.pointee.path.codingPath }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

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

    /// The path component of `key`.
    @inline(__always)
    func component<Key: CodingKey>(_ key: Key) -> CodingPathStack.Component {
        state.pointee.path.component(key)
    }

    /// The mark of a container made now at the current value.
    var currentMark: CodingPathStack.Mark { state.pointee.path.current }

    /// The state of the keyed container with frame `number`.
    @inline(__always)
    func frame(_ number: Int) -> KeyedFrame {
        state.pointee.frames[number]
    }

    /// Moves the keyed container with frame `number` past a field that ends at `offset`.
    @inline(__always)
    func setNext(_ number: Int, to offset: Int) {
        state.pointee.frames[number].next = offset
    }

    // MARK: - Values

    /// Decodes the value at `offset` as a `type` (whose own initialiser runs, a subclass's when
    /// `type` is a subclass's metatype), entering it through `component` (a key or an index) of
    /// the container marked `container`; `component` is `nil` for the value being decoded, read
    /// again through a single value container.
    ///
    /// - Throws: ``BinaryValueFailure`` for a value of Foundation's kinds that does not fit
    ///   (the caller knows where it is); `DecodingError` from the value's own `init(from:)`.
    func decodeValue<T: Decodable>(
        _ type: T.Type, at offset: Int, entering component: @autoclosure () -> CodingPathStack.Component?,
        from container: CodingPathStack.Mark = .root
    ) throws -> T {
        if let special = specialTypes.kind(of: ObjectIdentifier(type)) {
            switch special {
            case .url: return unsafeBitCast(try url(at: offset), to: T.self)
            case .data: return unsafeBitCast(try data(at: offset), to: T.self)
            case .decimal: return unsafeBitCast(try decimal(at: offset), to: T.self)
            case .date:
                let tag = try tag(at: offset)
                if tag == BinaryFormat.date { return unsafeBitCast(try dateValue(at: offset), to: T.self) }
                if tag == BinaryFormat.nil { throw BinaryValueFailure.valueNotFound(Date.self) }
            // Anything else (a number, or something that is not one) through the type's own
            // `init(from:)`, as `JSONDecoder` reads it, with its errors.
            case .uuid:
                if try tag(at: offset) == BinaryFormat.uuid { return unsafeBitCast(try uuidValue(at: offset), to: T.self) }
            case .strings:
                if let strings = try plainStrings(at: offset) { return unsafeBitCast(strings, to: T.self) }
            }
        }
        // A value inside the one being decoded counts toward the nesting limit; the same value
        // again (a single-value wrapper's) does not.
        let nested = offset != state.pointee.position
        if nested { try enterLevel() }
        let saved = state.pointee.position
        state.pointee.position = offset
        let entered = component()
        let left = entered.map { state.pointee.path.enter($0, from: container) }
        defer {
            state.pointee.position = saved
            if let left { state.pointee.path.leave(left) }
            if nested { state.pointee.depth -= 1 }
        }
        return try type.init(from: self)
    }

    /// Counts one more level of nesting, refusing one past ``BinaryFormat/maximumReadDepth``
    /// (a hostile payload must not exhaust the stack). The caller gives it back.
    @inline(__always)
    func enterLevel() throws {
        guard state.pointee.depth < BinaryFormat.maximumReadDepth else {
            throw BinaryDecodingFailure.malformed("nesting deeper than \(BinaryFormat.maximumReadDepth) levels")
        }
        state.pointee.depth += 1
    }

    /// Gives back a level ``enterLevel()`` counted.
    func leaveLevel() {
        state.pointee.depth -= 1
    }

    @inline(__always)
    func tag(at offset: Int) throws -> UInt8 {
        guard offset >= 0 && offset < valuesEnd else {
            if offset == Self.nilOffset { return BinaryFormat.nil }
            throw BinaryDecodingFailure.truncated
        }
        return reader.base.load(fromByteOffset: offset, as: UInt8.self)
    }

    func isNil(at offset: Int) throws -> Bool {
        try tag(at: offset) == BinaryFormat.nil
    }

    func bool(at offset: Int) throws -> Bool {
        let tag = try tag(at: offset)
        if tag == BinaryFormat.true { return true }
        if tag == BinaryFormat.false { return false }
        // `nil` too: `JSONDecoder` reads a `Bool` without checking for `null` first.
        throw BinaryValueFailure.typeMismatch(Bool.self, found: tag)
    }

    @inline(__always)
    func string(at offset: Int) throws -> (String, end: Int) {
        let tag = try tag(at: offset)
        guard tag == BinaryFormat.string else { return try storedAsString(tag, at: offset) }
        return try stringBody(at: offset + 1)
    }

    /// A value of another kind read as a `String`: what JSON stores as a string (a URL, a
    /// UUID, `Data` as base64) is one.
    @inline(never)
    private func storedAsString(_ tag: UInt8, at offset: Int) throws -> (String, end: Int) {
        switch tag {
        case BinaryFormat.url: return try stringBody(at: offset + 1)
        case BinaryFormat.uuid: return (try uuidValue(at: offset).uuidString, offset + 17)
        case BinaryFormat.data:
            let (data, end) = try dataBody(at: offset)
            return (data.base64EncodedString(), end)
        case BinaryFormat.nil: throw BinaryValueFailure.valueNotFound(String.self)
        default: throw BinaryValueFailure.typeMismatch(String.self, found: tag)
        }
    }

    @inline(__always)
    private func stringBody(at offset: Int) throws -> (String, end: Int) {
        let (length, start) = try reader.length(at: offset, limit: valuesEnd - offset)
        let bytes = try reader.slice(at: start, length: length)
        guard let text = UTF8Text.string(validating: bytes) else { throw BinaryDecodingFailure.malformed("a string that is not UTF-8") }
        return (text, start + length)
    }

    /// The date a `date` value holds.
    private func dateValue(at offset: Int) throws -> Date {
        Date(timeIntervalSinceReferenceDate: Double(bitPattern: try reader.fixed(UInt64.self, at: offset + 1)))
    }

    /// The UUID a `uuid` value holds.
    private func uuidValue(at offset: Int) throws -> UUID {
        let bytes = try reader.slice(at: offset + 1, length: 16)
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: bytes) }
        return UUID(uuid: uuid)
    }

    /// A URL, as `JSONDecoder` reads one: from its text (a stored URL, or any string).
    func url(at offset: Int) throws -> URL {
        guard try tag(at: offset) != BinaryFormat.nil else { throw BinaryValueFailure.valueNotFound(URL.self) }
        // `URL(string:)` is what `JSONDecoder` does, and the cheapest parse of the text.
        guard let url = URL(string: try string(at: offset).0) else { throw BinaryValueFailure.dataCorrupted("Invalid URL string.") }
        return url
    }

    /// `Data`, as `JSONDecoder` reads it: stored bytes, or base64 text (its own form).
    func data(at offset: Int) throws -> Data {
        let tag = try tag(at: offset)
        if tag == BinaryFormat.data { return try dataBody(at: offset).data }
        guard tag != BinaryFormat.nil else { throw BinaryValueFailure.valueNotFound(Data.self) }
        guard let data = Data(base64Encoded: try string(at: offset).0) else {
            throw BinaryValueFailure.dataCorrupted("Encountered Data is not valid Base64.")
        }
        return data
    }

    private func dataBody(at offset: Int) throws -> (data: Data, end: Int) {
        let (length, start) = try reader.length(at: offset + 1, limit: valuesEnd - offset)
        return (Data(try reader.slice(at: start, length: length)), start + length)
    }

    /// An array of plain strings, decoded here rather than through `Array.init(from:)`, whose
    /// generic code costs more than the strings themselves; `nil` when the value is anything
    /// else (which `Array.init(from:)` then reads, with its conversions and errors).
    private func plainStrings(at offset: Int) throws -> [String]? {
        guard try tag(at: offset) == BinaryFormat.unkeyed else { return nil }
        let body = try unkeyedBody(at: offset)
        var strings: [String] = []
        strings.reserveCapacity(body.count)
        var next = body.start
        for _ in 0..<body.count {
            guard try tag(at: next) == BinaryFormat.string else { return nil }
            let (string, end) = try stringBody(at: next + 1)
            guard end <= body.end else { throw BinaryDecodingFailure.truncated }
            strings.append(string)
            next = end
        }
        return strings
    }

    /// Where the value at `offset` ends, whatever it is.
    @inline(__always)
    func end(ofValueAt offset: Int) throws -> Int {
        try reader.end(ofValueAt: offset, valuesEnd: valuesEnd)
    }

    // MARK: - Keys

    /// The key index of `key` in this payload, or -1 when the payload has no such key.
    @inline(__always)
    func keyIndex<Key: CodingKey>(_ key: Key, _ table: UnsafeMutablePointer<Int32>?) -> Int {
        if let table {
            let byte = MemoryLayout<Key>.size == 0 ? 0 : Int(unsafeBitCast(key, to: UInt8.self))
            var index = table[byte]
            if index == -2 {
                index = Int32(keyIndex(named: key.stringValue))
                table[byte] = index
            }
            return Int(index)
        }
        return keyIndex(named: key.stringValue)
    }

    /// The key index of the key called `name` in this payload, or -1 when it has none.
    ///
    /// Names compare as Swift strings (canonical equivalence), as the keys of `JSONDecoder`'s
    /// dictionary do: a name spelled decomposed finds the same name stored precomposed. Few
    /// names are compared byte for byte first, which finds every name stored as it is asked for
    /// without making a string.
    func keyIndex(named name: String) -> Int {
        let spans = state.pointee.keySpans
        if spans.count > BinaryFormat.linearKeyLimit {
            if state.pointee.keyIndexes == nil {
                var indexes: [String: Int] = [:]
                for index in spans.indices.reversed() { indexes[keyName(spans[index])] = index }
                state.pointee.keyIndexes = indexes
            }
            return state.pointee.keyIndexes?[name] ?? -1
        }
        let found = name.utf8.withContiguousStorageIfAvailable { utf8 -> Int in
            for (index, span) in spans.enumerated() where span.length == utf8.count {
                if span.length == 0 || memcmp(reader.base + span.start, utf8.baseAddress!, span.length) == 0 { return index }
            }
            return -1
        }
        if let found, found >= 0 { return found }
        return spans.firstIndex { keyName($0) == name } ?? -1
    }

    private func keyName(_ span: KeySpan) -> String {
        String(decoding: UnsafeRawBufferPointer(start: reader.base + span.start, count: span.length), as: UTF8.self)
    }

    func keyName(_ index: Int) throws -> String {
        let spans = state.pointee.keySpans
        guard index >= 0 && index < spans.count else { throw BinaryDecodingFailure.malformed("a key index \(index) outside the key table") }
        return keyName(spans[index])
    }

    // MARK: - Containers

    /// The body of the unkeyed container at `offset`: where its elements start and end, and
    /// how many there are (checked: each element takes at least a byte).
    ///
    /// - Throws: ``BinaryValueFailure`` when the value is not an array, as `JSONDecoder` words it.
    func unkeyedBody(at offset: Int) throws -> (start: Int, end: Int, count: Int) {
        let tag = try tag(at: offset)
        guard tag == BinaryFormat.unkeyed else {
            throw tag == BinaryFormat.nil ? BinaryValueFailure.valueNotFound([Any].self) : BinaryValueFailure.typeMismatch([Any].self, found: tag)
        }
        let end = try end(ofValueAt: offset)
        let count = Int(try reader.fixed(UInt32.self, at: offset + 5))
        guard count <= end - offset - 9 else { throw BinaryDecodingFailure.malformed("\(count) elements in \(end - offset - 9) bytes") }
        return (offset + 9, end, count)
    }

    /// Where the value of the field with key index `wanted` starts in the keyed container with
    /// frame `number`, or `nil` when it has no such field.
    @inline(__always)
    func field(_ wanted: Int, frame number: Int) throws -> Int? {
        guard wanted >= 0 else { return nil }
        let frame = frame(number)
        if frame.next < frame.end {
            let (index, valueOffset) = try reader.varint(at: frame.next)
            if index == UInt64(wanted) { return valueOffset }
        }
        // Out of the order written: scan the container.
        var offset = frame.start
        while offset < frame.end {
            let (index, valueOffset) = try reader.varint(at: offset)
            if index == UInt64(wanted) { return valueOffset }
            offset = try self.end(ofValueAt: valueOffset)
            guard offset <= frame.end else { throw BinaryDecodingFailure.truncated }
        }
        return nil
    }

    /// A keyed container for the keyed value at `offset`, with the coding path `path`, reusing
    /// the box of the last one made for `Key` when nobody holds it any more (see
    /// ``KeyTypeTable``).
    ///
    /// - Parameter end: set to where the value ends.
    /// - Throws: ``BinaryValueFailure`` when the value is not a keyed one.
    func keyedContainer<Key: CodingKey>(
        _ type: Key.Type, at offset: Int, path: CodingPathStack.Mark, end: inout Int
    ) throws -> KeyedDecodingContainer<Key> {
        let tag = try tag(at: offset)
        guard tag == BinaryFormat.keyed else {
            throw tag == BinaryFormat.nil
                ? BinaryValueFailure.valueNotFound([String: Any].self) : BinaryValueFailure.typeMismatch([String: Any].self, found: tag)
        }
        end = try self.end(ofValueAt: offset)
        let entry = state.pointee.keyTypes.entry(for: Key.self)
        return entry.container(
            for: KeyedFrame(start: offset + 5, end: end, next: offset + 5, indexes: entry.indexes, path: path),
            in: &state.pointee.frames, reusingBoxes: state.pointee.reusesBoxes
        ) { number in
            KeyedDecodingContainer(BinaryKeyedDecodingContainer<Key>(decoder: self, frame: number))
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        var end = 0
        do {
            return try keyedContainer(Key.self, at: position, path: currentMark, end: &end)
        } catch let failure as BinaryValueFailure {
            throw failure.error(at: codingPath)
        }
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        do {
            return try BinaryUnkeyedDecodingContainer(decoder: self, at: position, path: currentMark)
        } catch let failure as BinaryValueFailure {
            throw failure.error(at: codingPath)
        }
    }

    /// A container over the value being decoded *when it is used*, as `JSONDecoder`'s (the
    /// decoder itself) is: kept past `init(from:)`, it reads where decoding is then.
    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        BinarySingleValueDecodingContainer(decoder: self, nested: nil)
    }
}
