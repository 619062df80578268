//! Command lists lent to actor steps and taken back. stateright's `Out` is
//! a vector each step would allocate anew and free once its commands are
//! applied: a herd's hundreds of millions of steps spent a tenth of their
//! time on that. Collecting a `vec::IntoIter` that has not been advanced
//! keeps its buffer (std's in-place collection), so one buffer per kind of
//! actor goes round: lent as an `Out`, taken back as the vector it is,
//! drained, and kept for the next step.

use stateright::actor::{Actor, Command, Out};

/// What an actor of type `A` outputs.
pub(super) type Commands<A> = Vec<
    Command<<A as Actor>::Msg, <A as Actor>::Timer, <A as Actor>::Random, <A as Actor>::Storage>,
>;

/// The spare command buffer of one kind of actor.
pub(super) struct Lender<A: Actor> {
    spare: Commands<A>,
}

impl<A: Actor> Default for Lender<A> {
    fn default() -> Self {
        Lender { spare: Vec::new() }
    }
}

impl<A: Actor> Lender<A> {
    /// An empty `Out` in the spare buffer (a fresh one if it is out on loan).
    pub fn lend(&mut self) -> Out<A> {
        std::mem::take(&mut self.spare).into_iter().collect()
    }

    /// The commands a step output, in the buffer it was lent.
    pub fn commands(out: Out<A>) -> Commands<A> {
        out.into_iter().collect()
    }

    /// Takes a drained buffer back for the next step.
    pub fn give_back(&mut self, mut buffer: Commands<A>) {
        buffer.clear();
        if buffer.capacity() > self.spare.capacity() {
            self.spare = buffer;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use models::client::Client;
    use models::msg::Timer;
    use std::time::Duration;

    /// The point of the loan: the second step's `Out` is the first one's
    /// buffer, not a new allocation.
    #[test]
    fn a_buffer_taken_back_is_lent_again() {
        let mut lender: Lender<Client> = Lender::default();
        let mut out = lender.lend();
        for _ in 0..3 {
            out.set_timer(Timer::Retry, Duration::ZERO..Duration::from_millis(1));
        }
        let commands = Lender::commands(out);
        assert_eq!(commands.len(), 3);
        let (buffer, capacity) = (commands.as_ptr(), commands.capacity());
        lender.give_back(commands);
        let again = lender.lend();
        assert!(again.is_empty());
        let commands = Lender::commands(again);
        assert_eq!((commands.as_ptr(), commands.capacity()), (buffer, capacity));
    }
}
