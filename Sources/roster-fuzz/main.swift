// roster-fuzz: a libFuzzer target, built with `swift build --sanitize=fuzzer --product roster-fuzz` (see `make fuzz`).
// libFuzzer brings its own main, and SwiftPM then compiles this file as a library, so it holds declarations only;
// the plain build links to a program that does nothing. To reproduce a crash, run the fuzzer binary on its file.

nonisolated(unsafe) let harness = FuzzHarness()

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    harness.feed(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}
