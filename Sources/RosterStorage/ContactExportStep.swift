import RosterCore
import RosterRuntime

/// How an export page is filled from the rows a backend reads, written once: contacts go into the sink in id
/// order until it refuses one (the page is full and more remain) or the rows run out (a chunk shorter than asked
/// for is the last). A backend only reads the next chunk after `after` when the step says `more`.
public enum ContactExportStep<Sink: ContactExportSink>: Sendable {
    /// The page is done.
    case finished(Sink.Output)
    /// Every row of the chunk went in, and the chunk was full: read the rows after `after`.
    case more(Sink, after: Int64)

    /// Feeds a chunk of `count` contacts, read after `after` with a limit of `chunkSize`, into `sink`;
    /// `contact(i)` is the chunk's `i`th, which a backend may fail to decode.
    public static func feed<Failure: Error>(count: Int, chunkSize: Int, after: Int64, into sink: Sink,
                                            sharing: inout CoreSharing,
                                            contact: (Int) throws(Failure) -> Contact) throws(Failure) -> Self {
        var sink = sink
        var last = after
        for index in 0..<count {
            sharing.yieldIfDue()
            let next = try contact(index)
            guard sink.add(next) else { return .finished(sink.finish(more: true)) }
            last = next.id
        }
        guard count == chunkSize else { return .finished(sink.finish(more: false)) }
        return .more(sink, after: last)
    }
}
