//! The source of `injection: channel`, BookSim's network interface: a node sends one message
//! at a time (per message class), flit by flit over its injection channel (one flit per
//! cycle), into its router's local input port, whose VCs are `buffer_depth` flits deep like
//! every other port's (BookSim's `TrafficManager::_Step`).
//!
//! With `injection: parallel` (the default, the models' source) a message that takes an
//! injection VC is there whole at once: the V injection VCs are V parallel queues. With
//! `injection: channel`:
//! - where the nodes are routers (tori, meshes, hypercubes) the injection VCs are the router's
//!   local input buffers, and their flits come over the channel. Every message joins the
//!   source queue; a node with messages queued takes, round-robin from the VC it used last,
//!   an injection VC that is available (empty and its credits back; with `tail_sent`
//!   reallocation, also one whose last message's tail has been fed, the next message queueing
//!   behind it in the buffer as in any VC, `reallocation`) and has a credit, and feeds the
//!   front message's head into it in the same cycle. Then one flit per cycle while the buffer
//!   has room by its credits (`vc_count + owed < depth`; a flit leaving an injection VC
//!   returns its credit over the channel in `1 + credit_delay` cycles). A flit fed in cycle t
//!   is in transit until t + 1 (it may leave the buffer from then) and the header may be
//!   routed from t + 1 + `router_delay`. The next message starts in the cycle after the tail
//!   has been fed: a message whose header waits at its source router holds the messages
//!   behind it at the source once its buffer is full (head-of-line blocking at the source,
//!   which the parallel source does not have). With request-reply traffic each class (requests,
//!   replies) has its own message being fed and its own VCs; the classes share the channel's
//!   flit per cycle round-robin;
//! - where the terminals are not routers (dragonflies, k-ary n-trees, graphs with terminals)
//!   the terminal link is the injection channel already and its VCs sit at the router; the
//!   source sends one message at a time there too: the next once the last one's tail has left
//!   the terminal.
//!
//! The feed is chosen between routing and traversal, from the buffers and credits as the cycle
//! found them, over the nodes with a message queued or being fed only, and its flits enter
//! the buffers after the traversal (so they leave from the next cycle, as over any one-cycle
//! link, and need no timing events). With a timing (`timing`) a flit leaving a fed injection
//! VC owes its credit for `1 + credit_delay` cycles; without one the credit loop is the
//! default one-cycle loop and the buffer's count is its credit. Without `injection: channel`
//! the engine holds no `Source` and the step is one `None` test.

use super::{Engine, Message, NONE, Pending};

/// A source slot with a message queued and no VC yet.
const WAITING: u32 = NONE - 1;

/// The sources of `injection: channel`.
pub(super) struct Source {
    /// Per node and message class (`node * classes + class`): the injection VC whose message
    /// is being fed, `WAITING`, or `NONE` (nothing queued). Where the nodes are routers.
    vc: Vec<u32>,
    /// Per node and class: the injection VC (`0..V`) given to a message last.
    last_vc: Vec<u32>,
    /// Per node: the class that sent the last flit.
    last_class: Vec<u32>,
    /// The nodes with a class waiting or being fed, in no particular order (removed by
    /// swapping), and per node whether it is listed.
    feeding: Vec<u32>,
    listed: Vec<bool>,
    /// This cycle's flits to feed, chosen before the traversal and fed after it:
    /// (node, class, slot, VC), the first `n_due`; room for one per listed node, grown as
    /// needed.
    due: Vec<(u32, u32, u32, u32)>,
    n_due: usize,
    /// The indices into `due` of this cycle's flits that are a message's header or tail,
    /// handled after the others are counted (`Engine::feed_due`); as long as `due`.
    edges: Vec<u32>,
    /// Message classes: 2 with request-reply traffic (requests, replies), else 1.
    classes: u32,
    /// Whether the flits are fed over the channel (the nodes are routers); else the terminal's
    /// injection VC is the source, and only one may be busy.
    feeds: bool,
}

impl Source {
    /// The sources of a network of `nodes` nodes with `classes` message classes, feeding
    /// their routers' local ports where `feeds` (the nodes are routers).
    pub(super) fn new(nodes: usize, classes: u32, v: u32, feeds: bool) -> Source {
        let (slots, n) = if feeds { (nodes * classes as usize, nodes) } else { (0, 0) };
        Source {
            vc: vec![NONE; slots],
            last_vc: vec![v - 1; slots],
            last_class: vec![classes - 1; n],
            feeding: Vec::with_capacity(n),
            listed: vec![false; n],
            due: Vec::with_capacity(n),
            n_due: 0,
            edges: Vec::with_capacity(n),
            classes,
            feeds,
        }
    }

    /// Whether the flits are fed over the channel.
    pub(super) fn feeds(&self) -> bool {
        self.feeds
    }
}

impl Engine {
    /// Whether `node`'s source may start a message now, outside the feed: always with the
    /// parallel source; where the terminals are not routers when none of the node's messages
    /// holds an injection VC; never where the source feeds (the feed starts them).
    #[inline]
    pub(super) fn source_idle(&self, node: u32) -> bool {
        match self.source.as_deref() {
            None => true,
            Some(s) if s.feeds => false,
            Some(_) => self.inj_busy[node as usize] == 0,
        }
    }

    /// A message of class `class` joined `node`'s source queue: the class waits for a VC
    /// unless it is being fed.
    pub(super) fn source_queued(&mut self, node: u32, class: u32) {
        let Some(s) = self.source.as_deref_mut().filter(|s| s.feeds) else { return };
        let slot = (node * s.classes + class) as usize;
        if s.vc[slot] == NONE {
            s.vc[slot] = WAITING;
        }
        if !s.listed[node as usize] {
            s.listed[node as usize] = true;
            s.feeding.push(node);
        }
    }

    /// The feed of this cycle, chosen before the traversal (from the buffers and credits as
    /// the cycle found them): every listed node sends one flit, of the first class in
    /// round-robin order (from the one after the class that sent last) that can send one: a
    /// waiting class whose next message has been generated and finds an available injection
    /// VC sends that message's head, a class being fed sends its message's next flit if the
    /// buffer has room by its credits. The flits enter their buffers after the traversal
    /// (`Engine::feed_due`): a flit fed in cycle t leaves from t + 1, as over any one-cycle
    /// link. Returns whether a flit is to be fed.
    pub(super) fn feed(&mut self) -> bool {
        // Taken out for the walk: nothing it calls reads the sources.
        let Some(mut source) = self.source.take() else { return false };
        // Room for a flit per listed node, made when it grows; this cycle's are the first
        // `n_due`.
        if source.due.len() < source.feeding.len() {
            source.due.resize(source.feeding.len(), (0, 0, 0, 0));
            source.edges.resize(source.feeding.len(), 0);
        }
        let fed = match source.classes {
            1 => self.feed_one_class(&mut source),
            _ => self.feed_classes(&mut source),
        };
        self.source = Some(source);
        fed
    }

    /// [`Engine::feed`] with one message class: per listed node, the class's one slot (the
    /// node's), with no round-robin over classes (`last_class` stays 0).
    fn feed_one_class(&mut self, source: &mut Source) -> bool {
        let mut fed = false;
        let mut n = 0;
        let mut i = 0;
        while let Some(&node) = source.feeding.get(i) {
            let slot = node as usize;
            match source.vc[slot] {
                NONE => {
                    // Nothing queued or being fed at the node.
                    source.listed[slot] = false;
                    source.feeding.swap_remove(i);
                    continue;
                }
                WAITING => {
                    if let Some(vc) = self.start_message(source, node, 0, slot) {
                        source.due[n] = (node, 0, node, vc);
                        n += 1;
                        fed = true;
                    }
                }
                vc => {
                    // The message being fed sends its next flit if the buffer has room by its
                    // credits: a coin toss to a branch predictor where the router drains the
                    // buffer about as fast as it fills, so the flit is written whatever and
                    // kept by counting.
                    let room = self.has_credit(vc);
                    source.due[n] = (node, 0, node, vc);
                    n += usize::from(room);
                    fed |= room;
                }
            }
            i += 1;
        }
        source.n_due = n;
        fed
    }

    /// [`Engine::feed`] with request-reply traffic's two classes, round-robin from the one
    /// after the class that sent last.
    fn feed_classes(&mut self, source: &mut Source) -> bool {
        let classes = source.classes;
        let mut fed = false;
        let mut n = 0;
        let mut i = 0;
        while let Some(&node) = source.feeding.get(i) {
            let first = source.last_class[node as usize] + 1;
            let mut idle = true;
            for k in 0..classes {
                // `first + k < 2 classes`: a subtraction, not a division per listed node.
                let class = if first + k >= classes { first + k - classes } else { first + k };
                let slot = (node * classes + class) as usize;
                let vc = match source.vc[slot] {
                    NONE => continue,
                    WAITING => {
                        idle = false;
                        match self.start_message(source, node, class, slot) {
                            Some(vc) => vc,
                            None => continue,
                        }
                    }
                    vc => {
                        idle = false;
                        if !self.has_credit(vc) {
                            continue;
                        }
                        vc
                    }
                };
                source.due[n] = (node, class, slot as u32, vc);
                n += 1;
                source.last_class[node as usize] = class;
                fed = true;
                break;
            }
            if idle {
                // Nothing queued or being fed at the node.
                source.listed[node as usize] = false;
                source.feeding.swap_remove(i);
                continue;
            }
            i += 1;
        }
        source.n_due = n;
        fed
    }

    /// Whether injection VC `vc`'s buffer has room for a flit by its credits.
    #[inline]
    fn has_credit(&self, vc: u32) -> bool {
        let owed = self.timing.as_deref().map_or(0, |t| t.owed[vc as usize]);
        self.vc_count[vc as usize] + owed < self.depth
    }

    /// A waiting class of `node` starts its next message if it has been generated and an
    /// injection VC of the class is available (round-robin from the one used last): the
    /// message takes it (behind the last message's tail, with `tail_sent`). Returns the VC.
    fn start_message(
        &mut self,
        source: &mut Source,
        node: u32,
        class: u32,
        slot: usize,
    ) -> Option<u32> {
        let id = self.class_head(node, class)?;
        if self.messages[id as usize].generated > self.now {
            // A reply generated at its request's delivery, a few cycles ahead.
            return None;
        }
        let (base, count) = match self.replies.as_deref() {
            Some(r) => (class * r.class_vcs, r.class_vcs),
            None => (0, self.v),
        };
        let last = source.last_vc[slot];
        let first = self.network_vcs + node * self.v;
        let v = (1..=count).map(|k| base + (last + k - base) % count).find(|&v| {
            let vc = first + v;
            // Free once drained and its credits are back, or (`tail_sent`) once the last
            // message's tail has been fed.
            let empty = self.vc_owner[vc as usize] == NONE;
            let owed = self.timing.as_deref().map_or(0, |t| t.owed[vc as usize]);
            self.has_credit(vc) && (self.queues_messages(vc) || empty && owed == 0)
        })?;
        let vc = first + v;
        self.take_class_head(node, class);
        if !self.grant_behind(vc, id) {
            let vcu = vc as usize;
            self.vc_owner[vcu] = id;
            self.vc_received[vcu] = 0;
            self.vc_out[vcu] = NONE;
        }
        self.inj_busy[node as usize] |= 1 << v;
        self.entered(id, vc, self.now);
        source.vc[slot] = vc;
        source.last_vc[slot] = v;
        Some(vc)
    }

    /// After the traversal: the flits chosen by [`Engine::feed`] enter their buffers. Each is
    /// counted in one loop over the buffers' vectors, borrowed once; the few that are a
    /// message's header or tail (two of a message's flits) are noted by index and finished
    /// after it, in the same order (`fed_edge`). Called per flit, the feed reloaded the
    /// engine's vectors for each (about 70 instructions a flit, callgrind).
    pub(super) fn feed_due(&mut self) {
        let Some(mut source) = self.source.take() else { return };
        let n_due = source.n_due;
        let mut n_edges = 0;
        {
            let Engine { vc_count, vc_received, vc_owner, queues, messages, .. } = self;
            let vc_count: &mut [u32] = vc_count;
            let vcs = vc_count.len();
            let vc_received: &mut [u32] = &mut vc_received[..vcs];
            let vc_owner: &[u32] = &vc_owner[..vcs];
            let messages: &[Message] = messages;
            let mut queues = queues.as_deref_mut();
            let Source { due, edges, .. } = &mut *source;
            let edges: &mut [u32] = &mut edges[..n_due];
            for (k, &(_, _, _, vc)) in due[..n_due].iter().enumerate() {
                let vcu = vc as usize;
                let owner = vc_owner[vcu];
                let id = match queues.as_deref_mut() {
                    None => owner,
                    Some(q) => {
                        let id = q.receiving(vc, owner);
                        if q.fifo[vcu].back != NONE {
                            // Behind the front message (`reallocation`).
                            q.fifo[vcu].behind += 1;
                        }
                        id
                    }
                };
                vc_count[vcu] += 1;
                let received = vc_received[vcu] + 1;
                vc_received[vcu] = received;
                // Written whatever, kept by counting: most fed flits are neither.
                let edge = received == 1 || received == messages[id as usize].length;
                edges[n_edges] = k as u32;
                n_edges += usize::from(edge);
            }
        }
        for e in 0..n_edges {
            let (node, class, slot, vc) = source.due[source.edges[e] as usize];
            self.fed_edge(&mut source, node, class, slot as usize, vc);
        }
        source.n_due = 0;
        self.source = Some(source);
    }

    /// The flit just fed into `vc` by the message class `class` of `node` was its message's
    /// header, its tail, or both: the header is at the router next cycle and routed after its
    /// pipeline; after the tail the next message may start next cycle.
    fn fed_edge(&mut self, source: &mut Source, node: u32, class: u32, slot: usize, vc: u32) {
        let vcu = vc as usize;
        let id = self.receiving(vc);
        if self.vc_received[vcu] == 1 && !self.header_behind(vc, id, 1) {
            self.pending.push(Pending::new(vc, self.now + 1 + self.delay));
        }
        if self.vc_received[vcu] == self.messages[id as usize].length {
            let more = self.class_head(node, class).is_some();
            source.vc[slot] = if more { WAITING } else { NONE };
        }
    }

    /// The first message of class `class` in `node`'s source queue (replies are queued ahead
    /// of the requests, `replies`).
    fn class_head(&self, node: u32, class: u32) -> Option<u32> {
        let head = self.queue_head[node as usize];
        let last_reply = self.replies.as_deref().map_or(NONE, |r| r.last_reply[node as usize]);
        let id = match (class, last_reply) {
            (0, NONE) => head,
            (0, reply) => self.messages[reply as usize].next,
            (_, NONE) => NONE,
            _ => head,
        };
        (id != NONE).then_some(id)
    }

    /// Takes the first message of class `class` out of `node`'s source queue: the head, or
    /// for a request the one behind the last queued reply.
    fn take_class_head(&mut self, node: u32, class: u32) {
        let last_reply = self.replies.as_deref().map_or(NONE, |r| r.last_reply[node as usize]);
        self.unlink(node, if class == 1 { NONE } else { last_reply });
    }
}

#[cfg(test)]
impl Engine {
    /// Test builds: the flits in `node`'s injection VCs' buffers.
    pub(crate) fn injection_buffered(&self, node: u32) -> u32 {
        let first = (self.network_vcs + node * self.v) as usize;
        self.vc_count[first..first + self.v as usize].iter().sum()
    }

    /// Test builds: each source sends one message at a time. Where it feeds: per class, the
    /// only injection VC whose receiving message is not all fed is the one the class feeds;
    /// a class with messages queued is waiting or being fed; the listed nodes are those with a
    /// class waiting or fed, once each. Else a node holds at most one injection VC.
    pub(super) fn check_sources(&self) {
        let Some(source) = self.source.as_deref() else {
            return;
        };
        for node in 0..self.geometry.nodes {
            let busy = self.inj_busy[node as usize];
            if !source.feeds {
                assert!(busy.count_ones() <= 1, "node {node} sends two messages at once");
                continue;
            }
            let count = self.v / source.classes;
            let mut active = false;
            for class in 0..source.classes {
                let slot = (node * source.classes + class) as usize;
                let first = self.network_vcs + node * self.v + class * count;
                let unfed: Vec<u32> = (first..first + count)
                    .filter(|&vc| {
                        let owner = self.vc_owner[vc as usize];
                        owner != NONE && {
                            let id = self.receiving(vc);
                            self.vc_received[vc as usize] < self.messages[id as usize].length
                        }
                    })
                    .collect();
                let state = source.vc[slot];
                match unfed[..] {
                    // A message is fed its head when it starts.
                    [] => assert!(
                        state == NONE || state == WAITING,
                        "node {node} class {class}: VC {state} fed, but nothing unfed there"
                    ),
                    [vc] => assert_eq!(vc, state, "node {node} class {class} feeds another VC"),
                    _ => panic!("node {node} class {class} feeds two messages: VCs {unfed:?}"),
                }
                let queued = self.class_head(node, class).is_some();
                assert!(!queued || state != NONE, "node {node} class {class}: queued, idle");
                active |= state != NONE;
            }
            let listed = source.feeding.iter().filter(|&&n| n == node).count();
            assert_eq!(listed, usize::from(source.listed[node as usize]), "node {node} listed");
            assert!(!active || listed == 1, "node {node} active but not listed");
        }
    }
}
