#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes a line meant for the operator to standard output at once, with one `write(2)`.
///
/// `print` goes through stdio's buffer, which is flushed only when full or at exit when standard
/// output is a file or a pipe (systemd, `docker logs`, `> log`): a first-start admin token printed
/// that way stayed invisible while the server ran. A line written here is in the file as soon as
/// the call returns.
package func writeOperatorLine(_ text: String) {
    var bytes = Array(text.utf8)
    if bytes.last != UInt8(ascii: "\n") { bytes.append(UInt8(ascii: "\n")) }
    var offset = 0
    while offset < bytes.count {
        let written = bytes[offset...].withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
        if written < 0 {
            if errno == EINTR { continue }
            return
        }
        offset += written
    }
}
