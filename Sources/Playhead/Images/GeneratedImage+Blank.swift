import PlayheadMedia

extension GeneratedImage {
    /// Whether the picture is blank: almost uniform — black, white or one colour, as at a fade or
    /// the first frames of a clip. At least 99.5% of its pixels (sampled on a grid of at most about
    /// 40,000) have a brightness within a band of 24 levels (of 256), and the same holds for each
    /// of the red, green and blue values, so that a dim picture with something in it, a picture of
    /// two colours of the same brightness, or a title card's few letters on black, is not blank.
    public var isBlank: Bool {
        let count = size.width * size.height
        guard count > 0 else { return true }
        let stride = max(1, Int((Double(count) / 40_000).squareRoot().rounded(.down)))
        var histograms = [[Int]](repeating: [Int](repeating: 0, count: 256), count: 4)
        var samples = 0
        pixels.withUnsafeBufferPointer { bytes in
            for y in Swift.stride(from: 0, to: size.height, by: stride) {
                for x in Swift.stride(from: 0, to: size.width, by: stride) {
                    let at = (y * size.width + x) * 3
                    let r = Int(bytes[at]), g = Int(bytes[at + 1]), b = Int(bytes[at + 2])
                    histograms[0][r] += 1
                    histograms[1][g] += 1
                    histograms[2][b] += 1
                    histograms[3][(77 * r + 150 * g + 29 * b) >> 8] += 1
                    samples += 1
                }
            }
        }
        let needed = (samples * 995 + 999) / 1000
        return histograms.allSatisfy { Self.widestBand(of: $0, width: 24) >= needed }
    }

    /// The most samples any band of `width` consecutive levels holds.
    private static func widestBand(of histogram: [Int], width: Int) -> Int {
        var sum = histogram[0..<width].reduce(0, +)
        var best = sum
        for level in width..<histogram.count {
            sum += histogram[level] - histogram[level - width]
            best = max(best, sum)
        }
        return best
    }
}
