import Foundation
import Testing
@testable import AppCacheKit

struct CacheLayoutTests {
    let layout = CacheLayout(rootDirectory: URL(filePath: "/tmp/cache-root/", directoryHint: .isDirectory), schemaVersion: "2.1")

    @Test func pathsFollowTheDocumentedLayout() {
        #expect(layout.rootPath == "/tmp/cache-root")
        #expect(layout.versionPath == "/tmp/cache-root/version-2.1")
        #expect(layout.userPath(nil) == "/tmp/cache-root/version-2.1/shared")
        #expect(layout.userPath("Bob") == "/tmp/cache-root/version-2.1/user-%42ob")
        #expect(layout.archivePath(for: ArchiveKey(user: "alice", cacheName: "MenuItems", key: nil))
            == "/tmp/cache-root/version-2.1/user-alice/%4denu%49tems.archive")
        #expect(layout.archivePath(for: ArchiveKey(user: nil, cacheName: "MenuItems", key: "restaurant 42"))
            == "/tmp/cache-root/version-2.1/shared/%4denu%49tems+restaurant%2042.archive")
    }

    @Test(arguments: FileNameTests.awkward)
    func archiveNamesReadBack(_ key: String) {
        let name = CacheLayout.archiveFileName(cacheName: "Menu Items", key: key)
        if name.contains("~") {
            // Too long for a plain name: hashed, and the archive header holds the names.
            #expect(CacheLayout.archiveName(fromFileName: name) == nil)
        } else {
            let parsed = CacheLayout.archiveName(fromFileName: name)
            #expect(parsed?.cacheName == "Menu Items")
            #expect(parsed?.key == key)
        }
    }

    @Test func defaultCollectionAndEmptyKeyAreDifferentFiles() {
        let defaultName = CacheLayout.archiveFileName(cacheName: "Notes", key: nil)
        let emptyKey = CacheLayout.archiveFileName(cacheName: "Notes", key: "")
        #expect(defaultName != emptyKey)
        #expect(CacheLayout.archiveName(fromFileName: defaultName)?.key == nil)
        #expect(CacheLayout.archiveName(fromFileName: emptyKey)?.key == "")
    }

    @Test func userDirectoriesNeverCollide() {
        let names = Set(FileNameTests.awkward).map(CacheLayout.userDirectoryName) + [CacheLayout.userDirectoryName(nil)]
        #expect(Set(names.map { $0.lowercased() }).count == names.count)
        for name in names {
            #expect(name.utf8.count <= FileName.maximumLength)
            #expect(!name.hasPrefix("."))
            #expect(!name.contains("/"))
        }
    }

    @Test func versionNamesAreEncoded() {
        #expect(CacheLayout(rootDirectory: URL(filePath: "/r"), schemaVersion: "../x").versionDirectoryName == "version-%2e.%2fx")
        #expect(CacheLayout(rootDirectory: URL(filePath: "/r"), schemaVersion: "V2").versionDirectoryName == "version-%562")
    }

    @Test func relativePathsReadBackAsTheirCollection() {
        for key in [ArchiveKey(user: "Zoë", cacheName: "MenuItems", key: "a/b"), ArchiveKey(user: nil, cacheName: "X", key: nil)] {
            #expect(CacheLayout.archiveKey(fromRelativePath: layout.relativePath(for: key)) == key)
        }
        let long = ArchiveKey(user: "u", cacheName: "N", key: String(repeating: "k", count: 500))
        #expect(CacheLayout.archiveKey(fromRelativePath: layout.relativePath(for: long)) == nil)
    }
}
