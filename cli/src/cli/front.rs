//! The front `lockstep explore` puts before stateright's Explorer server,
//! which answers any request whatever its `Host`: a web page on another
//! site whose name is made to resolve to 127.0.0.1 (DNS rebinding) could
//! otherwise read the Explorer through the user's browser. The front
//! listens on the user's port, refuses a request whose `Host` is not this
//! address (421 Misdirected Request), and forwards the others, one request
//! per connection, to the Explorer on an internal loopback port.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::thread;
use std::time::{Duration, Instant};

/// The longest request head read (request line and headers).
const MAX_HEAD_BYTES: usize = 64 << 10;

/// How long the front waits for the Explorer to listen, at the start.
const BACKEND_WAIT: Duration = Duration::from_secs(10);

/// Serves `listener` (the user's port) for ever, forwarding good requests
/// to the Explorer on 127.0.0.1:`backend`.
pub fn serve(listener: TcpListener, port: u16, backend: u16) {
    for stream in listener.incoming().flatten() {
        thread::spawn(move || {
            // A connection that fails mid-way concerns only its client.
            let _ = handle(stream, port, backend);
        });
    }
}

/// One connection: its request checked, then forwarded, or refused.
fn handle(mut client: TcpStream, port: u16, backend: u16) -> io::Result<()> {
    let mut reader = BufReader::new(client.try_clone()?);
    let head = match read_head(&mut reader)? {
        Some(head) => head,
        None => {
            return refuse(
                &mut client,
                "400 Bad Request",
                "a request head too long or cut short\n",
            )
        }
    };
    match host_of(&head) {
        Some(host) if is_own_host(host, port) => {}
        Some(_) | None => {
            return refuse(
                &mut client,
                "421 Misdirected Request",
                &format!(
                "lockstep explore answers only requests for 127.0.0.1:{port} or localhost:{port}\n"
            ),
            )
        }
    }
    let mut server = connect(backend)?;
    server.write_all(closing(&head).as_bytes())?;
    // Whatever the client sends after the head (a body) goes on; the
    // answer comes back until the Explorer closes, as `Connection: close`
    // asks it to.
    let mut upload = server.try_clone()?;
    thread::spawn(move || {
        let _ = io::copy(&mut reader, &mut upload);
        let _ = upload.shutdown(Shutdown::Write);
    });
    io::copy(&mut server, &mut client)?;
    client.shutdown(Shutdown::Both)
}

/// The request line and headers, up to the blank line that ends them
/// (`None` for a head too long or cut short).
fn read_head(reader: &mut impl BufRead) -> io::Result<Option<String>> {
    let mut head = String::new();
    loop {
        let mut line = String::new();
        let n = reader
            .by_ref()
            .take(MAX_HEAD_BYTES as u64)
            .read_line(&mut line)?;
        if n == 0 || head.len() + n > MAX_HEAD_BYTES || !line.ends_with('\n') {
            return Ok(None);
        }
        let blank = line.trim_end().is_empty();
        head.push_str(&line);
        if blank {
            return Ok(Some(head));
        }
    }
}

/// The `Host` header's value, if the head has exactly one.
fn host_of(head: &str) -> Option<&str> {
    let mut hosts = head
        .lines()
        .skip(1)
        .filter_map(|l| l.split_once(':'))
        .filter(|(name, _)| name.trim().eq_ignore_ascii_case("host"))
        .map(|(_, value)| value.trim());
    let host = hosts.next()?;
    hosts.next().is_none().then_some(host)
}

/// Whether `host` names this server: the loopback address or `localhost`
/// with its port (the port may be left out only where it is HTTP's own, 80).
fn is_own_host(host: &str, port: u16) -> bool {
    let host = host.to_ascii_lowercase();
    let (name, given) = match host.rsplit_once(':') {
        Some((name, p)) => (name, p.parse::<u16>().ok()),
        None => (host.as_str(), (port == 80).then_some(80)),
    };
    matches!(name, "127.0.0.1" | "localhost") && given == Some(port)
}

/// The head with its `Connection` header, if any, replaced by
/// `Connection: close`: one request per connection, so every request the
/// Explorer answers is one whose `Host` was checked.
fn closing(head: &str) -> String {
    let mut lines: Vec<&str> = head
        .lines()
        .filter(|l| !l.is_empty())
        .filter(|l| {
            l.split_once(':')
                .is_none_or(|(name, _)| !name.trim().eq_ignore_ascii_case("connection"))
        })
        .collect();
    lines.push("Connection: close");
    let mut out = lines.join("\r\n");
    out.push_str("\r\n\r\n");
    out
}

/// A connection to the Explorer, which may still be starting.
fn connect(backend: u16) -> io::Result<TcpStream> {
    let started = Instant::now();
    loop {
        match TcpStream::connect(("127.0.0.1", backend)) {
            Ok(s) => return Ok(s),
            Err(e) if started.elapsed() > BACKEND_WAIT => return Err(e),
            Err(_) => thread::sleep(Duration::from_millis(50)),
        }
    }
}

/// Answers `status` with a one-line explanation and closes.
fn refuse(client: &mut TcpStream, status: &str, why: &str) -> io::Result<()> {
    write!(
        client,
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{why}",
        why.len()
    )?;
    client.shutdown(Shutdown::Both)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_this_address_with_its_port_is_its_own_host() {
        for good in ["127.0.0.1:8080", "localhost:8080", "LOCALHOST:8080"] {
            assert!(is_own_host(good, 8080), "{good}");
        }
        for bad in [
            "evil.example:8080",
            "localhost",
            "localhost:80",
            "127.0.0.1:8081",
            "127.0.0.2:8080",
            "[::1]:8080",
            "localhost.evil.example:8080",
            "",
        ] {
            assert!(!is_own_host(bad, 8080), "{bad}");
        }
        assert!(is_own_host("localhost", 80));
    }

    #[test]
    fn the_host_is_read_once_and_only_once() {
        let head = "GET / HTTP/1.1\r\nhost: a:1\r\nX: y\r\n\r\n";
        assert_eq!(host_of(head), Some("a:1"));
        assert_eq!(host_of("GET / HTTP/1.1\r\n\r\n"), None);
        assert_eq!(
            host_of("GET / HTTP/1.1\r\nHost: a:1\r\nHost: b:2\r\n\r\n"),
            None
        );
    }

    #[test]
    fn a_forwarded_head_asks_the_explorer_to_close() {
        let head = "GET / HTTP/1.1\r\nHost: localhost:1\r\nConnection: keep-alive\r\n\r\n";
        assert_eq!(
            closing(head),
            "GET / HTTP/1.1\r\nHost: localhost:1\r\nConnection: close\r\n\r\n"
        );
    }

    #[test]
    fn a_head_is_read_to_its_blank_line_and_no_further() {
        let mut r = &b"GET / HTTP/1.1\r\nHost: x\r\n\r\nBODY"[..];
        assert_eq!(
            read_head(&mut r).unwrap().as_deref(),
            Some("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        );
        assert_eq!(r, b"BODY");
        let mut cut = &b"GET / HTTP/1.1\r\nHost"[..];
        assert_eq!(read_head(&mut cut).unwrap(), None);
        let long = format!(
            "GET / HTTP/1.1\r\nX: {}\r\n\r\n",
            "a".repeat(MAX_HEAD_BYTES)
        );
        assert_eq!(read_head(&mut long.as_bytes()).unwrap(), None);
    }
}
