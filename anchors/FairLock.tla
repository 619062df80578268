------------------------------ MODULE FairLock ------------------------------
(***************************************************************************)
(* lockstep's TLA+ twin of the fair lock (`fair-predecessor`): ZooKeeper's *)
(* lock recipe, in which each client creates an ephemeral-sequential node  *)
(* under /lock, lists the children, holds if its node is the lowest and    *)
(* otherwise watches the node just below its own (`exists` with a watch),  *)
(* listing again when that node goes.                                      *)
(*                                                                         *)
(* The same system as fair_lock.pml, variable for variable and step for    *)
(* step, so that TLC's distinct states equal pan's "states, stored" (built *)
(* with -DNOREDUCE) for the same constants. One round per client, sessions *)
(* open from the start, a synchronous resource write, crashes (for good)   *)
(* and pauses from a budget; a session expires only while its client is    *)
(* silent. See anchors/README.md.                                          *)
(***************************************************************************)
EXTENDS Naturals, Sequences

CONSTANTS
    N,          \* clients, 2 to 4
    Crashes,    \* crashes that may strike, for good
    Pauses,     \* pauses (frozen, then resumed) that may strike
    Fencing     \* TRUE: the resource rejects a token below the highest

ASSUME N \in 2..4 /\ Crashes \in Nat /\ Pauses \in Nat /\ Fencing \in BOOLEAN

Clients == 0 .. N - 1
Nil == 255      \* no node, no watch, no token yet (pan's byte)

VARIABLES
    phase,          \* each client's phase in its round
    token,          \* the sequence number of the client's node
    crashed, paused,
    crashesLeft, pausesLeft,
    nodeOf,         \* the store: the sequence number of each session's node
    watching,       \* the node each session watches
    expired,        \* whether each session expired
    nextSeq,        \* /lock's sequence counter
    highest,        \* the resource: the highest token it accepted
    disorder,       \* it accepted a write below `highest`
    request,        \* each client's requests to the store, in order
    reply           \* the store's replies and events to each client, in order

vars == << phase, token, crashed, paused, crashesLeft, pausesLeft, nodeOf,
           watching, expired, nextSeq, highest, disorder, request, reply >>

Msg(kind, arg) == [kind |-> kind, arg |-> arg]

Runs(c) == ~crashed[c] /\ ~paused[c]
Believes(c) == phase[c] \in {"holding", "wrote"}
Through(c) == crashed[c] \/ phase[c] = "finished"

\* The live nodes, as the bit mask pan's reply carries.
Mask(nodes) ==
    LET bit(i) == IF nodes[i] = Nil THEN 0 ELSE 2 ^ nodes[i]
        RECURSIVE sum(_)
        sum(k) == IF k = N THEN 0 ELSE bit(k) + sum(k + 1)
    IN sum(0)

\* The highest live node below `t`, read off a mask, or Nil.
Predecessor(mask, t) ==
    LET below == {i \in 0 .. t - 1 : (mask \div (2 ^ i)) % 2 = 1}
    IN IF below = {} THEN Nil ELSE CHOOSE i \in below : \A j \in below : j <= i

Init ==
    /\ phase = [c \in Clients |-> "idle"]
    /\ token = [c \in Clients |-> Nil]
    /\ crashed = [c \in Clients |-> FALSE]
    /\ paused = [c \in Clients |-> FALSE]
    /\ crashesLeft = Crashes
    /\ pausesLeft = Pauses
    /\ nodeOf = [c \in Clients |-> Nil]
    /\ watching = [c \in Clients |-> Nil]
    /\ expired = [c \in Clients |-> FALSE]
    /\ nextSeq = 0
    /\ highest = Nil
    /\ disorder = FALSE
    /\ request = [c \in Clients |-> << >>]
    /\ reply = [c \in Clients |-> << >>]

Store == << nodeOf, watching, expired, nextSeq >>
Faults == << crashed, paused, crashesLeft, pausesLeft >>
Resource == << highest, disorder >>

-----------------------------------------------------------------------------
(* Clients: each step takes one message and sends the next request.       *)

Send(c, m) == request' = [request EXCEPT ![c] = Append(@, m)]

Start(c) ==
    /\ Runs(c) /\ phase[c] = "idle"
    /\ Send(c, Msg("Create", 0))
    /\ phase' = [phase EXCEPT ![c] = "creating"]
    /\ UNCHANGED << token, Faults, Store, Resource, reply >>

\* The round ends when the store says the session expired.
Ended(c) ==
    /\ phase' = [phase EXCEPT ![c] = "finished"]
    /\ UNCHANGED << token, request >>

OnCreated(c) ==
    /\ Runs(c) /\ phase[c] = "creating" /\ reply[c] /= << >>
    /\ LET m == Head(reply[c]) IN
         \/ /\ m.kind = "Created"
            /\ token' = [token EXCEPT ![c] = m.arg]
            /\ Send(c, Msg("GetChildren", 0))
            /\ phase' = [phase EXCEPT ![c] = "listing"]
         \/ m.kind = "SessionExpired" /\ Ended(c)
    /\ reply' = [reply EXCEPT ![c] = Tail(@)]
    /\ UNCHANGED << Faults, Store, Resource >>

OnChildren(c) ==
    /\ Runs(c) /\ phase[c] = "listing" /\ reply[c] /= << >>
    /\ LET m == Head(reply[c]) IN
         \/ /\ m.kind = "Children"
            /\ LET p == Predecessor(m.arg, token[c]) IN
                 IF p = Nil
                 THEN /\ phase' = [phase EXCEPT ![c] = "holding"]
                      /\ UNCHANGED request
                 ELSE /\ Send(c, Msg("Exists", p))
                      /\ phase' = [phase EXCEPT ![c] = "probing"]
            /\ UNCHANGED token
         \/ m.kind = "SessionExpired" /\ Ended(c)
    /\ reply' = [reply EXCEPT ![c] = Tail(@)]
    /\ UNCHANGED << Faults, Store, Resource >>

OnExists(c) ==
    /\ Runs(c) /\ phase[c] = "probing" /\ reply[c] /= << >>
    /\ LET m == Head(reply[c]) IN
         \/ /\ m.kind = "Present"
            /\ phase' = [phase EXCEPT ![c] = "waiting"]
            /\ UNCHANGED << token, request >>
         \/ /\ m.kind = "Absent"
            /\ Send(c, Msg("GetChildren", 0))
            /\ phase' = [phase EXCEPT ![c] = "listing"]
            /\ UNCHANGED token
         \/ m.kind = "SessionExpired" /\ Ended(c)
    /\ reply' = [reply EXCEPT ![c] = Tail(@)]
    /\ UNCHANGED << Faults, Store, Resource >>

OnWatch(c) ==
    /\ Runs(c) /\ phase[c] = "waiting" /\ reply[c] /= << >>
    /\ LET m == Head(reply[c]) IN
         \/ /\ m.kind = "NodeDeleted"
            /\ Send(c, Msg("GetChildren", 0))
            /\ phase' = [phase EXCEPT ![c] = "listing"]
            /\ UNCHANGED token
         \/ m.kind = "SessionExpired" /\ Ended(c)
    /\ reply' = [reply EXCEPT ![c] = Tail(@)]
    /\ UNCHANGED << Faults, Store, Resource >>

\* The holder's one write to the guarded resource, with its token.
Write(c) ==
    /\ Runs(c) /\ phase[c] = "holding"
    /\ IF highest = Nil \/ token[c] >= highest
       THEN highest' = token[c] /\ UNCHANGED disorder
       ELSE /\ disorder' = (disorder \/ ~Fencing)
            /\ UNCHANGED highest
    /\ phase' = [phase EXCEPT ![c] = "wrote"]
    /\ UNCHANGED << token, Faults, Store, request, reply >>

Release(c) ==
    /\ Runs(c) /\ phase[c] = "wrote"
    /\ Send(c, Msg("Delete", token[c]))
    /\ phase' = [phase EXCEPT ![c] = "releasing"]
    /\ UNCHANGED << token, Faults, Store, Resource, reply >>

OnDeleted(c) ==
    /\ Runs(c) /\ phase[c] = "releasing" /\ reply[c] /= << >>
    /\ Head(reply[c]).kind \in {"Deleted", "SessionExpired"}
    /\ phase' = [phase EXCEPT ![c] = "finished"]
    /\ reply' = [reply EXCEPT ![c] = Tail(@)]
    /\ UNCHANGED << token, Faults, Store, Resource, request >>

Crash(c) ==
    /\ crashesLeft > 0 /\ Runs(c) /\ phase[c] /= "finished"
    /\ crashesLeft' = crashesLeft - 1
    /\ crashed' = [crashed EXCEPT ![c] = TRUE]
    /\ UNCHANGED << phase, token, paused, pausesLeft, Store, Resource, request, reply >>

Pause(c) ==
    /\ pausesLeft > 0 /\ Runs(c) /\ phase[c] /= "finished"
    /\ pausesLeft' = pausesLeft - 1
    /\ paused' = [paused EXCEPT ![c] = TRUE]
    /\ UNCHANGED << phase, token, crashed, crashesLeft, Store, Resource, request, reply >>

Resume(c) ==
    /\ paused[c]
    /\ paused' = [paused EXCEPT ![c] = FALSE]
    /\ UNCHANGED << phase, token, crashed, crashesLeft, pausesLeft, Store, Resource,
                    request, reply >>

-----------------------------------------------------------------------------
(* The store: serves one request, or expires one session, per step.       *)

\* The replies after session c's node (sequence number s) goes: a
\* NodeDeleted event to every session that watches it.
Fired(s, rep) ==
    [i \in Clients |-> IF watching[i] = s THEN Append(rep[i], Msg("NodeDeleted", s))
                       ELSE rep[i]]
Unwatched(s, w) == [i \in Clients |-> IF w[i] = s THEN Nil ELSE w[i]]

Serve(c) ==
    /\ request[c] /= << >>
    /\ LET m == Head(request[c])
           answer(r) == reply' = [reply EXCEPT ![c] = Append(@, r)]
       IN
         /\ request' = [request EXCEPT ![c] = Tail(@)]
         /\ IF expired[c]
            THEN answer(Msg("SessionExpired", 0)) /\ UNCHANGED << nodeOf, watching, nextSeq >>
            ELSE CASE m.kind = "Create" ->
                        /\ nodeOf' = [nodeOf EXCEPT ![c] = nextSeq]
                        /\ nextSeq' = nextSeq + 1
                        /\ answer(Msg("Created", nextSeq))
                        /\ UNCHANGED watching
                   [] m.kind = "GetChildren" ->
                        /\ answer(Msg("Children", Mask(nodeOf)))
                        /\ UNCHANGED << nodeOf, watching, nextSeq >>
                   [] m.kind = "Exists" ->
                        /\ IF \E i \in Clients : nodeOf[i] = m.arg
                           THEN /\ watching' = [watching EXCEPT ![c] = m.arg]
                                /\ answer(Msg("Present", 0))
                           ELSE answer(Msg("Absent", 0)) /\ UNCHANGED watching
                        /\ UNCHANGED << nodeOf, nextSeq >>
                   [] m.kind = "Delete" ->
                        /\ IF nodeOf[c] = m.arg
                           THEN /\ nodeOf' = [nodeOf EXCEPT ![c] = Nil]
                                /\ watching' = Unwatched(m.arg, watching)
                                /\ reply' = [Fired(m.arg, reply) EXCEPT
                                               ![c] = Append(@, Msg("Deleted", 0))]
                           ELSE answer(Msg("Deleted", 0)) /\ UNCHANGED << nodeOf, watching >>
                        /\ UNCHANGED nextSeq
    /\ UNCHANGED << phase, token, Faults, expired, Resource >>

Expire(c) ==
    /\ (crashed[c] \/ paused[c]) /\ ~expired[c]
    /\ expired' = [expired EXCEPT ![c] = TRUE]
    /\ LET s == nodeOf[c]
           rep1 == IF s = Nil THEN reply ELSE Fired(s, reply)
           w1 == IF s = Nil THEN watching ELSE Unwatched(s, watching)
       IN /\ nodeOf' = [nodeOf EXCEPT ![c] = Nil]
          /\ IF w1[c] /= Nil
             THEN /\ watching' = [w1 EXCEPT ![c] = Nil]
                  /\ reply' = [rep1 EXCEPT ![c] = Append(@, Msg("SessionExpired", 0))]
             ELSE watching' = w1 /\ reply' = rep1
    /\ UNCHANGED << phase, token, Faults, nextSeq, Resource, request >>

\* Every client that has not crashed has finished: the run may stop here
\* (without this step TLC would call it a deadlock).
Terminated == (\A c \in Clients : Through(c)) /\ UNCHANGED vars

Next ==
    \/ \E c \in Clients :
         \/ Start(c) \/ OnCreated(c) \/ OnChildren(c) \/ OnExists(c) \/ OnWatch(c)
         \/ Write(c) \/ Release(c) \/ OnDeleted(c)
         \/ Crash(c) \/ Pause(c) \/ Resume(c)
         \/ Serve(c) \/ Expire(c)
    \/ Terminated

Spec == Init /\ [][Next]_vars

-----------------------------------------------------------------------------
(* Properties                                                              *)

\* No two clients that have not crashed believe they hold at once.
MutualExclusion ==
    \A a, b \in Clients : (a /= b /\ ~crashed[a] /\ ~crashed[b]) => ~(Believes(a) /\ Believes(b))

\* The resource never accepted a write out of token order.
ResourceExclusion == ~disorder

\* One request outstanding per client; a reply and at most one event.
ChannelBounds == \A c \in Clients : Len(request[c]) <= 1 /\ Len(reply[c]) <= 2

=============================================================================
