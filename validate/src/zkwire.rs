//! A bare ZooKeeper client on the wire protocol, for what a client library
//! does not let the validator say: a `ConnectRequest` carrying the last
//! zxid the client has seen (a reconnect to another server), a session's
//! own id and password handed from one connection to the next, and a
//! connection attempt that is left waiting for its answer. Only the few
//! requests the ensemble experiments make: `exists`, `create`,
//! `closeSession`, and pings (a session kept alive by hand, whose
//! connection's close is seen as it comes).
//!
//! Frames are a 4-byte big-endian length and a jute body: the first frame
//! each way is the `ConnectRequest` / `ConnectResponse`; a request opens
//! with its header (xid, op code), a reply with its header (xid, zxid,
//! err). Reading is cancel-safe: what arrived is kept in the connection's
//! buffer, so a read abandoned at a timeout loses nothing.

use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A connection to one server.
pub struct Conn {
    stream: TcpStream,
    buf: Vec<u8>,
}

/// What came of a connection's handshake within the time given.
#[derive(Debug)]
pub enum Handshake {
    /// The server answered: the session (0 timeout: it has expired).
    Opened(Session),
    /// The server closed the connection without an answer.
    Closed,
    /// No answer yet; the connection is still open.
    Waiting,
}

/// A session as the server gave it.
#[derive(Clone, Debug)]
pub struct Session {
    pub id: i64,
    pub password: Vec<u8>,
    pub timeout_ms: i32,
}

/// A reply's header.
pub struct Reply {
    pub zxid: i64,
    pub err: i32,
}

fn int(b: &mut Vec<u8>, v: i32) {
    b.extend_from_slice(&v.to_be_bytes());
}

fn long(b: &mut Vec<u8>, v: i64) {
    b.extend_from_slice(&v.to_be_bytes());
}

fn bytes(b: &mut Vec<u8>, v: &[u8]) {
    int(b, v.len() as i32);
    b.extend_from_slice(v);
}

fn be_i32(b: &[u8], at: usize) -> Option<i32> {
    Some(i32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn be_i64(b: &[u8], at: usize) -> Option<i64> {
    Some(i64::from_be_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

impl Conn {
    /// Opens a connection to `addr` and sends a `ConnectRequest` for
    /// `session` (`None`: a new one) with `last_zxid_seen`.
    pub async fn start(
        addr: &str,
        last_zxid_seen: i64,
        session: Option<&Session>,
        timeout_ms: i32,
    ) -> std::io::Result<Conn> {
        let stream = TcpStream::connect(addr).await?;
        let _ = stream.set_nodelay(true);
        let mut body = Vec::new();
        int(&mut body, 0); // protocol version
        long(&mut body, last_zxid_seen);
        int(&mut body, timeout_ms);
        long(&mut body, session.map_or(0, |s| s.id));
        bytes(
            &mut body,
            session.map_or(&[0u8; 16][..], |s| s.password.as_slice()),
        );
        body.push(0); // read-only: no
        let mut c = Conn {
            stream,
            buf: Vec::new(),
        };
        c.send(&body).await?;
        Ok(c)
    }

    async fn send(&mut self, body: &[u8]) -> std::io::Result<()> {
        let mut frame = Vec::with_capacity(4 + body.len());
        int(&mut frame, body.len() as i32);
        frame.extend_from_slice(body);
        self.stream.write_all(&frame).await
    }

    /// The next whole frame's body; `None` at the end of the stream.
    /// Cancel-safe.
    async fn frame(&mut self) -> std::io::Result<Option<Vec<u8>>> {
        loop {
            if let Some(n) = be_i32(&self.buf, 0) {
                let n = n.max(0) as usize;
                if self.buf.len() >= 4 + n {
                    let body = self.buf[4..4 + n].to_vec();
                    self.buf.drain(..4 + n);
                    return Ok(Some(body));
                }
            }
            let mut chunk = [0u8; 4096];
            let n = self.stream.read(&mut chunk).await?;
            if n == 0 {
                return Ok(None);
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }

    /// The handshake's answer, waiting at most `within`.
    pub async fn handshake(&mut self, within: Duration) -> Handshake {
        match tokio::time::timeout(within, self.frame()).await {
            Err(_) => Handshake::Waiting,
            Ok(Ok(Some(body))) => {
                let (Some(timeout_ms), Some(id), Some(len)) =
                    (be_i32(&body, 4), be_i64(&body, 8), be_i32(&body, 16))
                else {
                    return Handshake::Closed;
                };
                let password = body
                    .get(20..20 + len.max(0) as usize)
                    .unwrap_or_default()
                    .to_vec();
                Handshake::Opened(Session {
                    id,
                    password,
                    timeout_ms,
                })
            }
            Ok(_) => Handshake::Closed,
        }
    }

    /// Sends request `op` with `body` and waits (at most `within`) for its
    /// reply, passing over notifications and pings.
    async fn call(
        &mut self,
        xid: i32,
        op: i32,
        body: &[u8],
        within: Duration,
    ) -> Result<Reply, String> {
        let mut frame = Vec::new();
        int(&mut frame, xid);
        int(&mut frame, op);
        frame.extend_from_slice(body);
        self.send(&frame).await.map_err(|e| format!("send: {e}"))?;
        match tokio::time::timeout(within, self.reply(xid)).await {
            Err(_) => Err(format!("no reply to op {op} within {within:?}")),
            Ok(Ok(Some(r))) => Ok(r),
            Ok(Ok(None)) => Err("the server closed the connection".to_string()),
            Ok(Err(e)) => Err(format!("read: {e}")),
        }
    }

    /// The reply to `xid`, passing over notifications and other replies;
    /// `None` once the server has closed the connection.
    async fn reply(&mut self, xid: i32) -> std::io::Result<Option<Reply>> {
        loop {
            let Some(r) = self.frame().await? else {
                return Ok(None);
            };
            let (Some(rx), Some(zxid), Some(err)) = (be_i32(&r, 0), be_i64(&r, 4), be_i32(&r, 12))
            else {
                return Err(std::io::Error::other("a short reply"));
            };
            if rx == xid {
                return Ok(Some(Reply { zxid, err }));
            }
        }
    }

    /// Pings every `every`, each answered within `within`, until the
    /// server closes the connection (or resets it): when it did, and how
    /// many pings it had answered. `Err`: a ping went unanswered.
    pub async fn ping_until_closed(
        &mut self,
        every: Duration,
        within: Duration,
    ) -> Result<(std::time::Instant, u32), String> {
        const PING_XID: i32 = -2;
        const PING: i32 = 11;
        let closed = |answered| Ok((std::time::Instant::now(), answered));
        let mut answered = 0;
        loop {
            let mut frame = Vec::new();
            int(&mut frame, PING_XID);
            int(&mut frame, PING);
            if self.send(&frame).await.is_err() {
                return closed(answered);
            }
            match tokio::time::timeout(within, self.reply(PING_XID)).await {
                Err(_) => {
                    return Err(format!(
                        "a ping unanswered within {within:?}, after {answered} answered"
                    ))
                }
                Ok(Ok(Some(_))) => answered += 1,
                Ok(Ok(None) | Err(_)) => return closed(answered),
            }
            // Until the next ping, a close is seen as it comes.
            if let Ok(Ok(None) | Err(_)) = tokio::time::timeout(every, self.frame()).await {
                return closed(answered);
            }
        }
    }

    /// `exists(path)` without a watch: the reply (its zxid is the
    /// server's last applied one).
    pub async fn exists(&mut self, xid: i32, path: &str) -> Result<Reply, String> {
        let mut b = Vec::new();
        bytes(&mut b, path.as_bytes());
        b.push(0);
        self.call(xid, 3, &b, Duration::from_secs(3)).await
    }

    /// `create(path, "", world:anyone, ephemeral or persistent)`.
    pub async fn create(&mut self, xid: i32, path: &str, ephemeral: bool) -> Result<Reply, String> {
        let mut b = Vec::new();
        bytes(&mut b, path.as_bytes());
        bytes(&mut b, b"");
        int(&mut b, 1); // one ACL
        int(&mut b, 31); // ALL
        bytes(&mut b, b"world");
        bytes(&mut b, b"anyone");
        int(&mut b, i32::from(ephemeral));
        self.call(xid, 1, &b, Duration::from_secs(3)).await
    }

    /// `closeSession`: the session ends (its ephemeral nodes go).
    pub async fn close_session(&mut self, xid: i32) -> Result<Reply, String> {
        self.call(xid, -11, &[], Duration::from_secs(3)).await
    }
}
