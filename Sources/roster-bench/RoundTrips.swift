import Glibc

/// Ping-pong: one connection, one request in flight, each answer awaited before the next request.
enum RoundTrips {
    /// Latencies in µs of `count` round trips (after `warmup` unmeasured ones), cycling through `requests`.
    static func measure(fd: Int32, requests: [[UInt8]], count: Int, warmup: Int) throws(BenchError) -> Samples {
        var buffer = LineBuffer()
        var samples = Samples()
        for index in 0..<(warmup + count) {
            let request = requests[index % requests.count]
            let started = Clock.now()
            try UnixSocket.writeAll(fd, request)
            _ = try UnixSocket.readLine(fd, &buffer)
            if index >= warmup { samples.add(Clock.microseconds(since: started)) }
        }
        return samples
    }

    /// Sends one request and returns its answer line, skipping events (a log-in sends one first).
    static func call(fd: Int32, _ request: [UInt8]) throws(BenchError) -> String {
        var buffer = LineBuffer()
        try UnixSocket.writeAll(fd, request)
        while true {
            let line = String(decoding: try UnixSocket.readLine(fd, &buffer), as: UTF8.self)
            if !line.contains("\"method\":\"event\"") { return line }
        }
    }
}
