//! A small Redis client: RESP2 over a tokio TCP connection, one command
//! at a time (what a lock client sends), and the reading end of `MONITOR`.
//! Enough for the commands the recipes send and the validator's own
//! housekeeping (`FLUSHALL`, `INFO`, `ECHO`), nothing more.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;

/// A RESP2 value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// `+text`.
    Simple(String),
    /// `-text`.
    Error(String),
    /// `:n`.
    Int(i64),
    /// `$len` and the bytes, or `$-1` (nil).
    Bulk(Option<Vec<u8>>),
    /// `*len` and the elements, or `*-1` (nil).
    Array(Option<Vec<Value>>),
}

/// One connection to one server.
pub struct Conn {
    reader: BufReader<OwnedReadHalf>,
    writer: OwnedWriteHalf,
    local: SocketAddr,
}

/// How long a connect may take before the server counts as down.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

fn bad(what: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.into())
}

impl Conn {
    pub async fn connect(endpoint: &str) -> io::Result<Conn> {
        let stream = tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(endpoint))
            .await
            .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "connect timed out"))??;
        stream.set_nodelay(true)?;
        let local = stream.local_addr()?;
        let (r, w) = stream.into_split();
        Ok(Conn {
            reader: BufReader::new(r),
            writer: w,
            local,
        })
    }

    /// This end's address: the one `MONITOR` names the connection by.
    pub fn local(&self) -> SocketAddr {
        self.local
    }

    /// Sends one command and reads its reply.
    pub async fn call(&mut self, args: &[&[u8]]) -> io::Result<Value> {
        self.send(args).await?;
        self.read().await
    }

    /// Sends one command (as an array of bulk strings).
    pub async fn send(&mut self, args: &[&[u8]]) -> io::Result<()> {
        let mut buf = format!("*{}\r\n", args.len()).into_bytes();
        for a in args {
            buf.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
            buf.extend_from_slice(a);
            buf.extend_from_slice(b"\r\n");
        }
        self.writer.write_all(&buf).await
    }

    /// Reads one value (a reply, or a `MONITOR` line).
    pub async fn read(&mut self) -> io::Result<Value> {
        let line = self.line().await?;
        let (kind, rest) = line
            .split_first()
            .ok_or_else(|| bad("an empty line from the server"))?;
        let text = || String::from_utf8_lossy(rest).into_owned();
        let number = || -> io::Result<i64> {
            std::str::from_utf8(rest)
                .ok()
                .and_then(|t| t.parse().ok())
                .ok_or_else(|| bad(format!("not a number: {:?}", text())))
        };
        match kind {
            b'+' => Ok(Value::Simple(text())),
            b'-' => Ok(Value::Error(text())),
            b':' => Ok(Value::Int(number()?)),
            b'$' => {
                let len = number()?;
                if len < 0 {
                    return Ok(Value::Bulk(None));
                }
                let mut bytes = vec![0u8; len as usize + 2];
                self.reader.read_exact(&mut bytes).await?;
                bytes.truncate(len as usize);
                Ok(Value::Bulk(Some(bytes)))
            }
            b'*' => {
                let len = number()?;
                if len < 0 {
                    return Ok(Value::Array(None));
                }
                let mut items = Vec::with_capacity(len as usize);
                for _ in 0..len {
                    items.push(Box::pin(self.read()).await?);
                }
                Ok(Value::Array(Some(items)))
            }
            other => Err(bad(format!("unknown RESP type {:?}", *other as char))),
        }
    }

    /// One line without its CRLF.
    async fn line(&mut self) -> io::Result<Vec<u8>> {
        let mut line = Vec::new();
        let n = self.reader.read_until(b'\n', &mut line).await?;
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the server closed the connection",
            ));
        }
        while matches!(line.last(), Some(b'\n' | b'\r')) {
            line.pop();
        }
        Ok(line)
    }
}

/// One command as `MONITOR` shows it: `1700000000.123456 [0
/// 127.0.0.1:50000] "SET" "lock" "0x1"`, or `[0 lua]` for a script's own
/// calls.
#[derive(Clone, Debug, PartialEq)]
pub struct MonitorLine {
    /// The server's time, seconds.
    pub time: f64,
    /// The client's address; `None` for a script's `redis.call`s.
    pub client: Option<SocketAddr>,
    /// The command and its arguments, unquoted.
    pub args: Vec<String>,
}

impl MonitorLine {
    /// The command's name, upper case.
    pub fn command(&self) -> String {
        self.args
            .first()
            .map_or(String::new(), |c| c.to_uppercase())
    }

    pub fn parse(line: &str) -> Option<MonitorLine> {
        let (time, rest) = line.split_once(' ')?;
        let rest = rest.strip_prefix('[')?;
        let (who, rest) = rest.split_once(']')?;
        let (_db, addr) = who.split_once(' ')?;
        let client = match addr {
            "lua" => None,
            a => Some(a.parse().ok()?),
        };
        Some(MonitorLine {
            time: time.parse().ok()?,
            client,
            args: unquote(rest.trim_start())?,
        })
    }
}

/// `"a" "b\"c"` as [a, b"c]: MONITOR's quoting (`sdscatrepr`).
fn unquote(mut s: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    loop {
        s = s.trim_start();
        if s.is_empty() {
            return Some(out);
        }
        let mut chars = s.strip_prefix('"')?.char_indices();
        let mut arg: Vec<u8> = Vec::new();
        let end = loop {
            let (i, c) = chars.next()?;
            match c {
                '"' => break i,
                '\\' => {
                    let (_, e) = chars.next()?;
                    match e {
                        'n' => arg.push(b'\n'),
                        'r' => arg.push(b'\r'),
                        't' => arg.push(b'\t'),
                        'a' => arg.push(7),
                        'b' => arg.push(8),
                        'x' => {
                            let hi = chars.next()?.1;
                            let lo = chars.next()?.1;
                            let byte = u8::from_str_radix(&format!("{hi}{lo}"), 16).ok()?;
                            arg.push(byte);
                        }
                        other => {
                            let mut b = [0u8; 4];
                            arg.extend_from_slice(other.encode_utf8(&mut b).as_bytes());
                        }
                    }
                }
                c => {
                    let mut b = [0u8; 4];
                    arg.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
                }
            }
        };
        out.push(String::from_utf8_lossy(&arg).into_owned());
        // Past the closing quote (one byte after `end` in the unprefixed text).
        s = &s[1 + end + 1..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn monitor_lines_parse() {
        let l = MonitorLine::parse(
            r#"1700000000.123456 [0 127.0.0.1:50000] "SET" "lock" "0x1\"2" "NX" "PX" "10000""#,
        )
        .unwrap();
        assert_eq!(l.client, Some("127.0.0.1:50000".parse().unwrap()));
        assert_eq!(l.args, ["SET", "lock", "0x1\"2", "NX", "PX", "10000"]);
        assert_eq!(l.command(), "SET");
        let lua = MonitorLine::parse(r#"1700000000.2 [0 lua] "get" "lock""#).unwrap();
        assert_eq!(lua.client, None);
        assert_eq!(lua.command(), "GET");
        let eval = MonitorLine::parse(
            r#"1.5 [0 127.0.0.1:1] "EVAL" "if a == b\n then\\x end" "1" "\xe2\x82""#,
        )
        .unwrap();
        assert_eq!(eval.args[1], "if a == b\n then\\x end");
        assert_eq!(eval.args[2], "1");
    }
}
