/*
 * fair_lock.pml: lockstep's SPIN twin of the fair lock, the recipe that
 * lockstep calls `fair-predecessor` (ZooKeeper's lock recipe: each client
 * creates an ephemeral-sequential node under /lock, lists the children,
 * holds if its node is the lowest, and otherwise watches the node just
 * below its own with `exists` and lists again when that node goes).
 *
 * `lockstep bench` builds it with `spin -a` and runs pan, to set the
 * checker beside SPIN on the same question (see docs/performance.md):
 *
 *   time to answer   -DN=3 -DCRASHES=0 -DPAUSES=1, pan built with
 *                    -DSAFETY -DNOREDUCE -DBFS: the shortest
 *                    mutual_exclusion violation (the bench reads the
 *                    error's depth as its number of steps);
 *   throughput       -DN=4 -DCRASHES=1, pan built with -DSAFETY
 *                    -DNOREDUCE: a full safe check, which must find no
 *                    error (the bench reads pan's states stored, rate,
 *                    elapsed time and memory).
 *
 * The same system as anchors/FairLock.tla, variable for variable and step
 * for step, so that pan's "states, stored" (with -DNOREDUCE) equals TLC's
 * distinct states. Both are coarser than lockstep's model, on purpose:
 * a SPIN model as one would write it by hand. Differences from lockstep:
 *
 *   - one round per client, sessions open from the start, no resends, no
 *     lost replies, no partitions, no symmetry reduction;
 *   - the resource write is synchronous (the write is part of the holder's
 *     step), and the resource keeps only the highest token it accepted and
 *     whether it ever accepted one below that;
 *   - a session expires only while its client is silent (crashed, or
 *     paused); the store then deletes its node, firing the watches on it,
 *     and tells the client (Expired) only if it has a watch set; otherwise
 *     the client hears of it in the reply to its next request.
 *
 * Parameters (spin -a -DNAME=VALUE):
 *   N         clients, 2 to 4 (default 3)
 *   CRASHES   crashes the checker may inject, for good (default 1)
 *   PAUSES    pauses (the process frozen, then resumed) (default 0)
 *   FENCING   1: the resource rejects a token below the highest accepted
 *   CHECK_MUTEX  0: leave mutual_exclusion unasserted (to ask about the
 *             resource alone, as with fencing under a pause) (default 1)
 *
 * What is checked:
 *   mutual_exclusion    asserted where a client starts to hold: no other
 *                       client that has not crashed believes it holds
 *   resource_exclusion  asserted at each write: no write was accepted out
 *                       of token order
 *   no deadlock         when no step is enabled at all, every client that
 *                       has not crashed has finished its round (every loop
 *                       carries an end label, so this assertion is the
 *                       only end-state check)
 */

#ifndef N
#define N 3
#endif
#ifndef CRASHES
#define CRASHES 1
#endif
#ifndef PAUSES
#define PAUSES 0
#endif
#ifndef FENCING
#define FENCING 0
#endif
#ifndef CHECK_MUTEX
#define CHECK_MUTEX 1
#endif

#define NIL 255   /* no node, no watch, no token yet */

/* a client's phase in its round */
#define IDLE       0   /* has not started */
#define CREATING   1   /* create sent */
#define LISTING    2   /* get_children sent */
#define PROBING    3   /* exists(predecessor, watch) sent */
#define WAITING    4   /* a watch is set on the predecessor */
#define HOLDING    5   /* believes it holds; has not written */
#define WROTE      6   /* believes it holds; has written */
#define RELEASING  7   /* delete of its own node sent */
#define FINISHED   8

mtype = {
  Create, GetChildren, Exists, Delete,             /* client -> store */
  Created, Children, Present, Absent, Deleted,     /* store -> client: replies */
  NodeDeleted, SessionExpired                      /* store -> client: events, errors */
};

/* One request outstanding per client; its reply channel holds the reply
   and at most one event beside it. */
chan request[N] = [1] of { mtype, byte };
chan reply[N]   = [2] of { mtype, byte };

/* clients */
byte phase[N];            /* IDLE */
byte token[N] = NIL;      /* the sequence number of its node */
bool crashed[N];
bool paused[N];
byte crashes_left = CRASHES;
byte pauses_left = PAUSES;

/* the store: one node (or none) per session under /lock */
byte node_of[N] = NIL;    /* sequence number of session i's node */
byte watching[N] = NIL;   /* the node session i watches */
bool expired[N];
byte next_seq;            /* /lock's sequence counter */

/* the guarded resource */
byte highest = NIL;       /* the highest token it accepted */
bool disorder;            /* it accepted a write below `highest` */

/* scratch, always 0 between steps */
byte s_kind;              /* an mtype */
byte s_arg;
byte s_pred;
byte s_i;

#define believes(c)  (phase[c] == HOLDING || phase[c] == WROTE)
#define runs(c)      (!crashed[c] && !paused[c])
#define rival(c, me) (c != me && c < N && !crashed[c] && believes(c))
#define nobody_else_holds(me) \
  (!rival(0, me) && !rival(1, me) && !rival(2, me) && !rival(3, me))
#define through(c)   (c >= N || crashed[c] || phase[c] == FINISHED)
#define all_through  (through(0) && through(1) && through(2) && through(3))

#define clear_scratch  s_kind = 0; s_arg = 0; s_pred = 0; s_i = 0

/* ----------------------------------------------------------------- client */

active [N] proctype client()
{
  byte me = _pid;

end_round:
  do
  :: d_step { runs(me) && phase[me] == IDLE ->
       request[me]!Create,0;
       phase[me] = CREATING;
       printf("c%d: create /lock/<guid>-lock- (ephemeral, sequential)\n", me) }

  :: d_step { runs(me) && phase[me] == CREATING && nempty(reply[me]) ->
       reply[me]?s_kind,s_arg;
       if
       :: s_kind == Created ->
            token[me] = s_arg;
            request[me]!GetChildren,0;
            phase[me] = LISTING;
            printf("c%d: created node %d; get_children /lock\n", me, s_arg)
       :: s_kind == SessionExpired ->
            phase[me] = FINISHED;
            printf("c%d: session expired; the round is over\n", me)
       :: else -> assert(false)
       fi;
       clear_scratch }

  :: d_step { runs(me) && phase[me] == LISTING && nempty(reply[me]) ->
       reply[me]?s_kind,s_arg;
       if
       :: s_kind == Children ->
            /* the predecessor: the highest live node below its own */
            s_pred = NIL;
            s_i = 0;
            do
            :: s_i < token[me] ->
                 if
                 :: (s_arg >> s_i) & 1 -> s_pred = s_i
                 :: else
                 fi;
                 s_i++
            :: else -> break
            od;
            if
            :: s_pred == NIL ->
                 printf("c%d: children %d, its node %d is the lowest: HOLDS\n", me, s_arg, token[me]);
#if CHECK_MUTEX
                 assert(nobody_else_holds(me));   /* mutual_exclusion */
#endif
                 phase[me] = HOLDING
            :: else ->
                 request[me]!Exists,s_pred;
                 phase[me] = PROBING;
                 printf("c%d: children %d; exists(node %d, watch)\n", me, s_arg, s_pred)
            fi
       :: s_kind == SessionExpired ->
            phase[me] = FINISHED;
            printf("c%d: session expired; the round is over\n", me)
       :: else -> assert(false)
       fi;
       clear_scratch }

  :: d_step { runs(me) && phase[me] == PROBING && nempty(reply[me]) ->
       reply[me]?s_kind,s_arg;
       if
       :: s_kind == Present ->
            phase[me] = WAITING;
            printf("c%d: the predecessor is there; waits for its deletion\n", me)
       :: s_kind == Absent ->
            request[me]!GetChildren,0;
            phase[me] = LISTING;
            printf("c%d: the predecessor is gone; get_children /lock\n", me)
       :: s_kind == SessionExpired ->
            phase[me] = FINISHED;
            printf("c%d: session expired; the round is over\n", me)
       :: else -> assert(false)
       fi;
       clear_scratch }

  :: d_step { runs(me) && phase[me] == WAITING && nempty(reply[me]) ->
       reply[me]?s_kind,s_arg;
       if
       :: s_kind == NodeDeleted ->
            request[me]!GetChildren,0;
            phase[me] = LISTING;
            printf("c%d: node %d deleted; get_children /lock\n", me, s_arg)
       :: s_kind == SessionExpired ->
            phase[me] = FINISHED;
            printf("c%d: session expired (event); the round is over\n", me)
       :: else -> assert(false)
       fi;
       clear_scratch }

  /* the holder's one write to the guarded resource, with its token */
  :: d_step { runs(me) && phase[me] == HOLDING ->
       if
       :: highest == NIL || token[me] >= highest ->
            highest = token[me];
            printf("c%d: write with token %d accepted\n", me, token[me])
       :: else ->
            if
            :: FENCING ->
                 printf("c%d: write with token %d rejected (highest %d)\n", me, token[me], highest)
            :: else ->
                 disorder = true;
                 printf("c%d: write with token %d accepted after token %d\n", me, token[me], highest)
            fi
       fi;
       assert(!disorder);                         /* resource_exclusion */
       phase[me] = WROTE }

  :: d_step { runs(me) && phase[me] == WROTE ->
       request[me]!Delete,token[me];
       phase[me] = RELEASING;
       printf("c%d: delete node %d (release)\n", me, token[me]) }

  :: d_step { runs(me) && phase[me] == RELEASING && nempty(reply[me]) ->
       reply[me]?s_kind,s_arg;
       assert(s_kind == Deleted || s_kind == SessionExpired);
       phase[me] = FINISHED;
       printf("c%d: released; the round is over\n", me);
       clear_scratch }

  /* faults: a crash is for good; a pause lasts until the client resumes */
  :: d_step { crashes_left > 0 && runs(me) && phase[me] != FINISHED ->
       crashes_left--;
       crashed[me] = true;
       printf("c%d: CRASHES\n", me) }
  :: d_step { pauses_left > 0 && runs(me) && phase[me] != FINISHED ->
       pauses_left--;
       paused[me] = true;
       printf("c%d: PAUSES\n", me) }
  :: d_step { paused[me] ->
       paused[me] = false;
       printf("c%d: resumes\n", me) }
  od
}

/* ------------------------------------------------------------------ store */

/* Session c's node goes: every watch on it fires (and is used up). */
inline drop_node(c) {
  s_arg = node_of[c];
  node_of[c] = NIL;
  s_i = 0;
  do
  :: s_i < N ->
       if
       :: watching[s_i] == s_arg ->
            watching[s_i] = NIL;
            assert(nfull(reply[s_i]));
            reply[s_i]!NodeDeleted,s_arg
       :: else
       fi;
       s_i++
  :: else -> break
  od
}

/* The live nodes as a bit mask of their sequence numbers. */
inline live_nodes() {
  s_pred = 0;
  s_i = 0;
  do
  :: s_i < N ->
       if
       :: node_of[s_i] != NIL -> s_pred = s_pred | (1 << node_of[s_i])
       :: else
       fi;
       s_i++
  :: else -> break
  od
}

/* Whether a node with sequence number `seq` lives: s_pred = 1 if so. */
inline lives(seq) {
  s_pred = 0;
  s_i = 0;
  do
  :: s_i < N ->
       if
       :: node_of[s_i] == seq -> s_pred = 1
       :: else
       fi;
       s_i++
  :: else -> break
  od
}

/* The store answers session c's request. */
inline serve(c) {
  d_step { nempty(request[c]) ->
    request[c]?s_kind,s_arg;
    assert(nfull(reply[c]));
    printf("store: serves c%d's %e(%d)\n", c, s_kind, s_arg);
    if
    :: expired[c] -> reply[c]!SessionExpired,0
    :: else ->
         if
         :: s_kind == Create ->
              node_of[c] = next_seq;
              next_seq++;
              reply[c]!Created,node_of[c]
         :: s_kind == GetChildren ->
              live_nodes();
              reply[c]!Children,s_pred
         :: s_kind == Exists ->
              lives(s_arg);
              if
              :: s_pred == 1 -> watching[c] = s_arg; reply[c]!Present,0
              :: else -> reply[c]!Absent,0
              fi
         :: s_kind == Delete ->
              if
              :: node_of[c] == s_arg -> drop_node(c)
              :: else
              fi;
              reply[c]!Deleted,0
         :: else -> assert(false)
         fi
    fi;
    clear_scratch }
}

/* Session c expires, only while its client is silent. */
inline expire(c) {
  d_step { (crashed[c] || paused[c]) && !expired[c] ->
    expired[c] = true;
    printf("store: session of c%d EXPIRES\n", c);
    if
    :: node_of[c] != NIL -> drop_node(c)
    :: else
    fi;
    if
    :: watching[c] != NIL ->
         watching[c] = NIL;
         assert(nfull(reply[c]));
         reply[c]!SessionExpired,0
    :: else
    fi;
    clear_scratch }
}

active proctype store()
{
end_serving:
  do
  :: serve(0)
  :: expire(0)
  :: serve(1)
  :: expire(1)
#if N > 2
  :: serve(2)
  :: expire(2)
#endif
#if N > 3
  :: serve(3)
  :: expire(3)
#endif
  :: atomic { timeout -> assert(all_through) }   /* no deadlock */
  od
}
