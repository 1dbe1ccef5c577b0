import Foundation

/// The encoder `superEncoder()` and `superEncoder(forKey:)` hand out: what it encodes becomes
/// the value of its key (`super`, or the key given) or the element at the index it was asked
/// for at, as `JSONEncoder`'s super encoders place it.
///
/// JSON places the value when the super encoder goes, `{}` if it encoded nothing; a stream
/// places it at its first write, which is the same place as long as the parent container has
/// not gone on meanwhile. When it has (elements added behind an unkeyed super encoder before
/// it wrote), the encoding is left to JSON.
final class BinarySuperEncoder: Encoder {
    /// Where the value goes in the parent container.
    enum Place {
        /// Under a key (its index in the key table).
        case key(Int)
        /// As the element at an index.
        case element(Int)
    }

    /// Held strongly: a super encoder kept past `encode(to:)` must not reach a freed encoder.
    let encoder: BinaryPayloadEncoder
    let parentDepth: Int
    let parentID: UInt32
    let place: Place
    let path: CodingPathStack.Mark
    /// The value this encoder stands for, once placed (`start` -1 before).
    var slot = BinaryPayloadEncoder.ValueSlot(start: -1)
    /// The encoder's count of taken-back writes when the value was placed: one taken back
    /// since may have taken the place with it.
    private var placedAfterRollbacks = 0

    init(encoder: BinaryPayloadEncoder, parentDepth: Int, parentID: UInt32, place: Place, path: CodingPathStack.Mark) {
        self.encoder = encoder
        self.parentDepth = parentDepth
        self.parentID = parentID
        self.place = place
        self.path = path
    }

    deinit {
        // JSON writes the value when its super encoder goes: `{}` if nothing was encoded.
        guard slot.start < 0, !encoder.isFinished else { return }
        claim()
        encoder.writer.byte(BinaryFormat.keyed)
        encoder.writer.fixed(UInt32(0))
    }

    var codingPath: [any CodingKey] { encoder.path(of: path) }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// Writes the key (or counts the element) where the value goes, once, at the first write.
    func claim() {
        guard slot.start < 0 else {
            if encoder.rollbacks != placedAfterRollbacks { encoder.markUnsupported("a super encoder whose place was taken back") }
            return
        }
        if (try? encoder.prepare(parentDepth, parentID)) == nil { encoder.markInterleaved() }
        switch place {
        case .key(let index):
            encoder.writeKey(index: index)
        case .element(let index):
            if encoder.elementCount(at: parentDepth, id: parentID) != index {
                encoder.markUnsupported("a super encoder used after elements were added behind it")
            }
            encoder.countElement(at: parentDepth)
        }
        slot = BinaryPayloadEncoder.ValueSlot(start: encoder.writer.count)
        placedAfterRollbacks = encoder.rollbacks
    }

    /// Encodes `value` as this encoder's value, through a single value container: Foundation's
    /// kinds by the encoder's own tags, anything else through its `encode(to:)` with this
    /// encoder, as `JSONEncoder` hands a referencing encoder to it.
    func encodeValue<T: Encodable>(_ value: T) throws {
        if BinaryFormat.SpecialTypes.shared.kind(of: ObjectIdentifier(T.self)) != nil {
            if let date = value as? Date, !date.timeIntervalSinceReferenceDate.isFinite {
                throw BinaryPayloadEncoder.notFinite(date.timeIntervalSinceReferenceDate, at: codingPath)
            }
            return try encoder.encodeValue(value, entering: nil)
        }
        let depth = encoder.openCount
        let start = encoder.writer.count
        try value.encode(to: self)
        try encoder.close(downTo: depth)
        if encoder.writer.count == start {
            encoder.writer.byte(BinaryFormat.keyed)
            encoder.writer.fixed(UInt32(0))
        }
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        claim()
        let (depth, id) = encoder.container(unkeyed: false, of: self)
        return encoder.keyedContainer(Key.self, depth: depth, id: id, path: path)
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        claim()
        let (depth, id) = encoder.container(unkeyed: true, of: self)
        return BinaryUnkeyedEncodingContainer(encoder: encoder, depth: depth, id: id, path: path)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        BinarySingleValueEncodingContainer(encoder: encoder, owner: self)
    }
}
