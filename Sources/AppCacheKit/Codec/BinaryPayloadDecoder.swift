import Foundation

/// Decodes a `Decodable` value from the binary format (``BinaryFormat``).
///
/// Fields are found by name, as `JSONDecoder` finds them: a keyed container remembers where
/// the next field starts, so fields read in the order they were written cost one key-index
/// comparison each; a field asked for out of order is found by a scan of its container, a
/// missing one is absent (so a missing optional is `nil`), and fields nobody asks for are
/// skipped. Containers are small structs with an unmanaged reference to the decoder, which
/// the caller keeps alive, so copying them costs no reference counting; a keyed container's
/// box is reused from item to item (see ``KeyTypeTable``).
///
/// Nothing in the payload is trusted: lengths and counts are checked against the bytes left,
/// nesting is capped at ``BinaryFormat/maximumDepth``, and any inconsistency is a
/// `DecodingError.dataCorrupted`, never a crash or an allocation beyond the payload's size.
final class BinaryPayloadDecoder: Decoder {
    let reader: ByteReader
    /// Where the root value ends (the key table starts).
    let valuesEnd: Int
    private let specialTypes = BinaryFormat.SpecialTypes.shared
    private let reusesBoxes = KeyTypeTable.boxesAreReusable

    /// A keyed container's state: where its fields start and end, where the next field
    /// starts, and its key type's index table.
    struct KeyedFrame {
        var start: Int
        var end: Int
        var next: Int
        var indexes: UnsafeMutablePointer<Int32>?
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
        var depth = 0
    }

    /// Allocated in `init` once nothing can throw: an initialiser that throws before every
    /// stored property is set never runs `deinit`, so memory allocated before the throw leaked.
    private let state: UnsafeMutablePointer<State>

    /// Where a key name lies in the payload.
    struct KeySpan {
        var start: Int
        var length: Int
    }

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

    var position: Int {
        get { state.pointee.position }
        set { state.pointee.position = newValue }
    }

    private var depth: Int {
        get { state.pointee.depth }
        set { state.pointee.depth = newValue }
    }

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// Checks the payload's frame and reads its key table; throws before anything is allocated.
    private convenience init(reader: ByteReader) throws {
        guard reader.count >= 5 else { throw Self.corrupted(.truncated) }
        // Offsets are 32-bit (the encoder writes no payload of 4 GiB or more).
        guard reader.count <= Int(UInt32.max) else { throw Self.corrupted(.malformed("a payload over 4 GiB")) }
        let tableOffset = Int(try Self.check { try reader.fixed(UInt32.self, at: reader.count - 4) })
        guard tableOffset < reader.count - 4 else { throw Self.corrupted(.malformed("a key table outside the payload")) }
        let limit = reader.count - 4
        let table = ByteReader(base: reader.base, count: limit)
        let keySpans = try Self.check {
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
            return spans
        }
        self.init(reader: reader, valuesEnd: tableOffset, keySpans: keySpans)
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
        state.deinitialize(count: 1)
        state.deallocate()
    }

    /// Decodes a `T` from `payload`.
    ///
    /// - Throws: `DecodingError` when the payload is not a `T` or is damaged.
    static func decode<T: Decodable>(_ type: T.Type, from payload: Data) throws -> T {
        try payload.withUnsafeBytes { raw in
            guard let base = raw.baseAddress else { throw corrupted(.truncated) }
            let decoder = try BinaryPayloadDecoder(reader: ByteReader(base: base, count: raw.count))
            return try withExtendedLifetime(decoder) {
                try decoder.decodeValue(T.self, at: 0)
            }
        }
    }

    /// Decodes a collection of `Model` from `payload`: the same as decoding `[Model]`, with its
    /// storage reserved at once (the count is checked against the bytes first).
    static func decodeItems<Model: Decodable>(_ type: Model.Type, from payload: Data) throws -> [Model] {
        try payload.withUnsafeBytes { raw in try decodeItems(Model.self, from: raw) }
    }

    /// ``decodeItems(_:from:)`` of bytes the caller holds (an archive's payload in its read
    /// buffer).
    static func decodeItems<Model: Decodable>(_ type: Model.Type, from raw: UnsafeRawBufferPointer) throws -> [Model] {
        guard let base = raw.baseAddress else { throw corrupted(.truncated) }
        let decoder = try BinaryPayloadDecoder(reader: ByteReader(base: base, count: raw.count))
        return try withExtendedLifetime(decoder) {
            var container = try BinaryUnkeyedDecodingContainer(decoder: decoder, at: 0)
            guard let count = container.reservableCount else {
                // Elements under 4 bytes each, or a count claiming more than the bytes
                // hold: no reservation; a false count fails when the elements run out.
                var items: [Model] = []
                while !container.isAtEnd { items.append(try container.decode(Model.self)) }
                return items
            }
            // Built in place: appending to a generic array looks its type up every time.
            return try [Model](unsafeUninitializedCapacity: count) { buffer, initialized in
                guard let base = buffer.baseAddress else { return }
                while initialized < count {
                    (base + initialized).initialize(to: try container.decode(Model.self))
                    initialized += 1
                }
            }
        }
    }

    // MARK: - Values

    /// Decodes the value at `offset` as a `T`.
    func decodeValue<T: Decodable>(_ type: T.Type, at offset: Int) throws -> T {
        if let special = specialTypes.kind(of: ObjectIdentifier(T.self)) {
            switch special {
            case .date: return unsafeBitCast(try date(at: offset), to: T.self)
            case .url: return unsafeBitCast(try url(at: offset), to: T.self)
            case .uuid: return unsafeBitCast(try uuid(at: offset), to: T.self)
            case .strings: return unsafeBitCast(try strings(at: offset), to: T.self)
            case .data: return unsafeBitCast(try data(at: offset), to: T.self)
            case .decimal: return unsafeBitCast(try decimal(at: offset), to: T.self)
            }
        }
        try enterLevel()
        defer { depth -= 1 }
        let saved = position
        position = offset
        defer { position = saved }
        return try T(from: self)
    }

    /// A decoder for the value at `offset`, for `superDecoder()`: it counts as one level of
    /// nesting for as long as it exists, since a type may decode its own kind through it, as
    /// deep as a payload goes, without passing through ``decodeValue(_:at:)``.
    ///
    /// - Throws: `DecodingError.dataCorrupted` past ``BinaryFormat/maximumDepth``.
    func nestedDecoder(at offset: Int) throws -> BinaryNestedDecoder {
        try enterLevel()
        return BinaryNestedDecoder(decoder: self, offset: offset)
    }

    /// Counts one more level of nesting, refusing one past ``BinaryFormat/maximumDepth`` (a
    /// hostile payload must not exhaust the stack). The caller gives it back.
    @inline(__always)
    private func enterLevel() throws {
        guard depth < BinaryFormat.maximumDepth else { throw Self.corrupted(.malformed("nesting deeper than \(BinaryFormat.maximumDepth)")) }
        depth += 1
    }

    /// Gives back the level a nested decoder counted, when it goes.
    fileprivate func nestedDecoderEnded() {
        depth -= 1
    }

    @inline(__always)
    func tag(at offset: Int) throws -> UInt8 {
        guard offset >= 0 && offset < valuesEnd else { throw Self.corrupted(.truncated) }
        return reader.base.load(fromByteOffset: offset, as: UInt8.self)
    }

    func isNil(at offset: Int) throws -> Bool {
        try tag(at: offset) == BinaryFormat.nil
    }

    func bool(at offset: Int) throws -> Bool {
        switch try tag(at: offset) {
        case BinaryFormat.true: return true
        case BinaryFormat.false: return false
        default: throw mismatch(Bool.self, at: offset)
        }
    }

    @inline(__always)
    func string(at offset: Int) throws -> (String, end: Int) {
        guard try tag(at: offset) == BinaryFormat.string else { throw mismatch(String.self, at: offset) }
        return try stringBody(at: offset + 1)
    }

    @inline(__always)
    private func stringBody(at offset: Int) throws -> (String, end: Int) {
        try Self.check {
            let (length, start) = try reader.length(at: offset, limit: valuesEnd - offset)
            let bytes = try reader.slice(at: start, length: length)
            return (try Self.text(bytes), start + length)
        }
    }

    /// The text `bytes` spell. Strict: bytes that are not UTF-8 are damage, not text to repair
    /// quietly.
    @inline(__always)
    private static func text(_ bytes: UnsafeRawBufferPointer) throws(BinaryDecodingFailure) -> String {
        guard let text = UTF8Text.string(validating: bytes) else { throw .malformed("a string that is not UTF-8") }
        return text
    }

    /// Any integer value, as the widest type of its sign, with where it ends.
    @inline(__always)
    func integer<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) throws -> (T, end: Int) {
        let tag = try tag(at: offset)
        switch tag {
        case BinaryFormat.int:
            let (raw, end) = try Self.check { try reader.varint(at: offset + 1) }
            guard let value = T(exactly: BinaryFormat.unzigzag(raw)) else { throw Self.outOfRange(T.self) }
            return (value, end)
        case BinaryFormat.uint:
            let (raw, end) = try Self.check { try reader.varint(at: offset + 1) }
            guard let value = T(exactly: raw) else { throw Self.outOfRange(T.self) }
            return (value, end)
        case BinaryFormat.double, BinaryFormat.float:
            // A property that was a floating-point number: accepted when it is a whole number,
            // as JSON would.
            let (double, end) = try floatingPoint(at: offset)
            guard let value = T(exactly: double) else { throw Self.outOfRange(T.self) }
            return (value, end)
        // 128-bit integers, where the standard library has them (see `BinaryPayloadEncoder`);
        // elsewhere their tag is a type mismatch, as any unexpected tag is.
        #if !canImport(Darwin) || canImport(Swift, _version: 6.0)
        case BinaryFormat.int128, BinaryFormat.uint128:
            guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) else { throw mismatch(T.self, at: offset) }
            let bits = try Self.check { try reader.fixed(UInt128.self, at: offset + 1) }
            let value = tag == BinaryFormat.int128 ? T(exactly: Int128(bitPattern: bits)) : T(exactly: bits)
            guard let value else { throw Self.outOfRange(T.self) }
            return (value, offset + 17)
        #endif
        default:
            throw mismatch(T.self, at: offset)
        }
    }

    @inline(__always)
    func floatingPoint(at offset: Int) throws -> (Double, end: Int) {
        let tag = try tag(at: offset)
        switch tag {
        case BinaryFormat.double:
            let bits = try Self.check { try reader.fixed(UInt64.self, at: offset + 1) }
            return (Double(bitPattern: bits), offset + 9)
        case BinaryFormat.float:
            let bits = try Self.check { try reader.fixed(UInt32.self, at: offset + 1) }
            return (Double(Float(bitPattern: bits)), offset + 5)
        case BinaryFormat.int:
            let (raw, end) = try Self.check { try reader.varint(at: offset + 1) }
            return (Double(BinaryFormat.unzigzag(raw)), end)
        case BinaryFormat.uint:
            let (raw, end) = try Self.check { try reader.varint(at: offset + 1) }
            return (Double(raw), end)
        #if !canImport(Darwin) || canImport(Swift, _version: 6.0)
        case BinaryFormat.int128, BinaryFormat.uint128:
            guard #available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *) else { throw mismatch(Double.self, at: offset) }
            let bits = try Self.check { try reader.fixed(UInt128.self, at: offset + 1) }
            return (tag == BinaryFormat.int128 ? Double(Int128(bitPattern: bits)) : Double(bits), offset + 17)
        #endif
        default:
            throw mismatch(Double.self, at: offset)
        }
    }

    func float(at offset: Int) throws -> (Float, end: Int) {
        let (double, end) = try floatingPoint(at: offset)
        let float = Float(double)
        guard double.isNaN || float.isInfinite == double.isInfinite else { throw Self.outOfRange(Float.self) }
        return (float, end)
    }

    func date(at offset: Int) throws -> Date {
        switch try tag(at: offset) {
        case BinaryFormat.date:
            let bits = try Self.check { try reader.fixed(UInt64.self, at: offset + 1) }
            return Date(timeIntervalSinceReferenceDate: Double(bitPattern: bits))
        default:
            // A date written by a custom encoding, as a plain number.
            return Date(timeIntervalSinceReferenceDate: try floatingPoint(at: offset).0)
        }
    }

    func url(at offset: Int) throws -> URL {
        let tag = try tag(at: offset)
        guard tag == BinaryFormat.url || tag == BinaryFormat.string else { throw mismatch(URL.self, at: offset) }
        let (text, _) = try stringBody(at: offset + 1)
        // `URL(string:)` is the cheapest parse of the text (a strict parse, where available,
        // costs more), and it is what `JSONDecoder` does.
        let parsed = URL(string: text)
        guard let url = parsed else { throw Self.corrupted(.malformed("an invalid URL")) }
        return url
    }

    func uuid(at offset: Int) throws -> UUID {
        switch try tag(at: offset) {
        case BinaryFormat.uuid:
            let bytes = try Self.check { try reader.slice(at: offset + 1, length: 16) }
            var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
            withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: bytes) }
            return UUID(uuid: uuid)
        case BinaryFormat.string:
            guard let uuid = UUID(uuidString: try stringBody(at: offset + 1).0) else { throw Self.corrupted(.malformed("an invalid UUID")) }
            return uuid
        default:
            throw mismatch(UUID.self, at: offset)
        }
    }

    /// An array of strings, decoded here rather than through `Array.init(from:)`, whose
    /// generic code costs more than the strings themselves.
    func strings(at offset: Int) throws -> [String] {
        let body = try unkeyedBody(at: offset)
        var strings: [String] = []
        strings.reserveCapacity(body.count)
        var next = body.start
        for _ in 0..<body.count {
            let (string, end) = try string(at: next)
            guard end <= body.end else { throw Self.corrupted(.truncated) }
            strings.append(string)
            next = end
        }
        return strings
    }

    func data(at offset: Int) throws -> Data {
        guard try tag(at: offset) == BinaryFormat.data else { throw mismatch(Data.self, at: offset) }
        return try Self.check {
            let (length, start) = try reader.length(at: offset + 1, limit: valuesEnd - offset)
            return Data(try reader.slice(at: start, length: length))
        }
    }

    func decimal(at offset: Int) throws -> Decimal {
        switch try tag(at: offset) {
        case BinaryFormat.decimal, BinaryFormat.string:
            let text = try stringBody(at: offset + 1).0
            // `Decimal(string:)` refuses the spelling of not-a-number.
            if text == BinaryFormat.decimalNaN { return .nan }
            guard let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
                throw Self.corrupted(.malformed("an invalid decimal number"))
            }
            return value
        default:
            return Decimal(try floatingPoint(at: offset).0)
        }
    }

    /// Where the value at `offset` ends, whatever it is.
    @inline(__always)
    func end(ofValueAt offset: Int) throws -> Int {
        try Self.check { try reader.end(ofValueAt: offset, valuesEnd: valuesEnd) }
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
        return found ?? spans.firstIndex { keyName($0) == name } ?? -1
    }

    private func keyName(_ span: KeySpan) -> String {
        String(decoding: UnsafeRawBufferPointer(start: reader.base + span.start, count: span.length), as: UTF8.self)
    }

    func keyName(_ index: Int) throws -> String {
        let spans = state.pointee.keySpans
        guard index >= 0 && index < spans.count else { throw Self.corrupted(.malformed("a key index \(index) outside the key table")) }
        return keyName(spans[index])
    }

    // MARK: - Containers

    /// The body of the keyed container at `offset`: where its fields start and end.
    func keyedBody(at offset: Int) throws -> (start: Int, end: Int) {
        guard try tag(at: offset) == BinaryFormat.keyed else { throw mismatch([String: Int].self, at: offset) }
        let end = try end(ofValueAt: offset)
        return (offset + 5, end)
    }

    /// The body of the unkeyed container at `offset`: where its elements start and end, and
    /// how many there are (checked: each element takes at least a byte).
    func unkeyedBody(at offset: Int) throws -> (start: Int, end: Int, count: Int) {
        guard try tag(at: offset) == BinaryFormat.unkeyed else { throw mismatch([Int].self, at: offset) }
        let end = try end(ofValueAt: offset)
        let count = Int(try Self.check { try reader.fixed(UInt32.self, at: offset + 5) })
        guard count <= end - offset - 9 else { throw Self.corrupted(.malformed("\(count) elements in \(end - offset - 9) bytes")) }
        return (offset + 9, end, count)
    }

    /// Where the value of the field with key index `wanted` starts in the keyed container with
    /// frame `number`, or `nil` when it has no such field.
    @inline(__always)
    func field(_ wanted: Int, frame number: Int) throws -> Int? {
        guard wanted >= 0 else { return nil }
        let frame = frame(number)
        if frame.next < frame.end {
            let (index, valueOffset) = try Self.check { try reader.varint(at: frame.next) }
            if index == UInt64(wanted) { return valueOffset }
        }
        // Out of the order written: scan the container.
        var offset = frame.start
        while offset < frame.end {
            let (index, valueOffset) = try Self.check { try reader.varint(at: offset) }
            if index == UInt64(wanted) { return valueOffset }
            offset = try self.end(ofValueAt: valueOffset)
            guard offset <= frame.end else { throw Self.corrupted(.truncated) }
        }
        return nil
    }

    /// A keyed container for the keyed value at `offset`, reusing the box of the last one made
    /// for `Key` when nobody holds it any more (see ``KeyTypeTable``).
    ///
    /// - Parameter end: set to where the value ends.
    func keyedContainer<Key: CodingKey>(_ type: Key.Type, at offset: Int, end: inout Int) throws -> KeyedDecodingContainer<Key> {
        let body = try keyedBody(at: offset)
        end = body.end
        let entry = state.pointee.keyTypes.entry(for: Key.self)
        return entry.container(
            for: KeyedFrame(start: body.start, end: body.end, next: body.start, indexes: entry.indexes), in: &state.pointee.frames,
            reusingBoxes: reusesBoxes
        ) { number in
            KeyedDecodingContainer(BinaryKeyedDecodingContainer<Key>(core: Unmanaged.passUnretained(self), frame: number))
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        var end = 0
        return try keyedContainer(Key.self, at: position, end: &end)
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try BinaryUnkeyedDecodingContainer(decoder: self, at: position)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        BinarySingleValueDecodingContainer(core: Unmanaged.passUnretained(self), offset: position)
    }

    // MARK: - Errors

    /// Runs a read of the payload, turning a ``BinaryDecodingFailure`` into a `DecodingError`.
    @inline(__always)
    static func check<Result>(_ body: () throws -> Result) throws -> Result {
        do {
            return try body()
        } catch let failure as BinaryDecodingFailure {
            throw corrupted(failure)
        }
    }

    static func corrupted(_ failure: BinaryDecodingFailure) -> DecodingError {
        .dataCorrupted(DecodingError.Context(codingPath: [], debugDescription: failure.description))
    }

    /// The error for a value at `offset` that is not a `type`, naming what is stored there
    /// ("expected Double, found String"): what a developer needs to see which model change
    /// broke decoding.
    func mismatch(_ type: Any.Type, at offset: Int) -> DecodingError {
        let found = (try? tag(at: offset)).map(BinaryFormat.typeName(ofTag:)) ?? "nothing"
        return .typeMismatch(type, DecodingError.Context(codingPath: [], debugDescription: "expected \(type), found \(found)"))
    }

    static func outOfRange(_ type: Any.Type) -> DecodingError {
        .dataCorrupted(DecodingError.Context(codingPath: [], debugDescription: "The stored number does not fit in \(type)."))
    }
}

/// A keyed container: the decoder, unmanaged, and the number of its frame there.
struct BinaryKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let core: Unmanaged<BinaryPayloadDecoder>
    let frame: Int

    var codingPath: [any CodingKey] { [] }

    var allKeys: [Key] {
        let decoder = core.takeUnretainedValue()
        let (start, end) = (decoder.frame(frame).start, decoder.frame(frame).end)
        var keys: [Key] = []
        var offset = start
        while offset < end {
            guard let (index, valueOffset) = try? decoder.reader.varint(at: offset),
                let name = try? decoder.keyName(Int(clamping: index)), let next = try? decoder.end(ofValueAt: valueOffset)
            else { break }
            if let key = Key(stringValue: name) { keys.append(key) }
            offset = next
        }
        return keys
    }

    /// Where the value for `key` starts, or `nil` when the container has no such field.
    @inline(__always)
    private func find(_ key: Key, in decoder: BinaryPayloadDecoder) throws -> Int? {
        try decoder.field(decoder.keyIndex(key, decoder.frame(frame).indexes), frame: frame)
    }

    private func notFound(_ key: Key) -> DecodingError {
        .keyNotFound(key, DecodingError.Context(codingPath: [], debugDescription: "No value for \(key.stringValue)."))
    }

    /// Reads the field for `key` with `read`, which returns the value and where it ends, and
    /// moves the container past it. The decoder is borrowed, not retained: its owner keeps it.
    @inline(__always)
    private func field<Value>(_ key: Key, _ read: (BinaryPayloadDecoder, Int) throws -> (Value, Int)) throws -> Value {
        try core._withUnsafeGuaranteedRef { decoder in
            guard let offset = try find(key, in: decoder) else { throw notFound(key) }
            do {
                let (value, end) = try read(decoder, offset)
                decoder.setNext(frame, to: end)
                return value
            } catch let error as DecodingError {
                throw error.under(key)
            }
        }
    }

    /// Like ``field(_:_:)``, with `nil` for a missing field or a stored `nil`, in one look-up
    /// (the default implementation of `decodeIfPresent` takes three).
    @inline(__always)
    private func optionalField<Value>(_ key: Key, _ read: (BinaryPayloadDecoder, Int) throws -> (Value, Int)) throws -> Value? {
        try core._withUnsafeGuaranteedRef { decoder in
            guard let offset = try find(key, in: decoder) else { return nil }
            do {
                if try decoder.isNil(at: offset) {
                    decoder.setNext(frame, to: offset + 1)
                    return nil
                }
                let (value, end) = try read(decoder, offset)
                decoder.setNext(frame, to: end)
                return value
            } catch let error as DecodingError {
                throw error.under(key)
            }
        }
    }

    func contains(_ key: Key) -> Bool {
        core._withUnsafeGuaranteedRef { decoder in (try? find(key, in: decoder)) != nil }
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        try core._withUnsafeGuaranteedRef { decoder in
            guard let offset = try find(key, in: decoder) else { throw notFound(key) }
            return try decoder.isNil(at: offset)
        }
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try field(key) { (try $0.bool(at: $1), $1 + 1) } }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try field(key) { try $0.string(at: $1) } }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try field(key) { try $0.floatingPoint(at: $1) } }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try field(key) { try $0.float(at: $1) } }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try field(key) { try $0.integer(Int.self, at: $1) } }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try field(key) { try $0.integer(Int8.self, at: $1) } }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try field(key) { try $0.integer(Int16.self, at: $1) } }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try field(key) { try $0.integer(Int32.self, at: $1) } }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try field(key) { try $0.integer(Int64.self, at: $1) } }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try field(key) { try $0.integer(UInt.self, at: $1) } }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try field(key) { try $0.integer(UInt8.self, at: $1) } }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try field(key) { try $0.integer(UInt16.self, at: $1) } }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try field(key) { try $0.integer(UInt32.self, at: $1) } }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try field(key) { try $0.integer(UInt64.self, at: $1) } }
    #if !canImport(Darwin) || canImport(Swift, _version: 6.0)
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    func decode(_ type: Int128.Type, forKey key: Key) throws -> Int128 { try field(key) { try $0.integer(Int128.self, at: $1) } }
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    func decode(_ type: UInt128.Type, forKey key: Key) throws -> UInt128 { try field(key) { try $0.integer(UInt128.self, at: $1) } }
    #endif

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try field(key) { decoder, offset in (try decoder.decodeValue(T.self, at: offset), try decoder.end(ofValueAt: offset)) }
    }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try optionalField(key) { (try $0.bool(at: $1), $1 + 1) } }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try optionalField(key) { try $0.string(at: $1) } }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try optionalField(key) { try $0.floatingPoint(at: $1) } }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try optionalField(key) { try $0.float(at: $1) } }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try optionalField(key) { try $0.integer(Int.self, at: $1) } }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try optionalField(key) { try $0.integer(Int8.self, at: $1) } }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try optionalField(key) { try $0.integer(Int16.self, at: $1) } }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try optionalField(key) { try $0.integer(Int32.self, at: $1) } }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try optionalField(key) { try $0.integer(Int64.self, at: $1) } }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try optionalField(key) { try $0.integer(UInt.self, at: $1) } }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try optionalField(key) { try $0.integer(UInt8.self, at: $1) } }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try optionalField(key) { try $0.integer(UInt16.self, at: $1) } }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try optionalField(key) { try $0.integer(UInt32.self, at: $1) } }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try optionalField(key) { try $0.integer(UInt64.self, at: $1) } }
    #if !canImport(Darwin) || canImport(Swift, _version: 6.0)
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    func decodeIfPresent(_ type: Int128.Type, forKey key: Key) throws -> Int128? { try optionalField(key) { try $0.integer(Int128.self, at: $1) } }
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    func decodeIfPresent(_ type: UInt128.Type, forKey key: Key) throws -> UInt128? { try optionalField(key) { try $0.integer(UInt128.self, at: $1) } }
    #endif

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        try optionalField(key) { decoder, offset in (try decoder.decodeValue(T.self, at: offset), try decoder.end(ofValueAt: offset)) }
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try field(key) { decoder, offset in
            var end = 0
            let nested = try decoder.keyedContainer(NestedKey.self, at: offset, end: &end)
            return (nested, end)
        }
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try field(key) { decoder, offset in
            let nested = try BinaryUnkeyedDecodingContainer(decoder: decoder, at: offset)
            return (nested, nested.end)
        }
    }

    func superDecoder() throws -> any Decoder {
        try superDecoder(named: "super")
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        try superDecoder(named: key.stringValue)
    }

    private func superDecoder(named name: String) throws -> any Decoder {
        let decoder = core.takeUnretainedValue()
        guard let offset = try decoder.field(decoder.keyIndex(AnyKey(stringValue: name), nil), frame: frame) else {
            // A missing key decodes as nil, as `JSONDecoder` has it: a type reading an
            // optional this way reads an archive written before the key existed.
            return BinaryNilDecoder()
        }
        return try decoder.nestedDecoder(at: offset)
    }
}

/// An unkeyed container; small enough (three words, payloads being under 4 GiB) to live
/// inside the `any UnkeyedDecodingContainer` it is returned as, with no box allocated.
struct BinaryUnkeyedDecodingContainer: UnkeyedDecodingContainer {
    let core: Unmanaged<BinaryPayloadDecoder>
    private let storedEnd: UInt32
    private let total: UInt32
    private var storedOffset: UInt32
    private var index: UInt32 = 0

    init(decoder: BinaryPayloadDecoder, at position: Int) throws {
        let body = try decoder.unkeyedBody(at: position)
        core = Unmanaged.passUnretained(decoder)
        storedOffset = UInt32(truncatingIfNeeded: body.start)
        storedEnd = UInt32(truncatingIfNeeded: body.end)
        total = UInt32(truncatingIfNeeded: body.count)
    }

    var end: Int { Int(storedEnd) }
    private var offset: Int { Int(storedOffset) }
    var currentIndex: Int { Int(index) }

    var codingPath: [any CodingKey] { [] }

    /// The element count, as `JSONDecoder` gives it: always known (types check it, such as a
    /// pair decoded from a two-element array). The format stores it, checked against the bytes:
    /// each element takes at least one.
    var count: Int? { Int(total) }

    /// The elements left, when the bytes left hold at least 4 for each: how many a decode may
    /// reserve storage for at once, keeping the reservation a small multiple of the payload's
    /// size; `nil` for more.
    var reservableCount: Int? { Int(total - index) <= (end - offset) / 4 ? Int(total - index) : nil }

    var isAtEnd: Bool { index >= total }

    @inline(__always)
    private mutating func next() throws -> (BinaryPayloadDecoder, Int) {
        guard index < total, offset < end else {
            throw DecodingError.valueNotFound(Any.self, DecodingError.Context(codingPath: [], debugDescription: "The array has no more elements."))
        }
        return (core.takeUnretainedValue(), offset)
    }

    /// Reads the next element with `read`, which returns the value and where it ends. The
    /// decoder is borrowed, not retained.
    @inline(__always)
    private mutating func element<Value>(_ read: (BinaryPayloadDecoder, Int) throws -> (Value, Int)) throws -> Value {
        guard index < total, offset < end else {
            throw DecodingError.valueNotFound(Any.self, DecodingError.Context(codingPath: [], debugDescription: "The array has no more elements."))
        }
        let offset = offset
        do {
            let (value, next) = try core._withUnsafeGuaranteedRef { try read($0, offset) }
            try advance(to: next)
            return value
        } catch let error as DecodingError {
            throw error.under(IndexKey(currentIndex))
        }
    }

    @inline(__always)
    private mutating func advance(to next: Int) throws {
        guard next <= end else { throw BinaryPayloadDecoder.corrupted(.truncated) }
        storedOffset = UInt32(truncatingIfNeeded: next)
        index += 1
    }

    mutating func decodeNil() throws -> Bool {
        let (decoder, offset) = try next()
        guard try decoder.isNil(at: offset) else { return false }
        try advance(to: offset + 1)
        return true
    }

    mutating func decode(_ type: Bool.Type) throws -> Bool { try element { (try $0.bool(at: $1), $1 + 1) } }
    mutating func decode(_ type: String.Type) throws -> String { try element { try $0.string(at: $1) } }
    mutating func decode(_ type: Double.Type) throws -> Double { try element { try $0.floatingPoint(at: $1) } }
    mutating func decode(_ type: Float.Type) throws -> Float { try element { try $0.float(at: $1) } }
    mutating func decode(_ type: Int.Type) throws -> Int { try element { try $0.integer(Int.self, at: $1) } }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try element { try $0.integer(Int8.self, at: $1) } }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try element { try $0.integer(Int16.self, at: $1) } }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try element { try $0.integer(Int32.self, at: $1) } }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try element { try $0.integer(Int64.self, at: $1) } }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try element { try $0.integer(UInt.self, at: $1) } }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try element { try $0.integer(UInt8.self, at: $1) } }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try element { try $0.integer(UInt16.self, at: $1) } }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try element { try $0.integer(UInt32.self, at: $1) } }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try element { try $0.integer(UInt64.self, at: $1) } }
    #if !canImport(Darwin) || canImport(Swift, _version: 6.0)
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    mutating func decode(_ type: Int128.Type) throws -> Int128 { try element { try $0.integer(Int128.self, at: $1) } }
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    mutating func decode(_ type: UInt128.Type) throws -> UInt128 { try element { try $0.integer(UInt128.self, at: $1) } }
    #endif

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        try element { decoder, offset in (try decoder.decodeValue(T.self, at: offset), try decoder.end(ofValueAt: offset)) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let (decoder, offset) = try next()
        var end = 0
        let nested = try decoder.keyedContainer(NestedKey.self, at: offset, end: &end)
        try advance(to: end)
        return nested
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (decoder, offset) = try next()
        let nested = try BinaryUnkeyedDecodingContainer(decoder: decoder, at: offset)
        try advance(to: nested.end)
        return nested
    }

    mutating func superDecoder() throws -> any Decoder {
        let (decoder, offset) = try next()
        try advance(to: try decoder.end(ofValueAt: offset))
        return try decoder.nestedDecoder(at: offset)
    }
}

struct BinarySingleValueDecodingContainer: SingleValueDecodingContainer {
    let core: Unmanaged<BinaryPayloadDecoder>
    let offset: Int

    var codingPath: [any CodingKey] { [] }

    private var decoder: BinaryPayloadDecoder { core.takeUnretainedValue() }

    func decodeNil() -> Bool { (try? decoder.isNil(at: offset)) ?? false }
    func decode(_ type: Bool.Type) throws -> Bool { try decoder.bool(at: offset) }
    func decode(_ type: String.Type) throws -> String { try decoder.string(at: offset).0 }
    func decode(_ type: Double.Type) throws -> Double { try decoder.floatingPoint(at: offset).0 }
    func decode(_ type: Float.Type) throws -> Float { try decoder.float(at: offset).0 }
    func decode(_ type: Int.Type) throws -> Int { try decoder.integer(Int.self, at: offset).0 }
    func decode(_ type: Int8.Type) throws -> Int8 { try decoder.integer(Int8.self, at: offset).0 }
    func decode(_ type: Int16.Type) throws -> Int16 { try decoder.integer(Int16.self, at: offset).0 }
    func decode(_ type: Int32.Type) throws -> Int32 { try decoder.integer(Int32.self, at: offset).0 }
    func decode(_ type: Int64.Type) throws -> Int64 { try decoder.integer(Int64.self, at: offset).0 }
    func decode(_ type: UInt.Type) throws -> UInt { try decoder.integer(UInt.self, at: offset).0 }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try decoder.integer(UInt8.self, at: offset).0 }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try decoder.integer(UInt16.self, at: offset).0 }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try decoder.integer(UInt32.self, at: offset).0 }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try decoder.integer(UInt64.self, at: offset).0 }
    #if !canImport(Darwin) || canImport(Swift, _version: 6.0)
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    func decode(_ type: Int128.Type) throws -> Int128 { try decoder.integer(Int128.self, at: offset).0 }
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    func decode(_ type: UInt128.Type) throws -> UInt128 { try decoder.integer(UInt128.self, at: offset).0 }
    #endif
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.decodeValue(T.self, at: offset) }
}

/// The decoder `superDecoder()` hands out: it decodes the value at one offset.
final class BinaryNestedDecoder: Decoder {
    /// Retained, so that the nesting level this decoder counts can be given back whenever it
    /// goes (see ``BinaryPayloadDecoder/nestedDecoder(at:)``).
    let decoder: BinaryPayloadDecoder
    let offset: Int

    fileprivate init(decoder: BinaryPayloadDecoder, offset: Int) {
        self.decoder = decoder
        self.offset = offset
    }

    deinit {
        decoder.nestedDecoderEnded()
    }

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        var end = 0
        return try decoder.keyedContainer(Key.self, at: offset, end: &end)
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try BinaryUnkeyedDecodingContainer(decoder: decoder, at: offset)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        BinarySingleValueDecodingContainer(core: Unmanaged.passUnretained(decoder), offset: offset)
    }
}
