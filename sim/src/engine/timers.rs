//! Armed timers of one actor, and for each the one queued event that
//! stands for it.
//!
//! Re-setting a timer does not queue a new event while an earlier one for
//! it is still queued: that event (the carrier) comes first, finds the
//! timer set for later and is queued again at the later setting's time and
//! sequence number. A request's retry timer and a session's expiry, set
//! again on every request, then cost no queue work until they come due, and
//! every event still happens at the (time, sequence) it was given.
//!
//! A client arms a handful at most, so a short list searched in place
//! beats a tree; the store arms one expiry timer per session, so its set
//! is a short list per client, indexed by the client the timer is about
//! (never iterated: no order to keep).

use models::msg::Timer;

/// A timer's setting: its generation, when it is due and its sequence
/// number there (given when it was set).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Setting {
    pub generation: u64,
    pub at: u64,
    pub seq: u64,
}

/// One timer of one actor.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct TimerEntry {
    /// The setting in force, if the timer is armed.
    pub armed: Option<Setting>,
    /// The queued event that stands for the timer: its generation and time,
    /// at or before the armed setting's time.
    pub carrier: Option<(u64, u64)>,
}

/// What an event for a timer means when it comes due.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Due {
    /// It no longer stands for the timer (an earlier setting replaced it,
    /// or the timer went with its actor).
    Stale,
    /// The timer was cancelled: nothing fires, nothing stands for it now.
    Cancelled,
    /// Its setting is due: the timer fires.
    Fires,
    /// The timer was set again, for later: queue the carrier again there.
    Later(Setting),
}

impl TimerEntry {
    /// Arms the timer with `setting`; whether an event must be queued for
    /// it (none that comes at or before it stands for the timer already).
    pub fn arm(&mut self, setting: Setting) -> bool {
        self.armed = Some(setting);
        match self.carrier {
            Some((_, at)) if at <= setting.at => false,
            Some(_) | None => {
                self.carrier = Some((setting.generation, setting.at));
                true
            }
        }
    }

    /// The event of `generation` came due.
    pub fn came_due(&mut self, generation: u64) -> Due {
        if self.carrier.map(|(g, _)| g) != Some(generation) {
            return Due::Stale;
        }
        match self.armed {
            None => {
                self.carrier = None;
                Due::Cancelled
            }
            Some(s) if s.generation == generation => Due::Fires,
            Some(s) => {
                self.carrier = Some((s.generation, s.at));
                Due::Later(s)
            }
        }
    }

    /// Whether the event of `generation` no longer stands for the timer.
    pub fn is_stale(entry: Option<&TimerEntry>, generation: u64) -> bool {
        entry.and_then(|e| e.carrier).map(|(g, _)| g) != Some(generation)
    }
}

/// A client's timers.
#[derive(Default)]
pub(super) struct FewTimers(Vec<(Timer, TimerEntry)>);

/// The store's timers: per client, the timers about its sessions; a
/// Redis store's key TTLs (a few keys) in the first list.
#[derive(Default)]
pub(super) struct ManyTimers(Vec<FewTimers>);

impl ManyTimers {
    /// Where `timer`'s list is: its session's client, one past the rest.
    fn list(timer: &Timer) -> usize {
        match timer {
            Timer::Expiry(s) => usize::from(s.client) + 1,
            Timer::QueryWait { client } => usize::from(*client) + 1,
            Timer::KeyTtl { .. }
            | Timer::LockDelay { .. }
            | Timer::Kill
            | Timer::Validity
            | Timer::Renew
            | Timer::Think
            | Timer::Hold
            | Timer::Retry
            | Timer::Ping
            | Timer::Deadline
            | Timer::Wake
            | Timer::GiveUp => 0,
        }
    }
}

pub(super) trait TimerSet {
    fn get(&self, timer: &Timer) -> Option<&TimerEntry>;
    /// The timer's entry, a blank one if it has none.
    fn entry(&mut self, timer: Timer) -> &mut TimerEntry;
    fn remove(&mut self, timer: &Timer);
}

impl TimerSet for FewTimers {
    fn get(&self, timer: &Timer) -> Option<&TimerEntry> {
        self.0.iter().find(|(t, _)| t == timer).map(|(_, e)| e)
    }

    fn entry(&mut self, timer: Timer) -> &mut TimerEntry {
        let i = match self.0.iter().position(|(t, _)| *t == timer) {
            Some(i) => i,
            None => {
                self.0.push((timer, TimerEntry::default()));
                self.0.len() - 1
            }
        };
        &mut self.0[i].1
    }

    fn remove(&mut self, timer: &Timer) {
        if let Some(i) = self.0.iter().position(|(t, _)| t == timer) {
            self.0.swap_remove(i);
        }
    }
}

impl FewTimers {
    pub fn clear(&mut self) {
        self.0.clear();
    }
}

impl TimerSet for ManyTimers {
    fn get(&self, timer: &Timer) -> Option<&TimerEntry> {
        self.0.get(Self::list(timer))?.get(timer)
    }

    fn entry(&mut self, timer: Timer) -> &mut TimerEntry {
        let i = Self::list(&timer);
        if i >= self.0.len() {
            self.0.resize_with(i + 1, FewTimers::default);
        }
        self.0[i].entry(timer)
    }

    fn remove(&mut self, timer: &Timer) {
        if let Some(list) = self.0.get_mut(Self::list(timer)) {
            list.remove(timer);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setting(generation: u64, at: u64) -> Setting {
        Setting {
            generation,
            at,
            seq: generation * 10,
        }
    }

    fn exercise(set: &mut impl TimerSet) {
        // Armed at 100: queue an event.
        assert!(set.entry(Timer::Retry).arm(setting(1, 100)));
        assert!(set.entry(Timer::Ping).arm(setting(2, 50)));
        // Set again for 300: the event at 100 stands for it.
        assert!(!set.entry(Timer::Retry).arm(setting(3, 300)));
        // Set again for 80, before the carrier: a new event, the old stale.
        assert!(set.entry(Timer::Retry).arm(setting(4, 80)));
        assert_eq!(set.entry(Timer::Retry).came_due(1), Due::Stale);
        assert!(TimerEntry::is_stale(set.get(&Timer::Retry), 1));
        assert!(!TimerEntry::is_stale(set.get(&Timer::Retry), 4));
        // Set for 200 after all: the carrier at 80 goes on to 200.
        assert!(!set.entry(Timer::Retry).arm(setting(5, 200)));
        assert_eq!(
            set.entry(Timer::Retry).came_due(4),
            Due::Later(setting(5, 200))
        );
        assert_eq!(set.entry(Timer::Retry).came_due(5), Due::Fires);
        // Cancelled: its event finds nothing armed.
        set.entry(Timer::Ping).armed = None;
        assert_eq!(set.entry(Timer::Ping).came_due(2), Due::Cancelled);
        assert_eq!(set.entry(Timer::Ping).came_due(2), Due::Stale);
        set.remove(&Timer::Ping);
        assert!(set.get(&Timer::Ping).is_none());
        assert!(TimerEntry::is_stale(set.get(&Timer::Ping), 2));
    }

    #[test]
    fn a_timer_set_again_is_carried_by_its_earlier_event() {
        exercise(&mut FewTimers::default());
        exercise(&mut ManyTimers::default());
    }
}
