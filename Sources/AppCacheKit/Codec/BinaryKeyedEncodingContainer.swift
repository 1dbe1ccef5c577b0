import Foundation

/// A keyed container of the binary encoder: the encoder and the number of its frame there.
///
/// A field is written as the encoder streams it, once this container is the innermost one
/// open (see ``BinaryPayloadEncoder/prepare(_:_:)``). A value that throws while it encodes
/// leaves no field behind, as in JSON; a number that is not finite is refused with JSON's
/// error at this container's path plus the key.
struct BinaryKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: BinaryPayloadEncoder
    let frame: Int

    var codingPath: [any CodingKey] { encoder.path(of: encoder.frame(frame).path) }

    /// The path of the field for `key`.
    private func path(_ key: Key) -> [any CodingKey] {
        encoder.path(of: encoder.frame(frame).path, appending: encoder.component(key))
    }

    /// Writes `key`, then the value with `write`, once this container is the innermost open one.
    @inline(__always)
    private func field(_ key: Key, _ write: (BinaryPayloadEncoder) -> Void) throws {
        let frame = encoder.frame(frame)
        try encoder.prepare(frame.depth, frame.id)
        encoder.writeKey(key, frame.indexes)
        write(encoder)
    }

    /// Like ``field(_:_:)`` for a write that may throw: what it wrote is taken back then.
    @inline(__always)
    private func throwingField(_ key: Key, _ write: (BinaryPayloadEncoder) throws -> Void) throws {
        let frame = encoder.frame(frame)
        try encoder.prepare(frame.depth, frame.id)
        let point = encoder.writePoint()
        encoder.writeKey(key, frame.indexes)
        do {
            try write(encoder)
        } catch {
            encoder.rollBack(to: point)
            throw error
        }
    }

    mutating func encodeNil(forKey key: Key) throws { try field(key) { $0.writeNil() } }
    mutating func encode(_ value: Bool, forKey key: Key) throws { try field(key) { $0.writeBool(value) } }
    mutating func encode(_ value: String, forKey key: Key) throws { try field(key) { $0.writeString(value) } }
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

    mutating func encode(_ value: Double, forKey key: Key) throws {
        guard value.isFinite else { throw BinaryPayloadEncoder.notFinite(value, at: path(key)) }
        try field(key) { $0.writeDouble(value) }
    }

    mutating func encode(_ value: Float, forKey key: Key) throws {
        guard value.isFinite else { throw BinaryPayloadEncoder.notFinite(value, at: path(key)) }
        try field(key) { $0.writeFloat(value) }
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        let path = encoder.frame(frame).path
        try throwingField(key) { try $0.encodeValue(value, entering: encoder.component(key), from: path) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        let frame = encoder.frame(frame)
        let (depth, id) = encoder.nestedContainer(unkeyed: false, underKey: encoder.keyIndex(key, frame.indexes), in: frame.depth, id: frame.id)
        return encoder.keyedContainer(NestedKey.self, depth: depth, id: id, path: encoder.mark(frame.path, appending: encoder.component(key)))
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        let frame = encoder.frame(frame)
        let (depth, id) = encoder.nestedContainer(unkeyed: true, underKey: encoder.keyIndex(key, frame.indexes), in: frame.depth, id: frame.id)
        return BinaryUnkeyedEncodingContainer(encoder: encoder, depth: depth, id: id, path: encoder.mark(frame.path, appending: encoder.component(key)))
    }

    mutating func superEncoder() -> any Encoder {
        superEncoder(under: AnyKey.super)
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        superEncoder(under: key)
    }

    private func superEncoder<SuperKey: CodingKey>(under key: SuperKey) -> any Encoder {
        let frame = encoder.frame(frame)
        let index = SuperKey.self == Key.self ? encoder.keyIndex(key, frame.indexes) : encoder.keyIndex(key, nil)
        return BinarySuperEncoder(
            encoder: encoder, parentDepth: frame.depth, parentID: frame.id, place: .key(index),
            path: encoder.mark(frame.path, appending: encoder.component(key)))
    }
}
