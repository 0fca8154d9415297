import PlayheadMedia

/// What identifies a version of a source: its name, for a local file its stamp when its asset
/// was made (an asset made before the file was replaced is measured as the old file), and which
/// of its tracks play (the French sound of a film is measured apart from its English one).
struct SourceVersion: Sendable, Hashable {
    var source: String
    var stamp: FileStamp?
    var selection: MediaSelection

    init(_ asset: Asset) {
        source = asset.source
        stamp = asset.fileStamp
        selection = asset.selection
    }
}
