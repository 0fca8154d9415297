import Foundation
import Playhead

/// One input: written to a file, probed, and decoded for its first frames. Any outcome is fine
/// except a crash or a hang, and an error must name the file.
func exercise(_ bytes: UnsafeRawBufferPointer) {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("playhead-fuzz-\(getpid()).bin").path
    // Without the file every input would only exercise "not found": stop loudly instead.
    precondition(FileManager.default.createFile(atPath: path, contents: Data(bytes)), "could not write \(path)")
    let done = DispatchSemaphore(value: 0)
    Task {
        do throws(PlayheadError) {
            _ = try await Asset(path: path).load(.tracks, .duration)
        } catch {
            precondition(error.file == path, "an error must name its file: \(error)")
        }
        let configuration = DecodeConfiguration(outputSize: PixelSize(width: 32, height: 18), frameLimit: 5)
        let result = await DecodeSession(source: path, configuration: configuration).run(into: NullSink(pixelFormat: .rgb24), audio: NullAudioSink())
        if case .failed(let error) = result.status {
            precondition(error.file == path, "an error must name its file: \(error)")
        }
        done.signal()
    }
    // A hang shows as a timeout in the fuzzer (-timeout=N).
    done.wait()
}

#if PLAYHEAD_FUZZ
/// The libFuzzer entry point (built with -sanitize=fuzzer and -DPLAYHEAD_FUZZ).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    exercise(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

/// libFuzzer's driver, for programs that keep their own `main`.
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

/// SwiftPM links an executable's `main` under this name: hand control to libFuzzer.
@_cdecl("PlayheadFuzz_main")
public func fuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> Int32 {
    var count = argc
    var arguments = argv
    return runFuzzerDriver(&count, &arguments) { data, size in fuzzOneInput(data, size) }
}
#else
/// Without libFuzzer: replays the inputs named on the command line (a crash reproducer, say).
@main
enum Replay {
    static func main() {
        for path in CommandLine.arguments.dropFirst() {
            guard let data = FileManager.default.contents(atPath: path) else { continue }
            data.withUnsafeBytes { exercise($0) }
            print("ok: \(path)")
        }
    }
}
#endif
