import CLinux
import Glibc
import RosterCore
import RosterProtocol

/// One client socket: non-blocking reads into the line framer, buffered writes, and half-close.
///
/// Lifecycle: reading → (peer shuts its write side) draining → closed. While draining, requests already
/// read are still answered; the socket closes once none is in flight and every byte is written.
final class Connection {
    let id: UInt64
    let fd: Int32
    let peer: PeerCredentials
    let session: Session
    private(set) var isClosed = false
    private var registration: EventLoop.RegistrationID?
    private var framer: LineFramer
    private var output = OutputQueue()
    /// When the unfinished line now buffered began; a peer may not sit on half a request forever.
    private var partialLineSince: Instant?
    /// When the output first stayed above the soft limit; cleared once it drains below.
    private var congestedSince: Instant?
    private var readShutDown = false
    private var writeInterest = false
    private var isDispatching = false
    private unowned let server: Server
    /// Requests read and not yet answered; a half-closed peer waits for these.
    var inFlight = 0
    /// The server settings in force, kept here so that a send need not reach the server (issue 8: the server's
    /// reference count lives in a side table, so every touch of it was slow); a reload updates them.
    var settings: ServerSettings

    init(id: UInt64, fd: Int32, peer: PeerCredentials, session: Session, maxLineBytes: Int, server: Server) {
        self.id = id
        self.fd = fd
        self.peer = peer
        self.session = session
        self.framer = LineFramer(maxLineBytes: maxLineBytes)
        self.server = server
        self.settings = server.config.server
    }

    func start(on loop: EventLoop) throws(SystemError) {
        registration = try loop.register(fd: fd, events: EPOLLIN.rawValue | EPOLLRDHUP.rawValue) { [unowned self] events in
            self.handle(events)
        }
    }

    private func handle(_ events: UInt32) {
        if events & EPOLLOUT.rawValue != 0 { flush() }
        if !isClosed, events & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue | EPOLLHUP.rawValue) != 0, !readShutDown {
            readAvailable()
        }
        // EPOLLHUP means the peer closed both ways: nobody is left to read what is still owed.
        let gone = events & EPOLLERR.rawValue != 0 || (events & EPOLLHUP.rawValue != 0 && readShutDown)
        if !isClosed, gone { close() }
    }

    private func readAvailable() {
        let server = self.server
        let buffer = server.readBuffer
        var outputs: [LineFramer.Output] = []
        // A pipelining peer sends dozens of lines a read; growing from empty cost six allocations a wake-up.
        outputs.reserveCapacity(64)
        var lineEnded = false
        isDispatching = true
        output.beginBatch()
        defer {
            isDispatching = false
            output.endBatch()
            // The answers to every line of this wake-up leave in one writev (issue 8: one syscall per answer
            // was a tenth of the daemon's time under pipelining).
            if !isClosed && !output.isEmpty { flush() }
            if readShutDown { readSideClosed() }
        }
        // A bounded number of reads per wake-up keeps one chatty peer from starving the rest.
        for _ in 0..<4 {
            let result = Result(catching: { () throws(SystemError) -> IOResult<Int> in
                try Syscall.nonBlocking("read") { read(fd, buffer.baseAddress, buffer.count) }
            })
            var filled = false
            switch result {
            case .success(.done(0)):
                framer.finish(into: &outputs)
                readShutDown = true
            case .success(.done(let count)):
                framer.feedBorrowing(UnsafeRawBufferPointer(start: buffer.baseAddress, count: count), into: &outputs)
                filled = count == buffer.count
            case .success(.wouldBlock):
                break
            case .failure:
                close()
                return
            }
            // Spans point into the shared buffer, so this read's lines are served before the next read.
            lineEnded = lineEnded || !outputs.isEmpty
            serve(outputs, readInto: buffer)
            outputs.removeAll(keepingCapacity: true)
            // A read that did not fill the buffer took everything there was; the level-triggered loop wakes us
            // again for more, so asking now would only cost a read that says EAGAIN (issue 8).
            if isClosed || readShutDown || !filled { break }
        }
        if !isClosed { watchPartialLine(lineEnded: lineEnded) }
    }

    private func serve(_ outputs: [LineFramer.Output], readInto buffer: UnsafeMutableBufferPointer<UInt8>) {
        let server = self.server
        for output in outputs {
            guard !isClosed else { return }
            switch output {
            case .span(let range): server.dispatch(line: UnsafeBufferPointer(rebasing: buffer[range]), from: self)
            case .line(let bytes): bytes.withUnsafeBufferPointer { server.dispatch(line: $0, from: self) }
            case .tooLarge: server.rejectOversizedLine(from: self)
            }
        }
    }

    private func readSideClosed() {
        guard !isClosed else { return }
        updateInterest()
        closeIfDrained()
    }

    private func watchPartialLine(lineEnded: Bool) {
        if lineEnded { partialLineSince = nil }
        guard framer.hasPartialLine, !readShutDown else {
            partialLineSince = nil
            return
        }
        guard partialLineSince == nil else { return }
        let since = server.loop.now
        partialLineSince = since
        let timeout = server.config.server.idleLineTimeout
        server.loop.schedule(at: since + timeout) { [weak self] in
            guard let self, !self.isClosed, self.partialLineSince == since else { return }
            self.server.logger.notice("closing a connection that left a line unfinished for \(timeout)",
                                      [("ROSTER_CONNECTION", String(self.id))])
            self.close()
        }
    }

    /// Queues a line (answer or event); written at once if the socket takes it. `coalescing` names what an
    /// event is the latest state of, so a peer that does not read gets only the newest one.
    func send(_ bytes: [UInt8], coalescing key: OutputQueue.CoalesceKey? = nil) {
        guard !isClosed else { return }
        output.append(bytes, coalescing: key)
        queued()
    }

    /// Queues a line that `build` appends to the output in place (see `OutputQueue.appendPlain`).
    func sendLine(_ build: (inout [UInt8]) -> Void) {
        guard !isClosed else { return }
        output.appendPlain(build)
        queued()
    }

    private func queued() {
        if !isDispatching { flush() }
        if !isClosed { checkCongestion() }
    }

    /// A peer that does not read may hold the soft limit for a while, never the hard one.
    private func checkCongestion() {
        if output.byteCount > settings.outputHardLimitBytes {
            server.logger.warning("closing a connection that holds \(output.byteCount) unread bytes",
                                  [("ROSTER_CONNECTION", String(id))])
            return close()
        }
        guard output.byteCount > settings.outputSoftLimitBytes else {
            congestedSince = nil
            return
        }
        guard congestedSince == nil else { return }
        let stall = settings.outputStallTimeout
        let since = server.loop.now
        congestedSince = since
        server.loop.schedule(at: since + stall) { [weak self] in
            guard let self, !self.isClosed, self.congestedSince == since,
                  self.output.byteCount > self.settings.outputSoftLimitBytes else { return }
            self.server.logger.warning("closing a connection that has not read for \(stall)",
                                       [("ROSTER_CONNECTION", String(self.id))])
            self.close()
        }
    }

    /// Called when an answer goes out; a draining connection may now be done.
    func requestFinished() {
        inFlight -= 1
        closeIfDrained()
    }

    private func flush() {
        while !output.isEmpty {
            switch output.write(to: fd) {
            case .done?: continue
            case .wouldBlock?: updateInterest(); return
            case nil: close(); return
            }
        }
        congestedSince = nil
        updateInterest()
        closeIfDrained()
    }

    private func closeIfDrained() {
        // Lines already read in this batch are still owed answers, even if each answer so far went out at once.
        guard !isDispatching else { return }
        if readShutDown && inFlight == 0 && output.isEmpty { close() }
        if server.isStopping && inFlight == 0 && output.isEmpty { close() }
    }

    /// Stops reading new requests (shutdown); pending answers still go out.
    func stopReading() {
        guard !isClosed else { return }
        readShutDown = true
        updateInterest()
        closeIfDrained()
    }

    private func updateInterest() {
        guard let registration, !isClosed else { return }
        let wantWrite = !output.isEmpty
        let wantRead = !readShutDown
        var events: UInt32 = 0
        if wantRead { events |= EPOLLIN.rawValue | EPOLLRDHUP.rawValue }
        if wantWrite { events |= EPOLLOUT.rawValue }
        guard wantWrite != writeInterest || !wantRead else { return }
        writeInterest = wantWrite
        try? server.loop.modify(registration, events: events)
    }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        if let registration { server.loop.deregister(registration) }
        Glibc.close(fd)
        server.connectionClosed(self)
    }
}
