public import Foundation

/// How a collection's items are encoded in its archive.
///
/// Each archive's header records its codec, so archives written with either stay readable
/// whatever ``AppCache/Configuration/payloadCodec`` says now.
public enum PayloadCodec: Sendable, Hashable, CaseIterable {
    /// `JSONEncoder` and `JSONDecoder` with their default strategies: archives a person can
    /// read, for debugging.
    case json

    /// AppCache's own binary format, the default: several times faster to encode and decode
    /// than JSON and a quarter smaller, and giving back exactly what `JSONEncoder` and
    /// `JSONDecoder` give for the same items (values, conversions between changed property
    /// types, errors and their coding paths), or refusing items it cannot stream, which the
    /// cache then stores as JSON. Fields are stored by name (once per archive), so models
    /// evolve as with JSON: a new optional property reads as `nil`, a removed or reordered one
    /// changes nothing, a `Float` that became a `Double` reads as JSON reads it.
    case binary

    /// Encodes any value as this codec stores it: the same bytes an archive's payload holds.
    ///
    /// For measurements, tests and storage of your own that wants the cache's codec.
    ///
    /// - Throws: what the value's `encode(to:)` throws; `EncodingError.invalidValue` where
    ///   `JSONEncoder` throws one (a `Double` or `Float` that is not finite, containers nested
    ///   more than 511 deep) or would trap (a single value encoded twice); for ``binary``, also
    ///   when a hand-written `encode(to:)` uses containers in a way a stream cannot follow,
    ///   such as writing to a container after closing one nested in it (the cache then stores
    ///   that collection as JSON).
    /// - Complexity: O(n) in the encoded size.
    public func encode<Value: Encodable>(_ value: Value) throws -> Data {
        switch self {
        case .json:
            return try JSONEncoder().encode(value)
        case .binary:
            return try Self.reportingUnsupported(value) { try BinaryPayloadEncoder.encode(value).payload }
        }
    }

    /// Decodes a value that ``encode(_:)`` encoded.
    ///
    /// `type` is honoured as given: a subclass's metatype passed as its superclass's decodes a
    /// subclass instance, as `JSONDecoder` does.
    ///
    /// - Throws: `DecodingError` when `data` is not a `Value`, or is damaged: every length and
    ///   count in it is checked, so damage is an error, never a crash.
    public func decode<Value: Decodable>(_ type: Value.Type, from data: Data) throws -> Value {
        switch self {
        case .json: try Self.jsonDecoder.decode(type, from: data)
        case .binary: try BinaryPayloadDecoder.decode(type, from: data)
        }
    }

    /// Encodes a collection of `Model`: the same bytes as ``encode(_:)`` of the array, faster
    /// for ``binary`` (it reaches each item directly rather than through `Array`'s generic
    /// `encode(to:)`). What the cache itself does when it writes a collection.
    ///
    /// - Throws: as ``encode(_:)``.
    /// - Complexity: O(n) in the encoded size.
    public func encodeItems<Model: Encodable>(_ items: [Model]) throws -> Data {
        switch self {
        case .json:
            return try JSONEncoder().encode(items)
        case .binary:
            return try Self.reportingUnsupported(items) {
                try BinaryPayloadEncoder.encodeItems(items, capacityHint: 64 + items.count * 64).payload
            }
        }
    }

    /// Decodes a collection that ``encode(_:)`` encoded as an array of `Model`: the same as
    /// `decode([Model].self, from:)`, faster for ``binary`` (its storage is reserved at once).
    public func decodeItems<Model: Decodable>(_ type: Model.Type, from data: Data) throws -> [Model] {
        switch self {
        case .json: try Self.jsonDecoder.decode([Model].self, from: data)
        case .binary: try BinaryPayloadDecoder.decodeItems(type, from: data)
        }
    }

    /// ``decodeItems(_:from:)`` of bytes lent for the call (an archive's payload in its read
    /// buffer): the binary codec reads them where they are.
    func decodeItems<Model: Decodable>(_ type: Model.Type, fromBytes bytes: UnsafeRawBufferPointer) throws -> [Model] {
        switch self {
        // Copied for JSON: a model may keep its decoding container past `init(from:)`, and
        // JSON's containers read the decoder's data, which must outlive the read's buffer.
        case .json: try Self.jsonDecoder.decode([Model].self, from: Data(bytes))
        case .binary: try BinaryPayloadDecoder.decodeItems(type, from: bytes)
        }
    }

    /// The decoder every `.json` payload is read with: made once (its options never change,
    /// and decoding with it from any thread at once is safe), not once per read.
    private static let jsonDecoder = JSONDecoder()

    /// The number an archive header stores for this codec (format 2, byte 6): part of the file
    /// format, never renumbered.
    var headerValue: UInt16 {
        switch self {
        case .json: 1
        case .binary: 2
        }
    }

    /// The codec a header's codec field names, or `nil` for a number this build does not know.
    init?(headerValue: UInt16) {
        switch headerValue {
        case 1: self = .json
        case 2: self = .binary
        default: return nil
        }
    }

    /// The payload for `items`, and an estimate of the memory the items take decoded.
    ///
    /// A binary encoding that the items' `encode(to:)` does not let the encoder stream falls
    /// back to JSON (the same items, read back as JSON reads them): the returned codec says
    /// which was used, and `refusal` why the binary encoder refused.
    func encode<Model: Encodable>(_ items: [Model]) throws -> (payload: Data, codec: PayloadCodec, decodedSize: Int, refusal: String?) {
        let binary: (payload: Data, decodedSize: Int)
        do {
            binary = try BinaryPayloadEncoder.encodeItems(items, capacityHint: 64 + items.count * 64)
        } catch let unsupported as BinaryEncodingUnsupported {
            let payload = try JSONEncoder().encode(items)
            return (payload, .json, 4 * payload.count, self == .binary ? unsupported.reason : nil)
        }
        switch self {
        case .binary: return (binary.payload, .binary, binary.decodedSize, nil)
        case .json: return (try JSONEncoder().encode(items), .json, binary.decodedSize, nil)
        }
    }

    /// Runs a binary encoding of `value`, turning ``BinaryEncodingUnsupported`` into the
    /// `EncodingError` callers of the public methods expect.
    private static func reportingUnsupported(_ value: Any, _ encoding: () throws -> Data) throws -> Data {
        do {
            return try encoding()
        } catch let unsupported as BinaryEncodingUnsupported {
            throw EncodingError.invalidValue(
                value, EncodingError.Context(codingPath: [], debugDescription: "The binary codec cannot stream \(unsupported.reason)."))
        }
    }
}
