import Glibc
import RosterRuntime
import RosterTestSupport

/// A real mail system for tests: Debian's msmtp-mta (`/usr/sbin/sendmail`) relaying to a throwaway SMTP server
/// (Debian's python3-aiosmtpd) on 127.0.0.1 that the test starts and reads.
public enum ThrowawayMail {
    public static let sendmail = "/usr/sbin/sendmail"
    public static let python = "/usr/bin/python3"
    /// `make test` installs both (`TEST_PACKAGES`); without them there is nothing real to test against.
    public static let available = access("/usr/bin/msmtp", X_OK) == 0 && access(sendmail, X_OK) == 0
        && access("/usr/lib/python3/dist-packages/aiosmtpd/smtp.py", R_OK) == 0

    /// Accepts every recipient but `nobody@…` (550) and writes each message as `message-N.eml`: the envelope's
    /// MAIL FROM and RCPT TO lines, a blank line, then the message as received. The port it listens on goes to
    /// `port`.
    static let server = """
        import asyncio, os, sys
        from aiosmtpd.smtp import SMTP

        directory = sys.argv[1]

        class Handler:
            count = 0

            async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
                if address.startswith("nobody@"):
                    return "550 5.1.1 no such user here"
                envelope.rcpt_tos.append(address)
                return "250 OK"

            async def handle_DATA(self, server, session, envelope):
                Handler.count += 1
                base = os.path.join(directory, "message-%d" % Handler.count)
                with open(base + ".tmp", "wb") as f:
                    f.write(("MAIL FROM:%s\\n" % envelope.mail_from).encode())
                    for rcpt in envelope.rcpt_tos:
                        f.write(("RCPT TO:%s\\n" % rcpt).encode())
                    f.write(b"\\n")
                    f.write(envelope.original_content)
                os.rename(base + ".tmp", base + ".eml")
                return "250 Message accepted"

        async def main():
            server = await asyncio.get_running_loop().create_server(
                lambda: SMTP(Handler(), hostname="smtp.test.invalid"), "127.0.0.1", 0)
            with open(os.path.join(directory, "port.tmp"), "w") as f:
                f.write(str(server.sockets[0].getsockname()[1]))
            os.rename(os.path.join(directory, "port.tmp"), os.path.join(directory, "port"))
            await server.serve_forever()

        asyncio.run(main())
        """

    /// The SMTP server, running until the value goes.
    public final class SMTPServer {
        public let directory: ScratchDirectory
        public let pid: pid_t
        public let port: Int

        public init(_ directory: ScratchDirectory) throws {
            self.directory = directory
            try directory.write(directory.file("server.py"), ThrowawayMail.server)
            let argv = [ThrowawayMail.python, "-I", directory.file("server.py"), directory.path]
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
            posix_spawn_file_actions_addopen(&actions, 1, directory.file("server.log"), O_WRONLY | O_CREAT | O_TRUNC, 0o644)
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
            let cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
            let environment: [String] = ["PATH=/usr/bin:/bin"]
            let cEnv: [UnsafeMutablePointer<CChar>?] = environment.map { strdup($0) } + [nil]
            defer { for pointer in cArgs + cEnv { free(pointer) } }
            var child: pid_t = 0
            let spawned = posix_spawn(&child, argv[0], &actions, nil, cArgs, cEnv)
            guard spawned == 0 else { throw SystemError(errno: spawned, call: "posix_spawn python3") }
            pid = child
            guard let port = poll({ directory.text("port").flatMap { Int($0) } }) else {
                kill(child, SIGKILL)
                var status: Int32 = 0
                waitpid(child, &status, 0)
                throw SystemError(errno: ETIMEDOUT, call: "SMTP server start: \(directory.text("server.log") ?? "")")
            }
            self.port = port
        }

        deinit {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }

        /// The `number`th message received (from 1), once it is there.
        public func message(_ number: Int) -> String? { directory.text("message-\(number).eml") }
    }

    /// A sendmail for the clean environment: msmtp told by its own option where its configuration is, relaying to
    /// `port` without TLS or authentication.
    public static func msmtpWrapper(in directory: ScratchDirectory, port: Int) throws -> String {
        let configuration = directory.file("msmtprc")
        try directory.write(configuration, "account default\nhost 127.0.0.1\nport \(port)\nauth off\ntls off\n", mode: 0o600)
        return try directory.script("sendmail", "exec \(sendmail) -C '\(configuration)' \"$@\"")
    }


    /// A port on 127.0.0.1 just listened on and closed again: nobody is there.
    public static func closedPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SystemError(errno: errno, call: "socket") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else { throw SystemError(errno: errno, call: "bind") }
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw SystemError(errno: errno, call: "getsockname") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
