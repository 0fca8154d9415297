internal import CFFmpeg

/// The picture a ``Compositor`` draws: its size, its frame rate and the colour behind every layer.
public struct CompositionCanvas: Sendable, Hashable {
    /// The output size (even width and height: the canvas is 4:2:0 for Y4M and MP4).
    public var size: PixelSize
    /// Frames per second, as a ratio (`30/1`, `30000/1001`).
    public var frameRate: FrameRate
    /// What shows where no layer draws.
    public var background: RGBColor

    /// A canvas; ``check()`` says whether pictures of its size can be made.
    /// - Parameters:
    ///   - size: the output size (even width and height).
    ///   - frameRate: frames per second.
    ///   - background: what shows where no layer draws.
    public init(size: PixelSize, frameRate: FrameRate, background: RGBColor = .black) {
        self.size = size
        self.frameRate = frameRate
        self.background = background
    }

    /// Throws `state.invalidArgument` unless pictures of this size can be made: even sides of at
    /// least 2, at most 16384, within FFmpeg's own limit on a picture's area (16384x16000 is, 16384x16384
    /// is not).
    /// - Throws: ``PlayheadError`` with `state.invalidArgument` when a side is odd, below 2 or above 16384, or the
    ///   picture is too large for FFmpeg.
    public func check() throws(PlayheadError) {
        let (w, h) = (size.width, size.height)
        // FFmpeg's check logs why it refuses: through Playhead's callback, never to stderr.
        FFmpegLogging.installCallback()
        guard w >= 2, h >= 2, w % 2 == 0, h % 2 == 0, w <= 16384, h <= 16384, av_image_check_size(UInt32(w), UInt32(h), 0, nil) >= 0 else {
            throw PlayheadError(
                code: .invalidArgument,
                message:
                    "the canvas must be an even size, 2 … 16384 a side and small enough for FFmpeg to allocate (about 268 million pixels with its margins), not \(size)"
            )
        }
    }

    /// The time of output frame `n`: `n / rate`, exactly.
    /// - Parameter n: the frame's number, from 0.
    /// - Returns: `n × denominator / numerator` seconds, on a timescale of the rate's numerator.
    public func time(ofFrame n: Int) -> MediaTime {
        MediaTime(value: Int64(n) * Int64(frameRate.denominator), timescale: Int32(frameRate.numerator))
    }
}

/// A frame rate as a ratio of whole numbers.
public struct FrameRate: Sendable, Hashable, CustomStringConvertible {
    public private(set) var numerator: Int
    public private(set) var denominator: Int

    /// `numerator / denominator` frames a second; both 1 … 1,000,000.
    /// - Parameters:
    ///   - numerator: frames in `denominator` seconds.
    ///   - denominator: the seconds `numerator` frames last.
    public init?(numerator: Int, denominator: Int = 1) {
        guard (1...1_000_000).contains(numerator), (1...1_000_000).contains(denominator) else { return nil }
        self.numerator = numerator
        self.denominator = denominator
    }

    /// `30`, `29.97` (as 30000/1001), `24000/1001`, `25/1`.
    /// - Parameter text: a ratio `N/D`, or a number of frames a second up to 1000: one close to an NTSC rate
    ///   (`29.97`, `23.976`) is taken as N × 1000/1001, any other to the nearest thousandth. Nil for anything else.
    public init?(parsing text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        if parts.count == 2, let n = Int(parts[0]), let d = Int(parts[1]) {
            self.init(numerator: n, denominator: d)
        } else if let value = Double(text), value.isFinite, value > 0, value <= 1000 {
            // 29.97, 23.976, 59.94: the NTSC rates N × 1000/1001, as people write them.
            let ntsc = (value * 1.001).rounded()
            if ntsc >= 1, value.rounded() != value, abs(value - ntsc / 1.001) < 0.005 {
                self.init(numerator: Int(ntsc) * 1000, denominator: 1001)
            } else {
                let scaled = (value * 1000).rounded()
                self.init(numerator: Int(scaled), denominator: 1000)
                self.reduce()
            }
        } else {
            return nil
        }
    }

    private mutating func reduce() {
        var a = numerator, b = denominator
        while b != 0 { (a, b) = (b, a % b) }
        numerator /= a
        denominator /= a
    }

    /// Frames a second as a number.
    public var value: Double { Double(numerator) / Double(denominator) }

    /// The frames an output of `seconds` holds, as ffmpeg's `-t` counts them: every frame at
    /// least half of which lies within it (frame *n* lasts from *n* / rate to (*n* + 1) / rate),
    /// and always the first — 60 in 2 s at 30 fps, 69 in 2.3 s at 30000/1001, 1 in 1 s at 0.5 fps.
    /// - Parameter seconds: the length; 0 or less (or not a number) holds no frame.
    /// - Returns: seconds × rate rounded half up (a product within a millionth of a frame of a
    ///   half taken as that half: a decimal length such as 0.1 s is not exact in binary), at least 1.
    public func frames(in seconds: Double) -> Int {
        let product = seconds * Double(numerator) / Double(denominator)
        guard product.isFinite, product > 0 else { return 0 }
        let frames = max(1, (product + 0.5 + 1e-6).rounded(.down))
        return frames < Double(Int.max / 2) ? Int(frames) : Int.max / 2
    }

    public var description: String { denominator == 1 ? "\(numerator)" : "\(numerator)/\(denominator)" }
}

/// A colour of 8-bit red, green and blue.
public struct RGBColor: Sendable, Hashable {
    public var red: UInt8
    public var green: UInt8
    public var blue: UInt8

    /// A colour of the given components.
    /// - Parameters:
    ///   - red: the red component, 0 … 255.
    ///   - green: the green component, 0 … 255.
    ///   - blue: the blue component, 0 … 255.
    public init(red: UInt8, green: UInt8, blue: UInt8) {
        self.red = red
        self.green = green
        self.blue = blue
    }

    public static let black = RGBColor(red: 0, green: 0, blue: 0)

    /// `#RRGGBB`, `RRGGBB`, or one of black, white, gray, red, green, blue.
    /// - Parameter text: six hex digits, with or without `#`, or a colour's name, in any case; nil for anything else.
    public init?(parsing text: String) {
        let names: [String: RGBColor] = [
            "black": .black, "white": RGBColor(red: 255, green: 255, blue: 255), "gray": RGBColor(red: 128, green: 128, blue: 128),
            "red": RGBColor(red: 255, green: 0, blue: 0), "green": RGBColor(red: 0, green: 128, blue: 0),
            "blue": RGBColor(red: 0, green: 0, blue: 255),
        ]
        if let named = names[text.lowercased()] {
            self = named
            return
        }
        let hex = text.hasPrefix("#") ? String(text.dropFirst()) : text
        guard hex.count == 6, hex.allSatisfy(\.isHexDigit), let value = UInt32(hex, radix: 16) else { return nil }
        self.init(red: UInt8(value >> 16 & 0xFF), green: UInt8(value >> 8 & 0xFF), blue: UInt8(value & 0xFF))
    }

    /// The colour in limited-range BT.601 Y′CbCr (how a Y4M file without colour tags is read).
    package var limitedYUV: (y: UInt8, u: UInt8, v: UInt8) {
        let r = Double(red), g = Double(green), b = Double(blue)
        let y = 16 + (65.481 * r + 128.553 * g + 24.966 * b) / 255
        let u = 128 + (-37.797 * r - 74.203 * g + 112.0 * b) / 255
        let v = 128 + (112.0 * r - 93.786 * g - 18.214 * b) / 255
        func byte(_ x: Double) -> UInt8 { UInt8(max(0, min(255, x.rounded()))) }
        return (byte(y), byte(u), byte(v))
    }
}
