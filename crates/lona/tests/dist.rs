//! Distribution against real Erlang nodes and between Lona nodes, on
//! this host: `lona run --sname` programs and `erl -sname` nodes, through
//! the `epmd` either of them starts. Skipped, with a message, when `erl`
//! is not installed (`.ci/run` installs it).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

fn erl_available() -> bool {
    let ok = Command::new("erl")
        .args(["-noshell", "-eval", "halt()."])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("skipped: `erl` is not installed (apt-get install -y erlang-base)");
    }
    ok && epmd_available()
}

/// Whether a node can register: an `epmd` answers, or one can be started.
fn epmd_available() -> bool {
    let ok = TcpStream::connect(("127.0.0.1", 4369)).is_ok()
        || Command::new("epmd")
            .arg("-version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok();
    if !ok {
        eprintln!("skipped: no `epmd` (apt-get install -y erlang-base)");
    }
    ok
}

/// This host's short name, as `lona run --sname` and `erl -sname` take it.
fn host() -> String {
    let h = Command::new("hostname")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .filter(|s| !s.trim().is_empty())
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .unwrap_or_else(|| "localhost".into());
    h.trim().split('.').next().unwrap().to_string()
}

/// A node name no other test (or earlier run) uses.
fn unique(prefix: &str) -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    format!(
        "{prefix}{}x{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// A directory for one test's files (a cookie, a home), removed when the
/// returned guard is dropped.
fn scratch() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("lona-dist-")
        .tempdir()
        .unwrap()
}

/// A running node (`lona` or `erl`): its stdout lines, its stderr text.
struct Node {
    child: Child,
    lines: Receiver<String>,
    err: Arc<Mutex<String>>,
    /// The thread reading standard error, joined once the node ended
    /// (`wait`), so that all it wrote is in `err`.
    err_reader: Option<std::thread::JoinHandle<()>>,
    /// The program's directory, if the test made one (removed with the
    /// node).
    dir: Option<tempfile::TempDir>,
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Node {
    fn spawn(mut cmd: Command) -> Node {
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .stdin(Stdio::null())
            .spawn()
            .expect("node starts");
        let out = BufReader::new(child.stdout.take().unwrap());
        let mut errp = child.stderr.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in out.lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let err = Arc::new(Mutex::new(String::new()));
        let e2 = err.clone();
        let err_reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = errp.read(&mut buf) {
                if n == 0 {
                    break;
                }
                e2.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Node {
            child,
            lines,
            err,
            err_reader: Some(err_reader),
            dir: None,
        }
    }

    /// A Lonala program `src` on a node named `name`.
    fn lona(name: &str, cookie: &str, src: &str) -> Node {
        let dir = scratch();
        let file = dir.path().join("main.lona");
        std::fs::write(&file, src).unwrap();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_lona"));
        cmd.arg("run")
            .arg(&file)
            .args(["--sname", name, "--cookie", cookie]);
        let mut node = Node::spawn(cmd);
        node.dir = Some(dir);
        node
    }

    /// An Erlang node running `eval`.
    fn erl(name: &str, cookie: &str, eval: &str) -> Node {
        let mut cmd = Command::new("erl");
        cmd.args([
            "-sname",
            name,
            "-setcookie",
            cookie,
            "-noshell",
            "-eval",
            eval,
        ]);
        Node::spawn(cmd)
    }

    /// The next stdout line, which must start with `prefix`.
    fn expect(&self, prefix: &str) -> String {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(20))
            .unwrap_or_else(|_| panic!("no line {prefix:?}; stderr: {}", self.stderr()));
        assert!(
            line.starts_with(prefix),
            "expected {prefix:?}, got {line:?}; stderr: {}",
            self.stderr()
        );
        line
    }

    fn stderr(&self) -> String {
        self.err.lock().unwrap().clone()
    }

    /// Waits for the node to end by itself: its exit status.
    fn wait(&mut self) -> std::process::ExitStatus {
        let until = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                // Its standard error read to the end (a test that read it
                // at once once found it empty: the reader had not run).
                // Bounded: a daemon the node started (epmd) could hold the
                // pipe open.
                if let Some(r) = self.err_reader.take() {
                    let give_up = Instant::now() + Duration::from_secs(2);
                    while !r.is_finished() && Instant::now() < give_up {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                }
                return s;
            }
            assert!(Instant::now() < until, "the node did not end");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

/// A Lonala node that registers `:echo`, says `ready`, and answers each
/// `[:echo name node msg]` by sending `[:echoed msg (node)]` to `[name
/// node]`, until `:stop`.
const ECHO: &str = r#"
(defn serve []
  (receive
    [:echo to-name to-node msg] (do (send [to-name to-node] [:echoed msg (node)]) (serve))
    :stop (println "stopped")
    other (do (println "got" other) (serve))))
(defn -main []
  (register :echo (self))
  (println "ready" (node))
  (serve))
"#;

#[test]
fn erlang_pings_lona_and_messages_cross_both_ways() {
    if !erl_available() {
        return;
    }
    let (l, e, h) = (unique("lona"), unique("erl"), host());
    let lona = Node::lona(&l, "c1", ECHO);
    lona.expect(&format!("ready :{l}@{h}"));
    let erl = Node::erl(
        &e,
        "c1",
        &format!(
            "register(collector, self()),
             io:format(\"ping ~p~n\", [net_adm:ping('{l}@{h}')]),
             {{echo, '{l}@{h}'}} ! {{echo, collector, node(), {{hello, 1, <<\"bin\">>, [1, 2.5], #{{k => -7}}, 123456789012345678901234567890}}}},
             receive M -> io:format(\"erl got ~w~n\", [M]) after 5000 -> io:format(\"timeout~n\") end,
             io:format(\"nodes ~w~n\", [nodes()]),
             {{echo, '{l}@{h}'}} ! stop,
             timer:sleep(200),
             halt()."
        ),
    );
    erl.expect("ping pong");
    erl.expect(&format!(
        "erl got {{echoed,{{hello,1,<<98,105,110>>,[1,2.5],#{{k => -7}},123456789012345678901234567890}},{l}@{h}}}"
    ));
    erl.expect(&format!("nodes [{l}@{h}]"));
    lona.expect("stopped");
}

#[test]
fn lona_connects_first_and_an_unknown_node_is_false() {
    if !erl_available() {
        return;
    }
    let (l, e, h) = (unique("lona"), unique("erl"), host());
    let erl = Node::erl(
        &e,
        "c2",
        "register(collector, self()), io:format(\"up~n\"),
         receive {first, From} -> {echo, From} ! back end,
         receive after 3000 -> ok end, halt().",
    );
    erl.expect("up");
    let mut lona = Node::lona(
        &l,
        "c2",
        &format!(
            r#"(defn -main []
                 (register :echo (self))
                 (println "connect" (connect-node :{e}@{h}))
                 (println "nodes" (nodes))
                 (send [:collector :{e}@{h}] [:first (node)])
                 (println "got" (receive x x :timeout 5000 :none))
                 (println "missing" (connect-node :nobody{l}@{h}))
                 (println "bad name" (connect-node :nohost)))"#
        ),
    );
    lona.expect("connect true");
    lona.expect(&format!("nodes [:{e}@{h}]"));
    lona.expect("got :back");
    lona.expect("missing false");
    lona.expect("bad name false");
    assert!(lona.wait().success());
}

#[test]
fn two_lona_nodes_talk_and_keep_order() {
    if !epmd_available() {
        return;
    }
    let (a, b, h) = (unique("la"), unique("lb"), host());
    let nb = Node::lona(&b, "c3", ECHO);
    nb.expect("ready");
    let mut na = Node::lona(
        &a,
        "c3",
        &format!(
            r#"(defn -main []
                 (register :me (self))
                 (dotimes [i 2000] (send [:echo :{b}@{h}] [:echo :me (node) i]))
                 (let [got (loop [i 0 ok true]
                             (if (= i 2000) ok
                               (receive [:echoed n _] (recur (inc i) (and ok (= n i))))))]
                   (println "in order" got))
                 (send [:echo :{b}@{h}] :stop))"#
        ),
    );
    na.expect("in order true");
    nb.expect("stopped");
    assert!(na.wait().success());
}

#[test]
fn a_wrong_cookie_is_refused_and_logged() {
    if !erl_available() {
        return;
    }
    let (l, e, h) = (unique("lona"), unique("erl"), host());
    let lona = Node::lona(&l, "right", ECHO);
    lona.expect("ready");
    let erl = Node::erl(
        &e,
        "wrong",
        &format!("io:format(\"ping ~p~n\", [net_adm:ping('{l}@{h}')]), halt()."),
    );
    erl.expect("ping pang");
    let until = Instant::now() + Duration::from_secs(10);
    while !lona.stderr().contains("refused") {
        assert!(Instant::now() < until, "not logged: {}", lona.stderr());
        std::thread::sleep(Duration::from_millis(20));
    }
    // And the other way: the Lona node cannot reach a node with another
    // cookie.
    let erl2 = Node::erl(
        &unique("erl"),
        "other",
        "io:format(\"up~p~n\", [node()]), receive after 10000 -> ok end.",
    );
    let up = erl2.expect("up");
    let peer = up.trim_start_matches("up").to_string();
    let lona2 = Node::lona(
        &unique("lona"),
        "right",
        &format!("(defn -main [] (println \"connect\" (connect-node :{peer})))"),
    );
    lona2.expect("connect false");
}

#[test]
fn a_name_in_use_is_a_clear_error() {
    if !epmd_available() {
        return;
    }
    let (n, h) = (unique("dup"), host());
    let first = Node::lona(&n, "c5", ECHO);
    first.expect(&format!("ready :{n}@{h}"));
    let mut second = Node::lona(&n, "c5", ECHO);
    let status = second.wait();
    assert!(!status.success());
    assert!(
        second.stderr().contains("already in use"),
        "stderr: {}",
        second.stderr()
    );
}

#[test]
fn the_default_cookie_is_created_in_home_and_shared_with_erlang() {
    if !erl_available() {
        return;
    }
    let home_dir = scratch();
    let home = home_dir.path();
    let (l, e, h) = (unique("lona"), unique("erl"), host());
    let dir = scratch();
    let file = dir.path().join("main.lona");
    std::fs::write(&file, ECHO).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lona"));
    cmd.arg("run")
        .arg(&file)
        .args(["--sname", &l])
        .env("HOME", home);
    let lona = Node::spawn(cmd);
    lona.expect("ready");
    let cookie = std::fs::read_to_string(home.join(".erlang.cookie")).unwrap();
    assert_eq!(cookie.len(), 20);
    let mut cmd = Command::new("erl");
    cmd.args(["-sname", &e, "-noshell", "-eval"])
        .arg(format!(
            "io:format(\"ping ~p~n\", [net_adm:ping('{l}@{h}')]), halt()."
        ))
        .env("HOME", home);
    let erl = Node::spawn(cmd);
    erl.expect("ping pong");
}

#[test]
fn garbage_on_the_distribution_port_closes_that_connection_only() {
    if !erl_available() {
        return;
    }
    let (l, e, h) = (unique("lona"), unique("erl"), host());
    let lona = Node::lona(&l, "c7", ECHO);
    lona.expect("ready");
    // Ask epmd for the node's port, as a peer would.
    let port = epmd_port_of(&l);
    for junk in [
        &b""[..],
        b"\x00",
        b"\x00\x05Nxxxx",
        b"\xff\xff\xff\xff\xff\xff",
        b"\x00\x0bN\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00",
    ] {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        let _ = s.write_all(junk);
        let _ = s.shutdown(std::net::Shutdown::Write);
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut sink = Vec::new();
        let _ = s.read_to_end(&mut sink);
    }
    // A peer that connects and says nothing is dropped after the setup
    // time; meanwhile the node serves others.
    let _silent = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let erl = Node::erl(
        &e,
        "c7",
        &format!("io:format(\"ping ~p~n\", [net_adm:ping('{l}@{h}')]), halt()."),
    );
    erl.expect("ping pong");
}

/// The port node `name` registered with the local epmd (`PORT_PLEASE2`).
fn epmd_port_of(name: &str) -> u16 {
    let mut s = TcpStream::connect(("127.0.0.1", 4369)).unwrap();
    let mut req = vec![0, (1 + name.len()) as u8, 122];
    req.extend_from_slice(name.as_bytes());
    s.write_all(&req).unwrap();
    let mut resp = [0u8; 4];
    s.read_exact(&mut resp).unwrap();
    assert_eq!((resp[0], resp[1]), (119, 0), "epmd knows {name}");
    u16::from_be_bytes([resp[2], resp[3]])
}

#[test]
fn pids_and_references_cross_both_ways() {
    if !erl_available() {
        return;
    }
    let (l, e, h) = (unique("lona"), unique("erl"), host());
    let lona = Node::lona(
        &l,
        "c8",
        r#"(defn -main []
             (register :echo (self))
             (println "ready")
             (let [[_ pid] (receive [:ping p] [:ping p])]
               (println "pid" (pid? pid) (node pid))
               (send pid [:pong (self) (make-ref)])
               (println "back" (receive [:back r p2] (and (ref? r) (= p2 pid)) :timeout 5000 :none))
               (println "closure" (try (send pid (fn [] 1)) :sent (catch :error e (first e))))))"#,
    );
    lona.expect("ready");
    let _erl = Node::erl(
        &e,
        "c8",
        &format!(
            "{{echo, '{l}@{h}'}} ! {{ping, self()}},
             receive {{pong, P, R}} -> io:format(\"~p~n\", [node(P)]), P ! {{back, R, self()}} end,
             timer:sleep(3000), halt()."
        ),
    );
    lona.expect(&format!("pid true :{e}@{h}"));
    lona.expect("back true");
    lona.expect("closure :badarg");
}

#[test]
fn gen_server_calls_cross_both_ways() {
    if !erl_available() {
        return;
    }
    let tmp = scratch();
    let dir = tmp.path();
    std::fs::write(
        dir.join("ecounter.erl"),
        "-module(ecounter).
-behaviour(gen_server).
-export([start/0, init/1, handle_call/3, handle_cast/2]).
start() -> gen_server:start({local, ecounter}, ?MODULE, 100, []).
init(N) -> {ok, N}.
handle_call(get, _From, N) -> {reply, N, N};
handle_call({add, K}, _From, N) -> {reply, ok, N + K};
handle_call(crash, _From, _N) -> exit(crashed).
handle_cast({add, K}, N) -> {noreply, N + K}.
",
    )
    .unwrap();
    let st = Command::new("erlc")
        .arg("ecounter.erl")
        .current_dir(dir)
        .status()
        .expect("erlc");
    assert!(st.success());
    let (l, e, h) = (unique("lona"), unique("erl"), host());
    let lona = Node::lona(
        &l,
        "c9",
        &format!(
            r#"(ns user (:require [lona.server :as server]))
(defn init [n] [:ok n])
(defn handle-call [msg from n]
  (match msg
    :get [:reply n n]
    [:add k] [:reply :ok (+ n k)]))
(defn handle-cast [msg n] (match msg [:add k] [:noreply (+ n k)]))
(defn -main []
  (server/start 'user 10 {{:name :counter}})
  (register :main (self))
  (println "ready")
  (receive :go nil)
  (let [s [:ecounter :{e}@{h}]]
    (println "erl get" (server/call s :get))
    (println "erl add" (server/call s [:add 5]))
    (server/cast s [:add 1])
    (println "erl get" (server/call s :get))
    (println "missing" (try (server/call [:nobody :{e}@{h}] :get) (catch :exit e (first e))))
    (println "crash" (try (server/call s :crash) (catch :exit e (first e))))))"#
        ),
    );
    lona.expect("ready");
    let mut cmd = Command::new("erl");
    cmd.args(["-sname", &e, "-setcookie", "c9", "-noshell", "-eval"])
        .arg(format!(
            "S = {{counter, '{l}@{h}'}},
             io:format(\"get ~p~n\", [gen_server:call(S, get)]),
             io:format(\"add ~p~n\", [gen_server:call(S, {{add, 3}})]),
             gen_server:cast(S, {{add, 100}}),
             io:format(\"get ~p~n\", [gen_server:call(S, get)]),
             io:format(\"missing ~p~n\", [catch gen_server:call({{nobody, '{l}@{h}'}}, get)]),
             {{ok, _}} = ecounter:start(),
             {{main, '{l}@{h}'}} ! go,
             timer:sleep(8000), halt()."
        ))
        .current_dir(dir);
    let erl = Node::spawn(cmd);
    erl.expect("get 10");
    erl.expect("add ok");
    erl.expect("get 113");
    erl.expect(&format!(
        "missing {{'EXIT',{{noproc,{{gen_server,call,[{{nobody,{l}@{h}}},get]}}}}}}"
    ));
    lona.expect("erl get 100");
    lona.expect("erl add :ok");
    lona.expect("erl get 106");
    lona.expect("missing :noproc");
    lona.expect("crash :crashed");
}

#[test]
fn a_killed_node_is_noconnection_and_nodedown() {
    if !erl_available() {
        return;
    }
    let (l, e, h) = (unique("lona"), unique("erl"), host());
    let mut erl = Node::erl(
        &e,
        "c10",
        "register(target, self()), io:format(\"up~n\"), receive after 60000 -> ok end.",
    );
    erl.expect("up");
    let lona = Node::lona(
        &l,
        "c10",
        &format!(
            r#"(defn -main []
  (println "connect" (connect-node :{e}@{h}))
  (monitor-node :{e}@{h} true)
  (let [r (monitor [:target :{e}@{h}])
        r2 (monitor [:nobody :{e}@{h}])]
    (println "noproc" (receive [:DOWN t who why] :when (= t r2) [who why] :timeout 5000 :none))
    (println "armed")
    (println "down" (receive [:DOWN t who why] :when (= t r) [who why] :timeout 10000 :none))
    (println "nodedown" (receive [:nodedown n] n :timeout 10000 :none))
    (println "nodes" (nodes))
    (let [r3 (monitor [:target :{e}@{h}])]
      (println "again" (receive [:DOWN t _ why] :when (= t r3) why :timeout 10000 :none)))))"#
        ),
    );
    lona.expect("connect true");
    lona.expect(&format!("noproc [[:nobody :{e}@{h}] :noproc]"));
    lona.expect("armed");
    // SIGKILL: no goodbye from the peer, only the socket's end.
    erl.child.kill().unwrap();
    let _ = erl.child.wait();
    lona.expect(&format!("down [[:target :{e}@{h}] :noconnection]"));
    lona.expect(&format!("nodedown :{e}@{h}"));
    lona.expect("nodes []");
    lona.expect("again :noconnection");
}

/// Between two Lona nodes: a `lona.server` call each way, then one node
/// killed (SIGKILL) while the other holds a link to, a monitor on and a
/// node monitor of it: `:noconnection` and `[:nodedown n]` come.
#[test]
fn two_lona_nodes_call_and_a_killed_one_is_noconnection() {
    if !epmd_available() {
        return;
    }
    let (a, b, h) = (unique("la"), unique("lb"), host());
    let server = r#"(ns user (:require [lona.server :as server]))
(defn init [n] [:ok n])
(defn handle-call [msg from n]
  (match msg
    :get [:reply [n (node)] n]
    [:add k] [:reply :ok (+ n k)]))
(defn handle-cast [msg n] n)
(defn sleeper [] (receive :never nil))
"#;
    let mut nb = Node::lona(
        &b,
        "c15",
        &format!(
            r#"{server}
(defn -main []
  (server/start 'user 40 {{:name :counter}})
  (register :sleeper (spawn sleeper))
  (register :main (self))
  (println "ready")
  (receive :go nil)
  (println "b calls a" (server/call [:counter :{a}@{h}] :get))
  (receive :never nil))"#
        ),
    );
    nb.expect("ready");
    let na = Node::lona(
        &a,
        "c15",
        &format!(
            r#"{server}
(defn -main []
  (server/start 'user 2 {{:name :counter}})
  (let [s [:counter :{b}@{h}]]
    (println "a calls b" (server/call s [:add 2]) (server/call s :get)))
  (process-flag :trap-exit true)
  (let [p (spawn-link-on :{b}@{h} 'user/sleeper)
        r (monitor [:sleeper :{b}@{h}])]
    (monitor-node :{b}@{h} true)
    (send [:sleeper :{b}@{h}] :ping)
    (send [:main :{b}@{h}] :go)
    (println "armed")
    (println "exit" (receive [:EXIT q why] :when (= q p) why :timeout 10000 :none))
    (println "down" (receive [:DOWN t _ why] :when (= t r) why :timeout 10000 :none))
    (println "nodedown" (receive [:nodedown n] n :timeout 10000 :none))
    (println "nodes" (nodes))))"#
        ),
    );
    na.expect(&format!("a calls b :ok [42 :{b}@{h}]"));
    na.expect("armed");
    nb.expect(&format!("b calls a [2 :{a}@{h}]"));
    nb.child.kill().unwrap();
    let _ = nb.child.wait();
    na.expect("exit :noconnection");
    na.expect("down :noconnection");
    na.expect(&format!("nodedown :{b}@{h}"));
    na.expect("nodes []");
}

#[test]
fn a_thousand_processes_a_side_keep_order() {
    if !epmd_available() {
        return;
    }
    let (a, b, h) = (unique("la"), unique("lb"), host());
    // Node B: 1,000 echo processes; their pids go to A in one message.
    let nb = Node::lona(
        &b,
        "c11",
        r#"(defn echo [n expect]
  (receive [from i] (if (= i expect)
                      (do (send from [:echo i]) (if (= (inc i) n) :done (echo n (inc i))))
                      (println "out of order" i expect))))
(defn -main []
  (register :b (self))
  (println "ready")
  (let [[_ main] (receive [:hello p] [:hello p])
        pids (vec (for [_ (range 1000)] (spawn (fn [] (echo 1000 0)))))]
    (send main [:pids pids])
    (receive :stop (println "stopped"))))"#,
    );
    nb.expect("ready");
    let mut na = Node::lona(
        &a,
        "c11",
        &format!(
            r#"(defn pair [main peer n]
  (dotimes [i n] (send peer [(self) i]))
  (loop [i 0]
    (if (= i n)
      (send main [:ok (self)])
      (receive [:echo j] (if (= i j) (recur (inc i)) (send main [:bad (self)]))))))
(defn -main []
  (send [:b :{b}@{h}] [:hello (self)])
  (let [[_ pids] (receive [:pids ps] [:pids ps])
        me (self)]
    (doseq [p pids] (spawn (fn [] (pair me p 1000))))
    (let [oks (loop [k 0 ok 0]
                (if (= k 1000) ok
                  (receive [:ok _] (recur (inc k) (inc ok))
                           [:bad _] (recur (inc k) ok))))]
      (println "pairs in order" oks))
    (send [:b :{b}@{h}] :stop)))"#
        ),
    );
    na.expect("pairs in order 1000");
    nb.expect("stopped");
    assert!(na.wait().success());
}

#[test]
fn links_cross_both_ways_and_a_killed_node_cuts_them() {
    if !erl_available() {
        return;
    }
    let tmp = scratch();
    let dir = tmp.path();
    std::fs::write(
        dir.join("linktest.erl"),
        "-module(linktest).
-export([run/1]).
run([LonaS]) ->
    Lona = list_to_atom(LonaS),
    W = fun(R) -> spawn(fun() -> receive go -> exit(R) end end) end,
    E1 = W(boom), E2 = W(crash2),
    {main, Lona} ! {pids, E1, E2},
    process_flag(trap_exit, true),
    receive {linkto, LP} -> link(LP), {main, Lona} ! linked end,
    receive {'EXIT', From, Why} -> {main, Lona} ! {erlsaw, node(From), Why}
    after 5000 -> {main, Lona} ! erltimeout end,
    E3 = spawn(fun() -> receive after infinity -> ok end end),
    {main, Lona} ! {e3, E3},
    io:format(\"e3 sent~n\"),
    receive after 20000 -> ok end.
",
    )
    .unwrap();
    assert!(Command::new("erlc")
        .arg("linktest.erl")
        .current_dir(dir)
        .status()
        .expect("erlc")
        .success());
    let (l, e, h) = (unique("lona"), unique("erl"), host());
    let lona = Node::lona(
        &l,
        "c12",
        r#"(defn -main []
  (register :main (self))
  (process-flag :trap-exit true)
  (println "ready")
  (let [[_ e1 e2] (receive [:pids a b] [:pids a b])
        erl (node e1)]
    ;; Lona links to an Erlang process that exits: trapped, and a
    ;; non-trapping linked process dies with the reason.
    (link e1)
    (send e1 :go)
    (println "trapped" (receive [:EXIT p r] [(= p e1) r] :timeout 5000 :none))
    (let [child (spawn (fn [] (link e2) (send e2 :go) (receive :never nil)))
          m (monitor child)]
      (println "child" (receive [:DOWN t _ r] :when (= t m) r :timeout 5000 :none)))
    ;; Erlang links to a Lona process that exits.
    (let [lp (spawn (fn [] (receive :die (exit :lona-reason))))]
      (send [:erlshell erl] [:linkto lp])
      (receive :linked nil :timeout 5000 nil)
      (send lp :die))
    (println "erl saw" (receive [:erlsaw n r] [n r] :timeout 5000 :none))
    ;; A link the peer's death cuts.
    (let [[_ e3] (receive [:e3 p] [:e3 p])]
      (link e3)
      (println "linked e3")
      (println "cut" (receive [:EXIT p r] :when (= p e3) r :timeout 10000 :none)))))"#,
    );
    lona.expect("ready");
    let mut cmd = Command::new("erl");
    cmd.args(["-sname", &e, "-setcookie", "c12", "-noshell", "-eval"])
        .arg(format!(
            "register(erlshell, self()), linktest:run([\"{l}@{h}\"])."
        ))
        .current_dir(dir);
    let mut erl = Node::spawn(cmd);
    lona.expect("trapped [true :boom]");
    lona.expect("child :crash2");
    lona.expect(&format!("erl saw [:{l}@{h} :lona-reason]"));
    erl.expect("e3 sent");
    lona.expect("linked e3");
    erl.child.kill().unwrap();
    let _ = erl.child.wait();
    lona.expect("cut :noconnection");
}

#[test]
fn a_native_rust_node_sends_rust_values_to_erlang_and_back() {
    if !erl_available() {
        return;
    }
    let (r, e, h) = (unique("rust"), unique("erl"), host());
    let erl = Node::erl(
        &e,
        "c13",
        &format!(
            "register(collector, self()), io:format(\"up~n\"),
             receive {{greet, N, Text}} -> io:format(\"got ~p ~s~n\", [N, Text]),
                     {{rust, '{r}@{h}'}} ! {{reply, N + 1, #{{ok => true}}, self()}}
             end,
             receive {{thanks, K}} -> io:format(\"thanks ~p~n\", [K]) after 5000 -> io:format(\"none~n\") end,
             halt()."
        ),
    );
    erl.expect("up");
    // The Builder option (`Distributed`): a runtime that is a node.
    use lona_vm::dist::Distributed;
    let mut cfg = lona_vm::dist::Config::short(&r);
    cfg.cookie = Some("c13".into());
    let (rt, d) = lona_runtime::Builder::default()
        .workers(2)
        .distributed(cfg)
        .build()
        .unwrap();
    assert_eq!(d.name(), format!("{r}@{h}"));
    #[derive(serde::Serialize)]
    enum Msg {
        Greet(i64, String),
        Thanks(i64),
    }
    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Flags {
        ok: bool,
    }
    let peer = format!("{e}@{h}");
    let (tag, n, flags, from) = rt
        .block_on(move |ctx| async move {
            ctx.register("rust").await.unwrap();
            d.send_value(ctx.pid(), "collector", &peer, &Msg::Greet(41, "hi".into()))
                .unwrap();
            let f: lona_term::Fragment = ctx.receive().await;
            let got: (String, i64, Flags, lona_vm::bridge::RemotePidTerm) =
                lona_vm::bridge::from_message(&f).unwrap();
            // Answer the Erlang process by the pid it sent.
            d.send_value_to(&got.3, &Msg::Thanks(7)).unwrap();
            got
        })
        .unwrap();
    assert_eq!((tag.as_str(), n, flags), ("reply", 42, Flags { ok: true }));
    assert_eq!(from.node, format!("{e}@{h}"));
    erl.expect("got 41 hi");
    erl.expect("thanks 7");
}

/// The Builder option refuses a bad node name with an error that says
/// why, and the runtime it had started is shut down again (its workers
/// gone: a second build in the same test works).
#[test]
fn a_bad_node_name_in_the_builder_is_an_error_not_a_half_started_node() {
    use lona_vm::dist::{Config, Distributed};
    for bad in ["", "has space", "two@@ats"] {
        let err = lona_runtime::Builder::default()
            .workers(1)
            .distributed(Config::short(bad))
            .build()
            .map(|_| ())
            .unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::Other);
        assert!(err.to_string().contains("node name"), "{bad:?}: {err}");
    }
    let rt = lona_runtime::Builder::default().workers(1).build().unwrap();
    assert_eq!(rt.block_on(|_ctx| async { 7 }).unwrap(), 7);
}

/// A process-to-process message of 30 MB each way: sent and received in
/// fragments (`DFLAG_FRAGMENTS`), joined whole, and while ours goes out
/// another process's small messages go between its fragments, each
/// sender's order kept.
#[test]
fn large_messages_cross_in_fragments_and_small_ones_pass_between() {
    use lona_term::{Fragment, Heap, Term, View};
    if !erl_available() {
        return;
    }
    let (r, e, h) = (unique("rust"), unique("erl"), host());
    // Erlang echoes the blob and sends one of its own; it notes the order
    // messages came in and reports it on `done`.
    let erl = Node::erl(
        &e,
        "c14",
        &format!(
            "register(big, self()), io:format(\"up~n\"),
             Me = {{rust, '{r}@{h}'}},
             L = fun L(Seen) ->
                 receive
                     {{blob, B}} -> Me ! {{echo, B}},
                                   Me ! {{back, binary:copy(<<\"fragment\">>, 400000)}},
                                   L([blob | Seen]);
                     {{small, N}} -> L([{{small, N}} | Seen]);
                     {{after_big, N}} -> L([{{after_big, N}} | Seen]);
                     done -> Me ! {{order, lists:reverse(Seen)}}
                 end
             end,
             L([]), timer:sleep(1000), halt()."
        ),
    );
    erl.expect("up");
    let rt = lona_runtime::Runtime::new().unwrap();
    let mut cfg = lona_vm::dist::Config::short(&r);
    cfg.cookie = Some("c14".into());
    // Room for the whole blob and what follows it: past the limit a
    // native send is refused (`RemoteSendError::Busy`), and this test is
    // about the fragments, not the limit.
    cfg.busy_limit = 64 << 20;
    let d = lona_vm::dist::start_native(&rt.handle(), cfg).unwrap();
    let peer = format!("{e}@{h}");
    let blob: Vec<u8> = (0..30_000_000u32).map(|i| (i % 251) as u8).collect();
    struct Go;
    struct Sent;
    let d2 = d.clone();
    let order = rt
        .block_on(move |ctx| async move {
            ctx.register("rust").await.unwrap();
            let me = ctx.pid();
            let (d3, peer3) = (d2.clone(), peer.clone());
            // The other sender: 200 small messages once the blob is queued.
            let other = ctx
                .spawn(move |cx| async move {
                    let Go = cx.receive::<Go>().await;
                    let heap = Heap::new();
                    for n in 1..=200 {
                        let m = heap.vector(&[Term::keyword("small"), heap.int(n)]);
                        d3.send_reg(cx.pid(), "big", &peer3, m).unwrap();
                    }
                    cx.send(me, Sent).await;
                })
                .await
                .unwrap();
            let heap = Heap::new();
            let m = heap.vector(&[Term::keyword("blob"), heap.binary(&blob)]);
            d2.send_reg(me, "big", &peer, m).unwrap();
            ctx.send(other, Go).await;
            for n in 1..=10 {
                let m = heap.vector(&[Term::keyword("after_big"), heap.int(n)]);
                d2.send_reg(me, "big", &peer, m).unwrap();
            }
            let t = Duration::from_secs(30);
            let Sent = ctx.receive_timeout::<Sent>(t).await.expect("sent");
            d2.send_reg(me, "big", &peer, Term::keyword("done"))
                .unwrap();
            let mut got = Vec::new();
            for i in 0..3 {
                let f = ctx.receive_timeout::<Fragment>(t).await;
                got.push(f.unwrap_or_else(|| panic!("message {i} from erl missing")));
            }
            fn tagged<'f>(f: &'f Fragment, tag: &str) -> Option<Term<'f>> {
                match f.root().view() {
                    View::Vector(v) if v[0] == Term::keyword(tag) => Some(v[1]),
                    _ => None,
                }
            }
            let echo = tagged(&got[0], "echo").expect("the echo first");
            assert!(matches!(echo.view(), View::Binary(b) if b == &blob[..]));
            let back = tagged(&got[1], "back").expect("then erl's blob");
            let want = "fragment".repeat(400_000);
            assert!(matches!(back.view(), View::Binary(b) if b == want.as_bytes()));
            let order = tagged(&got[2], "order").expect("then the order");
            let mut seen = Vec::new();
            let mut l = order;
            while let View::Cons(x, rest) = l.view() {
                seen.push(match x.view() {
                    View::Keyword(_) => ("blob".to_string(), 0),
                    View::Vector(v) => match (v[0].view(), v[1].view()) {
                        (View::Keyword(k), View::Int(n)) => (k.name().to_string(), n),
                        other => panic!("{other:?}"),
                    },
                    other => panic!("{other:?}"),
                });
                l = rest;
            }
            seen
        })
        .unwrap();
    let (fin, fout) = d.fragmented();
    assert!(fin >= 2 && fout >= 1, "fragments in {fin}, out {fout}");
    // Each sender's messages in the order sent: ours the blob then
    // after_big 1..10, the other's small 1..200.
    let ours: Vec<_> = order
        .iter()
        .filter(|(k, _)| k != "small")
        .cloned()
        .collect();
    let mut want = vec![("blob".to_string(), 0)];
    want.extend((1..=10).map(|n| ("after_big".to_string(), n)));
    assert_eq!(ours, want);
    let smalls: Vec<i64> = order
        .iter()
        .filter(|(k, _)| k == "small")
        .map(|(_, n)| *n)
        .collect();
    assert_eq!(smalls, (1..=200).collect::<Vec<_>>());
    // The other sender did not wait for the whole 30 MB.
    let blob_at = order.iter().position(|(k, _)| k == "blob").unwrap();
    assert!(
        blob_at > 0,
        "no small message went between the fragments: {order:?}"
    );
}

#[test]
fn spawning_on_another_node_links_monitors_and_fails_clearly() {
    if !epmd_available() {
        return;
    }
    let (a, b, h) = (unique("la"), unique("lb"), host());
    let prog = r#"(ns user)
(defn worker [x y] (receive :go (exit [:done (+ x y)])))
(defn echo-back [to] (send to [:hello-from (node)]))
(defn -main [& args]
  (if (= (first args) "b")
    (do (println "ready") (receive :never nil))
    (let [b (keyword (second args))]
      (process-flag :trap-exit true)
      (let [p (spawn-link-on b 'user/worker 1 2)]
        (println "remote pid" (= (node p) b))
        (send p :go)
        (println "linked exit" (receive [:EXIT q r] :when (= q p) r :timeout 5000 :none)))
      (let [[p r] (spawn-monitor-on b 'user/worker 3 4)]
        (send p :go)
        (println "down" (receive [:DOWN t _ why] :when (= t r) why :timeout 5000 :none)))
      (spawn-on b 'user/echo-back (self))
      (println "echo" (= b (receive [:hello-from n] n :timeout 5000 :none)))
      (println "undef" (last (try (spawn-on b 'user/nope) (catch :error e e))))
      (println "noconn" (last (try (spawn-on :ghost@nowhere 'user/worker 1 2) (catch :error e e)))))))"#;
    let tmp = scratch();
    let dir = tmp.path();
    std::fs::write(dir.join("prog.lona"), prog).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lona"));
    cmd.arg("run")
        .args(["--sname", &b, "--cookie", "c14"])
        .arg(dir.join("prog.lona"))
        .arg("b");
    let nb = Node::spawn(cmd);
    nb.expect("ready");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lona"));
    cmd.arg("run")
        .args(["--sname", &a, "--cookie", "c14"])
        .arg(dir.join("prog.lona"))
        .args(["a", &format!("{b}@{h}")]);
    let mut na = Node::spawn(cmd);
    na.expect("remote pid true");
    na.expect("linked exit [:done 3]");
    na.expect("down [:done 7]");
    na.expect("echo true");
    na.expect("undef :undef");
    na.expect("noconn :noconnection");
    assert!(na.wait().success());
}

#[test]
fn erlang_spawns_on_a_lona_node() {
    if !erl_available() {
        return;
    }
    let (l, e, h) = (unique("lona"), unique("erl"), host());
    let lona = Node::lona(
        &l,
        "c15",
        r#"(ns user)
(defn greeter [to n] (send to [:greeting (* 2 n) (node)]))
(defn -main [] (println "ready") (receive :never nil))"#,
    );
    lona.expect("ready");
    let erl = Node::erl(
        &e,
        "c15",
        &format!(
            "P = spawn('{l}@{h}', user, greeter, [self(), 21]),
             io:format(\"~p~n\", [node(P)]),
             receive {{greeting, N, From}} -> io:format(\"greeting ~p ~p~n\", [N, From]) after 5000 -> io:format(\"none~n\") end,
             R = erlang:spawn_request('{l}@{h}', user, greeter, [self(), 1], [monitor]),
             receive {{spawn_reply, R, ok, Q}} -> io:format(\"spawned ~p~n\", [node(Q)]) end,
             receive {{'DOWN', R, process, _, Why}} -> io:format(\"down ~p~n\", [Why]) after 5000 -> io:format(\"nodown~n\") end,
             R2 = erlang:spawn_request('{l}@{h}', user, nope, [], [monitor]),
             receive {{spawn_reply, R2, error, Why2}} -> io:format(\"error ~p~n\", [Why2]) after 5000 -> io:format(\"noreply~n\") end,
             halt()."
        ),
    );
    erl.expect(&format!("{l}@{h}"));
    erl.expect(&format!("greeting 42 {l}@{h}"));
    erl.expect(&format!("spawned {l}@{h}"));
    erl.expect("down normal");
    erl.expect("error undef");
}

#[test]
fn a_silent_peer_is_down_after_the_net_tick_time() {
    if !epmd_available() {
        return;
    }
    // A node that stops (SIGSTOP) keeps its socket open but sends no
    // ticks: the other side declares it down after the net tick time.
    let (a, b, h) = (unique("la"), unique("lb"), host());
    let tmp = scratch();
    let dir = tmp.path();
    let prog = r#"(defn -main [& args]
  (if (= (first args) "b")
    (do (register :b (self)) (println "ready") (receive :never nil))
    (let [b (keyword (second args))]
      (println "connect" (connect-node b))
      (let [r (monitor [:b b])]
        (println "armed")
        (let [t0 (monotonic-ms)
              why (receive [:DOWN t _ why] :when (= t r) why :timeout 20000 :none)]
          (println "down" why (< (- (monotonic-ms) t0) 10000)))))))"#;
    std::fs::write(dir.join("p.lona"), prog).unwrap();
    let spawn = |name: &str, args: &[&str]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_lona"));
        cmd.arg("run")
            .args(["--sname", name, "--cookie", "c16", "--net-ticktime", "2"])
            .arg(dir.join("p.lona"))
            .args(args);
        Node::spawn(cmd)
    };
    let nb = spawn(&b, &["b"]);
    nb.expect("ready");
    let peer = format!("{b}@{h}");
    let na = spawn(&a, &["a", &peer]);
    na.expect("connect true");
    na.expect("armed");
    // SAFETY: kill(2) with a pid we spawned; no memory is involved.
    unsafe { libc::kill(nb.child.id() as i32, libc::SIGSTOP) };
    na.expect("down :noconnection true");
    // SAFETY: as above.
    unsafe { libc::kill(nb.child.id() as i32, libc::SIGCONT) };
}

#[test]
fn a_peer_that_stalls_in_the_handshake_leaves_no_entry_behind() {
    if !epmd_available() {
        return;
    }
    let (l, h) = (unique("lona"), host());
    let fake = format!("fake{l}@{h}");
    let lona = Node::lona(
        &l,
        "c17",
        &format!(
            r#"(defn wait-gone [i]
  (cond (nil? (node-state* :{fake})) (println "gone")
        (> i 300) (println "stuck" (node-state* :{fake}))
        :else (do (sleep 50) (wait-gone (inc i)))))
(defn -main []
  (register :main (self))
  (println "ready")
  (receive :go nil)
  (println "state" (node-state* :{fake}))
  (wait-gone 0))"#
        ),
    );
    lona.expect("ready");
    let port = epmd_port_of(&l);
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    // The name message of handshake version 6, then nothing.
    let flags: u64 = 0x1_0000_0000 | 0x0100_0000 | 0x0004_0000 | 0x0001_0000 | 0x3_07_84;
    let mut m = vec![b'N'];
    m.extend_from_slice(&flags.to_be_bytes());
    m.extend_from_slice(&7u32.to_be_bytes());
    m.extend_from_slice(&(fake.len() as u16).to_be_bytes());
    m.extend_from_slice(fake.as_bytes());
    let mut pkt = (m.len() as u16).to_be_bytes().to_vec();
    pkt.extend_from_slice(&m);
    s.write_all(&pkt).unwrap();
    // Our node answers the status and its challenge; the fake says nothing.
    let mut status = [0u8; 5];
    s.read_exact(&mut status).unwrap();
    assert_eq!(&status[2..], b"sok");
    // While it stalls the entry is there (pending); after the setup time
    // (7 s) it is gone.
    send_go(&l, &h);
    lona.expect("state :pending");
    lona.expect("gone");
    drop(s);
}

/// Sends `:go` to the process registered as `main` on node `l`, from a
/// `lona eval` node.
fn send_go(l: &str, h: &str) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_lona"));
    cmd.arg("eval")
        .args(["--sname", &format!("go{l}"), "--cookie", "c17"])
        .arg(format!("(send [:main :{l}@{h}] :go)"));
    let _ = cmd.status();
}

/// Writes one handshake message (a 2-byte length, then `m`).
fn hs_send(s: &mut TcpStream, m: &[u8]) {
    let mut pkt = (m.len() as u16).to_be_bytes().to_vec();
    pkt.extend_from_slice(m);
    s.write_all(&pkt).unwrap();
}

/// Reads one handshake message (`None`: the node closed the connection).
fn hs_recv(s: &mut TcpStream) -> Option<Vec<u8>> {
    let mut len = [0u8; 2];
    s.read_exact(&mut len).ok()?;
    let mut m = vec![0u8; usize::from(u16::from_be_bytes(len))];
    s.read_exact(&mut m).ok()?;
    Some(m)
}

/// A peer that knows the cookie but claims the node's own name is
/// refused with `nok`, as Erlang refuses it (`net_kernel` gets no
/// connection id for its own node; `dist_util` sends `nok`), and the node
/// never lists itself among its peers. Before the fix it answered `ok`,
/// the handshake completed and `(nodes)` held the node's own name.
#[test]
fn a_peer_claiming_the_nodes_own_name_is_refused_with_nok() {
    if !epmd_available() {
        return;
    }
    let (l, h) = (unique("lona"), host());
    let own = format!("{l}@{h}");
    let lona = Node::lona(
        &l,
        "c17",
        r#"(defn -main []
  (register :main (self))
  (println "ready")
  (receive :go nil)
  (println "self-listed" (contains? (set (nodes)) (node)) (node-state* (node))))"#,
    );
    lona.expect("ready");
    let port = epmd_port_of(&l);
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    // A hang guard only: every answer comes at once.
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    // The name message, with the node's own name.
    send_name(&mut s, &own);
    let status = hs_recv(&mut s).expect("a status");
    if status == b"sok" {
        // What the node did before: go on as a peer with the cookie
        // would, so the test sees what that led to.
        let ch = hs_recv(&mut s).expect("the node's challenge");
        assert_eq!(ch[0], b'N', "{ch:?}");
        let challenge = u32::from_be_bytes(ch[9..13].try_into().unwrap());
        let digest = md5::compute(format!("c17{challenge}"));
        let mut reply = vec![b'r'];
        reply.extend_from_slice(&42u32.to_be_bytes());
        reply.extend_from_slice(&digest.0);
        hs_send(&mut s, &reply);
        let ack = hs_recv(&mut s).expect("the node's ack");
        assert_eq!(ack[0], b'a', "{ack:?}");
    } else {
        // Refused: the node closes the connection.
        let mut rest = Vec::new();
        let _ = s.read_to_end(&mut rest);
        assert!(rest.is_empty(), "{rest:?}");
    }
    send_go(&l, &h);
    let seen = lona.expect("self-listed");
    assert_eq!(
        String::from_utf8_lossy(&status),
        "snok",
        "the node's answer; then it printed {seen:?}"
    );
    assert_eq!(seen, "self-listed false nil");
    // Logged (read by a thread of this test: waited for, with a hang guard).
    let until = Instant::now() + Duration::from_secs(20);
    while !lona.stderr().contains("claiming this node's own name") {
        assert!(Instant::now() < until, "not logged: {}", lona.stderr());
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(s);
}

/// Sends the name message of handshake version 6 (the flags a Lona or OTP
/// 25 node sends), naming this side `name`.
fn send_name(s: &mut TcpStream, name: &str) {
    let flags: u64 = 0x1_0000_0000 | 0x0100_0000 | 0x0004_0000 | 0x0001_0000 | 0x3_07_84;
    let mut m = vec![b'N'];
    m.extend_from_slice(&flags.to_be_bytes());
    m.extend_from_slice(&7u32.to_be_bytes());
    m.extend_from_slice(&(name.len() as u16).to_be_bytes());
    m.extend_from_slice(name.as_bytes());
    hs_send(s, &m);
}

/// Completes the handshake with Lona node `lona` (at `port`, cookie
/// `cookie`) as node `me`, byte by byte (version 6, pass-through packets):
/// the connected stream.
fn fake_peer_connect(port: u16, me: &str, cookie: &str) -> TcpStream {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    // A hang guard only: every answer comes at once.
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    send_name(&mut s, me);
    assert_eq!(hs_recv(&mut s).expect("a status"), b"sok");
    let ch = hs_recv(&mut s).expect("the node's challenge");
    assert_eq!(ch[0], b'N', "{ch:?}");
    let challenge = u32::from_be_bytes(ch[9..13].try_into().unwrap());
    let digest = md5::compute(format!("{cookie}{challenge}"));
    let mut reply = vec![b'r'];
    reply.extend_from_slice(&42u32.to_be_bytes());
    reply.extend_from_slice(&digest.0);
    hs_send(&mut s, &reply);
    let ack = hs_recv(&mut s).expect("the node's ack");
    assert_eq!(ack[0], b'a', "{ack:?}");
    s
}

/// A pass-through packet from the fake peer `fake`: `REG_SEND` to
/// `name` of `[tag pid]` (`{tag, Pid}`), `pid` a process of `fake`.
fn fake_reg_send(fake: &str, name: &str, tag: &str) -> Vec<u8> {
    let atom = |v: &mut Vec<u8>, a: &str| {
        v.extend_from_slice(&[119, a.len() as u8]);
        v.extend_from_slice(a.as_bytes());
    };
    let pid = |v: &mut Vec<u8>| {
        v.push(88);
        atom(v, fake);
        v.extend_from_slice(&[0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 1]);
    };
    let mut b = vec![112, 131, 104, 4, 97, 6];
    pid(&mut b);
    atom(&mut b, "");
    atom(&mut b, name);
    b.extend_from_slice(&[131, 104, 2]);
    atom(&mut b, tag);
    pid(&mut b);
    let mut p = (b.len() as u32).to_be_bytes().to_vec();
    p.extend_from_slice(&b);
    p
}

/// Issue 36 (decision 20): a peer that completes the handshake and then
/// never reads cannot make the node queue without end what its processes
/// send there. Four processes send 2 GiB of fresh 1 MiB binaries to a
/// process of such a peer, the node under a 1 GiB address-space limit:
/// once the connection's queue is over its limit (1 MB, Erlang's
/// `dist_buf_busy_limit`) the senders wait (`:waiting`, the count of
/// messages sent stops), the node's resident memory stays within 200 MB of
/// where it began, and signals wait too (a `monitor`, an `exit` and a
/// `link` to the peer's process, asked for while the connection is busy).
/// Once the peer is gone everyone goes on (what they send to the dead
/// node is dropped, as Erlang drops it) and the program ends normally.
/// Before the limit the writer's mailbox took every message: resident
/// memory grew 280 MB in the first 253 messages, on the way to the
/// address-space limit.
#[test]
fn a_peer_that_never_reads_makes_senders_wait_not_the_node_grow() {
    if !epmd_available() {
        return;
    }
    if Command::new("prlimit").arg("--version").output().is_err() {
        eprintln!("skipped: `prlimit` (util-linux) is not installed");
        return;
    }
    let (l, h) = (unique("lona"), host());
    let fake = format!("fake{l}@{h}");
    let prog = r#"
(def blob (concat-bytes (repeat 65536 (bytes "0123456789abcdef"))))

(defn sender [main dest n]
  (loop [i 0]
    (when (< i n)
      ;; a fresh 1 MiB binary each time
      (send dest (concat-bytes [blob (bytes (str i))]))
      (send main :sent)
      (recur (inc i))))
  (send main :done))

(defn wait-up [n i]
  (cond (= (node-state* n) :up) true
        (> i 1000) false
        :else (do (sleep 20) (wait-up n (inc i)))))

(defn status [p] (:status (process-info p)))

(defn probe [main what f]
  (spawn (fn []
           (process-flag :trap-exit true)
           (f)
           (println "probe" what)
           (send main :done))))

(defn watch [senders sent done want base]
  (if (= done want)
    (println "done" sent)
    (receive
      :sent (watch senders (inc sent) done want base)
      :done (watch senders sent (inc done) want base)
      [:probe pid] (let [me (self) n (node pid)]
                     (probe me "monitor" #(monitor [:sink n]))
                     (probe me "exit" #(exit pid :bye))
                     (probe me "link" #(link pid))
                     (println "probing")
                     (watch senders sent done (+ want 3) base))
      :tick (do (println "report" sent (quot (- (memory) base) 1048576)
                         (count (filter #(= :waiting (status %)) senders))
                         (:current-function (process-info (first senders))))
                (send-after 300 (self) :tick)
                (watch senders sent done want base)))))

(defn -main [fake]
  (let [n (keyword fake)
        base (memory)
        me (self)]
    (register :main me)
    (println "ready")
    (when-not (wait-up n 0)
      (println "never up")
      (halt 1))
    (let [dest [:sink n]
          senders [(spawn sender me dest 512) (spawn sender me dest 512)
                   (spawn sender me dest 512) (spawn sender me dest 512)]]
      (send-after 300 me :tick)
      (watch senders 0 0 4 base))))
"#;
    let tmp = scratch();
    let file = tmp.path().join("flood.lona");
    std::fs::write(&file, prog).unwrap();
    let mut cmd = Command::new("prlimit");
    cmd.arg(format!("--as={}", 1u64 << 30))
        .arg("--")
        .arg(env!("CARGO_BIN_EXE_lona"))
        .args(["run", "--workers", "2", "--sname", &l, "--cookie", "c36"])
        .arg(&file)
        .arg(&fake);
    let mut lona = Node::spawn(cmd);
    lona.expect("ready");
    let port = epmd_port_of(&l);
    let s = fake_peer_connect(port, &fake, "c36");
    // A small receive buffer, and never a read: what the node writes
    // stops after a few hundred kilobytes in the kernel's buffers.
    let small: libc::c_int = 4096;
    // SAFETY: setsockopt on a socket this test owns, with a c_int option
    // value of the size given.
    unsafe {
        use std::os::fd::AsRawFd;
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            (&small as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
    // The fake writes: ticks, so the node keeps the connection (the net
    // tick time is 60 s; the fake never reads the node's), and the
    // packets the test gives it, from one thread.
    let (to_fake, packets) = channel::<Vec<u8>>();
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let ticker = {
        let (stop, mut w) = (stop.clone(), s.try_clone().unwrap());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                let _ = w.write_all(&[0, 0, 0, 0]);
                while let Ok(p) = packets.try_recv() {
                    w.write_all(&p).unwrap();
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    };
    // Reports until the count of messages sent stays the same for three
    // reports (about a second) with all four senders waiting; then the
    // probes, which must wait too (three more reports and no probe done).
    let until = Instant::now() + Duration::from_secs(120);
    let mut last: Option<u64> = None;
    let mut same = 0;
    let mut probing = false;
    let stalled = loop {
        assert!(
            Instant::now() < until,
            "the senders never stopped; stderr: {}",
            lona.stderr()
        );
        let line = lona
            .lines
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("the node stopped reporting; stderr: {}", lona.stderr()));
        if line == "probing" {
            probing = true;
            same = 0;
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(f[0], "report", "{line}; stderr: {}", lona.stderr());
        let (sent, mb, waiting): (u64, u64, usize) = (
            f[1].parse().unwrap(),
            f[2].parse().unwrap(),
            f[3].parse().unwrap(),
        );
        assert!(
            mb < 200,
            "resident memory grew {mb} MB ({sent} messages sent): {line}"
        );
        if waiting == 4 && last == Some(sent) {
            same += 1;
        } else {
            same = 0;
        }
        last = Some(sent);
        if same >= 3 && !probing {
            to_fake.send(fake_reg_send(&fake, "main", "probe")).unwrap();
        } else if same >= 3 {
            break line;
        }
    };
    let sent = last.unwrap();
    assert!(sent < 2048, "{sent}");
    eprintln!("stalled: {stalled}");
    // The peer goes: the connection ends, the senders go on, the node
    // drops what they send to the node that is gone, and the program ends.
    stop.store(true, Ordering::Relaxed);
    ticker.join().unwrap();
    drop(s);
    let until = Instant::now() + Duration::from_secs(120);
    let mut probes = Vec::new();
    loop {
        let line = lona
            .lines
            .recv_timeout(until.saturating_duration_since(Instant::now()))
            .unwrap_or_else(|_| panic!("the senders did not finish; stderr: {}", lona.stderr()));
        if line.starts_with("done") {
            assert_eq!(line, "done 2048");
            break;
        }
        if let Some(p) = line.strip_prefix("probe ") {
            probes.push(p.to_string());
            continue;
        }
        assert!(line.starts_with("report"), "{line}");
    }
    probes.sort();
    assert_eq!(probes, ["exit", "link", "monitor"]);
    let status = lona.wait();
    let err = lona.stderr();
    assert!(status.success(), "{status:?}; stderr: {err}");
    assert!(!err.contains("memory allocation of"), "{err}");
}

/// The same bound for a native Rust sender: past the connection's limit
/// `send_value` is refused with `RemoteSendError::Busy` (Erlang's
/// `nosuspend`), with no more than the limit and one message queued, and
/// `until_ready` waits; the peer's end wakes it.
#[test]
fn a_native_sender_is_told_busy_and_waits_until_ready() {
    use lona_vm::dist::RemoteSendError;
    use std::sync::atomic::AtomicBool;
    if !epmd_available() {
        return;
    }
    let (r, h) = (unique("rust"), host());
    let fake = format!("fake{r}@{h}");
    let rt = lona_runtime::Runtime::new().unwrap();
    let limit = 64 << 10;
    let mut cfg = lona_vm::dist::Config::short(&r);
    cfg.cookie = Some("c36".into());
    cfg.busy_limit = limit;
    let d = lona_vm::dist::start_native(&rt.handle(), cfg).unwrap();
    let s = fake_peer_connect(d.port(), &fake, "c36");
    let until = Instant::now() + Duration::from_secs(20);
    while d.state(&fake) != Some(true) {
        assert!(Instant::now() < until, "the fake peer never connected");
        std::thread::sleep(Duration::from_millis(10));
    }
    let killed = Arc::new(AtomicBool::new(false));
    let (tx, rx) = channel::<Result<(usize, usize), bool>>();
    let (d2, fake2, k2) = (d.clone(), fake.clone(), killed.clone());
    rt.handle()
        .spawn(move |ctx| async move {
            let blob = "x".repeat(16 << 10);
            let mut sent = 0;
            loop {
                let busy = loop {
                    match d2.send_value(ctx.pid(), "sink", &fake2, &blob) {
                        Ok(_) => sent += 1,
                        Err(RemoteSendError::Busy) => break d2.queued(&fake2),
                        Err(e) => panic!("{e}"),
                    }
                    assert!(sent < 100_000, "never busy");
                };
                tx.send(Ok((sent, busy))).unwrap();
                d2.until_ready(&ctx, &fake2).await;
                if d2.state(&fake2).is_none() {
                    // Woken by the connection's end.
                    tx.send(Err(k2.load(Ordering::SeqCst))).unwrap();
                    return;
                }
            }
        })
        .unwrap();
    // Busy, woken as the writer drains into the kernel's buffers, busy
    // again, ... until those are full: then the sender waits.
    let until = Instant::now() + Duration::from_secs(30);
    let queued = loop {
        let mut last = None;
        match rx.recv_timeout(Duration::from_millis(500)) {
            Ok(Ok(x)) => last = Some(x),
            Ok(Err(_)) => panic!("woken with the connection gone"),
            Err(_) => {}
        }
        assert!(Instant::now() < until, "the sender never stopped");
        match last {
            Some(x) => {
                // Not more than the limit and one message (a packet is
                // the blob and a few dozen bytes).
                assert!(
                    x.1 >= limit / 2 && x.1 < limit + (17 << 10),
                    "{} bytes queued after {} messages",
                    x.1,
                    x.0
                );
            }
            None => break d.queued(&fake),
        }
    };
    eprintln!("stalled with {queued} bytes queued");
    // Still busy: the queue is over half the limit.
    assert!(queued >= limit / 2, "{queued}");
    killed.store(true, Ordering::SeqCst);
    drop(s);
    let Ok(Err(after_kill)) = rx.recv_timeout(Duration::from_secs(30)) else {
        panic!("the sender was not woken by the connection's end");
    };
    assert!(after_kill);
}
