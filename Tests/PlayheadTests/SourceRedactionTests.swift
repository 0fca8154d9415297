import Foundation
import Testing

@testable import Playhead
@testable import PlayheadMedia

/// Errors and logs never carry a URL's credentials or query values; paths pass untouched; file
/// URLs reach FFmpeg byte for byte.
@Suite struct SourceRedactionTests {
    @Test(arguments: [
        ("https://me:secret@example.com/a.mp4?sig=abc&v=2", "https://***@example.com/a.mp4?sig=***&v=***"),
        ("http://token@host:8080/x.m3u8", "http://***@host:8080/x.m3u8"),
        (
            "https://bucket.s3.amazonaws.com/k.mp4?X-Amz-Credential=AKIA%2F1&X-Amz-Signature=ff00",
            "https://bucket.s3.amazonaws.com/k.mp4?X-Amz-Credential=***&X-Amz-Signature=***"
        ),
        ("https://host/a.mp4?flag&empty=&x=1#frag", "https://host/a.mp4?***&empty=&x=***#***"),
        ("https://host/a.mp4?SECRETBARE", "https://host/a.mp4?***"),
        ("https://host/a.mp4#access_token=abc", "https://host/a.mp4#***"),
        ("https://host?q=1", "https://host?q=***"),
        ("https://u:p@host", "https://***@host"),
        ("hls+https://u:p@h/p.m3u8", "hls+https://***@h/p.m3u8"),
        ("https://host/path/with@sign.mp4", "https://host/path/with@sign.mp4"),
        ("https://host/x.mp4;SECRET", "https://host/x.mp4;***"),
        ("https://host/a;jsessionid=S/b.m3u8;k=v?q=1", "https://host/a;***/b.m3u8;***?q=***"),
        ("https://host/x.mp4;", "https://host/x.mp4;"),
        ("file:///media/a;b.mp4", "file:///media/a;b.mp4"),
        ("/media/a;b.mp4", "/media/a;b.mp4"),
        ("/media/clip?.mp4", "/media/clip?.mp4"),
        ("user:pass@host.mp4", "user:pass@host.mp4"),
        ("pipe:0", "pipe:0"),
        ("", ""),
    ])
    func redactsCredentialsAndQueryValues(input: String, expected: String) {
        #expect(SourceRedaction.redacted(input) == expected)
        #expect(SourceRedaction.redacted(expected) == expected, "redacting twice changes nothing")
    }

    /// Random URLs with random secrets in the user information and the query: no secret survives,
    /// the scheme, host and path do.
    @Test func noSecretSurvivesOnRandomURLs() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789%-._~+/=:")
        func word(_ count: Int) -> String { String((0..<count).map { _ in alphabet.randomElement(using: &generator) ?? "a" }) }
        for _ in 0..<500 {
            let secret = "S3CR3T" + String(Int.random(in: 0..<1_000_000, using: &generator))
            let host = "h" + String(Int.random(in: 0..<1000, using: &generator)) + ".example"
            let path = "/" + word(Int.random(in: 0..<12, using: &generator)).replacingOccurrences(of: "?", with: "")
            // User information ends at the first `/` (as FFmpeg splits a URL): none inside it.
            let user = Bool.random(using: &generator) ? "u\(word(3).replacingOccurrences(of: "/", with: "")):\(secret)@" : "\(secret)@"
            let query = (0..<Int.random(in: 1...4, using: &generator)).map {
                "k\($0)=" + ($0 == 0 ? secret : word(5)).replacingOccurrences(of: "&", with: "")
            }
            let url =
                "https://" + user + host + path.replacingOccurrences(of: "#", with: "") + "?"
                + query.shuffled(using: &generator).joined(separator: "&")
            let redacted = SourceRedaction.redacted(url)
            #expect(!redacted.contains(secret), "\(url) → \(redacted)")
            #expect(redacted.hasPrefix("https://***@" + host), "\(redacted)")
            let error = PlayheadError(code: .timedOut, message: "no data", file: url)
            #expect(!(error.file ?? "").contains(secret) && !error.description.contains(secret))
            #expect(!PlayheadError(code: .readFailed, message: "x").naming(file: url).description.contains(secret))
            #expect(!SourceRedaction.redactingURLs(in: "Opening '\(url)' for reading; then \(url) again").contains(secret))
        }
    }

    @Test func textKeepsWhatIsNotAURL() {
        #expect(SourceRedaction.redactingURLs(in: "HTTP error 403 Forbidden") == "HTTP error 403 Forbidden")
        #expect(SourceRedaction.redactingURLs(in: "Failed to open 'https://a:b@h/s.ts?t=1'\n") == "Failed to open 'https://***@h/s.ts?t=***'\n")
    }

    /// A `file:` URL's percent escapes are bytes: a name that is not UTF-8 survives intact, where
    /// `URL.path` would lose it.
    @Test func fileURLPathsDecodeToTheirBytes() {
        #expect(MediaInput.pathBytes(ofFileURLPath: "/tmp/caf%E9%20x.mp4") == Array("/tmp/caf".utf8) + [0xE9, 0x20] + Array("x.mp4".utf8))
        #expect(MediaInput.pathBytes(ofFileURLPath: "/a%2") == Array("/a%2".utf8), "a cut escape stays as written")
        #expect(MediaInput.pathBytes(ofFileURLPath: "/a%zz") == Array("/a%zz".utf8))
        let url = URL(string: "file:///tmp/caf%E9.mp4")
        let asset = url.map { Asset(url: $0) }
        #expect(asset?.input.location == Array("/tmp/caf".utf8) + [0xE9] + Array(".mp4".utf8))
        #expect(asset?.source == "file:///tmp/caf%E9.mp4", "a name that is not UTF-8 is shown as its URL")
        #expect(Asset(path: "/tmp/a b%E9.mp4").input.location == Array("/tmp/a b%E9.mp4".utf8), "a path's own % is not an escape")
        #expect(Asset(source: "file:///tmp/x%20y.mp4").source == "/tmp/x y.mp4")
    }

    /// `file://host/path` names a file on another machine: refused with a typed error, never
    /// this machine's `/path`; `file://localhost/path` is local.
    @Test func aFileURLOfAnotherHostIsRefused() async throws {
        let remote = Asset(url: try #require(URL(string: "file://otherhost/tmp/clip.mp4")))
        #expect(remote.source == "file://otherhost/tmp/clip.mp4")
        await #expect(throws: PlayheadError.self) { _ = try await remote.load(.duration) }
        do {
            _ = try await remote.load(.duration)
        } catch {
            #expect(error.code == .openFailed && error.message.contains("otherhost"), "\(error)")
        }
        #expect(Asset(url: try #require(URL(string: "file://localhost/tmp/clip.mp4"))).input.refusal == nil)
        #expect(Asset(url: try #require(URL(string: "file:///tmp/clip.mp4"))).input.refusal == nil)
    }

    /// An RTMP URL's stream key is its credential: redacted wherever the URL is shown (a channel
    /// target's status, an error, a log line), the application kept.
    @Test func anRTMPStreamKeyIsRedacted() {
        #expect(SourceRedaction.redacted("rtmp://a.rtmp.youtube.com/live2/abcd-efgh-ijkl") == "rtmp://a.rtmp.youtube.com/live2/***")
        #expect(
            SourceRedaction.redacted("rtmps://live-api-s.facebook.com:443/rtmp/FB-123?s_bl=1")
                == "rtmps://live-api-s.facebook.com:443/rtmp/***?s_bl=***")
        #expect(SourceRedaction.redacted("rtmp://user:pw@host/app/inst/key") == "rtmp://***@host/app/inst/***")
        #expect(SourceRedaction.redacted("rtmp://host/live") == "rtmp://host/live", "the application alone is no key")
        #expect(
            SourceRedaction.redactingURLs(in: "could not connect to rtmp://host/live/secret: refused")
                == "could not connect to rtmp://host/live/***: refused")
        #expect(ChannelTarget("rtmp://host/live/secret")?.description == "rtmp://host/live/***")
        #expect(SourceRedaction.redacted("https://host/live/secret.m3u8") == "https://host/live/secret.m3u8", "only RTMP paths are keys")
    }
}
