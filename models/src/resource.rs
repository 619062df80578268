//! The guarded resource: what the lock protects. It logs every write it
//! accepts; with fencing on it rejects a token lower than the highest it has
//! accepted (Kleppmann's fencing token; etcd's create-revision compare).

use crate::ids::{client_of, ClientIdx};
use crate::msg::{Msg, Timer};
use serde::{Deserialize, Serialize};
use stateright::actor::{Actor, Id, Out};
use std::borrow::Cow;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Resource {
    pub fencing: bool,
    /// A deliberately broken fence for tests: it also rejects a token equal
    /// to the highest accepted, so a holder's second write is refused.
    pub reject_equal_tokens: bool,
}

impl Resource {
    pub fn new(fencing: bool) -> Self {
        Resource {
            fencing,
            reject_equal_tokens: false,
        }
    }

    fn accepts(&self, state: &ResourceState, token: u64) -> bool {
        if !self.fencing {
            return true;
        }
        // With fencing on, each token accepted was at least every one
        // before it: the last is the highest (no scan of the whole log).
        match state.log.last().map(|a| a.token) {
            None => true,
            Some(h) if self.reject_equal_tokens => token > h,
            Some(h) => token >= h,
        }
    }
}

/// One accepted write: who wrote it, in which of its acquisitions, with which token.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Accepted {
    pub client: ClientIdx,
    pub hold: u32,
    pub token: u64,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ResourceState {
    /// Accepted writes, in the order accepted.
    pub log: Vec<Accepted>,
}

impl Actor for Resource {
    type Msg = Msg;
    type Timer = Timer;
    type State = ResourceState;
    type Storage = ();
    type Random = ();

    fn on_start(&self, _id: Id, _storage: &Option<()>, _o: &mut Out<Self>) -> ResourceState {
        ResourceState::default()
    }

    fn on_msg(
        &self,
        _id: Id,
        state: &mut Cow<ResourceState>,
        src: Id,
        msg: Msg,
        o: &mut Out<Self>,
    ) {
        let (Some(client), Msg::Write { token, hold }) = (client_of(src), msg) else {
            return;
        };
        let accepted = self.accepts(state, token);
        if accepted {
            state.to_mut().log.push(Accepted {
                client,
                hold,
                token,
            });
        }
        o.send(src, Msg::WriteAck { hold, accepted });
    }

    fn name(&self) -> String {
        "resource".into()
    }
}
