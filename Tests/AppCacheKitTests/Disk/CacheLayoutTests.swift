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
        #expect(layout.absolutePath(layout.archivePath(for: ArchiveKey(user: "alice", cacheName: "MenuItems", key: nil)))
            == "/tmp/cache-root/version-2.1/user-alice/MenuItems.archive")
        #expect(layout.absolutePath(layout.archivePath(for: ArchiveKey(user: nil, cacheName: "MenuItems", key: "restaurant 42")))
            == "/tmp/cache-root/version-2.1/shared/MenuItems+restaurant 42.archive")
    }

    /// The root's path is what standardizing its URL gives, whether or not the path needed it
    /// (instances name their shared services by it).
    @Test(arguments: [
        "/tmp/cache-root", "/tmp/cache-root/", "/tmp/./cache-root", "/tmp/x/../cache-root", "/tmp//cache-root", "/tmp/cache-root/.",
        "/tmp/cache root/Grüße", "/tmp/cache%20root", "/", "/tmp/.hidden/cache", "/tmp/a..b/c.",
        // A slash that ends a grapheme cluster begun by a prepended mark: only the slash goes.
        "/tmp/\u{0600}/",
    ])
    func rootPathIsTheStandardizedOne(path: String) {
        for url in [URL(filePath: path), URL(filePath: path, directoryHint: .isDirectory)] {
            var standard = url.standardizedFileURL.path(percentEncoded: false)
            while standard.unicodeScalars.count > 1 && standard.unicodeScalars.last == "/" { standard.unicodeScalars.removeLast() }
            #expect(CacheLayout.rootPath(of: url) == standard, "\(url)")
        }
    }

    /// The one-pass check agrees with splitting the path into its segments.
    @Test func aPathIsStandardWithNoEmptyAndNoDotSegment() {
        let paths = [
            "", "/", "//", "/a", "/a/", "/a//b", "a", ".", "..", "...", "/.", "/..", "/...", "/a/.", "/a/..", "/a/./b", "/a/../b",
            "/.a", "/a.", "/..a", "/a../b", "./a", "../a", "a/.", "/a/b/", "/a/b//", "/.../b",
        ]
        for path in paths {
            let expected = !path.isEmpty && !path.contains("//") && !path.split(separator: "/").contains { $0 == "." || $0 == ".." }
            #expect(CacheLayout.isStandard(path) == expected, "\(path)")
        }
    }

    /// Names a person recognises, a hash only where the plain name could be another's.
    @Test func archiveNamesAreReadable() {
        func name(_ cacheName: String, _ key: String?, caseInsensitive: Bool = false) -> String {
            ArchiveFileName.make(cacheName: cacheName, key: key, caseInsensitiveVolume: caseInsensitive)
        }
        #expect(name("MenuItems", "restaurant-42") == "MenuItems+restaurant-42.archive")
        #expect(name("Notes", "Grüße aus Zürich") == "Notes+Grüße aus Zürich.archive")
        #expect(name("Notes", "東京") == "Notes+東京.archive")
        #expect(name("Notes", nil) != name("Notes", ""), "the default collection and the empty key")
        // A replaced character makes the name lossy: it gets a hash.
        #expect(name("Notes", "a/b").hasPrefix("Notes+a_b~"))
        #expect(name("Notes", "a/b") != name("Notes", "a_b"))
        #expect(name("Notes", "a_b") == "Notes+a_b.archive")
        // On a volume that ignores case, only names the same in every case stay plain.
        #expect(name("menuitems", "k", caseInsensitive: true) == "menuitems+k.archive")
        #expect(name("MenuItems", "k", caseInsensitive: true).hasPrefix("MenuItems+k~"))
        #expect(name("MenuItems", "k", caseInsensitive: true) != name("menuitems", "k", caseInsensitive: true))
        // Strings Swift considers equal are one name.
        #expect(name("Notes", "e\u{301}") == name("Notes", "\u{e9}"))
    }

    @Test(arguments: FileNameTests.awkward)
    func archiveNamesStayInsideTheirDirectoryAndApart(_ key: String) {
        for caseInsensitive in [false, true] {
            let name = ArchiveFileName.make(cacheName: "Menu Items", key: key, caseInsensitiveVolume: caseInsensitive)
            #expect(name.hasSuffix(".archive"))
            #expect(name.utf8.count <= ArchiveFileName.maximumLength)
            #expect(!name.contains("/") && !name.contains("\0") && !name.hasPrefix("."))
            #expect(CachePath.isValidComponent(name))
            #expect(!name.unicodeScalars.contains { $0.properties.generalCategory == .control })
        }
    }

    @Test func namesThatWouldCollideDoNot() {
        let keys = Set(FileNameTests.awkward).sorted() + ["a/b", "a_b", "a\\b", "A", "a", "Ä", "ä", "ß", "ss", "ﬁ", "fi"]
        for caseInsensitive in [false, true] {
            let names = keys.map { ArchiveFileName.make(cacheName: "Notes", key: $0, caseInsensitiveVolume: caseInsensitive) }
            let distinct = caseInsensitive ? Set(names.map { $0.lowercased() }) : Set(names)
            #expect(distinct.count == Set(keys).count)
        }
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

    /// What the journal writes of a layout path reads back as the same path.
    @Test(arguments: FileNameTests.awkward)
    func archivePathsReadBackFromTheirJournalForm(_ key: String) {
        for user in [key, "Zoë", nil] where user != "" {
            let path = layout.archivePath(for: ArchiveKey(user: user, cacheName: "MenuItems", key: key))
            #expect(CachePath(relative: path.relative) == path)
        }
    }
}
