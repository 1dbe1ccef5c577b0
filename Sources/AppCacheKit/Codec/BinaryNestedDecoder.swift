import Foundation

/// The decoder `superDecoder()` and `superDecoder(forKey:)` hand out: it decodes the value at
/// one offset (a `nil` that is nowhere in the payload, for a missing key), with the coding
/// path of that key or element, as `JSONDecoder`'s super decoders do.
///
/// It counts as one level of nesting for as long as it exists, since a type may decode its own
/// kind through it, as deep as a payload goes, without passing through
/// ``BinaryPayloadDecoder/decodeValue(_:at:entering:)``.
final class BinaryNestedDecoder: Decoder {
    /// Held strongly: a super decoder kept past `init(from:)` keeps the payload readable.
    let decoder: BinaryPayloadDecoder
    let offset: Int
    let path: CodingPathStack.Mark

    /// - Throws: `DecodingError.dataCorrupted` past ``BinaryFormat/maximumReadDepth``.
    init(decoder: BinaryPayloadDecoder, offset: Int, path: CodingPathStack.Mark) throws {
        try decoder.enterLevel()
        self.decoder = decoder
        self.offset = offset
        self.path = path
    }

    deinit {
        decoder.leaveLevel()
    }

    var codingPath: [any CodingKey] { decoder.path(of: path) }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        var end = 0
        do {
            return try decoder.keyedContainer(Key.self, at: offset, path: path, end: &end)
        } catch let failure as BinaryValueFailure {
            throw failure.error(at: codingPath)
        }
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        do {
            return try BinaryUnkeyedDecodingContainer(decoder: decoder, at: offset, path: path)
        } catch let failure as BinaryValueFailure {
            throw failure.error(at: codingPath)
        }
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        BinarySingleValueDecodingContainer(decoder: decoder, nested: self)
    }

    /// The value this decoder stands for, as a `type`: Foundation's kinds as the decoder reads
    /// them, anything else through its own `init(from:)` with this decoder.
    func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
        if BinaryFormat.SpecialTypes.shared.kind(of: ObjectIdentifier(type)) != nil {
            return try decoder.decodeValue(type, at: offset, entering: nil)
        }
        return try type.init(from: self)
    }
}
