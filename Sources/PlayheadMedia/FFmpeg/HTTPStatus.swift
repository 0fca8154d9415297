/// An HTTP error status as FFmpeg's protocols report it (`AVERROR_HTTP_*`, tags Swift cannot
/// import), with the error a person can act on: a server that has no such file, refuses access,
/// or failed.
struct HTTPStatus {
    let code: PlayheadError.Code
    let message: String

    /// Nil when `result` is not an HTTP status.
    init?(_ result: Int32) {
        switch result {
        case Self.tag("4", "0", "4"): (code, message) = (.fileNotFound, "the server has no such file (404 Not Found)")
        case Self.tag("4", "0", "1"): (code, message) = (.permissionDenied, "the server asks for credentials (401 Unauthorized)")
        case Self.tag("4", "0", "3"): (code, message) = (.permissionDenied, "the server refuses access (403 Forbidden)")
        case Self.tag("4", "0", "0"): (code, message) = (.openFailed, "the server refused the request (400 Bad Request)")
        case Self.tag("4", "X", "X"): (code, message) = (.openFailed, "the server refused the request (an HTTP 4xx status)")
        case Self.tag("5", "X", "X"): (code, message) = (.readFailed, "the server failed (an HTTP 5xx status)")
        default: return nil
        }
    }

    /// Any 4xx status.
    static func isClientError(_ result: Int32) -> Bool {
        guard let status = HTTPStatus(result) else { return false }
        return status.code != .readFailed
    }

    /// FFmpeg's `FFERRTAG(0xF8, a, b, c)`.
    private static func tag(_ a: Character, _ b: Character, _ c: Character) -> Int32 {
        let bytes = [a, b, c].map { Int32($0.asciiValue ?? 0) }
        return -(0xF8 | bytes[0] << 8 | bytes[1] << 16 | bytes[2] << 24)
    }
}
