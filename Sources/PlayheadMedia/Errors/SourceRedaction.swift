/// What errors and logs call a source: a URL's credentials and query values are replaced by
/// `***`, so that an error message, a log line or a summary can be shared without the password in
/// `https://user:pass@host/…` or the signature of a signed URL (`?X-Amz-Signature=…`).
///
/// An RTMP URL's stream key — the last segment of its path after the application, the credential
/// of every streaming service — is a secret too: `rtmp://host/live/KEY` reads `rtmp://host/live/***`.
///
/// Every ``PlayheadError`` names its file through this; a path (anything without `://`) is left
/// as it is. The query's parameter names are kept, so a reader can still tell which URL it was.
public enum SourceRedaction {
    /// `location` with any user information, every query value, path parameter (`;…`) and
    /// fragment replaced by `***`.
    ///
    /// ```swift
    /// SourceRedaction.redacted("https://me:secret@example.com/a.mp4?sig=abc&v=2")
    /// // "https://***@example.com/a.mp4?sig=***&v=***"
    /// ```
    ///
    /// - Parameter location: a path or a URL.
    /// - Returns: `location` redacted; a path (anything without `://`) as it is.
    public static func redacted(_ location: String) -> String {
        guard let schemeEnd = location.range(of: "://") else { return location }
        let afterScheme = location[schemeEnd.upperBound...]
        // The authority ends at the first `/`, `?` or `#`; its user information at its last `@`.
        let authorityEnd = afterScheme.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? afterScheme.endIndex
        let authority = afterScheme[..<authorityEnd]
        var result = String(location[..<schemeEnd.upperBound])
        if let at = authority.lastIndex(of: "@") {
            result += "***" + authority[at...]
        } else {
            result += authority
        }
        let rest = afterScheme[authorityEnd...]
        // A fragment never reaches the server, but it can carry a token (`#access_token=…`).
        let hash = rest.firstIndex(of: "#") ?? rest.endIndex
        let fragment = hash == rest.endIndex || rest.index(after: hash) == rest.endIndex ? String(rest[hash...]) : "#***"
        var body = rest[..<hash]
        if location.lowercased().hasPrefix("rtmp"), let key = streamKey(in: body[..<(body.firstIndex(of: "?") ?? body.endIndex)]) {
            body = Substring(body[..<key.lowerBound] + "***" + body[key.upperBound...])
        }
        let question = body.firstIndex(of: "?")
        // Path parameters (`/a.mp4;token`) of a remote URL carry signatures too; in a local
        // file's name a `;` is only a character.
        let path = body[..<(question ?? body.endIndex)]
        if path.contains(";"), !location.lowercased().hasPrefix("file:") {
            let redactedPath = path.split(separator: "/", omittingEmptySubsequences: false).map { segment -> String in
                guard let semicolon = segment.firstIndex(of: ";") else { return String(segment) }
                return segment[...semicolon] + (segment.index(after: semicolon) == segment.endIndex ? "" : "***")
            }.joined(separator: "/")
            body = Substring(redactedPath + body[(question ?? body.endIndex)...])
        }
        guard let question = body.firstIndex(of: "?") else { return result + body + fragment }
        result += body[...question]
        let query = body[body.index(after: question)...]
        result += query.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            // A bare value (`?token`) is a value too.
            guard let equals = pair.firstIndex(of: "=") else { return pair.isEmpty || pair == "***" ? String(pair) : "***" }
            return pair[..<equals] + (pair.index(after: equals) == pair.endIndex ? "=" : "=***")
        }.joined(separator: "&")
        return result + fragment
    }

    /// Where an RTMP path's stream key is: its last segment, when the path has an application
    /// before it (`/live/KEY`; `/live` alone names the application).
    private static func streamKey(in path: Substring) -> Range<Substring.Index>? {
        let segments = path.split(separator: "/")
        guard segments.count >= 2, let last = segments.last, !last.isEmpty, last != "***" else { return nil }
        return last.startIndex..<last.endIndex
    }

    /// `text` with every URL in it (a run of characters around `://`, up to white space or a
    /// quote) redacted.
    static func redactingURLs(in text: String) -> String {
        guard text.contains("://") else { return text }
        let isBoundary: (Character) -> Bool = { $0.isWhitespace || $0 == "'" || $0 == "\"" || $0 == "<" || $0 == ">" }
        var result = ""
        var index = text.startIndex
        while index < text.endIndex {
            if isBoundary(text[index]) {
                result.append(text[index])
                index = text.index(after: index)
                continue
            }
            let end = text[index...].firstIndex(where: isBoundary) ?? text.endIndex
            // Punctuation that ends the sentence around a URL (`…/KEY: refused`) is not the URL's.
            var urlEnd = end
            while urlEnd > index, ".,:;)]}".contains(text[text.index(before: urlEnd)]) { urlEnd = text.index(before: urlEnd) }
            result += redacted(String(text[index..<urlEnd])) + text[urlEnd..<end]
            index = end
        }
        return result
    }
}
