import PlayheadMedia

extension GeneratedImage {
    /// Encodes the image and writes it to `path` on a worker thread, safely (``SafeFile``): under
    /// a temporary name, synced, then given `path` only if nothing is there (`output.outputExists`
    /// otherwise). The folder itself is not synced: sync it once after writing many.
    package func write(to path: String, as format: ImageSequenceSink.Format) async throws(PlayheadError) {
        let image = self
        try await WorkerPool.shared.value("playhead.image-file") { () throws(PlayheadError) in
            let bytes = try image.encoded(as: format)
            try SafeFile.write(bytes, to: path, replacing: false, syncFolder: false)
        }
    }
}
