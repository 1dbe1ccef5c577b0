import Foundation
import Testing

@testable import AppCacheKit

/// The record of archives the app kept but could not decode, read as untrusted bytes, and the
/// way a decoding error is told.
@Suite struct ModelMismatchLogTests {
    @Test func entriesRoundTripTheNewestKept() {
        var entries: [ModelMismatchLog.Entry] = []
        for index in 0..<(ModelMismatchLog.capacity + 5) {
            entries = ModelMismatchLog.adding(
                .init(archive: CachePath(directory: "user-a", name: "Notes+\(index).archive"), size: index, cachedMilliseconds: 7, reason: "r\t\(index)\n"),
                to: entries)
        }
        let decoded = ModelMismatchLog.decode(ModelMismatchLog.encode(entries))
        #expect(decoded.count == ModelMismatchLog.capacity)
        #expect(decoded.last?.archive.name == "Notes+\(ModelMismatchLog.capacity + 4).archive")
        #expect(decoded.last?.reason == "r \(ModelMismatchLog.capacity + 4) ", "tabs and newlines cannot split a line")
        // The same archive again replaces its line.
        let replaced = ModelMismatchLog.adding(.init(archive: decoded[0].archive, size: 1, cachedMilliseconds: 1, reason: "new"), to: decoded)
        #expect(replaced.filter { $0.archive == decoded[0].archive }.map(\.reason) == ["new"])
    }

    @Test func linesThatCouldNotHaveBeenWrittenAreSkipped() {
        let text = """
            ../../outside/sentinel\t1\t2\tx
            /etc/passwd\t1\t2\tx
            user-a/../x\t1\t2\tx
            user-a/Notes.archive\t-1\t2\tx
            user-a/Notes.archive\tmany\t2\tx
            user-a/.\t1\t2\tx
            user-a/Notes.archive\t10\t20\tkept
            /Shared.archive\t10\t20\tshared space
            """
        let entries = ModelMismatchLog.decode(Data(text.utf8))
        #expect(entries.map(\.reason) == ["kept", "shared space"])
        #expect(entries.last?.archive == CachePath(directory: nil, name: "Shared.archive"))
        #expect(ModelMismatchLog.decode(Data(count: ModelMismatchLog.maximumSize + 1)).isEmpty, "too long: nothing")
    }

    @Test func aDecodingErrorIsToldWithItsPathInTheItems() throws {
        struct Priced: Codable { var name: String; var price: Double }
        struct Changed: Codable { var name: String; var price: String }
        struct Added: Codable { var name: String; var price: Double; var minutes: Int }
        let payload = try PayloadCodec.binary.encodeItems([Priced(name: "a", price: 1), Priced(name: "b", price: 2)])
        for codec in [PayloadCodec.binary] {
            do {
                _ = try codec.decodeItems(Changed.self, from: payload)
                Issue.record("decoded")
            } catch {
                #expect(DecodingProblem.describe(error) == "`items[0].price`: expected String, found Double")
            }
            do {
                _ = try codec.decodeItems(Added.self, from: payload)
                Issue.record("decoded")
            } catch {
                #expect(DecodingProblem.describe(error).hasPrefix("`items[0].minutes`: missing"))
            }
        }
        let json = try JSONEncoder().encode([Priced(name: "a", price: 1), Priced(name: "b", price: 2)])
        do {
            _ = try PayloadCodec.json.decodeItems(Added.self, from: json)
            Issue.record("decoded")
        } catch {
            #expect(DecodingProblem.describe(error).hasPrefix("`items[0].minutes`: missing"))
        }
    }
}
