import Foundation

/// An unkeyed container of the binary encoder; small enough (three words) to live inside the
/// `any UnkeyedEncodingContainer` it is returned as, with no box allocated.
///
/// An element is written as the encoder streams it, once this container is the innermost one
/// open. An element that throws while it encodes leaves nothing behind and is not counted, as
/// in JSON; a number that is not finite is refused with JSON's error at the element's index.
struct BinaryUnkeyedEncodingContainer: UnkeyedEncodingContainer {
    let encoder: BinaryPayloadEncoder
    private let storedDepth: UInt32
    let id: UInt32
    private let path: CodingPathStack.Mark
    private var storedCount: UInt32 = 0

    init(encoder: BinaryPayloadEncoder, depth: Int, id: UInt32, path: CodingPathStack.Mark) {
        self.encoder = encoder
        storedDepth = UInt32(truncatingIfNeeded: depth)
        self.id = id
        self.path = path
    }

    var depth: Int { Int(storedDepth) }

    /// The elements in the container, counted by the encoder while it is open (another handle
    /// to it, from `unkeyedContainer()` asked for again, adds to the same count, as in JSON).
    var count: Int { encoder.elementCount(at: depth, id: id) ?? Int(storedCount) }

    var codingPath: [any CodingKey] { encoder.path(of: path) }

    /// Writes one more element of `T` with `write`.
    @inline(__always)
    private mutating func element<T>(_ type: T.Type, _ write: (BinaryPayloadEncoder) -> Void) throws {
        try encoder.prepare(depth, id)
        storedCount &+= 1
        encoder.countElement(at: depth)
        encoder.countElement(T.self)
        write(encoder)
    }

    /// Like ``element(_:_:)`` for a write that may throw: what it wrote is taken back then.
    @inline(__always)
    private mutating func throwingElement<T>(_ type: T.Type, _ write: (BinaryPayloadEncoder) throws -> Void) throws {
        try encoder.prepare(depth, id)
        let point = encoder.writePoint()
        storedCount &+= 1
        encoder.countElement(at: depth)
        encoder.countElement(T.self)
        do {
            try write(encoder)
        } catch {
            encoder.rollBack(to: point)
            encoder.uncountElement(at: depth, id: id)
            storedCount &-= 1
            throw error
        }
    }

    mutating func encodeNil() throws { try element(Int?.self) { $0.writeNil() } }
    mutating func encode(_ value: Bool) throws { try element(Bool.self) { $0.writeBool(value) } }
    mutating func encode(_ value: String) throws { try element(String.self) { $0.writeString(value) } }
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

    mutating func encode(_ value: Double) throws {
        guard value.isFinite else { throw BinaryPayloadEncoder.notFinite(value, at: encoder.path(of: path, appending: .index(count))) }
        try element(Double.self) { $0.writeDouble(value) }
    }

    mutating func encode(_ value: Float) throws {
        guard value.isFinite else { throw BinaryPayloadEncoder.notFinite(value, at: encoder.path(of: path, appending: .index(count))) }
        try element(Float.self) { $0.writeFloat(value) }
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let (index, path) = (count, path)
        try throwingElement(T.self) { try $0.encodeValue(value, entering: .index(index), from: path) }
    }

    /// Counts and opens a container as the next element.
    private mutating func nested(unkeyed: Bool) -> (depth: Int, id: UInt32, path: CodingPathStack.Mark) {
        let index = count
        if (try? encoder.prepare(depth, id)) == nil { encoder.markInterleaved() }
        encoder.countElement(at: depth)
        storedCount &+= 1
        let (depth, id) = encoder.openContainer(unkeyed: unkeyed)
        return (depth, id, encoder.mark(path, appending: .index(index)))
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        let (depth, id, path) = nested(unkeyed: false)
        return encoder.keyedContainer(NestedKey.self, depth: depth, id: id, path: path)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let (depth, id, path) = nested(unkeyed: true)
        return BinaryUnkeyedEncodingContainer(encoder: encoder, depth: depth, id: id, path: path)
    }

    mutating func superEncoder() -> any Encoder {
        BinarySuperEncoder(
            encoder: encoder, parentDepth: depth, parentID: id, place: .element(count), path: encoder.mark(path, appending: .index(count)))
    }
}
