import PlayheadMedia

/// What identifies a version of a source: its name and, for a local file, its stamp when its
/// asset was made (an asset made before the file was replaced is measured as the old file).
struct SourceVersion: Sendable, Hashable {
    var source: String
    var stamp: FileStamp?

    init(_ asset: Asset) {
        source = asset.source
        stamp = asset.fileStamp
    }
}
