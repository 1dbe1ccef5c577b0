import Foundation

/// A keyed container of the binary decoder: the decoder and the number of its frame there.
///
/// The decoder is held strongly, so a model may keep the container past its `init(from:)`
/// and read it later (see ``BinaryPayloadDecoder``). Errors are the ones `JSONDecoder` throws:
/// a missing key is `keyNotFound` at the container's path; a value that does not fit is an
/// error at the container's path plus the key.
struct BinaryKeyedDecodingContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: BinaryPayloadDecoder
    let frame: Int

    var codingPath: [any CodingKey] { decoder.path(of: decoder.frame(frame).path) }

    var allKeys: [Key] {
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
    private func find(_ key: Key) throws -> Int? {
        try decoder.field(decoder.keyIndex(key, decoder.frame(frame).indexes), frame: frame)
    }

    private func notFound(_ key: Key) -> DecodingError {
        .keyNotFound(key, DecodingError.Context(codingPath: codingPath, debugDescription: "No value associated with key \(key) (\"\(key.stringValue)\")."))
    }

    /// The path of the field for `key`.
    private func path(_ key: Key) -> [any CodingKey] {
        decoder.path(of: decoder.frame(frame).path, appending: decoder.component(key))
    }

    /// Reads the field for `key` with `read`, which returns the value and where it ends, and
    /// moves the container past it.
    @inline(__always)
    private func field<Value>(_ key: Key, _ read: (BinaryPayloadDecoder, Int) throws -> (Value, Int)) throws -> Value {
        guard let offset = try find(key) else { throw notFound(key) }
        do {
            let (value, end) = try read(decoder, offset)
            decoder.setNext(frame, to: end)
            return value
        } catch let failure as BinaryValueFailure {
            throw failure.error(at: path(key))
        }
    }

    /// Like ``field(_:_:)``, with `nil` for a missing field or a stored `nil`, in one look-up
    /// (the default implementation of `decodeIfPresent` takes three).
    @inline(__always)
    private func optionalField<Value>(_ key: Key, _ read: (BinaryPayloadDecoder, Int) throws -> (Value, Int)) throws -> Value? {
        guard let offset = try find(key) else { return nil }
        do {
            if try decoder.isNil(at: offset) {
                decoder.setNext(frame, to: offset + 1)
                return nil
            }
            let (value, end) = try read(decoder, offset)
            decoder.setNext(frame, to: end)
            return value
        } catch let failure as BinaryValueFailure {
            throw failure.error(at: path(key))
        }
    }

    func contains(_ key: Key) -> Bool {
        (try? find(key)) != nil
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        guard let offset = try find(key) else { throw notFound(key) }
        return try decoder.isNil(at: offset)
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
        try field(key) { decoder, offset in (try decoder.decodeValue(type, at: offset, entering: decoder.component(key), from: decoder.frame(frame).path), try decoder.end(ofValueAt: offset)) }
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
        try optionalField(key) { decoder, offset in (try decoder.decodeValue(type, at: offset, entering: decoder.component(key), from: decoder.frame(frame).path), try decoder.end(ofValueAt: offset)) }
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try field(key) { decoder, offset in
            var end = 0
            let path = decoder.mark(decoder.frame(frame).path, appending: decoder.component(key))
            return (try decoder.keyedContainer(NestedKey.self, at: offset, path: path, end: &end), end)
        }
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try field(key) { decoder, offset in
            let path = decoder.mark(decoder.frame(frame).path, appending: decoder.component(key))
            return (try BinaryUnkeyedDecodingContainer(decoder: decoder, at: offset, path: path), try decoder.end(ofValueAt: offset))
        }
    }

    func superDecoder() throws -> any Decoder {
        try superDecoder(under: AnyKey.super)
    }

    func superDecoder(forKey key: Key) throws -> any Decoder {
        try superDecoder(under: key)
    }

    /// A decoder of the value under `key`; of `nil` when there is none, as `JSONDecoder` has
    /// it (a type reading an optional this way reads an archive written before the key existed).
    private func superDecoder<SuperKey: CodingKey>(under key: SuperKey) throws -> any Decoder {
        let offset = try decoder.field(decoder.keyIndex(key, nil), frame: frame) ?? BinaryPayloadDecoder.nilOffset
        return try BinaryNestedDecoder(decoder: decoder, offset: offset, path: decoder.mark(decoder.frame(frame).path, appending: decoder.component(key)))
    }
}
